"""The figures registry: each paper's module defines ``FIGURES``."""

from __future__ import annotations

import importlib
from functools import cache

from dprl.analysis.base import Figure

MODULES = ("mechanisms", "tabular", "lq", "linmix", "pe")


@cache
def all_figures() -> dict[str, Figure]:
    out: dict[str, Figure] = {}
    for name in MODULES:
        mod = importlib.import_module(f"dprl.analysis.figures.{name}")
        for fig in mod.FIGURES:
            if fig.id in out:
                raise RuntimeError(f"figure id {fig.id!r} declared twice")
            out[fig.id] = fig
    return out
