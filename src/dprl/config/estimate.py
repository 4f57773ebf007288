"""Rough memory and time of one job, from its parameters, before it runs.

The point is to refuse a job that cannot fit (garnet ``S: 1000000`` allocates
``H·S²·A`` transition tables of 29 TiB; ``episodes: 10**12`` runs for decades) with a
clear message at validation, instead of a ``MemoryError`` or a cluster job killed at its
time limit. Each kind gets the size of its dominant arrays (bytes) and a count of its
dominant inner-loop steps ("work"); seconds = ``SECONDS_PER_UNIT[kind] · work`` plus the
start-up of a job. The constants are the default preset's measured mean seconds per job
(``workflow/resources.yaml``, 2026-11 default run) divided by the mean work of its jobs,
so an estimate is within a small factor of the truth near the measured sizes and grows
with the true asymptotic cost away from them. Ceilings are config keys (``limits``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dprl.runner.job import JobSpec

F64 = 8  # bytes
BASE_BYTES = 250 * 2**20  # interpreter, NumPy, SciPy, pandas: measured peak RSS of the smallest jobs
STARTUP_SECONDS = 1.0  # import of the job's modules


@dataclass(frozen=True)
class Estimate:
    mem_bytes: float
    seconds: float
    model: str  # the formula, for the message

    @property
    def mem_gib(self) -> float:
        return self.mem_bytes / 2**30

    @property
    def hours(self) -> float:
        return self.seconds / 3600


def _levels(T: float) -> int:
    """Levels of a binary-tree counter over ``T`` steps (``floor(log2 T) + 1``)."""
    return int(math.floor(math.log2(max(T, 1)))) + 1


def _tabular_sizes(env: dict[str, Any]) -> tuple[int, int, int]:
    if env["name"] == "riverswim":
        return env["S"], 2, env["H"]
    if env["name"] in ("lowerbound", "lowerbound_horizon"):
        return env["n"] + 2, env["m"] + 1, env["H"]
    return env["S"], env["A"], env["H"]


def _tabular_regret(s: JobSpec) -> tuple[float, float, str]:
    S, A, H = _tabular_sizes(s.environment)
    T = s.settings["episodes"]
    # transition tables, counts and PUCB's tree counters (2 arrays per level) over (H,S,A,S);
    # planning is backward induction over (H,S,A,S) every episode
    cells = H * S * A * S
    return F64 * cells * (6 + 2 * _levels(T)), T * cells, f"H·S²·A = {cells:.3g} cells, T = {T:.3g} episodes"


def _tabular_hard(s: JobSpec) -> tuple[float, float, str]:
    S, A, H = _tabular_sizes(s.environment)
    T = s.environment["T"]  # the family runs each instance to the horizon it is tuned to
    cells = H * S * A * S
    return F64 * cells * (6 + 2 * _levels(T)), T * cells, f"H·S²·A = {cells:.3g} cells, T = {T:.3g} episodes"


def _private_mab(s: JobSpec) -> tuple[float, float, str]:
    k, runs, n_alpha = s.environment["k"], s.settings["runs"], len(s.settings["alphas"])
    # at most 40 elimination epochs (private_bai.dp_successive_elimination)
    return F64 * 16 * k * runs, runs * n_alpha * k * 40, f"{runs} runs × {n_alpha} alphas × {k} arms"


def _tabular_audit(s: JobSpec) -> tuple[float, float, str]:
    e = s.environment
    counters = e["H"] * e["S"] * e["A"] * (e["S"] + 2)
    n = s.settings["runs"]
    # runs × T × counters released values, kept for the audit statistics
    return F64 * 4 * n * e["T"] * counters, n * e["T"] * counters, f"{n} runs × T = {e['T']} × {counters} counters"


def _counter_error(s: JobSpec) -> tuple[float, float, str]:
    e = s.environment
    width = e["dim"] ** 2 if s.algorithm["name"] == "gaussian_tree_matrix" else (e["dim"] if s.algorithm["name"] == "gaussian_tree_vector" else 1)
    cells = e["counters"] * width
    return F64 * cells * (4 + 2 * _levels(e["T"])), cells * e["T"] * 4, f"{e['counters']} counters × {width} entries × T = {e['T']}"


def _mech_audit(s: JobSpec) -> tuple[float, float, str]:
    e, n = s.environment, s.settings["runs"]
    width = e["dim"] ** 2 if s.algorithm["name"] == "gaussian_tree_matrix" else (e["dim"] if s.algorithm["name"] == "gaussian_tree_vector" else 1)
    return F64 * 4 * n * e["T"] * width, n * e["T"] * width, f"{n} runs × T = {e['T']} × {width} entries"


def _lq_regret(s: JobSpec) -> tuple[float, float, str]:
    e, K = s.environment, s.settings["episodes"]
    n, d = (e["n"], e["d"]) if e["name"] == "random_lq" else (2, 1)
    N = s.algorithm["n_candidates"]
    # every episode: N oracle candidates, each a Riccati solve of size n+d; H steps. Memory
    # does not grow with K: regret is summarised online into checkpoints (runner/online.py)
    return F64 * N * (n + d) ** 2 * 4, K * (N * (n + d) ** 3 + e["horizon"] * (n + d) ** 2), f"K = {K} episodes × N = {N} candidates, n+d = {n + d}"


def _lq_audit(s: JobSpec) -> tuple[float, float, str]:
    e, n = s.environment, s.settings["runs"]
    cells = (e["n"] + e["d"]) ** 2 + (e["n"] + e["d"]) * e["n"]
    return F64 * 4 * n * cells, 2 * n * e["episodes"] * cells, f"{n} runs × {e['episodes']} episodes × {cells} counter entries"


def _linmix_regret(s: JobSpec) -> tuple[float, float, str]:
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


def _linmix_audit(s: JobSpec) -> tuple[float, float, str]:
    e, n = s.environment, s.settings["runs"]
    cells = 4 * e["H"] * e["d"] ** 2
    return F64 * 4 * n * cells, n * e["K"] * cells, f"{n} runs × K = {e['K']} users × {cells} counter entries"


def _pe_batch(s: JobSpec) -> tuple[float, float, str]:
    e, st = s.environment, s.settings
    N = e["n_states"]
    # trajectories are streamed; first-visit returns per state and the least squares in d <= N
    return F64 * (N * N * 8 + st["m_max"] * 4), st["m_max"] * e["max_len"] + 10 * N ** 3, f"m_max = {st['m_max']} trajectories × max_len = {e['max_len']}, N = {N}"


def _pe_lambda(s: JobSpec) -> tuple[float, float, str]:
    mem, work, model = _pe_batch(s)
    st = s.settings
    grid = st["c_points"] * st["p_points"]
    points = max(1, math.ceil(math.log10(max(st["m_max"], 1) / max(st["m_min"], 1)) * st["points_per_decade"]) + 1)
    N = s.environment["n_states"]
    return mem, work + grid * points * N ** 3, f"{model}, {grid} (c, p) × {points} batch sizes"


def _pe_audit(s: JobSpec) -> tuple[float, float, str]:
    n, d = s.settings["runs"], s.environment["d"]
    audits = 3 * 4  # replacement pairs × (correct + up to 3 negative controls); measured ~0.24 s each at n = 2e5, d = 2
    return F64 * 4 * n * (d + 4), n * audits * (d + 4), f"{audits} audits × {n} runs × (d = {d}) + 4 statistics"


# kind -> (bytes, work, model) of one job
MODELS: dict[str, Callable[[JobSpec], tuple[float, float, str]]] = {
    "tabular_regret": _tabular_regret, "tabular_pac": _tabular_regret, "tabular_scaling": _tabular_regret,
    "tabular_hard": _tabular_hard,
    "private_mab": _private_mab, "tabular_audit": _tabular_audit,
    "counter_error": _counter_error, "audit": _mech_audit,
    "lq_regret": _lq_regret, "lq_oracle": _lq_regret, "lq_audit": _lq_audit,
    "linmix_regret": _linmix_regret, "linmix_states": _linmix_regret, "linmix_actions": _linmix_regret,
    "linmix_ldp": _linmix_regret, "linmix_audit": _linmix_audit, "linmix_hard": _linmix_regret,
    "pe_batch": _pe_batch, "pe_lambda": _pe_lambda, "pe_audit": _pe_audit,
}

# Measured seconds per unit of work (see the module docstring; recomputed with
# ``python -m dprl.config.estimate`` after a default run).
SECONDS_PER_UNIT: dict[str, float] = {
    "audit": 2.79e-07,
    "counter_error": 1.57e-08,
    "linmix_actions": 1.74e-09,
    "linmix_audit": 1.91e-07,
    "linmix_hard": 4.69e-09,  # not yet measured: linmix_regret's (the same loop)
    "linmix_ldp": 1.69e-08,
    "linmix_regret": 4.69e-09,
    "linmix_states": 5.96e-10,
    "lq_audit": 7.25e-07,
    "lq_oracle": 2.1e-08,
    "lq_regret": 1.5e-08,
    "pe_audit": 1.31e-07,
    "pe_batch": 1.41e-08,
    "pe_lambda": 7.84e-09,
    "private_mab": 1.27e-06,
    "tabular_audit": 6.78e-07,
    "tabular_hard": 4.6e-08,  # measured: 1e6 episodes of n=2 m=1 H=2, 2.2 s (UBEV) to 3.7 s (PUCB)
    "tabular_pac": 1.92e-08,
    "tabular_regret": 2.46e-08,
    "tabular_scaling": 3.06e-08,
}


def estimate(spec: JobSpec) -> Estimate | None:
    """Memory and time of one job, or ``None`` for a kind without a model."""
    model = MODELS.get(spec.kind)
    if model is None:
        return None
    mem, work, text = model(spec)
    return Estimate(BASE_BYTES + float(mem), STARTUP_SECONDS + SECONDS_PER_UNIT.get(spec.kind, max(SECONDS_PER_UNIT.values())) * float(work), text)


def scaled_resources(measured: Mapping[str, float], jobs: Sequence[JobSpec], reference: Sequence[JobSpec],
                     mem_margin: float = 1.5, time_margin: float = 3.0) -> dict[str, float]:
    """Resources of one simulation of an experiment whose jobs (``jobs``, e.g. the ``full``
    preset's) are larger than the ones its resources were measured on (``reference``, the
    same experiment in the default run; ``measured`` = its ``workflow/resources.yaml`` entry).

    The measured compute time (``seconds`` minus start-up) is scaled by the models' work
    ratio: ``seconds`` by the mean work (what bundles are packed by), ``runtime`` by the
    largest job's work × ``time_margin``; memory grows by the model's extra bytes ×
    ``mem_margin``. Never below the measured values, so the default preset is unchanged;
    without this a ``full`` job of 6e7 episodes would get the 2 minutes measured at 8e5.
    """
    out = {k: measured[k] for k in ("mem_mb", "runtime", "seconds")}
    model = MODELS.get(jobs[0].kind) if jobs else None
    if model is None or not reference:
        return out
    now = [model(j) for j in jobs]
    ref = [model(j) for j in reference]
    ref_work = sum(w for _, w, _ in ref) / len(ref)
    if ref_work <= 0:
        return out
    compute = max(float(measured["seconds"]) - STARTUP_SECONDS, 0.0) / ref_work  # s per unit of work
    mean_work = sum(w for _, w, _ in now) / len(now)
    out["seconds"] = max(float(measured["seconds"]), round(STARTUP_SECONDS + compute * mean_work, 2))
    slowest = STARTUP_SECONDS + compute * max(w for _, w, _ in now)
    out["runtime"] = max(int(measured["runtime"]), math.ceil(time_margin * slowest / 60.0))
    extra = max(b for b, _, _ in now) - max(b for b, _, _ in ref)
    out["mem_mb"] = max(int(measured["mem_mb"]), int(measured["mem_mb"]) + math.ceil(mem_margin * extra / 2**20 / 100) * 100)
    return out


def measured_reference(name: str, kind: str, measured: Mapping[str, Any], reference: Mapping[str, Any]) -> str | None:
    """The measured default-run experiment to scale ``name``'s resources from: itself, or,
    for an experiment the default preset does not run (``lq_regime_long``), the measured
    experiment of the same kind with the most work per job (the closest in size)."""
    if name in measured and name in reference:
        return name
    same = [e for e, x in reference.items() if e in measured and x.kind.name == kind and x.jobs and kind in MODELS]
    if not same:
        return None
    return max(same, key=lambda e: sum(MODELS[kind](j.spec)[1] for j in reference[e].jobs) / len(reference[e].jobs))


def preset_resources(preset: str, config_path: str = "config.yaml",
                     resources_path: str = "workflow/resources.yaml") -> dict[str, dict[str, float]]:
    """:func:`scaled_resources` of every measured experiment of ``preset`` (what the workflow's
    rules get, ``workflow/rules/common.smk``), with ``jobs`` and ``hours`` (``jobs ×
    seconds``: the preset's estimated job-hours, as in the README). An experiment of a
    kind with nothing measured gets its work model's estimate (``model_only``)."""
    import yaml

    from dprl.config.load import load_config_file

    measured = yaml.safe_load(Path(resources_path).read_text()) if Path(resources_path).exists() else {}
    experiments = load_config_file(config_path, preset).experiments
    reference = experiments if preset == "default" else load_config_file(config_path, "default").experiments
    out = {}
    for name, exp in experiments.items():
        if not exp.jobs:
            continue
        src = measured_reference(name, exp.kind.name, measured, reference)
        if src is None:
            # nothing of this kind measured: the kind's work model alone (its seconds per
            # unit of work were calibrated on the default run)
            estimates = [estimate(j.spec) for j in exp.jobs]
            if any(e is None for e in estimates):
                continue
            seconds = sum(e.seconds for e in estimates)
            out[name] = {"seconds": seconds / len(exp.jobs), "jobs": len(exp.jobs), "hours": seconds / 3600, "model_only": True}
            continue
        r = scaled_resources(measured[src], [j.spec for j in exp.jobs], [j.spec for j in reference[src].jobs])
        out[name] = {**r, "jobs": len(exp.jobs), "hours": r["seconds"] * len(exp.jobs) / 3600}
    return out


def calibrate(config_path: str = "config.yaml", resources_path: str = "workflow/resources.yaml") -> dict[str, float]:
    """Seconds per unit of work of every kind: the largest, over the default preset's
    experiments of that kind, of (measured mean seconds - start-up) / mean work."""
    import yaml

    from dprl.config.load import load_config_file

    measured = yaml.safe_load(Path(resources_path).read_text()) if Path(resources_path).exists() else {}
    out: dict[str, float] = {}
    for name, exp in load_config_file(config_path, "default").experiments.items():
        if name not in measured or exp.kind.name not in MODELS or not exp.jobs:
            continue
        work = sum(MODELS[exp.kind.name](j.spec)[1] for j in exp.jobs) / len(exp.jobs)
        rate = max(measured[name]["seconds"] - STARTUP_SECONDS, 0.1) / work
        out[exp.kind.name] = max(out.get(exp.kind.name, 0.0), float(f"{rate:.3g}"))
    return dict(sorted(out.items()))


if __name__ == "__main__":
    print(calibrate())
