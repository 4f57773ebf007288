"""Accounted ε of a private simulation job under its paper's neighbouring relation
(replacement of one user by another; ``src/dprl/README.md``, "Neighbouring relations: replacement").

Each function rebuilds the job's calibration from its spec exactly as the job does and
returns the ε that the noise actually added gives under replacement: the ℓ1 sum for
Laplace noise, the exact Gaussian-DP profile (PLD) for Gaussian noise. Jobs record the same
number in their result files (column ``accounted_epsilon``); :func:`check_accounting`
refuses, before any job runs, a private job whose accounted ε exceeds its nominal ε.

Imports NumPy/SciPy: called by ``dprl validate`` and once per workflow run (``onstart``),
never when Snakemake merely parses the workflow.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from dprl.experiments.registry import get_kind
from dprl.runner.job import JobContext, JobSpec

# relative tolerance for floating-point round-off in "accounted <= nominal"
TOLERANCE = 1e-9


def _pucb(spec: JobSpec) -> float:
    """Laplace tree counters (Algorithm 2): ``3`` blocks (r̃, ñ, m̃), each element in ``L``
    nodes, one user moves each block by ``2H`` in ℓ1 under replacement (two one-hot
    indicators per step): ``ε_acc = 3 · L · 2H / b``."""
    from dprl.agents.tabular.calibration import counter_scale
    from dprl.privacy.tree_counter import tree_levels

    H = int(spec.environment["H"])
    # the episodes setting, or the horizon of a family tuned to T (tabular_hard: one job per T)
    T = int(spec.settings["episodes"]) if "episodes" in spec.settings else int(spec.environment["T"])
    b = counter_scale(spec.epsilon, H, T, int(spec.algorithm.get("l1_per_step", 2)))
    return 3.0 * tree_levels(T) * 2.0 * H / b


def _dp_se(spec: JobSpec) -> float:
    """DP successive elimination: Laplace ``1/ε`` on disjoint epoch sums of {0,1} rewards,
    replacement ℓ1 sensitivity 1 (parallel composition): ``ε_acc = ε``."""
    return spec.epsilon


def _private_ofu_rl(spec: JobSpec) -> float:
    """Both counters at the job's ``Δ1 = H(1+γ)², Δ2 = H(1+γ)``; the noise scales are
    proportional to them, so the accounted ε does not depend on ``γ`` or the draw of the
    system (``γ = 1`` here; a test checks the independence)."""
    from dprl.agents.lq.calibration import private_ofu_calibration

    env = spec.environment
    n, d = int(env.get("n", 2)), int(env.get("d", 1))
    cal = private_ofu_calibration(spec.privacy, int(spec.settings["episodes"]),
                                  int(env["horizon"]), 1.0, n, d, float(spec.algorithm["alpha"]))
    return cal.accounted_epsilon


def _linopt(spec: JobSpec) -> float:
    from dprl.agents.linmix.calibration import linopt_calibration
    from dprl.agents.linmix.build import ALGORITHMS
    from dprl.experiments.linmix.jobs import make_job_env

    feat = make_job_env(JobContext(spec)).features()  # the job's own instance
    _, scheme = ALGORITHMS[spec.algorithm["name"]]
    cal = linopt_calibration(spec.privacy, scheme, int(spec.settings.get("episodes", 2000)), feat,
                             float(spec.algorithm.get("alpha", 0.05)))
    return cal.accounted_epsilon


def _pe(spec: JobSpec) -> float | None:
    """DP-LSW/DP-LSL: the nominal ε by the smooth-sensitivity theorem (NRS07) for the
    (a, b) of ``src/dprl/README.md``; GS-DP-LSL: the analytic Gaussian ε of its σ
    (:func:`dprl.experiments.pe.jobs.job_accounted_epsilon`)."""
    from dprl.experiments.pe.jobs import job_accounted_epsilon

    return job_accounted_epsilon(spec)


# (experiment kind prefix, algorithm) -> accounting. Audit kinds are not listed: they
# exist to show that printed variants fail, and record their own exact ε.
ACCOUNTING: dict[tuple[str, str], Callable[[JobSpec], float | None]] = {
    ("tabular", "pucb"): _pucb,
    ("tabular", "dp_se"): _dp_se,
    ("lq", "private_ofu_rl"): _private_ofu_rl,
    ("linmix", "private_linopt_vi"): _linopt,
    ("linmix", "private_linopt_po"): _linopt,
    ("linmix", "ldp_linopt_vi"): _linopt,
    ("linmix", "ldp_linopt_po"): _linopt,
    ("pe", "dp_lsw"): _pe,
    ("pe", "dp_lsl"): _pe,
    ("pe", "gs_dp_lsl"): _pe,
}


def accounted_epsilon(spec: JobSpec) -> float | None:
    """The job's accounted ε under replacement, or ``None`` (non-private, or a mechanism
    audit that is meant to be checked by its audit)."""
    if spec.privacy is None or spec.kind.endswith("_audit"):
        return None
    # the kind's declared paper: "private_mab" is a tabular kind (its name's prefix is not the paper)
    fn = ACCOUNTING.get((get_kind(spec.kind).paper, spec.algorithm["name"]))
    acc = None if fn is None else fn(spec)
    return None if acc is None else float(acc)


def check_accounting(experiments: Iterable[tuple[str, str, JobSpec]]) -> list[str]:
    """Problems (one line each) for private jobs whose accounted ε exceeds the nominal ε.

    ``experiments`` yields ``(preset, experiment, spec)``; the seed does not enter a
    calibration, so each distinct spec-without-seed is accounted once.
    """
    seen: dict[str, float | None] = {}
    problems = []
    for preset, name, spec in experiments:
        key = repr((spec.kind, spec.algorithm, spec.environment, spec.privacy, spec.settings))
        if key not in seen:
            seen[key] = accounted_epsilon(spec)
            acc = seen[key]
            if acc is not None and acc > spec.epsilon * (1.0 + TOLERANCE):
                alg = ", ".join(f"{k}={v}" for k, v in spec.algorithm.items())
                where = f"experiments.{name}.privacy" + ("" if preset == "default" else f" (preset {preset})")
                problems.append(
                    f"{where}: {alg} on {spec.environment['name']} at epsilon={spec.epsilon:g}"
                    f"{'' if spec.delta is None else f', delta={spec.delta:g}'}, calibration={spec.calibration}: "
                    f"accounted epsilon under replacement (the paper's neighbouring relation) is {acc:.6g} > {spec.epsilon:g}; "
                    f"this calibration is not private at the nominal epsilon")
    return problems
