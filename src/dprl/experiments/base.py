"""Declarations of experiment kinds, their algorithms, environments and settings.

Declarations are light (no NumPy work at import) so that parsing the workflow and
validating ``config.yaml`` stay fast; the job function is imported only when a job runs.
"""

from __future__ import annotations

import copy
import importlib
from collections.abc import Callable
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
    label: str = ""  # display name in figures and tables (the name when empty)
    colour: str = "#000000"  # one colour per algorithm in every figure; non-private baselines black/grey
    # ``"module:function"`` taking a ``JobSpec`` and returning the ε the built agent is
    # accounted at under the paper's neighbouring relation (``experiments/accounting.py``)
    accounting: str | None = None
    # A plug-in (``dprl.experiments.registry``, entry-point group ``dprl.algorithms``): the
    # setting it joins (one of ``SETTINGS``: it runs in every kind of that setting open to
    # plug-ins) and its ``"module:function"`` factory, called like a paper's ``build_agent``
    # without the name: ``factory(params, privacy, env, n_episodes, agent_rng, noise_rng)
    # -> BuiltAgent`` whose agent follows the setting's step protocol (``agents/plugin.py``).
    # Built-ins leave both empty (their paper's factory and compiled loop run them).
    setting: str = ""
    factory: str | None = None
    # A private algorithm's non-private baseline: the algorithm of the same kind whose
    # regret, paired by seed (common random numbers), its privacy cost is measured against
    # (PUCB: UBEV). Empty: no privacy-cost rows. A plug-in names a built-in or another plug-in.
    baseline: str = ""
    # A tabular plug-in whose agent implements the compiled block protocol (a ``block_kernel``,
    # ``dprl.agents.plugin.TabularBlockKernel``): its jobs are budgeted at
    # ``dprl.config.estimate.BLOCK_PLUGIN_SLOWDOWN`` times the compiled loop's time instead of
    # the step runner's ``PLUGIN_SLOWDOWN``. Declared, so validation builds no agent (building
    # one compiles its kernels, seconds per plug-in).
    block_protocol: bool = False
    # A tabular plug-in's predicted burn-in, ``"module:function"`` called as
    # ``burn_in(params, privacy, env, n_episodes) -> (first untie, T*)`` (episodes of uniform
    # play until every watched optimistic value leaves ``H``; ``agents/tabular/regime.bonus_burn_in``
    # computes it from the plug-in's bonus). With it the plug-in's rate rows get the whole regime
    # criterion, a run that never learns included (past the no-escape horizon its rows are not
    # reproduced); without it only its measured onset decides (a non-learner's rows stay "not reached").
    burn_in: str | None = None

    def __post_init__(self) -> None:
        if self.block_protocol and self.setting != "tabular":
            raise ValueError(f"{self.name}: block_protocol is the tabular setting's (setting {self.setting!r})")
        if self.burn_in and self.setting != "tabular":
            raise ValueError(f"{self.name}: a declared burn_in is the tabular setting's (setting {self.setting!r})")

    @property
    def display(self) -> str:
        return self.label or self.name

    def defaults(self) -> dict[str, Any]:
        """Every declared parameter at its default: what the loader fills in for it."""
        return {k: copy.deepcopy(p.default) for k, p in self.params.items()}


