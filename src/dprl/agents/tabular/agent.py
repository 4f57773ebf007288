"""UBEV / PUCB (Algorithm 2): plan on released statistics, act greedily, feed the counters.

One implementation; the statistics source (:class:`ExactStats` or :class:`PrivateStats`)
is the only difference between the two algorithms. :class:`OptimisticAgent`'s
``policy``/``observe`` run the compiled planner kernels one step at a time (audits drive
the agent with hand-made users that way); the episode loop is
:mod:`dprl.agents.tabular.episodes`.
"""

from __future__ import annotations

import numpy as np

from dprl.agents.tabular.planner import greedy_policy, priv_q
from dprl.checks import check_number
from dprl.agents.tabular.statistics import (
    ExactStats,
    PrivateStats,
)



class OptimisticAgent:
    """Algorithm 2's loop body. ``policy()`` is "Private planning" + the greedy rule;
    ``observe`` is the two "Feed" lines."""

    def __init__(self, source: ExactStats | PrivateStats, beta: float, bonus_scale: float, tie_rng: np.random.Generator,
                 n_actions: np.ndarray | None = None) -> None:
        # checked here, not in the compiled planner: a NaN β or bonus scale makes every
        # confidence width NaN, every action tie, and the regret look far too good
        self.beta = check_number("beta", beta, exclusive_minimum=0.0, exclusive_maximum=1.0)
        self.bonus_scale = check_number("bonus_scale", bonus_scale, exclusive_minimum=0.0)
        self.source = source
        # the MDP's public action sets (TabularMDP.n_actions); all A if None
        self.n_actions = np.full(source.S, source.A, dtype=np.int64) if n_actions is None else np.asarray(n_actions, dtype=np.int64)
        self.tie_rng = tie_rng
        self._shape = (source.H, source.S, source.A)
        # measured burn-in (filled by feed_episodes): the last episode (1-based) whose
        # greedy policy was all-tied (0: none), how many were, the last episode in which a
        # watched pair was still clamped at H (regime.clamp_watch; 0: none), episodes run so far
        self.last_all_tied_episode = 0
        self.last_clamped_episode = 0
        self.all_tied_episodes = 0
        self.episodes_run = 0

    def policy(self) -> np.ndarray:
        Q = priv_q(self.source.release(), self.beta, self.bonus_scale, self.n_actions)
        return greedy_policy(Q, self.tie_rng.random(self._shape))

    def observe(self, states: np.ndarray, actions: np.ndarray, rewards: np.ndarray) -> None:
        self.source.update(states, actions, rewards)

