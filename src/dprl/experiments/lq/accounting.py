"""Accounted ε of Private-OFU-RL under replacement (named by its declaration's
``accounting`` in ``spec.py``; see :mod:`dprl.experiments.accounting`)."""

from __future__ import annotations

from dprl.experiments.accounting import read_epsilon
from dprl.runner.job import JobContext, JobSpec


def private_ofu_rl(spec: JobSpec) -> float | None:
    """The job's Private-OFU-RL agent on its own system, built and not run
    (:func:`dprl.experiments.lq.jobs.build_job_agent`), accounted from the σ's its
    regularizer holds (:func:`dprl.agents.lq.privacy.held_calibration`): both counters at
    ``Δ1 = H(1+γ)², Δ2 = H(1+γ)``, whose noise scales are proportional to them, so the
    accounted ε does not depend on the draw of the system (a test checks it)."""
    from dprl.agents.lq.privacy import held_calibration
    from dprl.experiments.lq.jobs import build_job_agent

    return read_epsilon(held_calibration(build_job_agent(JobContext(spec))[1]))


def held(spec: JobSpec) -> float | None:
    """A private plug-in of the lq setting, accounted from the noise its built agent holds
    (:func:`dprl.experiments.plugins.held_epsilon`)."""
    from dprl.experiments.lq.jobs import build_job_agent
    from dprl.experiments.plugins import held_epsilon

    return held_epsilon(spec, build_job_agent)
