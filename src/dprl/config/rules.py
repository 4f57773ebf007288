"""Constraints between parameters, and the items of list settings, checked at validation.

Each rule restates a limit documented in a declaration (``experiments/*/spec.py``) and
enforced again where the job builds its environment or estimator (cited per rule), so
that a config breaking it is refused before any job runs instead of failing inside one.

A rule gets the resolved parameters (defaults filled) and returns ``(key, message)``
pairs; ``key`` is the parameter the message is attached to (its key path is the one the
user wrote, or the entry's own path when it was a default).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from dprl.experiments.base import Param
from dprl.privacy.setting import PrivacySetting

Problem = tuple[str, str]
Rule = Callable[[dict[str, Any]], list[Problem]]


def _at_least(big: str, small: str, what: str = "") -> Rule:
    def rule(p: dict[str, Any]) -> list[Problem]:
        if p[big] < p[small]:
            return [(big, f"must be >= {small} ({p[small]!r}){what}, got {p[big]!r}")]
        return []

    return rule


def _mixture(p: dict[str, Any]) -> list[Problem]:
    # envs/linear_mixture.py mixture(): every one of the d2 reward clusters needs a state
    if p["S"] < p["d2"]:
        return [("S", f"the mixture needs S >= d2 (one state per reward cluster): S = {p['S']} < d2 = {p['d2']}")]
    return []


def _tabular_as_linear(p: dict[str, Any]) -> list[Problem]:
    # envs/linear_mixture.py tabular_as_linear(): d1 = S²A one-hot features, capped at 4096
    d1 = p["S"] ** 2 * p["A"]
    return [("S", f"tabular_as_linear has d1 = S²·A = {d1} > 4096 features; use a smaller S or A")] if d1 > 4096 else []


def _hard_linear(p: dict[str, Any]) -> list[Problem]:
    # envs/linear_mixture.py hard_linear(): δ = 1/H, Δ = sqrt(δ/K_ref)/(4√2), needs (d-1)Δ <= δ
    delta = 1.0 / p["H"]
    gap = math.sqrt(delta / p["K_ref"]) / (4.0 * math.sqrt(2.0))
    if (p["d"] - 1) * gap > delta:
        return [("K_ref", f"hard_linear needs (d-1)·Δ <= δ = 1/H for valid probabilities (Δ = sqrt(δ/K_ref)/(4√2)); got d = {p['d']}, H = {p['H']}, K_ref = {p['K_ref']}")]
    return []


def _hard_linear_horizon(p: dict[str, Any]) -> list[Problem]:
    # the same instance tuned to its own K (experiments/linmix/jobs.py run_hard)
    return [("K", msg.replace("K_ref", "K")) for _, msg in _hard_linear({**p, "K_ref": p["K"]})]


def _lowerbound_horizon(p: dict[str, Any]) -> list[Problem]:
    # envs/tabular.py hard_gap(): α' = gap_scale·sqrt(n·m/T) <= 1/2 keeps 1/2 + α' a probability
    gap = p["gap_scale"] * math.sqrt(p["n"] * p["m"] / p["T"])
    if gap > 0.5:
        return [("T", f"the gap α' = gap_scale·sqrt(n·m/T) = {gap:.4g} exceeds 1/2 (P[+|s, I_s] = 1/2 + α' > 1); "
                      f"needs T >= 4·gap_scale²·n·m = {math.ceil(4 * p['gap_scale'] ** 2 * p['n'] * p['m'])}, got T = {p['T']}")]
    return []


def _garnet(p: dict[str, Any]) -> list[Problem]:
    # envs/tabular.py garnet(): each (h, s, a) has `branching` distinct successors
    return [("branching", f"must be <= S ({p['S']}), got {p['branching']}")] if p["branching"] > p["S"] else []


def _pe_lambda(p: dict[str, Any]) -> list[Problem]:
    # experiments/pe/jobs.py run_lambda(): "the c and p grids need max >= min"
    return (_at_least("m_max", "m_min")(p) + _at_least("log10_c_max", "log10_c_min")(p) + _at_least("p_max", "p_min")(p))


# environment name -> rule (any kind that declares an environment of that name)
ENVIRONMENT_RULES: dict[str, Rule] = {
    "mixture": _mixture,
    "spread_mixture": _mixture,  # the same cluster structure: S >= d2
    "tabular_as_linear": _tabular_as_linear,
    "hard_linear": _hard_linear,
    "hard_linear_horizon": _hard_linear_horizon,
    "garnet": _garnet,
    "lowerbound_horizon": _lowerbound_horizon,
}

# experiment kind -> rule on its settings
SETTINGS_RULES: dict[str, Rule] = {
    "pe_batch": _at_least("m_max", "m_min", "; experiments/pe/jobs.py samples m_max trajectories"),
    "pe_lambda": _pe_lambda,
}

# (kind, list setting) -> what each item must be (type from the default, range here)
ITEM_PARAMS: dict[tuple[str, str], Param] = {
    # gaps α of the suboptimal arms (envs/bandit.py mab(): 0 < α <= best_mean)
    ("private_mab", "alphas"): Param(0.1, exclusive_minimum=0.0, maximum=1.0),
}


def job_problems(kind: str, paper: str, environment: dict[str, Any], settings: dict[str, Any], privacy: PrivacySetting | None) -> list[tuple[tuple[str, ...], str]]:
    """Rules across the parts of one job; returns (relative key path, message)."""
    out: list[tuple[tuple[str, ...], str]] = []
    if kind == "private_mab":
        # envs/bandit.py mab(): the suboptimal arms' mean best_mean - α must be >= 0
        for i, a in enumerate(settings["alphas"]):
            if a > environment["best_mean"]:
                out.append((("settings", "alphas", i), f"gap {a!r} exceeds the best arm's mean best_mean = {environment['best_mean']!r} (arm means best_mean - α must be >= 0)"))
    if paper == "pe" and privacy is not None and privacy.calibration != "paper":
        # experiments/pe/jobs.py: the 2016 paper has one calibration (its smooth-sensitivity constants)
        out.append((("privacy", "calibration"), f"the policy-evaluation experiments have one calibration, 'paper'; got {privacy.calibration!r}"))
    return out
