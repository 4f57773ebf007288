"""Accounted ε of the private LinOpt algorithms under replacement (named by their
declarations' ``accounting`` in ``spec.py``; see :mod:`dprl.experiments.accounting`)."""

from __future__ import annotations

from dprl.experiments.accounting import read_epsilon
from dprl.runner.job import JobContext, JobSpec


def linopt(spec: JobSpec) -> float | None:
    """The job's LinOpt agent on its own instance, built and not run
    (:func:`dprl.experiments.linmix.jobs.build_job_agent`), accounted from the σ's its two
    regularizers hold (:func:`dprl.agents.linmix.privacy.held_calibration`)."""
    from dprl.agents.linmix.privacy import held_calibration
    from dprl.experiments.linmix.jobs import build_job_agent

    return read_epsilon(held_calibration(build_job_agent(JobContext(spec))[1]))


def held(spec: JobSpec) -> float | None:
    """A private plug-in of the linmix setting, accounted from the noise its built agent holds
    (:func:`dprl.experiments.plugins.held_epsilon`)."""
    from dprl.experiments.linmix.jobs import build_job_agent
    from dprl.experiments.plugins import held_epsilon

    return held_epsilon(spec, build_job_agent)
