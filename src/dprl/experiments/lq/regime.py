"""Predicted burn-in of an LQ job before it runs (named by ``lq_regret``'s
``predicted_burn_in`` in ``spec.py``; read by ``dprl validate`` through
:mod:`dprl.analysis.predicted_regime`).

The prediction is the one the job records (:func:`dprl.experiments.lq.jobs.run_regret`,
``burn_in_episodes`` and ``horizon_needed``): Private-OFU-RL's onset at
``ONSET_K_OVER_LAMBDA·Λ(k)`` (:func:`dprl.agents.lq.regime.predicted_onset`), ``Λ(k)`` the
``λ_min`` of its calibration for ``k`` episodes on the job's own system
(:func:`dprl.agents.lq.calibration.private_ofu_calibration`, as the agent's factory calls it).
No agent is built; the system is (once per seed: :mod:`dprl.experiments.instances`).
"""

from __future__ import annotations

from dprl.agents.lq.calibration import private_ofu_calibration
from dprl.agents.lq.regime import predicted_onset
from dprl.envs.lq import LQSystem
from dprl.experiments.base import BurnIn
from dprl.experiments.instances import shared_instance
from dprl.experiments.lq.jobs import make_system
from dprl.experiments.plugins import plugin_of
from dprl.runner.job import JobContext, JobSpec


def instance(ctx: JobContext) -> LQSystem:
    """The job's system, drawn as :func:`dprl.experiments.lq.jobs.build_job_agent` draws it."""
    return make_system(ctx.spec.environment, ctx)


INSTANCE = f"{__name__}:instance"


def burn_in(spec: JobSpec) -> BurnIn | None:
    """The job's :class:`~dprl.experiments.base.BurnIn`, ``T*(k) = 270·Λ(k)``; ``None`` for a
    non-private job and for a plug-in (no burn-in is predicted for either)."""
    if spec.privacy is None or plugin_of(spec) is not None:
        return None
    alpha = float(spec.algorithm["alpha"])

    def t_star(k: int) -> float:
        system = shared_instance(INSTANCE, spec)
        cal = private_ofu_calibration(spec.privacy, k, system.horizon, system.gamma, system.n, system.d, alpha)
        return predicted_onset(cal.regularizer.lam_min)

    return BurnIn(int(spec.settings["episodes"]), t_star, "K")
