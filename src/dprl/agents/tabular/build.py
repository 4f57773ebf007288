"""Building UBEV or PUCB from a job's parameters (the factory of :mod:`dprl.agents.protocol`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from dprl.agents.protocol import BuiltAgent
from dprl.agents.tabular.agent import OptimisticAgent
from dprl.agents.tabular.calibration import PUCBCalibration
from dprl.agents.tabular.statistics import (
    ExactStats,
    PrivateStats,
)
from dprl.envs.tabular import TabularMDP
from dprl.privacy.setting import PrivacySetting

# Laplace draws held at once (2N per episode): bounds the loop's memory for large S
_NOISE_DOUBLES = 1 << 20



def build_agent(
    name: str, params: Mapping[str, Any], privacy: PrivacySetting | None, env: TabularMDP, n_episodes: int,
    agent_rng: np.random.Generator, noise_rng: np.random.Generator | None,
) -> BuiltAgent[OptimisticAgent, PUCBCalibration]:
    """``ubev`` (exact counts) or ``pucb`` (private counters at ``privacy.epsilon`` with
    ``privacy.calibration``) for ``n_episodes`` episodes of ``env`` (the factory of
    :mod:`dprl.agents.protocol`). ``params``: ``beta``, ``bonus_scale`` and, for ``pucb``,
    ``l1_per_step`` (the ℓ1 change of one step's indicators, 2 under replacement)."""
    beta, bonus_scale = params["beta"], params["bonus_scale"]
    calibration = None
    if name == "ubev":
        source: ExactStats | PrivateStats = ExactStats(env.S, env.A, env.H)
    elif name == "pucb":
        if privacy is None:
            raise ValueError("pucb is ε-JDP and needs a privacy setting")
        source = PrivateStats(env.S, env.A, env.H, n_episodes, privacy, beta, noise_rng,
                              params["l1_per_step"])
        calibration = source.calibration()
    else:
        raise ValueError(f"unknown tabular agent {name!r}")
    return BuiltAgent(OptimisticAgent(source, beta, bonus_scale, agent_rng, env.n_actions), calibration)

