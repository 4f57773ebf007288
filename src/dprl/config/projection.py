"""Projection of a job's time and memory from a measured slice of its group's representative
(:mod:`dprl.config.rehearse` measures the slices; :mod:`dprl.config.resources` turns a
committed rehearsal into the workflow's requests).

Jobs are grouped by (experiment, algorithm, environment, privacy kind); a group's
representative is its job of largest modelled work. Projection is linear in the horizon,
as the loops are (one episode, run or trajectory costs the same at every point of a job):
``per_unit = (t(n2) - t(n1)) / (n2 - n1)``, ``seconds(N) = STARTUP + t(n2) + per_unit ·
(N - n2)``; the group's other jobs get the representative's compute time times their work
model's ratio. Memory: the slice's peak RSS plus the work model's extra bytes of the full
horizon over the slice's.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from dprl.config.estimate import STARTUP_SECONDS, work_model
from dprl.runner.job import JobSpec, short_hash

# Where a kind's horizon lives: settings ``episodes`` (regret loops), ``runs`` (audits),
# ``m_max`` (policy evaluation's largest batch); the environment's ``T`` / ``K`` (the hard
# families, tuned to their horizon) or ``episodes`` (the LQ audit stream).
HORIZON_KEYS: tuple[tuple[str, str], ...] = (
    ("settings", "episodes"), ("settings", "runs"), ("settings", "m_max"),
    ("environment", "T"), ("environment", "K"), ("environment", "episodes"),
)
LINEARITY_TOLERANCE = 0.2  # work(N/4) / work(N) within 20% of 1/4


def privacy_kind(spec: JobSpec) -> str:
    """``none``, ``pure`` or ``approx`` (as ``Algorithm.privacy``)."""
    return "none" if spec.privacy is None else ("approx" if spec.delta is not None else "pure")


def horizon_value(spec: JobSpec, key: tuple[str, str]) -> Any:
    return getattr(spec, key[0]).get(key[1])


def with_horizon(spec: JobSpec, key: tuple[str, str], n: int) -> JobSpec:
    """``spec`` with its horizon parameter ``key`` set to ``n`` (everything else, seed included, unchanged)."""
    d = copy.deepcopy(spec.to_dict())
    d[key[0]][key[1]] = int(n)
    return JobSpec.from_dict(d)


def horizon_key(spec: JobSpec) -> tuple[str, str] | None:
    """The parameter (of :data:`HORIZON_KEYS`, largest value first) the kind's work model is
    linear in at ``spec``; ``None`` if there is none (the job then runs whole)."""
    model = work_model(spec.kind)
    if model is None:
        return None
    found = [(k, v) for k in HORIZON_KEYS if isinstance(v := horizon_value(spec, k), int) and not isinstance(v, bool) and v >= 8]
    for key, value in sorted(found, key=lambda kv: -kv[1]):
        full = model(spec)[1]
        try:
            quarter = model(with_horizon(spec, key, value // 4))[1]
        except (KeyError, ValueError, ZeroDivisionError):
            continue
        if full > 0 and abs(quarter / full - (value // 4) / value) <= LINEARITY_TOLERANCE * (value // 4) / value:
            return key
    return None


@dataclass(frozen=True)
class Group:
    """Jobs of one (experiment, algorithm, environment, privacy kind) and their representative."""

    experiment: str
    algorithm: str
    environment: str
    privacy: str
    specs: tuple[JobSpec, ...]
    representative: JobSpec
    label: str  # the representative's job path
    paths: tuple[str, ...] = ()  # of ``specs``, in their order


def groups(experiments: Mapping[str, Any]) -> list[Group]:
    """One :class:`Group` per distinct kind of job of a preset's ``experiments``; the
    representative is the job of largest modelled work (first in job order on ties)."""
    by: dict[tuple[str, str, str, str], list[Any]] = {}
    for name, exp in experiments.items():
        for job in exp.jobs:
            s = job.spec
            by.setdefault((name, s.algorithm["name"], s.environment["name"], privacy_kind(s)), []).append(job)
    out = []
    for (e, a, env, p), jobs in by.items():
        model = work_model(jobs[0].spec.kind)
        rep = max(jobs, key=lambda j: model(j.spec)[1]) if model is not None else jobs[0]
        out.append(Group(e, a, env, p, tuple(j.spec for j in jobs), rep.spec, rep.path, tuple(j.path for j in jobs)))
    return out


def project(group: Group, m: Mapping[str, Any]) -> dict[str, float]:
    """Projected seconds and peak MB of the representative at its full horizon, and the
    group's projected CPU-seconds (module docstring)."""
    per_job = job_seconds(group, m)
    return {"projected_s": per_job[group.label] if group.label in per_job else _rep_seconds(group, m),
            "projected_mb": _rep_mb(group, m), "group_cpu_s": sum(per_job.values())}


