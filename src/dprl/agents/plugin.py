"""The generic episode runner of plug-in algorithms (``dprl.experiments.registry``): any agent
that follows its setting's step protocol runs through the experiments of that setting.

Tabular step protocol (:class:`TabularStepAgent`; the built-in UBEV/PUCB agent
:class:`~dprl.agents.tabular.agent.OptimisticAgent` follows it too):

- ``policy() -> (H, S) ints``: the deterministic policy the agent commits to for the next
  episode (``policy[h, s]`` an available action of ``s``);
- ``observe(states, actions, rewards)``: that episode's trajectory (``H + 1`` states, ``H``
  actions and rewards).

The runner keeps the guarantees of the compiled loops: the job's streams are read in the
same order (environment uniforms ``env.draw_uniforms``, a fixed amount per episode whatever
the agent does, so every algorithm of a seed sees the same uniforms; the agent draws from
the ``agent_rng`` and ``noise_rng`` its factory was given), regret is exact (every committed
policy evaluated by backward induction on the true model, which the agent never sees),
checkpoints are summarised online (memory bounded by the block), and progress is reported
per block. Plain Python: a plug-in pays its own per-episode cost.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

import numpy as np
import pandas as pd

from dprl.agents.protocol import BuiltAgent, checked_checkpoints
from dprl.agents.tabular.episodes import regret_table
from dprl.envs.tabular import TabularMDP
from dprl.runner.online import CheckpointSummary


class TabularStepAgent(Protocol):
    def policy(self) -> np.ndarray: ...

    def observe(self, states: np.ndarray, actions: np.ndarray, rewards: np.ndarray) -> None: ...


def _checked_policy(policy: object, env: TabularMDP, episode: int) -> np.ndarray:
    """The committed policy as ``(H, S)`` int64, or a clear error naming the episode."""
    pi = np.asarray(policy)
    if pi.shape != (env.H, env.S) or not np.issubdtype(pi.dtype, np.integer):
        raise ValueError(f"episode {episode}: policy() must return an (H, S) = {(env.H, env.S)} integer array, "
                         f"got {pi.dtype} of shape {pi.shape}")
    if np.any(pi < 0) or np.any(pi >= env.n_actions[None, :]):
        raise ValueError(f"episode {episode}: policy() chose an action outside a state's available actions")
    return pi.astype(np.int64)


def run_tabular_episodes(
    built: BuiltAgent, env: TabularMDP, n_episodes: int, env_rng: np.random.Generator, checkpoints: np.ndarray,
    progress: Callable[[int, int], None] | None = None, *, alpha: float | None = None, block: int = 1024,
) -> pd.DataFrame:
    """Run ``n_episodes`` episodes of a :class:`TabularStepAgent`: the same table as the
    compiled loop (:func:`dprl.agents.tabular.episodes.run_episodes`): per checkpoint the
    cumulative exact regret ``Σ_t (ρ* − ρ^{π_t})``, the mean sampled return, the mean gap
    over the last tenth and, with ``alpha``, the number of α-suboptimal episodes."""
    summary = CheckpointSummary(checked_checkpoints(checkpoints, n_episodes), alpha)
    agent = built.agent
    rho_star = env.optimal_value
    policies = np.empty((block, env.H, env.S), dtype=np.int64)
    returns = np.empty(block)
    done = 0
    while done < n_episodes:
        b = min(block, n_episodes - done)
        uniforms = env.draw_uniforms(env_rng, b)
        for j in range(b):
            pi = _checked_policy(agent.policy(), env, done + j + 1)
            states, actions, rewards = env.rollout(pi, uniforms[j])
            agent.observe(states, actions, rewards)
            policies[j] = pi
            returns[j] = rewards.sum()
        summary.add(rho_star - env.policy_values(policies[:b]), returns[:b].copy())
        done += b
        if progress is not None:
            progress(done, n_episodes)
    return regret_table(summary)
