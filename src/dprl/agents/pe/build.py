"""Building the 2016 paper's estimators from a job's parameters (the factory of
:mod:`dprl.agents.protocol`, with ``env`` the :class:`EstimationTask`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from dprl.agents.pe.estimators import DPLSL, DPLSW, LSL, LSW
from dprl.agents.protocol import BuiltAgent
from dprl.privacy.setting import PrivacySetting
from dprl.privacy.smooth_sensitivity import SmoothGaussianConstants

ESTIMATORS = ("lsw", "lsl", "dp_lsw", "dp_lsl", "gs_dp_lsl")
PRIVATE_ESTIMATORS = ("dp_lsw", "dp_lsl", "gs_dp_lsl")


@dataclass(frozen=True)
class EstimationTask:
    """What an estimator knows of its environment (the factory's ``env``): the feature map
    ``phi`` (states × d), the state weights ``rho`` of the weighted error and the bound
    ``f_max`` on the returns."""

    phi: np.ndarray
    rho: np.ndarray
    f_max: float


def build_agent(
    name: str, params: Mapping[str, Any], privacy: PrivacySetting | None, env: EstimationTask, *,
    estimator_class: type | None = None,
) -> BuiltAgent[LSW | LSL, SmoothGaussianConstants]:
    """The factory of :mod:`dprl.agents.protocol` for this paper's estimators: ``name`` with
    its config ``params`` (``c``, ``p`` for the LSL family) at ``privacy`` for the task
    ``env``; the calibration is the mechanism's smooth-sensitivity constants ``(a, b)``
    (``None`` for LSW/LSL). The parameters stop after ``env``: there are no episodes (the
    estimators are evaluated on nested batches of trajectories) and no random stream at
    build time (the noise is drawn by ``release``).

    A private estimator needs a δ and is built under ``privacy.calibration`` (``paper``: the
    spec's Frobenius constants; ``tight``: operator norms, :mod:`dprl.agents.pe.bounds`). ``estimator_class``
    (audits only): a class with the estimator's constructor, e.g. a deliberately broken
    variant of :mod:`dprl.agents.pe.broken`.
    """
    if name not in ESTIMATORS:
        raise ValueError(f"unknown policy-evaluation algorithm {name!r}; choose one of {ESTIMATORS}")
    private = name in PRIVATE_ESTIMATORS
    if private:
        if privacy is None or privacy.delta is None:
            raise ValueError(f"algorithm {name!r} is (epsilon, delta)-DP: it needs a privacy setting with epsilon and delta")
    est = (BUILDERS[name])(estimator_class, params, privacy, env)
    return BuiltAgent(est, est.const if private else None)


def _lsw(cls: type | None, params: Mapping[str, Any], privacy: PrivacySetting | None, env: EstimationTask) -> LSW:
    return (cls or LSW)(env.phi, env.rho)


def _lsl(cls: type | None, params: Mapping[str, Any], privacy: PrivacySetting | None, env: EstimationTask) -> LSL:
    return (cls or LSL)(env.phi, env.rho, params["c"], params["p"])


def _dp_lsw(cls: type | None, params: Mapping[str, Any], privacy: PrivacySetting, env: EstimationTask) -> DPLSW:
    return (cls or DPLSW)(env.phi, env.rho, env.f_max, privacy.epsilon, float(privacy.delta),
                          calibration=privacy.calibration)


def _dp_lsl(smooth: bool):
    """DP-LSL with smooth sensitivity (``dp_lsl``) or its global-sensitivity variant (``gs_dp_lsl``)."""
    def build(cls: type | None, params: Mapping[str, Any], privacy: PrivacySetting, env: EstimationTask) -> DPLSL:
        return (cls or DPLSL)(env.phi, env.rho, params["c"], params["p"], env.f_max, privacy.epsilon, float(privacy.delta),
                              smooth=smooth, calibration=privacy.calibration)
    return build


# estimator name -> its constructor call
BUILDERS = {"lsw": _lsw, "lsl": _lsl, "dp_lsw": _dp_lsw, "dp_lsl": _dp_lsl(True), "gs_dp_lsl": _dp_lsl(False)}
