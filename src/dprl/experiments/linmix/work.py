"""Work models of the linear-mixture experiment kinds: ``(bytes, work, text)`` of one job from its
parameters, before it runs (named by each kind's ``work`` in ``spec.py``; read by
:mod:`dprl.config.estimate`, which turns work into seconds with the kind's measured
``seconds_per_work``).
"""

from __future__ import annotations

from dprl.experiments.work import F64
from dprl.runner.job import JobSpec


def regret(s: JobSpec) -> tuple[float, float, str]:
    e = s.environment
    K = s.settings["episodes"] if "episodes" in s.settings else e["K"]  # linmix_hard: one job per K
    if e["name"] in ("hard_linear", "hard_linear_horizon"):
        S, A, d1, H = e["H"] + 2, 2 ** (e["d"] - 1), e["d"], e["H"]
    elif e["name"] == "tabular_as_linear":
        S, A, H = e["S"], e["A"], e["H"]
        d1 = S * S * A
    else:
        S, A, d1, H = e["S"], e["A"], e["d1"], e["H"]
    # features psi (S, A, d1, S) and value iteration over them every episode
    cells = S * A * d1 * S
    return F64 * cells * 4, K * H * (cells + d1 ** 3), f"S·A·d1·S = {cells:.3g} feature entries, H = {H}, K = {K} episodes"


def audit(s: JobSpec) -> tuple[float, float, str]:
    e, n = s.environment, s.settings["runs"]
    cells = 4 * e["H"] * e["d"] ** 2
    return F64 * 4 * n * cells, n * e["K"] * cells, f"{n} runs × K = {e['K']} users × {cells} counter entries"
