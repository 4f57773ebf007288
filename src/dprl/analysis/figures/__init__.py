"""The figures registry (declared in :mod:`dprl.analysis.figures.catalog`); each paper's
module (``mechanisms``, ``tabular``, ``lq``, ``linmix``, ``pe``) holds the plot functions,
each drawing with the vocabulary of :mod:`dprl.analysis.plotting`."""

from __future__ import annotations

from dprl.analysis.figures.catalog import FIGURES, Figure


def all_figures() -> dict[str, Figure]:
    """Figure id -> :class:`Figure` (the catalog's ``FIGURES``)."""
    return FIGURES
