"""Reference oracle for the compiled UBEV/PUCB loop: the plain NumPy implementation the
package ran before its loops were compiled (one episode at a time, per-episode arrays of length ``T``),
kept verbatim in the tests only. ``tests/tabular/test_compiled_loop.py`` checks that the
compiled loop reproduces its per-episode regret exactly; the benchmarks time both.

It reads the job's three random streams in the same order as the compiled loop (tie keys,
environment uniforms, Laplace noise ``E`` and its sign words per episode) and uses the package's
``LaplaceNoise`` and calibration functions, so only the loop differs; it counts with the plain
NumPy binary mechanism of ``tree_reference.py``, not the compiled kernel the loop shares with
``TreeCounter``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from tree_reference import PlainTreeCounter

from dprl.agents.tabular import calibration as cal
from dprl.agents.tabular.agent import OptimisticAgent
from dprl.envs.tabular import TabularMDP
from dprl.privacy.noise import LaplaceNoise


@dataclass(frozen=True)
class ReleasedStats:
    r: np.ndarray
    n: np.ndarray
    m: np.ndarray
    e: float


def episode_indicators(S: int, A: int, H: int, states: np.ndarray, actions: np.ndarray, rewards: np.ndarray) -> np.ndarray:
    sah = S * A * H
    x = np.zeros(2 * sah + sah * S)
    h = np.arange(H)
    i = (h * S + states[:H]) * A + actions
    x[i] = rewards
    x[sah + i] = 1.0
    x[2 * sah + i * S + states[1 : H + 1]] = 1.0
    return x


class ExactStats:
    def __init__(self, S: int, A: int, H: int) -> None:
        self.S, self.A, self.H = S, A, H
        self._r = np.zeros((H, S, A))
        self._n = np.zeros((H, S, A))
        self._m = np.zeros((H, S, A, S))
        self._h = np.arange(H)
        self._released = ReleasedStats(self._r, self._n, self._m, 0.0)

    def update(self, states: np.ndarray, actions: np.ndarray, rewards: np.ndarray) -> None:
        h, s, a = self._h, states[: self.H], actions
        self._r[h, s, a] += rewards
        self._n[h, s, a] += 1.0
        self._m[h, s, a, states[1:]] += 1.0

    def release(self) -> ReleasedStats:
        return self._released


class PrivateStats:
    def __init__(self, S: int, A: int, H: int, T: int, epsilon: float, calibration: str, beta: float,
                 rng: np.random.Generator | None, l1_per_step: int = 2, noise_multiplier: float = 1.0) -> None:
        self.S, self.A, self.H, self.T = S, A, H, T
        self.scale = cal.counter_scale(epsilon, H, T, l1_per_step) * noise_multiplier
        noise = LaplaceNoise(self.scale) if noise_multiplier > 0 else None
        self.counter = PlainTreeCounter(cal.n_counters(S, A, H), T, noise, rng)
        if calibration == "paper":
            self._e = np.full(T + 1, cal.e_eps_paper(epsilon, S, A, H, T, beta, l1_per_step))
        else:
            self._e = cal.e_eps_tight(epsilon, S, A, H, T, beta, l1_per_step)
        self._e = self._e * noise_multiplier
        self._sah = S * A * H

    def update(self, states: np.ndarray, actions: np.ndarray, rewards: np.ndarray) -> None:
        self.counter.update(episode_indicators(self.S, self.A, self.H, states, actions, rewards))

    def release(self) -> ReleasedStats:
        flat = self.counter.release()
        S, A, H, k = self.S, self.A, self.H, self._sah
        return ReleasedStats(flat[:k].reshape(H, S, A), flat[k : 2 * k].reshape(H, S, A),
                             flat[2 * k :].reshape(H, S, A, S), float(self._e[min(self.counter.t + 1, self.T)]))


def priv_q(stats: ReleasedStats, beta: float, bonus_scale: float = 1.0, n_actions: np.ndarray | None = None) -> np.ndarray:
    r, n, m, E = stats.r, stats.n, stats.m, stats.e
    H, S, A = n.shape
    invalid = np.arange(A)[None, :] >= (np.full(S, A) if n_actions is None else np.asarray(n_actions))[:, None]
    unknown = n < max(2.0 * E, 1.0)
    n_safe = np.where(unknown, 1.0, n)
    inv_n = 1.0 / n_safe
    phi = np.sqrt((2.0 * np.log(n_safe + E) + 2.0 * np.log(S * A * H / beta)) / np.maximum(n_safe - E, 1.0))
    conf = (H + 1) * phi
    if E > 0:
        conf += (1.0 + S * H) * (3.0 * E * inv_n + 2.0 * E * E * inv_n * inv_n)
    if bonus_scale != 1.0:
        conf *= bonus_scale
    Q = np.empty((H, S, A))
    V = np.zeros(S)
    for h in range(H - 1, -1, -1):
        q = Q[h]
        np.matmul(m[h], V, out=q)
        q += r[h]
        q *= inv_n[h]
        q += conf[h]
        np.minimum(q, H, out=q)
        np.copyto(q, H, where=unknown[h])
        q[invalid] = -np.inf
        V = q.max(axis=1)
    return Q


def greedy_policy(Q: np.ndarray, tie_keys: np.ndarray) -> np.ndarray:
    is_max = Q == Q.max(axis=-1, keepdims=True)
    return np.argmax(np.where(is_max, tie_keys, -1.0), axis=-1)


def rollout(env: TabularMDP, policy: np.ndarray, u: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    H = env.H
    cdf_p0 = np.cumsum(env.p0)
    cdf_p0[-1] = 1.0
    cdf = np.cumsum(env.P, axis=-1)
    cdf[..., -1] = 1.0
    states = np.empty(H + 1, dtype=np.intp)
    actions = np.empty(H, dtype=np.intp)
    rewards = np.empty(H)
    s = int(np.searchsorted(cdf_p0, u[0], side="right"))
    R, nr = env.R, env.next_reward
    for h in range(H):
        a = int(policy[h, s])
        states[h], actions[h] = s, a
        s_next = int(np.searchsorted(cdf[h, s, a], u[1 + 2 * h], side="right"))
        rewards[h] = nr[s_next] if nr is not None else float(u[2 + 2 * h] < R[h, s, a])
        s = s_next
    states[H] = s
    return states, actions, rewards


class ReferenceAgent(OptimisticAgent):
    """The package's agent with the NumPy planner and greedy rule (``observe`` feeds the
    reference statistics above)."""

    def policy(self) -> np.ndarray:
        Q = priv_q(self.source.release(), self.beta, self.bonus_scale, self.n_actions)
        return greedy_policy(Q, self.tie_rng.random(self._shape))


def make_reference_agent(name: str, env: TabularMDP, T: int, privacy: dict | None, beta: float, bonus_scale: float,
                         agent_rng: np.random.Generator, noise_rng: np.random.Generator | None,
                         l1_per_step: int = 2) -> ReferenceAgent:
    if name == "ubev":
        source: ExactStats | PrivateStats = ExactStats(env.S, env.A, env.H)
    else:
        source = PrivateStats(env.S, env.A, env.H, T, privacy.epsilon, privacy.calibration, beta, noise_rng, l1_per_step)
    return ReferenceAgent(source, beta, bonus_scale, agent_rng, env.n_actions)


@dataclass
class EpisodeLog:
    gap: np.ndarray
    sampled_return: np.ndarray
    optimal_value: float


def reference_run_episodes(env: TabularMDP, agent: ReferenceAgent, T: int, env_rng: np.random.Generator, block: int = 1024) -> EpisodeLog:
    """The pre-issue-12 ``run_episodes``: per-episode gap and return arrays of length ``T``."""
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
        states, actions, rewards = rollout(env, pi, u[j])
        ret[t] = rewards.sum()
        agent.observe(states, actions, rewards)
    done = T - (T - 1) % block - 1
    gap[done:] = rho_star - env.policy_values(policies[: T - done])
    return EpisodeLog(gap, ret, rho_star)
