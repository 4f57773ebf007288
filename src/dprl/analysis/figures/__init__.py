"""The figures registry (declared in :mod:`dprl.analysis.figures.catalog`); each paper's
module (``mechanisms``, ``tabular``, ``lq``, ``linmix``, ``pe``) holds the plot functions."""

from __future__ import annotations

from functools import cache

from dprl.analysis.figures.catalog import FIGURES, Figure


@cache
def all_figures() -> dict[str, Figure]:
    out: dict[str, Figure] = {}
    for fig in FIGURES:
        if fig.id in out:
            raise RuntimeError(f"figure id {fig.id!r} declared twice")
        out[fig.id] = fig
    return out
