"""All experiment kinds, collected from the per-paper declaration modules."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from functools import cache

from dprl.experiments.base import ExperimentKind, load_ref

# One declaration module per paper (plus the shared mechanisms). Each defines ``KINDS``.
DECLARATION_MODULES = (
    "dprl.experiments.mechanisms.spec",
    "dprl.experiments.tabular.spec",
    "dprl.experiments.lq.spec",
    "dprl.experiments.linmix.spec",
    "dprl.experiments.pe.spec",
)


@cache
def kinds() -> dict[str, ExperimentKind]:
    out: dict[str, ExperimentKind] = {}
    for mod_name in DECLARATION_MODULES:
        mod = importlib.import_module(mod_name)
        for kind in mod.KINDS:
            if kind.name in out:
                raise RuntimeError(f"experiment kind {kind.name!r} declared twice")
            out[kind.name] = kind
    return out


def get_kind(name: str) -> ExperimentKind:
    return kinds()[name]


def job_function(kind: ExperimentKind) -> Callable:
    return load_ref(kind.run)
