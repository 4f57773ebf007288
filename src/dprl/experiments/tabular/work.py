"""Work models of the tabular experiment kinds: ``(bytes, work, text)`` of one job from its
parameters, before it runs (named by each kind's ``work`` in ``spec.py``; read by
:mod:`dprl.config.estimate`, which turns work into seconds with the kind's measured
``seconds_per_work``).
"""

from __future__ import annotations

from typing import Any

from dprl.experiments.work import F64, tree_levels
from dprl.runner.job import JobSpec


def _sizes(env: dict[str, Any]) -> tuple[int, int, int]:
    if env["name"] == "riverswim":
        return env["S"], 2, env["H"]
    if env["name"] in ("lowerbound", "lowerbound_horizon"):
        return env["n"] + 2, env["m"] + 1, env["H"]
    return env["S"], env["A"], env["H"]


def regret(s: JobSpec) -> tuple[float, float, str]:
    S, A, H = _sizes(s.environment)
    T = s.settings["episodes"]
    # transition tables, counts and PUCB's tree counters (2 arrays per level) over (H,S,A,S);
    # planning is backward induction over (H,S,A,S) every episode
    cells = H * S * A * S
    return F64 * cells * (6 + 2 * tree_levels(T)), T * cells, f"H·S²·A = {cells:.3g} cells, T = {T:.3g} episodes"


def hard(s: JobSpec) -> tuple[float, float, str]:
    S, A, H = _sizes(s.environment)
    T = s.environment["T"]  # the family runs each instance to the horizon it is tuned to
    cells = H * S * A * S
    return F64 * cells * (6 + 2 * tree_levels(T)), T * cells, f"H·S²·A = {cells:.3g} cells, T = {T:.3g} episodes"


def private_mab(s: JobSpec) -> tuple[float, float, str]:
    k, runs, n_alpha = s.environment["k"], s.settings["runs"], len(s.settings["alphas"])
    # at most 40 elimination epochs (private_bai.dp_successive_elimination)
    return F64 * 16 * k * runs, runs * n_alpha * k * 40, f"{runs} runs × {n_alpha} alphas × {k} arms"


def audit(s: JobSpec) -> tuple[float, float, str]:
    e = s.environment
    counters = e["H"] * e["S"] * e["A"] * (e["S"] + 2)
    n = s.settings["runs"]
    # runs × T × counters released values, kept for the audit statistics
    return F64 * 4 * n * e["T"] * counters, n * e["T"] * counters, f"{n} runs × T = {e['T']} × {counters} counters"