def _compute(group: Group, m: Mapping[str, Any]) -> float:
    if m["whole"]:
        return float(m["t2"])
    return float(m["t2"] + m["per_unit"] * (m["horizon"] - m["n2"]))


def _rep_seconds(group: Group, m: Mapping[str, Any]) -> float:
    return STARTUP_SECONDS + _compute(group, m)


def _rep_mb(group: Group, m: Mapping[str, Any]) -> float:
    rep = group.representative
    extra_bytes = 0.0
    if not m["whole"]:
        model = work_model(rep.kind)
        key = tuple(m["horizon_key"].split("."))
        extra_bytes = max(model(rep)[0] - model(with_horizon(rep, key, m["n2"]))[0], 0.0)  # type: ignore[arg-type]
    return float(m["rss_mb"]) + extra_bytes / 2**20


def job_seconds(group: Group, m: Mapping[str, Any]) -> dict[str, float]:
    """Projected seconds of every job of ``group`` (by path; by index where the group has no
    paths): start-up plus the representative's projected compute times the work ratio."""
    rep = group.representative
    model = work_model(rep.kind)
    compute = _compute(group, m)
    if model is not None and model(rep)[1] > 0:
        ratio = [model(s)[1] / model(rep)[1] for s in group.specs]
    else:
        ratio = [1.0] * len(group.specs)
    keys = group.paths or tuple(str(i) for i in range(len(group.specs)))
    return {k: STARTUP_SECONDS + compute * r for k, r in zip(keys, ratio)}




def spec_hash(spec: JobSpec) -> str:
    """A short hash of a representative's spec: a rehearsal row applies to a group only while
    its representative is the same job (a config edit that changes it makes the row stale)."""
    return short_hash(spec.to_dict(), 12)


# A rehearsal table's columns (dprl.config.rehearse) -> the measurement's keys (measure())
_MEASUREMENT_COLUMNS = {"horizon_key": "horizon_key", "horizon": "horizon", "slice_n1": "n1", "slice_n2": "n2",
                        "t1_s": "t1", "t2_s": "t2", "per_unit_s": "per_unit", "whole": "whole", "peak_rss_mb": "rss_mb"}


def measurement_of_row(row: Mapping[str, Any]) -> dict[str, Any]:
    """The measurement (as :func:`dprl.config.rehearse.measure` returns it) of one row of a
    rehearsal table read back from CSV (an empty horizon key reads as NaN, ``whole`` as text)."""
    m = {key: row[col] for col, key in _MEASUREMENT_COLUMNS.items()}
    key = m["horizon_key"]
    m["horizon_key"] = key if isinstance(key, str) else ""
    m["whole"] = m["whole"] if isinstance(m["whole"], bool) else str(m["whole"]).strip().lower() == "true"
    for k in ("horizon", "n1", "n2"):
        m[k] = int(m[k])
    for k in ("t1", "t2", "per_unit", "rss_mb"):
        m[k] = float(m[k])
    return m
