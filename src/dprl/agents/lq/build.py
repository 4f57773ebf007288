"""Building OFU-RL and Private-OFU-RL from a job's parameters (the factory of
:mod:`dprl.agents.protocol`) and the private noise path they share with the audits."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from dprl.agents.lq.calibration import PrivateOFUCalibration, private_ofu_calibration
from dprl.agents.lq.ofu import OFUAgent
from dprl.agents.lq.oracle import OptimisticOracle
from dprl.checks import check_number
from dprl.agents.protocol import BuiltAgent
from dprl.envs.lq import LQSystem
from dprl.privacy.regularizer import CentralRegularizer, NonPrivateRegularizer
from dprl.privacy.setting import PrivacySetting


def private_regularizer(
    cal: PrivateOFUCalibration, p: int, q: int, episodes: int, rng: np.random.Generator | None,
    batch_shape: tuple[int, ...] = (),
) -> CentralRegularizer:
    """Private-OFU-RL's noise path (Algorithm 1: counters B1, B2 and the shift ``η = 2Λ``).
    The agent uses ``batch_shape=()``; audits and privacy tests build the same object with a
    batch of independent runs."""
    return CentralRegularizer(batch_shape, p, q, episodes, cal.regularizer, rng)


def build_agent(
    name: str, params: Mapping[str, Any], privacy: PrivacySetting | None, env: LQSystem, n_episodes: int,
    agent_rng: np.random.Generator, noise_rng: np.random.Generator | None, *, printed: bool = False,
) -> BuiltAgent[OFUAgent, PrivateOFUCalibration]:
    """``ofu_rl`` (``H_k = λI``) or ``private_ofu_rl`` (Algorithm 1, ``paper``/``tight``) for
    ``n_episodes`` episodes of the system ``env`` (the factory of :mod:`dprl.agents.protocol`;
    the ridge ``λ`` of OFU-RL is its regularizer's ``lam``). ``printed=True`` (``paper``
    only; audits, never a job's agent): the σ's exactly as printed, for the null-user
    relation and with the zCDP ρ term dropped (:func:`private_ofu_calibration`), which the
    claims table judges under the paper's replacement relation."""
    if name not in REGULARIZERS:
        raise ValueError(f"unknown LQ algorithm {name!r}; choose one of {sorted(REGULARIZERS)}")
    system, episodes = env, n_episodes
    n, d = system.n, system.d
    check_number("n_candidates", params["n_candidates"], minimum=1, integer=True)
    check_number("alpha", params["alpha"], exclusive_minimum=0.0, maximum=1.0)
    oracle = OptimisticOracle(n, d, system.q, system.r, system.horizon, system.x1, system.noise_radius,
                              int(params["n_candidates"]), agent_rng)
    alpha = float(params["alpha"])
    reg, cal = REGULARIZERS[name](params, privacy, system, episodes, alpha, noise_rng, printed)
    # a private agent clips each user's vectors to Lemma 2's bounds (line 9), which its sensitivity assumes
    return BuiltAgent(OFUAgent(reg, oracle, n, d, system.noise_radius, system.gamma, alpha, clip=cal is not None), cal)


def _ridge(params: Mapping[str, Any], privacy: PrivacySetting | None, system: LQSystem, episodes: int, alpha: float,
           noise_rng: np.random.Generator | None, printed: bool) -> tuple[NonPrivateRegularizer, None]:
    """OFU-RL: ``H_k = λI``."""
    return NonPrivateRegularizer((), system.n + system.d, system.n, float(params["lam"])), None


def _private(params: Mapping[str, Any], privacy: PrivacySetting | None, system: LQSystem, episodes: int, alpha: float,
             noise_rng: np.random.Generator | None, printed: bool) -> tuple[CentralRegularizer, PrivateOFUCalibration]:
    """Private-OFU-RL: the counters B1, B2 of Algorithm 1 (:func:`private_regularizer`)."""
    if privacy is None or privacy.delta is None:
        raise ValueError("private_ofu_rl is (epsilon, delta)-JDP: it needs epsilon and delta")
    if printed and privacy.calibration != "paper":
        raise ValueError(f"the printed constants are the paper calibration's, not {privacy.calibration!r}")
    n, d = system.n, system.d
    cal = private_ofu_calibration(privacy, episodes, system.horizon, system.gamma, n, d, alpha,
                                  **({"relation": "null_user", "variant": "printed"} if printed else {}))
    return private_regularizer(cal, n + d, n, episodes, noise_rng), cal


# algorithm name -> its Regularizer (the only difference between OFU-RL and Private-OFU-RL)
REGULARIZERS = {"ofu_rl": _ridge, "private_ofu_rl": _private}

