"""The compiled episode loop of UBEV / PUCB (Algorithm 2; the runner of :mod:`dprl.agents.protocol`).

One implementation; the statistics source (:class:`ExactStats` or :class:`PrivateStats`)
is the only difference between the two algorithms. The episode loop is compiled
(:func:`_run_block`, Numba); :class:`OptimisticAgent`'s ``policy``/``observe`` run the same
kernels one step at a time (audits drive the agent with hand-made users that way).

Random streams (the job's three generators, read in the same order as a plain loop that
draws per episode): tie-breaking keys ``agent_rng.random((H, S, A))`` per episode,
environment uniforms ``env_rng.random(2H + 1)`` per episode, and per episode the
counters' Laplace noise ``E = noise_rng.standard_exponential(N)`` then its signs
``noise_rng.random(⌈N/53⌉)`` (``LaplaceNoise.sample``). The loop draws the first two in
blocks of episodes and the noise inside the compiled loop, episode by episode, with
:func:`~dprl.agents.tabular.statistics.draw_laplace` (the kernel the audits draw through; it
records the scale it drew with in ``PrivateStats.drawn``, which the job checks:
``privacy.ran_calibration``) (Numba's
``Generator`` gives NumPy's numbers, 3.1 against 4.0 ns an exponential, and PUCB draws
``N`` of them an episode); NumPy's generators give the same numbers
whether drawn one episode at a time or in one block, so a job's numbers do not depend on the
block size.
"""
from __future__ import annotations

import math
from collections.abc import Callable
from typing import Protocol

import numpy as np
import pandas as pd
from numba import njit

from dprl.agents.protocol import BuiltAgent, checked_checkpoints
from dprl.agents.tabular.agent import OptimisticAgent
from dprl.agents.tabular.calibration import PUCBCalibration
from dprl.agents.tabular.planner import greedy_into, log_term, new_memo, priv_q_into
from dprl.agents.tabular.regime import clamp_watch
from dprl.agents.tabular.statistics import PrivateStats, _indicators_into, feed_exact, draw_laplace, new_drawn_record
from dprl.envs.tabular import TabularMDP, policy_value_of, rollout_into
from dprl.privacy.kernels import feed_tree, sign_words, trailing_zeros
from dprl.runner.kernel_cache import drop_stale_closure
from dprl.runner.online import CheckpointSummary, pairwise_sum


class EpisodeSink(Protocol):
    """Receives the per-episode exact gap ``ρ* − ρ^{π_t}`` and sampled return of
    consecutive episodes (e.g. :class:`dprl.runner.online.CheckpointSummary`)."""

    def add(self, gap: np.ndarray, ret: np.ndarray) -> None: ...


@njit(cache=True)
def _all_tied(Q: np.ndarray, n_actions: np.ndarray) -> bool:
    """Whether every available action ties at every ``(h, s)``: the greedy rule then plays
    the uniform tie-break everywhere."""
    H, S, A = Q.shape
    for h in range(H):
        for s in range(S):
            for a in range(1, n_actions[s]):
                if Q[h, s, a] != Q[h, s, 0]:
                    return False
    return True


@njit(cache=True)
def _any_clamped(Q: np.ndarray, watch: np.ndarray, H: float) -> bool:
    """Whether some watched ``(h, s, a)`` still has ``Q̃⁺ = H`` (the clamp of PrivQ): the
    burn-in the ``regime`` module predicts (``T*``) ends when none has."""
    for h in range(Q.shape[0]):
        for s in range(Q.shape[1]):
            for a in range(Q.shape[2]):
                if watch[h, s, a] and Q[h, s, a] >= H:
                    return True
    return False


# Exact regret evaluates every episode's policy (57 ns on garnet 3-2-2, a twelfth of an
# UBEV episode). The value of a deterministic policy is a function of the policy, and small
# instances have few policies (A^(HS): 64 on garnet 3-2-2, 512 on riverswim 3 with H = 3),
# so the loop keeps a table of the values it has computed, indexed by the policy's code:
# the same number whether recomputed or looked up. Larger instances evaluate every policy.
MAX_POLICY_TABLE = 1 << 16


def policy_table(S: int, A: int, H: int) -> np.ndarray:
    """The loop's table of policy values (NaN: not computed yet), empty where there are
    more than :data:`MAX_POLICY_TABLE` deterministic policies."""
    n = A ** (S * H)  # a Python integer: exact however large
    return np.full(n if n <= MAX_POLICY_TABLE else 0, np.nan)


@njit(cache=True)
def _policy_code(policy: np.ndarray, A: int) -> int:
    """A deterministic ``(H, S)`` policy as a number in base ``A``."""
    code = 0
    for h in range(policy.shape[0]):
        for s in range(policy.shape[1]):
            code = code * A + policy[h, s]
    return code


