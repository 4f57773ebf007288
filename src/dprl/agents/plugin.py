"""The generic episode runners of plug-in algorithms (``dprl.experiments.registry``): any agent
that follows its setting's step protocol runs through the experiments of that setting
(``tabular``, ``lq``, ``linmix``). Each runner gives the columns of its setting's compiled
loop that do not depend on the algorithm (episode, cumulative exact regret, sampled return).

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

Tabular block protocol (compiled; :class:`TabularBlockKernel`): an agent that also has an
attribute ``block_kernel`` (read once per run) giving ``TabularBlockKernel(plan, learn,
state)`` is run one block of episodes at a time in ONE compiled loop (:func:`_kernel_block`)
that calls the plug-in's own ``numba.njit`` functions:

- ``plan(state, k, policy_out) -> None``: write the policy of the run's episode ``k``
  (0-based) into ``policy_out``, an ``(H, S)`` int64 array (``policy()``);
- ``learn(state, k, states, actions, rewards) -> None``: that episode's trajectory
  (int64 ``(H+1,)``, int64 ``(H,)``, float ``(H,)``; ``observe()``);
- ``state``: a tuple of NumPy arrays, scalars and, if needed, ``np.random.Generator`` objects
  (and nested tuples of them) that the two functions read and mutate in place; it must be
  the agent's own arrays, so the agent's Python side sees what the compiled loop did.

The loop rolls out with the runner's compiled rollout on the same environment uniforms as
the step path (``env.draw_uniforms``, :func:`~dprl.envs.tabular.rollout_into`; the agent
never sees the model), refuses a policy with an action outside a state's available actions
(a ``ValueError`` naming the episode), and records the exact gaps and sampled returns with
the step path's floating-point operations: an agent implementing both protocols gives the
same table either way. dprl's counters are open to compiled code: ``PrivateStats.kernel_state()``
(and ``ExactStats.kernel_state()``, same layout) with the njit kernels
:func:`~dprl.agents.tabular.statistics.feed_stats` ``(ks, states, actions, rewards)`` and
:func:`~dprl.agents.tabular.statistics.release_stats` ``(ks) -> (values, E)``: the kernels and
noise draws of ``PrivateStats.update`` / ``release``, so after a block the counters (``t``,
tree arrays, the ``drawn`` record) are as the step path leaves them and the job's accounting
and audits read them as for any plug-in.

LQ step protocol (:class:`LQStepAgent`; OFU-RL's ``act().gains`` / ``observe``):

- ``policy() -> (H, d, n) floats``: the linear feedback ``u_h = K_h x_h`` of the next episode;
- ``observe(states, controls)``: that episode's ``H + 1`` states ``(H+1, n)`` and ``H``
  controls ``(H, d)`` (the costs are known: ``Q``, ``R``).

The environment noise of episode ``k`` is the ``k``-th block of ``H`` ball draws of the
environment stream (``ball_noise_into``, as in :mod:`dprl.agents.lq.loop`), and regret is
the exact ``J^{π_k}_1 − J*_1`` (eq. 6, ``policy_cost_one`` on the true ``Θ*``).

Linear-mixture step protocol (:class:`LinmixStepAgent`; LinOpt's ``begin_episode`` +
``act_policy`` / ``end_episode``):

- ``policy() -> (H, S, A) floats``: the (possibly stochastic) policy of the next episode,
  each ``policy[h, s]`` a distribution over actions;
- ``observe(states, actions, rewards)``: that episode's trajectory (``H + 1`` states).

``2H`` environment uniforms per episode (next state, reward), drawn whatever the agent
does (as the compiled loop, :mod:`dprl.agents.linmix.loop`). A deterministic policy (every
row one-hot) is played as is; a stochastic one draws its ``H`` action uniforms from the
``action_rng`` the job gives, its ``agent_rng``, by inverse CDF, as LinOpt-PO's loop does,
so a built-in run through this runner is its compiled run. Regret is exact: ``V*_1(s_1) −
V^{π_k}_1(s_1)`` by backward induction on the true model.

A private plug-in that adds its noise through dprl's objects exposes them on its agent, and
is then accounted from the σ's / scales they hold and audited by its setting's audit like
the built-ins: ``source`` (tabular, a ``PrivateStats``), ``regularizer`` (LQ, Private-OFU-RL's
``CentralRegularizer``), ``reg_p`` and ``reg_r`` (linear mixture, the Privatizer's
regularizers). In ``linmix_audit`` its factory receives the audit's ``KnownFeatures``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np
import pandas as pd
from numba import njit
from numba.core.registry import CPUDispatcher

from dprl.agents.protocol import BuiltAgent, checked_checkpoints
from dprl.agents.tabular.episodes import regret_table
from dprl.envs.linear_mixture import LinearMixtureMDP
from dprl.envs.lq import LQSystem, RegretEvaluator, policy_cost_one, rollout
from dprl.envs.tabular import TabularMDP, policy_value_of, rollout_into
from dprl.runner.online import CheckpointSummary, pairwise_sum


class TabularStepAgent(Protocol):
    def policy(self) -> np.ndarray: ...

    def observe(self, states: np.ndarray, actions: np.ndarray, rewards: np.ndarray) -> None: ...


@dataclass(frozen=True)
class TabularBlockKernel:
    """A tabular plug-in's compiled block protocol (module docstring): ``plan(state, k,
    policy_out)`` and ``learn(state, k, states, actions, rewards)`` are ``numba.njit``
    functions, ``state`` the tuple of arrays/scalars/generators they mutate."""

    plan: Any
    learn: Any
    state: tuple

    def __post_init__(self) -> None:
        for name in ("plan", "learn"):
            if not isinstance(getattr(self, name), CPUDispatcher):
                raise TypeError(f"TabularBlockKernel.{name} must be a numba.njit function, "
                                f"got {type(getattr(self, name)).__name__}")
        if not isinstance(self.state, tuple):
            raise TypeError(f"TabularBlockKernel.state must be a tuple, got {type(self.state).__name__}")


@njit
def _kernel_block(
    plan: Any, learn: Any, state: tuple, k0: int, cdf: np.ndarray, cdf_p0: np.ndarray, R: np.ndarray,
    next_reward: np.ndarray, has_next_reward: bool, n_actions: np.ndarray, u: np.ndarray, policies: np.ndarray,
    returns: np.ndarray, P: np.ndarray, p0: np.ndarray, rho_star: float, gaps: np.ndarray,
) -> int:
    """Episodes ``k0 .. k0 + len(u) − 1`` of a :class:`TabularBlockKernel` (compiled; the step
    path of :func:`run_tabular_episodes` op for op): returns ``-1``, or the block index of the
    first episode whose policy chose an unavailable action (nothing of it rolled out)."""
    H, S = policies.shape[1], policies.shape[2]
    states = np.empty(H + 1, dtype=np.int64)
    actions = np.empty(H, dtype=np.int64)
    rewards = np.empty(H)
    v_scratch = np.empty(S)
    w_scratch = np.empty(S)
    for j in range(u.shape[0]):
        pi = policies[j]
        plan(state, k0 + j, pi)
        for h in range(H):
            for s in range(S):
                if pi[h, s] < 0 or pi[h, s] >= n_actions[s]:
                    return j
        rollout_into(cdf, cdf_p0, R, next_reward, has_next_reward, pi, u[j], states, actions, rewards)
        learn(state, k0 + j, states, actions, rewards)
        returns[j] = pairwise_sum(rewards, 0, H)  # rewards.sum()
        gaps[j] = rho_star - policy_value_of(P, R, p0, pi, v_scratch, w_scratch)  # ρ* − env.policy_values
    return -1


class LQStepAgent(Protocol):
    def policy(self) -> np.ndarray: ...

    def observe(self, states: np.ndarray, controls: np.ndarray) -> None: ...


class LinmixStepAgent(Protocol):
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
    kernel = getattr(agent, "block_kernel", None)
    if kernel is not None and not isinstance(kernel, TabularBlockKernel):
        raise TypeError(f"agent.block_kernel must be a dprl.agents.plugin.TabularBlockKernel, got {type(kernel).__name__}")
    rho_star = env.optimal_value
    policies = np.empty((block, env.H, env.S), dtype=np.int64)
    returns = np.empty(block)
    gaps = np.empty(block)
    model = env.kernel_model()
    done = 0
    while done < n_episodes:
        b = min(block, n_episodes - done)
        uniforms = env.draw_uniforms(env_rng, b)
        if kernel is not None:
            bad = _kernel_block(kernel.plan, kernel.learn, kernel.state, done, *model, env.n_actions, uniforms,
                                policies[:b], returns[:b], env.P, env.p0, rho_star, gaps[:b])
            if bad >= 0:
                raise ValueError(f"episode {done + bad + 1}: block_kernel.plan chose an action outside a state's "
                                 "available actions")
            summary.add(gaps[:b].copy(), returns[:b].copy())
            done += b
            if progress is not None:
                progress(done, n_episodes)
            continue
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


def _checked_array(value: object, shape: tuple[int, ...], what: str, episode: int) -> np.ndarray:
    """``value`` as a finite float array of ``shape``, or a clear error naming the episode."""
    arr = np.asarray(value)
    if arr.shape != shape or not np.issubdtype(arr.dtype, np.number) or not np.all(np.isfinite(arr)):
        raise ValueError(f"episode {episode}: policy() must return finite {what} of shape {shape}, "
                         f"got {arr.dtype} of shape {arr.shape}")
    return np.ascontiguousarray(arr, dtype=float)


def run_lq_episodes(
    built: BuiltAgent, env: LQSystem, n_episodes: int, env_rng: np.random.Generator, checkpoints: np.ndarray,
    progress: Callable[[int, int], None] | None = None, *, block: int = 1024,
) -> pd.DataFrame:
    """Run ``K = n_episodes`` episodes of an :class:`LQStepAgent` on the system ``env``: per
    checkpoint the cumulative exact regret ``Σ_k (J^{π_k}_1 − J*_1)`` (eq. 6), the sampled
    one, the last episode's exact regret and ``J*_1``: the columns of
    :func:`dprl.agents.lq.episodes.run_episodes` that do not depend on the algorithm, with the
    same floating-point operations (sequential sums of ``policy_cost_one``)."""
    marks = checked_checkpoints(checkpoints, n_episodes)
    agent = built.agent
    system = env
    optimal = RegretEvaluator(system).optimal
    shape = (system.horizon, system.d, system.n)
    cum = cum_sampled = last = 0.0
    rows, m = [], 0
    for k in range(1, n_episodes + 1):
        gains = _checked_array(agent.policy(), shape, "gains K_h (H, d, n)", k)
        noise = system.sample_noise(env_rng, system.horizon)  # the k-th block of H ball draws
        states, controls, cost = rollout(system, gains, noise)
        agent.observe(states, controls)
        last = policy_cost_one(system.a, system.b, system.q, system.r, gains, system.w_cov, system.x1) - optimal
        cum += last
        cum_sampled += cost - optimal
        if m < marks.size and k == marks[m]:
            rows.append({"episode": k, "regret": cum, "regret_sampled": cum_sampled, "episode_regret": last,
                         "optimal_cost": optimal})
            m += 1
        if progress is not None and (k % block == 0 or k == n_episodes):
            progress(k, n_episodes)
    return pd.DataFrame(rows)


def run_linmix_episodes(
    built: BuiltAgent, env: LinearMixtureMDP, n_episodes: int, env_rng: np.random.Generator, checkpoints: np.ndarray,
    progress: Callable[[int, int], None] | None = None, *, action_rng: np.random.Generator, block: int = 1024,
) -> pd.DataFrame:
    """Run ``K = n_episodes`` episodes of a :class:`LinmixStepAgent`: per checkpoint the
    cumulative exact regret ``Σ_k (V*_1(s_1) − V^{π_k}_1(s_1))``, the cumulative sampled
    return and ``V*_1(s_1)``: the columns of :func:`dprl.agents.linmix.episodes.run_episodes`
    that do not depend on the algorithm (``T = K·H`` steps)."""
    marks = checked_checkpoints(checkpoints, n_episodes)
    agent = built.agent
    H, S, A = env.horizon, env.S, env.A
    v_star = float(env.optimal_values()[0, env.s1])
    states = np.empty(H + 1, dtype=np.int64)
    actions = np.empty(H, dtype=np.int64)
    rewards = np.empty(H)
    cum_regret = cum_return = 0.0
    rows, m, done = [], 0, 0
    while done < n_episodes:
        b = min(block, n_episodes - done)
        u = env_rng.random((b, H, 2))  # 2H uniforms per episode, used or not
        for j in range(b):
            k = done + j + 1
            pi = _checked_array(agent.policy(), (H, S, A), "action distributions (H, S, A)", k)
            if np.any(pi < 0) or not np.allclose(pi.sum(axis=2), 1.0, atol=1e-9):
                raise ValueError(f"episode {k}: policy() must give a distribution over actions in every (h, s)")
            cum_regret += v_star - env.policy_value(pi)
            stochastic = not np.all((pi == 0.0) | (pi == 1.0))
            a_u = action_rng.random(H) if stochastic else None
            s = env.s1
            states[0] = s
            for h in range(H):
                a = int(pi[h, s].argmax()) if a_u is None else \
                    int(min(np.searchsorted(np.cumsum(pi[h, s]), a_u[h], side="right"), A - 1))
                actions[h] = a
                rewards[h], s = env.step(s, a, u[j, h, 0], u[j, h, 1])
                states[h + 1] = s
            cum_return += rewards.sum()
            agent.observe(states.copy(), actions.copy(), rewards.copy())
            if m < marks.size and k == marks[m]:
                rows.append({"episode": k, "T": k * H, "regret": cum_regret, "sampled_return": cum_return,
                             "optimal_value": v_star})
                m += 1
        done += b
        if progress is not None:
            progress(done, n_episodes)
    return pd.DataFrame(rows)
