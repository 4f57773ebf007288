"""Private UCB-VI with Hoeffding bonuses, planning from dprl's private counters.

Privacy is dprl's: the agent's only access to the data is ``PrivateStats.release()``, the
same Laplace tree counters as PUCB (ε-JDP under replacement by the billboard lemma), so the
built agent's calibration is PUCB's and dprl accounts and audits it like the built-in.
The planner is this plug-in's own: empirical model from the released counts, a Hoeffding
bonus ``H·sqrt(ln(2SAHT/β) / (2 ñ))`` plus the counters' error ``H·S·E / ñ``, values clipped
to the horizon left.
"""

from __future__ import annotations

import numpy as np

from dprl.agents.protocol import BuiltAgent
from dprl.agents.tabular.statistics import PrivateStats


class HoeffdingUCBVI:
    """The tabular step protocol of ``dprl.agents.plugin``: ``policy()`` then ``observe()``."""

    def __init__(self, source: PrivateStats, beta: float, bonus_scale: float, n_actions: np.ndarray) -> None:
        self.source, self.bonus_scale, self.n_actions = source, bonus_scale, n_actions
        S, A, H = source.S, source.A, source.H
        self.log_term = np.log(2 * S * A * H * source.T / beta)
        self.unavailable = np.arange(A)[None, :] >= n_actions[:, None]

    def policy(self) -> np.ndarray:
        st = self.source.release()
        S, H = st.S, st.H
        n = np.maximum(st.n - st.e, 1.0)  # a lower confidence bound on the visits
        reward = np.clip(st.r / n, 0.0, 1.0)
        m = np.clip(st.m, 0.0, None)
        total = m.sum(-1, keepdims=True)
        P = np.where(total > 0, m / np.where(total > 0, total, 1.0), 1.0 / S)
        bonus = self.bonus_scale * H * (np.sqrt(self.log_term / (2 * n)) + S * st.e / n)
        V = np.zeros(S)
        pi = np.empty((H, S), dtype=np.int64)
        for h in range(H - 1, -1, -1):
            Q = np.minimum(reward[h] + P[h] @ V + bonus[h], H - h)
            Q[self.unavailable] = -np.inf
            pi[h] = Q.argmax(axis=1)
            V = Q.max(axis=1)
        return pi

    def observe(self, states: np.ndarray, actions: np.ndarray, rewards: np.ndarray) -> None:
        self.source.update(states, actions, rewards)


def build(params, privacy, env, n_episodes, agent_rng, noise_rng) -> BuiltAgent:
    """The factory dprl calls (``Algorithm.factory``): ``PrivateStats`` sized for the job."""
    source = PrivateStats(env.S, env.A, env.H, n_episodes, privacy, params["beta"], noise_rng)
    return BuiltAgent(HoeffdingUCBVI(source, params["beta"], params["bonus_scale"], env.n_actions), source.calibration())
