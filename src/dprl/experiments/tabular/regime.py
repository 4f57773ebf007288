"""Predicted burn-in of a tabular job before it runs (named by the rate kinds'
``predicted_burn_in`` in ``spec.py``; read by ``dprl validate`` through
:mod:`dprl.analysis.predicted_regime`).

The prediction is the one the job records (:mod:`dprl.experiments.tabular.jobs`,
``burn_in_episodes`` and ``horizon_needed``): PUCB's ``T*`` from its instance, ``T``, ``β``,
``bonus_scale`` and calibration (:func:`dprl.agents.tabular.regime.job_burn_in`), or a
plug-in's declared ``Algorithm.burn_in``, on the job's own instance (drawn from the same
stream as the job's, shared by the jobs of one seed: :mod:`dprl.experiments.instances`). No
agent is built (that compiles kernels); the instance is, when ``T*`` is first asked for.
"""

from __future__ import annotations

from dprl.agents.tabular.regime import job_burn_in
from dprl.experiments.base import BurnIn, load_ref
from dprl.experiments.instances import shared_instance
from dprl.experiments.plugins import plugin_of
from dprl.experiments.tabular.jobs import job_horizon
from dprl.runner.job import JobContext, JobSpec

INSTANCE = "dprl.experiments.tabular.jobs:instance"  # the job's own instance builder


def burn_in(spec: JobSpec) -> BurnIn | None:
    """The job's :class:`~dprl.experiments.base.BurnIn`: ``T*(k)`` on its instance at its
    privacy setting; ``None`` for a non-private job (no private setting to predict) and for a
    plug-in that declares no burn-in (its measured onset alone decides its rows)."""
    plugin = plugin_of(spec)
    if spec.privacy is None or (plugin is not None and not plugin.burn_in):
        return None
    if plugin is not None:
        predict = load_ref(plugin.burn_in)
        params = {k: v for k, v in spec.algorithm.items() if k != "name"}

        def t_star(k: int) -> float:
            return predict(params, spec.privacy, shared_instance(INSTANCE, spec), k)[1]
    else:
        a = spec.algorithm

        def t_star(k: int) -> float:
            return job_burn_in(shared_instance(INSTANCE, spec), spec.privacy, k, a["beta"], a["bonus_scale"],
                               a.get("l1_per_step"))[1]
    # a family tuned to its horizon (tabular_hard) names it T in the environment
    return BurnIn(job_horizon(JobContext(spec)), t_star, "T", "" if "episodes" in spec.settings else "T")