@dataclass(frozen=True)
class Environment:
    name: str
    params: dict[str, Param] = field(default_factory=dict)
    doc: str = ""
    label: str = ""  # display name in figures (the name when empty)
    # ``"module:function"``: a rule across its resolved parameters (a ``Rule``, below),
    # checked at validation
    rule: str | None = None

    @property
    def display(self) -> str:
        return self.label or self.name

    def defaults(self) -> dict[str, Any]:
        """Every declared parameter at its default: what the loader fills in for it."""
        return {k: copy.deepcopy(p.default) for k, p in self.params.items()}


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
    # ``"module:function"`` taking a ``JobSpec`` and returning ``(bytes, work, text)``: the
    # size of one job's dominant arrays and a count of its inner-loop steps, so that
    # validation can refuse a job that cannot fit (``config/estimate.py``).
    work: str | None = None
    # measured seconds per unit of ``work`` (``python -m dprl.config.estimate`` after a
    # default run recomputes them from ``workflow/resources.yaml``)
    seconds_per_work: float | None = None
    # ``"module:function"``: a ``Rule`` on the resolved settings, and a ``JobRule`` on one
    # job's (environment, settings, privacy); both checked at validation
    settings_rule: str | None = None
    job_rule: str | None = None
    # what each item of a list setting must be (type from the default, range here)
    item_params: dict[str, Param] = field(default_factory=dict)
    # the setting (one of ``SETTINGS``) whose plug-in algorithms this kind also runs; empty:
    # built-ins only (audits of one mechanism, experiments about one algorithm's constants)
    plugins: str = ""
    # an audit: its jobs record their own exact ε, so the accounting check does not refuse
    # them (they exist to show that printed variants fail); plug-ins join it unaccounted too
    audit: bool = False
    # an audit kind: ``"module:function"`` taking a plug-in's ``JobSpec``, that builds its agent
    # as the audit job does and raises ``ValueError`` (the reason) if the audit cannot examine
    # it (no dprl noise objects on the agent); run by the accounting check, before any job
    plugin_check: str | None = None
    # a rate kind: ``"module:function"`` taking a ``JobSpec`` and returning its :class:`BurnIn`
    # (``None`` for a job without a predicted burn-in: non-private, a plug-in declaring none),
    # the prediction its job records as ``burn_in_episodes``/``horizon_needed``, from the same
    # functions and without building an agent; ``dprl validate`` prints from it the regime each
    # private setting reaches at the config's horizon (``analysis/predicted_regime.py``)
    predicted_burn_in: str | None = None


@dataclass(frozen=True)
class BurnIn:
    """A job's predicted burn-in, before it runs: ``t_star(k)`` is the burn-in ``T*`` its
    paper's analysis predicts for a run of ``k`` episodes on the job's own instance (``T*``
    grows with ``k`` through the calibration), ``horizon`` the episodes the job runs, and
    ``horizon_param`` the environment parameter that is that horizon (a family tuned to it,
    ``tabular_hard``'s ``T``; empty when the horizon is a setting), ``symbol`` its name in
    messages (``T`` or ``K``)."""

    horizon: int
    t_star: Callable[[int], float]
    symbol: str = "T"
    horizon_param: str = ""


# The settings a plug-in can join: each has a step protocol and a generic runner
# (``agents/plugin.py``), and a package ``dprl.experiments.<setting>`` whose jobs run it.
SETTINGS = ("tabular", "lq", "linmix")


# A rule gets resolved parameters (defaults filled) and returns ``(key, message)`` pairs,
# ``key`` being the parameter the message is attached to.
Problem = tuple[str, str]
Rule = Callable[[dict[str, Any]], list[Problem]]
# A job rule gets one job's resolved environment, settings and privacy setting (or None)
# and returns ``(key path relative to the experiment, message)`` pairs.
JobRule = Callable[[dict[str, Any], dict[str, Any], Any], list[tuple[tuple[Any, ...], str]]]


def load_ref(ref: str) -> Callable:
    """The function a declaration names as ``"module:function"`` (imported on first use, so
    that declarations stay import-light)."""
    module, _, func = ref.partition(":")
    return getattr(importlib.import_module(module), func)


def at_least(big: str, small: str, what: str = "") -> Rule:
    """Rule: parameter ``big`` >= parameter ``small``."""

    def rule(p: dict[str, Any]) -> list[Problem]:
        if p[big] < p[small]:
            return [(big, f"must be >= {small} ({p[small]!r}){what}, got {p[big]!r}")]
        return []

    return rule


def algorithms(*algs: Algorithm) -> dict[str, Algorithm]:
    return {a.name: a for a in algs}


def environments(*envs: Environment) -> dict[str, Environment]:
    return {e.name: e for e in envs}
