"""Accounted ε of the private policy-evaluation estimators under replacement (named by
their declarations' ``accounting`` in ``spec.py``; see :mod:`dprl.experiments.accounting`)."""

from __future__ import annotations

from dprl.runner.job import JobSpec


def estimator(spec: JobSpec) -> float | None:
    """The job's estimators, built (:func:`dprl.experiments.pe.jobs.job_accounted_epsilon`)
    and read (:func:`dprl.agents.pe.privacy.held_calibration`): DP-LSW/DP-LSL by NRS07's
    theorem for the ``(a, b)`` they hold (``src/dprl/README.md``), GS-DP-LSL by the analytic
    Gaussian ε of its σ."""
    from dprl.experiments.pe.jobs import job_accounted_epsilon

    return job_accounted_epsilon(spec)
