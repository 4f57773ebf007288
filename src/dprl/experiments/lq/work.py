"""Work models of the LQ experiment kinds: ``(bytes, work, text)`` of one job from its
parameters, before it runs (named by each kind's ``work`` in ``spec.py``; read by
:mod:`dprl.config.estimate`, which turns work into seconds with the kind's measured
``seconds_per_work``).
"""

from __future__ import annotations

from dprl.experiments.work import F64
from dprl.runner.job import JobSpec


def regret(s: JobSpec) -> tuple[float, float, str]:
    e, K = s.environment, s.settings["episodes"]
    n, d = (e["n"], e["d"]) if e["name"] == "random_lq" else (2, 1)
    N = s.algorithm["n_candidates"]
    # every episode: N oracle candidates, each a Riccati solve of size n+d; H steps. Memory
    # does not grow with K: regret is summarised online into checkpoints (runner/online.py)
    return F64 * N * (n + d) ** 2 * 4, K * (N * (n + d) ** 3 + e["horizon"] * (n + d) ** 2), f"K = {K} episodes × N = {N} candidates, n+d = {n + d}"


def audit(s: JobSpec) -> tuple[float, float, str]:
    e, n = s.environment, s.settings["runs"]
    cells = (e["n"] + e["d"]) ** 2 + (e["n"] + e["d"]) * e["n"]
    return F64 * 4 * n * cells, 2 * n * e["episodes"] * cells, f"{n} runs × {e['episodes']} episodes × {cells} counter entries"
