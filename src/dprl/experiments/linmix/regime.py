"""Predicted burn-in of a linear-mixture job before it runs (named by the rate kinds'
``predicted_burn_in`` in ``spec.py``; read by ``dprl validate`` through
:mod:`dprl.analysis.predicted_regime`).

The prediction is the one the job records (:func:`dprl.agents.linmix.regime.regime_columns`,
``burn_in_episodes`` and ``horizon_needed``): LinOpt's ``T*(k) = C·Σ w b²/g²`` from the radii
of its calibration for ``k`` episodes (:func:`dprl.agents.linmix.regime.linopt_burn_in`) on
the job's own instance (:func:`dprl.experiments.linmix.jobs.make_job_env`, once per seed:
:mod:`dprl.experiments.instances`). No agent is built; the instance is.
"""

from __future__ import annotations

from dprl.agents.linmix.build import ALGORITHMS
from dprl.agents.linmix.regime import linopt_burn_in
from dprl.experiments.base import BurnIn
from dprl.experiments.instances import shared_instance
from dprl.experiments.linmix.jobs import episodes
from dprl.experiments.plugins import plugin_of
from dprl.runner.job import JobContext, JobSpec


def burn_in(spec: JobSpec) -> BurnIn | None:
    """The job's :class:`~dprl.experiments.base.BurnIn` at its privatizer (central or local)
    and privacy setting; ``None`` for a non-private job and for a plug-in (no burn-in is
    predicted for either)."""
    if spec.privacy is None or plugin_of(spec) is not None:
        return None
    scheme = ALGORITHMS[spec.algorithm["name"]][1]
    alpha, lam = float(spec.algorithm["alpha"]), float(spec.algorithm.get("lam", 1.0))

    def t_star(k: int) -> float:
        return linopt_burn_in(shared_instance("dprl.experiments.linmix.jobs:make_job_env", spec), k, alpha, scheme,
                              spec.privacy, lam)

    # a family tuned to its horizon (linmix_hard) names it K in the environment
    return BurnIn(episodes(JobContext(spec)), t_star, "K", "" if "episodes" in spec.settings else "K")
