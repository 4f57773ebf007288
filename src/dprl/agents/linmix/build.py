"""Building a LinOpt agent from a job's algorithm/privacy description (the factory of
:mod:`dprl.agents.protocol`) and the Privatizer's noise path it shares with the audits."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from dprl.agents.linmix.calibration import LinOptCalibration, linopt_calibration
from dprl.agents.linmix.linopt import LinOptAgent
from dprl.agents.protocol import BuiltAgent
from dprl.checks import check_number
from dprl.envs.linear_mixture import KnownFeatures, LinearMixtureMDP
from dprl.privacy.regularizer import (
    CentralRegularizer,
    LocalRegularizer,
    NonPrivateRegularizer,
    Regularizer,
    RegularizerCalibration,
)
from dprl.privacy.setting import PrivacySetting

# algorithm name -> (mode, privatizer)
ALGORITHMS: dict[str, tuple[str, str]] = {
    "ucrl_vtr": ("vi", "none"),
    "private_linopt_vi": ("vi", "central"),
    "ldp_linopt_vi": ("vi", "local"),
    "oppo": ("po", "none"),
    "private_linopt_po": ("po", "central"),
    "ldp_linopt_po": ("po", "local"),
}


def privatizers(
    scheme: str, cal_p: RegularizerCalibration, cal_r: RegularizerCalibration, feat: KnownFeatures, K: int,
    rng: np.random.Generator | None, noise: bool = True, batch_shape: tuple[int, ...] = (),
) -> tuple[Regularizer, Regularizer]:
    """The Privatizer's noise path (Sec. 6.1 central, Remark 6.9 local): one Regularizer for
    the transition regression (``p = d1``) and one for the reward (``p = d2``), each with a
    regression per step ``h``. The agent uses ``batch_shape=()``; audits and privacy tests
    build the same objects with a leading batch of independent runs."""
    H = feat.horizon
    shape = (*batch_shape, H)
    if scheme == "central":
        return (CentralRegularizer(shape, feat.d1, 1, K, cal_p, rng, noise=noise),
                CentralRegularizer(shape, feat.d2, 1, K, cal_r, rng, noise=noise))
    if scheme == "local":
        return (LocalRegularizer(shape, feat.d1, 1, cal_p, rng, noise=noise),
                LocalRegularizer(shape, feat.d2, 1, cal_r, rng, noise=noise))
    raise ValueError(f"unknown privatizer scheme {scheme!r}")


def build_agent(
    name: str,
    params: Mapping[str, Any],
    privacy: PrivacySetting | None,
    env: LinearMixtureMDP | KnownFeatures,
    n_episodes: int,
    agent_rng: np.random.Generator,
    noise_rng: np.random.Generator | None,
    *,
    noise: bool = True,
    override: tuple[RegularizerCalibration, RegularizerCalibration] | None = None,
    printed: bool = False,
) -> BuiltAgent[LinOptAgent, LinOptCalibration]:
    """The algorithm ``name`` (:data:`ALGORITHMS`) with its config ``params`` at ``privacy``
    for ``n_episodes`` episodes (the factory of :mod:`dprl.agents.protocol`). The agent knows
    only the features of ``env`` (:meth:`LinearMixtureMDP.features`; tests may pass the
    :class:`KnownFeatures` directly). ``noise=False``: exact counters; ``override``: explicit
    (p, r) calibrations (tests: noise-free central privatizer); ``printed=True`` (``paper``
    only; audits, never a job's agent): the constants exactly as printed
    (:func:`linopt_calibration`, ``variant="printed"``), which the claims table judges under
    the paper's replacement relation."""
    if name not in ALGORITHMS:
        raise ValueError(f"unknown linear-mixture algorithm {name!r}; choose one of {sorted(ALGORITHMS)}")
    feat = env.features() if isinstance(env, LinearMixtureMDP) else env
    K = n_episodes
    mode, scheme = ALGORITHMS[name]
    H, d1, d2 = feat.horizon, feat.d1, feat.d2
    alpha = float(params["alpha"])
    eta = None
    if mode == "po":
        A = feat.A
        eta = float(check_number("eta_scale", params["eta_scale"], exclusive_minimum=0.0)) * np.sqrt(2.0 * np.log(max(A, 2)) / (H**2 * K))
    cal = None
    if scheme == "none":
        lam = float(params["lam"])
        reg_p = NonPrivateRegularizer((H,), d1, 1, lam)
        reg_r = NonPrivateRegularizer((H,), d2, 1, lam)
    else:
        if override is not None:
            cal_p, cal_r = override
        else:
            if privacy is None:
                raise ValueError(f"{name} is private and needs epsilon, delta and calibration")
            if printed and privacy.calibration != "paper":
                raise ValueError(f"the printed constants are the paper calibration's, not {privacy.calibration!r}")
            cal = linopt_calibration(privacy, scheme, K, feat, alpha, variant="printed" if printed else "corrected")
            cal_p, cal_r = cal.p, cal.r
        reg_p, reg_r = privatizers(scheme, cal_p, cal_r, feat, K, noise_rng, noise=noise)
    agent = LinOptAgent(feat, K, reg_p, reg_r, mode, alpha, agent_rng, eta)
    return BuiltAgent(agent, cal)

