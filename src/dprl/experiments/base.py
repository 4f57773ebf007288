"""Declarations of experiment kinds, their algorithms, environments and settings.

Declarations are light (no NumPy work at import) so that parsing the workflow and
validating ``config.yaml`` stay fast; the job function is imported only when a job runs.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

PrivacyKind = Literal["none", "pure", "approx"]


@dataclass(frozen=True)
class Param:
    """A declared parameter: default value (its type is the allowed type) and range."""

    default: Any
    minimum: float | None = None  # inclusive
    exclusive_minimum: float | None = None
    maximum: float | None = None  # inclusive
    choices: tuple[Any, ...] | None = None
    doc: str = ""

    @property
    def kind(self) -> type:
        d = self.default
        if isinstance(d, bool):
            return bool
        if isinstance(d, (int, float)):
            return float if isinstance(d, float) else int
        if isinstance(d, (list, tuple)):
            return list
        if d is None:
            return type(None)
        return type(d)


@dataclass(frozen=True)
class Algorithm:
    """An algorithm an experiment kind can run.

    ``privacy``: ``none`` (non-private: one job, no ε), ``pure`` (ε-DP: expands over ε and
    calibration), ``approx`` ((ε, δ)-DP: expands over ε, δ and calibration).
    """

    name: str
    privacy: PrivacyKind
    params: dict[str, Param] = field(default_factory=dict)
    doc: str = ""


@dataclass(frozen=True)
class Environment:
    name: str
    params: dict[str, Param] = field(default_factory=dict)
    doc: str = ""


@dataclass(frozen=True)
class ExperimentKind:
    """One experiment kind: ``run`` is ``"module:function"`` taking a ``JobContext`` and
    returning a tidy ``pandas.DataFrame``; ``settings`` are experiment-level parameters
    shared by all its jobs (episodes, checkpoints, ...)."""

    name: str
    paper: str
    run: str
    algorithms: dict[str, Algorithm]
    environments: dict[str, Environment]
    settings: dict[str, Param] = field(default_factory=dict)
    doc: str = ""
    # resources of one job, measured (see workflow/rules/simulate.smk); the runner may
    # scale runtime by a settings-dependent factor via ``cost``.
    mem_mb: int = 500
    runtime_min: int = 10


def algorithms(*algs: Algorithm) -> dict[str, Algorithm]:
    return {a.name: a for a in algs}


def environments(*envs: Environment) -> dict[str, Environment]:
    return {e.name: e for e in envs}
