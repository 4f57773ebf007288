"""Rules across the parameters of the tabular experiments, checked at validation (named by
the declarations in ``spec.py``). Each restates a limit enforced again where the job
builds its environment (cited per rule), so a config breaking it is refused before any
job runs instead of failing inside one.
"""

from __future__ import annotations

import math
from typing import Any

from dprl.experiments.base import Problem


def garnet(p: dict[str, Any]) -> list[Problem]:
    # envs/tabular.py garnet(): each (h, s, a) has `branching` distinct successors
    return [("branching", f"must be <= S ({p['S']}), got {p['branching']}")] if p["branching"] > p["S"] else []


def lowerbound_horizon(p: dict[str, Any]) -> list[Problem]:
    # envs/tabular.py hard_gap(): α' = gap_scale·sqrt(n·m/T) <= 1/2 keeps 1/2 + α' a probability
    gap = p["gap_scale"] * math.sqrt(p["n"] * p["m"] / p["T"])
    if gap > 0.5:
        return [("T", f"the gap α' = gap_scale·sqrt(n·m/T) = {gap:.4g} exceeds 1/2 (P[+|s, I_s] = 1/2 + α' > 1); "
                      f"needs T >= 4·gap_scale²·n·m = {math.ceil(4 * p['gap_scale'] ** 2 * p['n'] * p['m'])}, got T = {p['T']}")]
    return []


def private_mab_gaps(environment: dict[str, Any], settings: dict[str, Any], privacy: Any) -> list[tuple[tuple[Any, ...], str]]:
    # envs/bandit.py mab(): the suboptimal arms' mean best_mean - α must be >= 0
    return [(("settings", "alphas", i), f"gap {a!r} exceeds the best arm's mean best_mean = {environment['best_mean']!r} "
                                        "(arm means best_mean - α must be >= 0)")
            for i, a in enumerate(settings["alphas"]) if a > environment["best_mean"]]
