"""UBEV / PUCB (Algorithm 2): plan on released statistics, act greedily, feed the counters.

One implementation; the statistics source (:class:`ExactStats` or :class:`PrivateStats`)
is the only difference between the two algorithms.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from dprl.agents.tabular.planner import greedy_policy, priv_q
from dprl.agents.tabular.statistics import ExactStats, PrivateStats
from dprl.envs.tabular import TabularMDP


class OptimisticAgent:
    """Algorithm 2's loop body. ``policy()`` is "Private planning" + the greedy rule;
    ``observe`` is the two "Feed" lines."""

    def __init__(self, source: ExactStats | PrivateStats, beta: float, bonus_scale: float, tie_rng: np.random.Generator) -> None:
        self.source = source
        self.beta = beta
        self.bonus_scale = bonus_scale
        self.tie_rng = tie_rng
        self._shape = (source.H, source.S, source.A)

    def policy(self) -> np.ndarray:
        Q = priv_q(self.source.release(), self.beta, self.bonus_scale)
        return greedy_policy(Q, self.tie_rng.random(self._shape))

    def observe(self, states: np.ndarray, actions: np.ndarray, rewards: np.ndarray) -> None:
        self.source.update(states, actions, rewards)


def make_agent(
    name: str, env: TabularMDP, T: int, privacy: dict | None, beta: float, bonus_scale: float,
    agent_rng: np.random.Generator, noise_rng: np.random.Generator | None, l1_per_step: int = 2,
) -> OptimisticAgent:
    """``ubev`` (exact counts) or ``pucb`` (private counters at ``privacy["epsilon"]`` with
    ``privacy["calibration"]``)."""
    if name == "ubev":
        source: ExactStats | PrivateStats = ExactStats(env.S, env.A, env.H)
    elif name == "pucb":
        if privacy is None:
            raise ValueError("pucb is ε-JDP and needs a privacy setting")
        source = PrivateStats(env.S, env.A, env.H, T, float(privacy["epsilon"]), privacy["calibration"], beta, noise_rng, l1_per_step)
    else:
        raise ValueError(f"unknown tabular agent {name!r}")
    return OptimisticAgent(source, beta, bonus_scale, agent_rng)


@dataclass
class EpisodeLog:
    """Per-episode exact gap ``ρ* − ρ^{π_t}`` and sampled return (length ``T``)."""

    gap: np.ndarray
    sampled_return: np.ndarray
    optimal_value: float


def run_episodes(
    env: TabularMDP, agent: OptimisticAgent, T: int, env_rng: np.random.Generator,
    progress: Callable[[int, int], None] | None = None, block: int = 1024,
) -> EpisodeLog:
    """Run ``T`` episodes. Regret is exact: every committed policy is evaluated by
    backward induction on the true model, in batches of ``block`` episodes (vectorised
    over the batch; the agent never sees these values)."""
    rho_star = env.optimal_value
    gap = np.empty(T)
    ret = np.empty(T)
    block = max(1, min(block, 2_000_000 // (env.S * env.S)))
    policies = np.empty((block, env.H, env.S), dtype=np.intp)
    u = env.draw_uniforms(env_rng, min(block, T))
    for t in range(T):
        j = t % block
        if j == 0 and t:
            gap[t - block : t] = rho_star - env.policy_values(policies)
            u = env.draw_uniforms(env_rng, min(block, T - t))
        pi = agent.policy()
        policies[j] = pi
        states, actions, rewards = env.rollout(pi, u[j])
        ret[t] = rewards.sum()
        agent.observe(states, actions, rewards)
        if progress is not None and (t & 1023) == 1023:
            progress(t + 1, T)
    done = T - (T - 1) % block - 1  # start of the last (possibly partial) block
    gap[done:] = rho_star - env.policy_values(policies[: T - done])
    if progress is not None:
        progress(T, T)
    return EpisodeLog(gap, ret, rho_star)
