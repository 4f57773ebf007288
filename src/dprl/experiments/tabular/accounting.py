"""Accounted ε of the tabular private algorithms under replacement (named by their
declarations' ``accounting`` in ``spec.py``; see :mod:`dprl.experiments.accounting`)."""

from __future__ import annotations

from dprl.experiments.accounting import read_epsilon
from dprl.runner.job import JobContext, JobSpec


def pucb(spec: JobSpec) -> float | None:
    """The job's PUCB agent, built and not run (:func:`dprl.experiments.tabular.jobs.build_job_agent`),
    accounted from its own counters (:func:`dprl.agents.tabular.privacy.held_calibration`)."""
    from dprl.agents.tabular.privacy import held_calibration
    from dprl.experiments.tabular.jobs import build_job_agent

    return read_epsilon(held_calibration(build_job_agent(JobContext(spec))[1]))


def dp_se(spec: JobSpec) -> float:
    """DP successive elimination: Laplace ``1/ε`` on disjoint epoch sums of {0,1} rewards,
    replacement ℓ1 sensitivity 1 (parallel composition; :class:`~dprl.agents.tabular.private_bai.SECalibration`)."""
    from dprl.agents.tabular.private_bai import se_calibration

    return se_calibration(spec.epsilon).accounted_epsilon


def held(spec: JobSpec) -> float | None:
    """A private plug-in of the tabular setting, accounted from the noise its built agent
    holds (:func:`dprl.experiments.plugins.held_epsilon`)."""
    from dprl.experiments.plugins import held_epsilon
    from dprl.experiments.tabular.jobs import build_job_agent

    return held_epsilon(spec, build_job_agent)