@njit(cache=True)
def _run_block(
    cdf: np.ndarray, cdf_p0: np.ndarray, R: np.ndarray, next_reward: np.ndarray, has_next_reward: bool,
    n_actions: np.ndarray, private: bool, counts: np.ndarray, exact: np.ndarray, suffix: np.ndarray, t0: int,
    scale: float, drawn: np.ndarray, e_first: float, e_rest: float, log_sah_beta: float, bonus_scale: float,
    u: np.ndarray, keys: np.ndarray, noise_rng: np.random.Generator, policies: np.ndarray, returns: np.ndarray,
    all_tied: np.ndarray, watch: np.ndarray, clamped: np.ndarray, P: np.ndarray, p0: np.ndarray, rho_star: float,
    gaps: np.ndarray, values: np.ndarray,
) -> None:
    """Episodes ``t0 + 1 .. t0 + len(u)`` of Algorithm 2, compiled.

    Statistics: UBEV feeds the exact ``counts`` (``statistics.feed_exact``); PUCB the tree
    counters ``exact``/``suffix`` after ``t0`` elements (``privacy.kernels.feed_tree``), with
    ``counts`` all zeros (the release before the first element), and node noise
    ``±scale·E`` from ``noise_rng`` drawn by :func:`draw_laplace` (``LaplaceNoise.sample``'s
    draws; unused without noise), which records in ``drawn`` the scale it drew with. Writes episode ``k``'s
    policy to ``policies[k]``, its exact gap ``ρ* − ρ^{π}`` (:func:`policy_value_of` on the true
    ``P``, ``p0``; the agent never sees it) to ``gaps[k]``, its sampled return to ``returns[k]`` and whether every action
    tied at every ``(h, s)`` (the burn-in's uniform play, ``regime`` module) to
    ``all_tied[k]``, and whether a ``watch``ed pair is still clamped at ``H`` to ``clamped[k]``;
    the checks read ``Q`` only, so regret is unchanged."""
    H, S, A = keys.shape[1], keys.shape[2], keys.shape[3]
    Q = np.empty((H, S, A))
    V = np.empty((2, S))
    x = np.zeros(counts.shape[0])
    noise = np.empty(counts.shape[0])
    e = np.empty(counts.shape[0])
    words = np.empty(sign_words(counts.shape[0]))
    noisy = scale > 0.0
    states = np.empty(H + 1, dtype=np.int64)
    actions = np.empty(H, dtype=np.int64)
    rewards = np.empty(H)
    v_scratch = np.empty(S)
    w_scratch = np.empty(S)
    memo, memo_conf = new_memo(S, A, H)
    for k in range(u.shape[0]):
        t = t0 + k  # episodes fed so far; this is episode t + 1
        # Private planning: Q̃⁺_t := PrivQ(r̃, ñ, m̃, ε) on the release at the start of the episode
        if private:
            rel = suffix[trailing_zeros(t)] if t > 0 else counts
            E = e_first if t == 0 else e_rest  # PrivateStats.current_e: E_1 bounds an empty sum
        else:
            rel = counts
            E = 0.0
        priv_q_into(rel, E, S, A, H, n_actions, log_sah_beta, bonus_scale, Q, V, memo, memo_conf)
        # for h = 1..H: execute a := argmax_a' Q̃⁺_t(s, a', h), observe r and s'
        greedy_into(Q, keys[k], policies[k])
        all_tied[k] = _all_tied(Q, n_actions)
        clamped[k] = _any_clamped(Q, watch, float(H))
        rollout_into(cdf, cdf_p0, R, next_reward, has_next_reward, policies[k], u[k], states, actions, rewards)
        returns[k] = pairwise_sum(rewards, 0, H)
        code = _policy_code(policies[k], A) if values.shape[0] else -1
        if code >= 0 and not math.isnan(values[code]):
            value = values[code]
        else:
            value = policy_value_of(P, R, p0, policies[k], v_scratch, w_scratch)
            if code >= 0:
                values[code] = value
        gaps[k] = rho_star - value  # exact regret of π_k
        # Feed r to r̃(s, a, h); feed 1 to ñ(s, a, h) and m̃(s, a, s', h), 0 to all others
        if private:
            x[:] = 0.0
            _indicators_into(x, S, A, H, states, actions, rewards)
            if noisy:  # the kernel the audits draw through; records the scale it drew with in drawn
                draw_laplace(noise_rng, scale, e, words, noise, drawn, t + 1)
            feed_tree(exact, suffix, t + 1, x, noise, noisy)
        else:
            feed_exact(counts, S, A, H, states, actions, rewards)


def run_episodes(
    built: BuiltAgent[OptimisticAgent, PUCBCalibration], env: TabularMDP, n_episodes: int, env_rng: np.random.Generator,
    checkpoints: np.ndarray, progress: Callable[[int, int], None] | None = None, *, alpha: float | None = None,
    block: int = 1024,
) -> pd.DataFrame:
    """Run ``n_episodes`` episodes (:func:`feed_episodes`; the runner of
    :mod:`dprl.agents.protocol`), summarised online at the ``checkpoints``: one row per
    checkpoint with the cumulative exact regret ``Σ_t (ρ* − ρ^{π_t})``, the mean sampled
    return, the mean gap over the last tenth of the episodes and, with ``alpha``, the number
    of α-suboptimal episodes ``n_subopt`` (gap ``> alpha``). Memory does not grow with the
    number of episodes."""
    summary = CheckpointSummary(checked_checkpoints(checkpoints, n_episodes), alpha)
    feed_episodes(built.agent, env, n_episodes, env_rng, summary, progress, block)
    return regret_table(summary)


