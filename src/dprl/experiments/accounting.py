"""Accounted ε of a private simulation job under its paper's neighbouring relation
(replacement of one user by another; ``src/dprl/README.md``, "Neighbouring relations: replacement").

Each function builds the job's agent exactly as the job does, without running it, and
reads the accounting of the noise the built agent holds (``held_calibration`` of the
paper's ``agents/<paper>/privacy.py``: the ℓ1 sum for Laplace noise, the exact Gaussian-DP
profile (PLD) for Gaussian noise, from the scales in its ``PrivateStats``, regularizers or
estimator constants); nothing is recomputed from the config. Jobs record the number read
from the agent they ran (``JobContext.record_accounting``; column ``accounted_epsilon``);
:func:`check_accounting` refuses, before any job runs, a private job whose accounted ε
exceeds its nominal ε.

Imports NumPy/SciPy: called by ``dprl validate`` and once per workflow run (``onstart``),
never when Snakemake merely parses the workflow.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from dprl.experiments.registry import get_kind
from dprl.runner.job import JobContext, JobSpec

# relative tolerance for floating-point round-off in "accounted <= nominal"
TOLERANCE = 1e-9


def _read(calibration) -> float | None:
    """The accounted ε of a held calibration (``None``: the agent adds no noise)."""
    return None if calibration is None else float(calibration.accounted_epsilon)


def _pucb(spec: JobSpec) -> float | None:
    """The job's PUCB agent, built and not run (:func:`dprl.experiments.tabular.jobs.build_job_agent`),
    accounted from its own counters (:func:`dprl.agents.tabular.privacy.held_calibration`)."""
    from dprl.agents.tabular.privacy import held_calibration
    from dprl.experiments.tabular.jobs import build_job_agent

    return _read(held_calibration(build_job_agent(JobContext(spec))[1]))


def _dp_se(spec: JobSpec) -> float:
    """DP successive elimination: Laplace ``1/ε`` on disjoint epoch sums of {0,1} rewards,
    replacement ℓ1 sensitivity 1 (parallel composition; :class:`~dprl.agents.tabular.private_bai.SECalibration`)."""
    from dprl.agents.tabular.private_bai import se_calibration

    return se_calibration(spec.epsilon).accounted_epsilon


def _private_ofu_rl(spec: JobSpec) -> float | None:
    """The job's Private-OFU-RL agent on its own system, built and not run
    (:func:`dprl.experiments.lq.jobs.build_job_agent`), accounted from the σ's its
    regularizer holds (:func:`dprl.agents.lq.privacy.held_calibration`): both counters at
    ``Δ1 = H(1+γ)², Δ2 = H(1+γ)``, whose noise scales are proportional to them, so the
    accounted ε does not depend on the draw of the system (a test checks it)."""
    from dprl.agents.lq.privacy import held_calibration
    from dprl.experiments.lq.jobs import build_job_agent

    return _read(held_calibration(build_job_agent(JobContext(spec))[1]))


def _linopt(spec: JobSpec) -> float | None:
    """The job's LinOpt agent on its own instance, built and not run
    (:func:`dprl.experiments.linmix.jobs.build_job_agent`), accounted from the σ's its two
    regularizers hold (:func:`dprl.agents.linmix.privacy.held_calibration`)."""
    from dprl.agents.linmix.privacy import held_calibration
    from dprl.experiments.linmix.jobs import build_job_agent

    return _read(held_calibration(build_job_agent(JobContext(spec))[1]))


def _pe(spec: JobSpec) -> float | None:
    """The job's estimators, built (:func:`dprl.experiments.pe.jobs.job_accounted_epsilon`)
    and read (:func:`dprl.agents.pe.privacy.held_calibration`): DP-LSW/DP-LSL by NRS07's
    theorem for the ``(a, b)`` they hold (``src/dprl/README.md``), GS-DP-LSL by the analytic
    Gaussian ε of its σ."""
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
