"""Work models of the policy-evaluation experiment kinds: ``(bytes, work, text)`` of one job from its
parameters, before it runs (named by each kind's ``work`` in ``spec.py``; read by
:mod:`dprl.config.estimate`, which turns work into seconds with the kind's measured
``seconds_per_work``).
"""

from __future__ import annotations

import math

from dprl.experiments.work import F64
from dprl.runner.job import JobSpec


def batch(s: JobSpec) -> tuple[float, float, str]:
    e, st = s.environment, s.settings
    N = e["n_states"]
    # trajectories are streamed; first-visit returns per state and the least squares in d <= N
    return F64 * (N * N * 8 + st["m_max"] * 4), st["m_max"] * e["max_len"] + 10 * N ** 3, f"m_max = {st['m_max']} trajectories × max_len = {e['max_len']}, N = {N}"


def lambda_grid(s: JobSpec) -> tuple[float, float, str]:
    mem, work, model = batch(s)
    st = s.settings
    grid = st["c_points"] * st["p_points"]
    points = max(1, math.ceil(math.log10(max(st["m_max"], 1) / max(st["m_min"], 1)) * st["points_per_decade"]) + 1)
    N = s.environment["n_states"]
    return mem, work + grid * points * N ** 3, f"{model}, {grid} (c, p) × {points} batch sizes"


def audit(s: JobSpec) -> tuple[float, float, str]:
    n, d = s.settings["runs"], s.environment["d"]
    audits = 3 * 4  # replacement pairs × (correct + up to 3 negative controls); measured ~0.24 s each at n = 2e5, d = 2
    return F64 * 4 * n * (d + 4), n * audits * (d + 4), f"{audits} audits × {n} runs × (d = {d}) + 4 statistics"


def exact(s: JobSpec) -> tuple[float, float, str]:
    n, m_max = s.environment["N"], s.settings["m_max"]
    pairs = sum((9 * (2 * m - 1)) ** (n - 1) for m in range(1, m_max + 1))
    # per pair: two batches of N states, fits of d <= N, four bounds
    return F64 * 8 * pairs * n, pairs * n * n, f"{pairs} replacement pairs × (N = {n})²"