def regret_table(summary: CheckpointSummary) -> pd.DataFrame:
    """One row per checkpoint of a complete summary: ``episode``, cumulative exact
    ``regret``, ``mean_return``, ``mean_gap_last`` and, with its ``alpha``, ``n_subopt``
    (the table of every tabular runner: this loop and the plug-in runner)."""
    summary.check_complete()
    cp = summary.checkpoints
    out = pd.DataFrame({"episode": cp, "regret": summary.cum_gap, "mean_return": summary.cum_ret / cp,
                        "mean_gap_last": summary.window_mean})
    if summary.alpha is not None:
        out["n_subopt"] = summary.n_above
    return out


def feed_episodes(
    agent: OptimisticAgent, env: TabularMDP, T: int, env_rng: np.random.Generator, sink: EpisodeSink,
    progress: Callable[[int, int], None] | None = None, block: int = 1024, watch: np.ndarray | None = None,
) -> EpisodeSink:
    """Run ``T`` episodes (:func:`_run_block`) and hand their exact gaps and sampled returns
    to ``sink`` in blocks of ``block`` episodes; returns ``sink`` (tests record every episode
    with :class:`dprl.runner.online.EpisodeRecord`). Records the measured
    burn-in on ``agent``: ``last_all_tied_episode``, ``all_tied_episodes`` and, for the pairs
    ``watch`` (``(H, S, A)`` booleans; default :func:`dprl.agents.tabular.regime.clamp_watch`),
    ``last_clamped_episode``, the last episode in which one of them had ``Q̃⁺ = H``. Regret is exact: every
    committed policy is evaluated by backward induction on the true model (the kernel of
    :meth:`TabularMDP.policy_values`, inside the compiled loop; the agent never sees these
    values). Memory is bounded by the block, whatever ``T``."""
    S, A, H = env.S, env.A, env.H
    src = agent.source
    if (src.S, src.A, src.H) != (S, A, H):
        raise ValueError(f"agent sizes (S, A, H) = {(src.S, src.A, src.H)} differ from the environment's {(S, A, H)}")
    private = isinstance(src, PrivateStats)
    if private and src.t + T > src.T:
        raise ValueError(f"{T} more episodes exceed the counters' horizon T = {src.T} ({src.t} already fed)")
    noisy = private and src.scale > 0
    N = src.N if private else src.counts.size
    rho_star = env.optimal_value
    block = max(1, min(block, 2_000_000 // (S * S)))  # the same blocks as the reference loop
    policies = np.empty((block, H, S), dtype=np.int64)
    returns = np.empty(block)
    gaps = np.empty(block)
    all_tied = np.empty(block, dtype=np.bool_)
    clamped = np.empty(block, dtype=np.bool_)
    watch = clamp_watch(env) if watch is None else np.asarray(watch, dtype=np.bool_)
    if watch.shape != (H, S, A):
        raise ValueError(f"watch must have shape (H, S, A) = {(H, S, A)}, got {watch.shape}")
    model = env.kernel_model()
    # a generator the loop never reads where there is no noise (its type keeps one compiled loop)
    noise_rng = src.rng if noisy else np.random.default_rng(0)
    if private:
        counts, exact, suffix, drawn = np.zeros(N), src.exact, src.suffix, src.drawn
        scale, e_first, e_rest = src.scale, src.e_first, src.e_rest
    else:
        counts, exact, suffix, drawn = src.counts, np.zeros((1, 0)), np.zeros((1, 0)), new_drawn_record()
        scale, e_first, e_rest = 0.0, 0.0, 0.0
    lt = log_term(S, A, H, agent.beta)
    values = policy_table(S, A, H)
    done = 0
    while done < T:
        b = min(block, T - done)
        u = env.draw_uniforms(env_rng, b)
        keys = agent.tie_rng.random((b, H, S, A))
        t0 = src.t if private else done
        _run_block(*model, agent.n_actions, private, counts, exact, suffix, t0, scale, drawn, e_first, e_rest, lt,
                   float(agent.bonus_scale), u, keys, noise_rng, policies[:b], returns[:b], all_tied[:b],
                   watch, clamped[:b], env.P, env.p0, rho_star, gaps[:b], values)
        if private:
            src.t += b
        sink.add(gaps[:b], returns[:b])
        tied = np.flatnonzero(all_tied[:b])
        if tied.size:
            agent.last_all_tied_episode = agent.episodes_run + done + int(tied[-1]) + 1
        agent.all_tied_episodes += int(tied.size)
        still = np.flatnonzero(clamped[:b])
        if still.size:
            agent.last_clamped_episode = agent.episodes_run + done + int(still[-1]) + 1
        done += b
        if progress is not None:
            progress(done, T)
    agent.episodes_run += T
    return sink


# _run_block embeds the planner, counter, rollout and summation kernels of other files:
# flushed when one of those files changes (runner/kernel_cache.py, from the import closure)
drop_stale_closure(__name__)
