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


def _exact_stats(params: Mapping[str, Any], privacy: PrivacySetting | None, env: TabularMDP, n_episodes: int,
                 noise_rng: np.random.Generator | None) -> tuple[ExactStats, None]:
    """UBEV: exact counts, ``E = 0``."""
    return ExactStats(env.S, env.A, env.H), None


def _private_stats(params: Mapping[str, Any], privacy: PrivacySetting | None, env: TabularMDP, n_episodes: int,
                   noise_rng: np.random.Generator | None) -> tuple[PrivateStats, PUCBCalibration]:
    """PUCB: Laplace tree counters at ``privacy.epsilon`` with ``privacy.calibration``."""
    if privacy is None:
        raise ValueError("pucb is ε-JDP and needs a privacy setting")
    source = PrivateStats(env.S, env.A, env.H, n_episodes, privacy, params["beta"], noise_rng, params["l1_per_step"])
    return source, source.calibration()


# algorithm name -> its statistics source, the only difference between UBEV and PUCB
STATISTICS = {"ubev": _exact_stats, "pucb": _private_stats}


def build_agent(
    name: str, params: Mapping[str, Any], privacy: PrivacySetting | None, env: TabularMDP, n_episodes: int,
    agent_rng: np.random.Generator, noise_rng: np.random.Generator | None,
) -> BuiltAgent[OptimisticAgent, PUCBCalibration]:
    """``ubev`` (exact counts) or ``pucb`` (private counters at ``privacy.epsilon`` with
    ``privacy.calibration``) for ``n_episodes`` episodes of ``env`` (the factory of
    :mod:`dprl.agents.protocol`). ``params``: ``beta``, ``bonus_scale`` and, for ``pucb``,
    ``l1_per_step`` (the ℓ1 change of one step's indicators, 2 under replacement)."""
    if name not in STATISTICS:
        raise ValueError(f"unknown tabular agent {name!r}; choose one of {sorted(STATISTICS)}")
    source, calibration = STATISTICS[name](params, privacy, env, n_episodes, noise_rng)
    return BuiltAgent(OptimisticAgent(source, params["beta"], params["bonus_scale"], agent_rng, env.n_actions), calibration)
