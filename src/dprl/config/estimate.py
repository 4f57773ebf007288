"""Rough memory and time of one job, from its parameters, before it runs.

The point is to refuse a job that cannot fit (garnet ``S: 1000000`` allocates
``H·S²·A`` transition tables of 29 TiB; ``episodes: 10**12`` runs for decades) with a
clear message at validation, instead of a ``MemoryError`` or a cluster job killed at its
time limit. Each kind gets the size of its dominant arrays (bytes) and a count of its
dominant inner-loop steps ("work"), declared with the kind (its ``work`` model in
``experiments/<paper>/work.py``); seconds = the kind's ``seconds_per_work`` · work plus
the start-up of a job. The constants are the default preset's measured mean seconds per job
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

from dprl.experiments.base import Algorithm, load_ref
from dprl.experiments.registry import get_kind, kinds, plugins
from dprl.runner.job import JobSpec

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


WorkModel = Callable[[JobSpec], tuple[float, float, str]]


def work_model(kind: str) -> WorkModel | None:
    """The kind's declared work model (``ExperimentKind.work``): ``(bytes, work, text)`` of
    one job, or ``None`` for a kind without one."""
    ref = get_kind(kind).work
    return None if ref is None else load_ref(ref)


def seconds_per_work(kind: str) -> float:
    """The kind's measured seconds per unit of work; a kind not yet measured gets the
    largest measured rate (a conservative estimate)."""
    own = get_kind(kind).seconds_per_work
    return own if own is not None else max(k.seconds_per_work or 0.0 for k in kinds().values())


# A plug-in runs through its setting's generic step runner (agents/plugin.py), plain Python,
# so its jobs are estimated at a multiple of the kind's compiled rate, per setting, measured
# in tests/benchmarks/test_bench_plugin.py against the compiled loop in the same run
# (2026-11-27): tabular, the example plug-in 19-54x slower than PUCB; LQ, Private-OFU-RL's
# NumPy agent through the runner 7.3x slower than its loop; linear mixture, Private-LinOpt-VI's
# 147x (its loop is the most optimised). Rounded up.
PLUGIN_SLOWDOWN = {"tabular": 60.0, "lq": 10.0, "linmix": 200.0}
# A tabular plug-in declaring the compiled block protocol (``Algorithm.block_protocol``): its
# njit plan/learn run inside one compiled loop per block; the slowest measured (DP-UCBVI,
# 6.7-10x PUCB's compiled time) with a margin (measurements in :func:`plugin_slowdown`).
BLOCK_PLUGIN_SLOWDOWN = 12.0


def plugin_slowdown(alg: Algorithm) -> float:
    """How many times the kind's compiled time a plug-in's job is budgeted at:
    :data:`BLOCK_PLUGIN_SLOWDOWN` for a tabular plug-in declaring the block protocol
    (``block_protocol=True``: a ``block_kernel``, ``dprl.agents.plugin.TabularBlockKernel``),
    else its setting's :data:`PLUGIN_SLOWDOWN` (the step runner).

    The block factor is measured (2026-12-02, CPU time, T = 1e5 episodes, three runs of
    ``tests/benchmarks/test_bench_plugin.py``; each plug-in against PUCB's compiled loop
    measured in the same test), as episodes/s of the plug-in / of PUCB compiled, on the
    family hard at T (n=2 m=1 H=2) and garnet S=6 A=2 H=4:

    - Private-UCB-VI 514k / 630k (0.82) and 209k / 270k (0.77); runs 2, 3: 0.73, 0.60 and
      0.86, 0.74;
    - UCB-VI 832k / 877k (0.95) and 605k / 332k (1.8); runs 2, 3: 1.05, 1.02 and 1.9, 1.6;
    - UCBVI-Bernstein 532k / 989k (0.54) and 268k / 353k (0.76); runs 2, 3: 0.71, 0.57 and
      0.92, 0.80;
    - DP-UCBVI 102k / 748k (0.14) and 34k / 301k (0.11); runs 2, 3: 0.14, 0.13 and 0.15, 0.10
      (run 3: 119k / 883k and 37k / 376k).

    PUCB's rate is one timed run (the plug-in's the best of 3), so the ratios scatter by up to
    1.7x between runs on a shared machine; the plug-ins' own rates vary less.

    DP-UCBVI's Central Privatizer projects every ``(h, s, a)``'s released counts by a 45-step
    bisection over ``s'`` each episode (its min-max projection, Qiao & Wang 2023, Section
    5.1), the same ``H·S²·A`` order as PUCB's planning, so its ratio holds with size (garnet
    S=20 A=3 H=5: 0.11; S=40: 0.15; same day, outside the benchmark file). The slowest, 10x
    (DP-UCBVI on garnet, run 3), gets a 1.2x margin: 12x. A factor near Private-UCB-VI's 1.7x
    would give DP-UCBVI's jobs a sixth of their time. The step runner's 60x stays for a
    plug-in without the declaration, which the estimate reads without building an agent
    (building one compiles its kernels).
    """
    return BLOCK_PLUGIN_SLOWDOWN if alg.block_protocol else PLUGIN_SLOWDOWN[alg.setting]


def runtime_factor(spec: JobSpec) -> float:
    """How many times its kind's measured (compiled) time a job takes: a plug-in's
    :func:`plugin_slowdown` (estimates, Snakemake's runtime resource, bundles), else 1."""
    plugin = plugins().get(spec.algorithm["name"])
    return 1.0 if plugin is None else plugin_slowdown(plugin)


def job_resources(measured: Mapping[str, float], spec: JobSpec) -> dict[str, float]:
    """One job's Snakemake resources: its experiment's measured ones (``mem_mb``,
    ``runtime`` in minutes, ``seconds``), the runtime times :func:`runtime_factor`."""
    factor = runtime_factor(spec)
    return dict(measured) if factor == 1.0 else {**measured, "runtime": math.ceil(float(measured["runtime"]) * factor)}


def estimate(spec: JobSpec) -> Estimate | None:
    """Memory and time of one job, or ``None`` for a kind without a model."""
    model = work_model(spec.kind)
    if model is None:
        return None
    mem, work, text = model(spec)
    rate = seconds_per_work(spec.kind) * runtime_factor(spec)
    return Estimate(BASE_BYTES + float(mem), STARTUP_SECONDS + rate * float(work), text)


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
    model = work_model(jobs[0].kind) if jobs else None
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


def model_resources(jobs: Sequence[JobSpec], floor: Mapping[str, float], mem_margin: float = 1.5,
                    time_margin: float = 3.0) -> dict[str, float]:
    """Resources of one simulation from the kind's work model alone (:func:`estimate`), for an
    experiment with no measured default-run reference to scale from (``tabular_scaling``
    runs in ``full`` and ``smoke`` only): ``seconds`` the mean estimate, ``runtime`` and
    ``mem_mb`` the largest job's × their margins, never below ``floor`` (the kind's declared
    values, or a measurement of smaller jobs). A kind without a model keeps ``floor``."""
    out = {k: floor[k] for k in ("mem_mb", "runtime", "seconds")}
    ests = [estimate(j) for j in jobs]
    if not ests or any(e is None for e in ests):
        return out
    out["seconds"] = round(sum(e.seconds for e in ests) / len(ests), 2)
    out["runtime"] = max(int(floor["runtime"]), math.ceil(time_margin * max(e.seconds for e in ests) / 60.0))
    out["mem_mb"] = max(int(floor["mem_mb"]), math.ceil(mem_margin * max(e.mem_bytes for e in ests) / 2**20 / 100) * 100)
    return out


def measured_reference(name: str, kind: str, measured: Mapping[str, Any], reference: Mapping[str, Any],
                       jobs: Sequence[JobSpec] = ()) -> str | None:
    """The measured default-run experiment to scale ``name``'s resources from: itself, or,
    for an experiment the default preset does not run (``lq_regime_long``, a sweep added
    under a new name), the measured experiment of the same kind closest in work per job to
    ``jobs`` (its own job specs; without them, the one with the most work per job)."""
    if name in measured and name in reference:
        return name
    model = work_model(kind)
    same = [e for e, x in reference.items() if e in measured and x.kind.name == kind and x.jobs] if model else []
    if not same:
        return None

    def mean_work(specs: Sequence[JobSpec]) -> float:
        return max(sum(model(j)[1] for j in specs) / len(specs), 1e-300)

    per_job = {e: mean_work([j.spec for j in reference[e].jobs]) for e in same}
    if not jobs:
        return max(same, key=per_job.__getitem__)
    target = mean_work(jobs)
    return min(same, key=lambda e: abs(math.log(per_job[e] / target)))


def calibrate(config_path: str = "config.yaml", resources_path: str = "workflow/resources.yaml") -> dict[str, float]:
    """Seconds per unit of work of every kind: the largest, over the default preset's
    experiments of that kind, of (measured mean seconds - start-up) / mean work."""
    import yaml

    from dprl.config.load import load_config_file

    measured = yaml.safe_load(Path(resources_path).read_text()) if Path(resources_path).exists() else {}
    out: dict[str, float] = {}
    for name, exp in load_config_file(config_path, "default").experiments.items():
        model = work_model(exp.kind.name)
        if name not in measured or model is None or not exp.jobs:
            continue
        work = sum(model(j.spec)[1] for j in exp.jobs) / len(exp.jobs)
        rate = max(measured[name]["seconds"] - STARTUP_SECONDS, 0.1) / work
        out[exp.kind.name] = max(out.get(exp.kind.name, 0.0), float(f"{rate:.3g}"))
    return dict(sorted(out.items()))


if __name__ == "__main__":  # the seconds_per_work to declare in experiments/<paper>/spec.py
    print(calibrate())
