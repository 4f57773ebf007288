"""Work models of the shared-mechanism experiment kinds: ``(bytes, work, text)`` of one job from its
parameters, before it runs (named by each kind's ``work`` in ``spec.py``; read by
:mod:`dprl.config.estimate`, which turns work into seconds with the kind's measured
``seconds_per_work``).
"""

from __future__ import annotations

from dprl.experiments.work import F64, tree_levels
from dprl.runner.job import JobSpec


def counter_error(s: JobSpec) -> tuple[float, float, str]:
    e = s.environment
    width = e["dim"] ** 2 if s.algorithm["name"] == "gaussian_tree_matrix" else (e["dim"] if s.algorithm["name"] == "gaussian_tree_vector" else 1)
    cells = e["counters"] * width
    return F64 * cells * (4 + 2 * tree_levels(e["T"])), cells * e["T"] * 4, f"{e['counters']} counters × {width} entries × T = {e['T']}"


def audit(s: JobSpec) -> tuple[float, float, str]:
    e, n = s.environment, s.settings["runs"]
    width = e["dim"] ** 2 if s.algorithm["name"] == "gaussian_tree_matrix" else (e["dim"] if s.algorithm["name"] == "gaussian_tree_vector" else 1)
    return F64 * 4 * n * e["T"] * width, n * e["T"] * width, f"{n} runs × T = {e['T']} × {width} entries"
