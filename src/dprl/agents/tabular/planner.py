"""PrivQ (Algorithm 3): optimistic backward induction on released statistics only, and the
greedy rule of Algorithm 2. Compiled kernels (:func:`priv_q_into`, :func:`greedy_into`)
shared by the episode loop and the step-by-step agent."""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from dprl.agents.tabular.statistics import ReleasedStats


def log_term(S: int, A: int, H: int, beta: float) -> float:
    """``2 ln(SAH/β)``, the data-independent part of ``φ̃``'s numerator (NumPy's ``log``, so
    the compiled planner adds exactly the number the NumPy formula did)."""
    return float(2.0 * np.log(S * A * H / beta))


@njit(cache=True)
def priv_q_into(
    rel: np.ndarray, E: float, S: int, A: int, H: int, n_actions: np.ndarray, log_sah_beta: float,
    bonus_scale: float, Q: np.ndarray, V: np.ndarray, memo: np.ndarray, memo_conf: np.ndarray,
) -> None:
    """Optimistic ``Q̃⁺[h, s, a]`` into ``Q`` from the released statistics ``rel`` (flat
    ``[r̃ | ñ | m̃]``, ``statistics`` module) and the public bound ``E``: the only data
    argument is the release. ``V`` is scratch of shape ``(2, S)``; ``log_sah_beta`` is
    :func:`log_term`; ``n_actions[s]`` the actions available in ``s`` (public structure of
    the MDP, not data): unavailable actions get ``Q̃⁺ = −inf``, so neither ``Ṽ`` nor the
    greedy rule ever uses them.

    For ``h = H..1`` (Algorithm 3), all ``(s, a)``: where ``ñ >= 2E``,
    ``conf = (H+1)φ̃ + ψ̃`` with ``φ̃ = sqrt((2 ln(ñ+E) + 2 ln(SAH/β)) / max(ñ−E, 1))`` and
    ``ψ̃ = (1+SH)(3E/ñ + 2E²/ñ²)`` (Section 3); ``Q̃ = (r̃ + Σ_s' Ṽ_{h+1}(s') m̃(s,a,s')) / ñ``;
    ``Q̃⁺ = min(H, Q̃ + conf)``; ``Ṽ_h = max_a Q̃⁺``.

    On exact counts (``E = 0``) ``conf`` of a pair is a function of its ``ñ`` only, so it is
    memoised: ``memo[i]`` holds the ``ñ`` whose ``conf`` is ``memo_conf[i]`` (:func:`new_memo`:
    NaN, which matches nothing). UBEV's counts change at ``H`` of the ``SAH`` pairs an episode,
    so it takes a logarithm and a square root for those only; PUCB's releases (``E > 0``)
    change every pair every episode and do not use the memo. The memoised value is the one
    the formula gives, so results are bit-identical.

    Deviation: where ``ñ < max(2E, 1)`` we set ``Q̃⁺ = H`` directly instead of
    ``min(H, Q̃ + H)``. The paper's analysis of that branch is "upper bound ``Q* <= H``"; the
    literal formula divides by a noisy count that may be ``<= 0`` (or by 0 for UBEV) and
    can return an arbitrarily *negative* value, breaking optimism. This is a function of
    the released statistics only, so privacy is unaffected. ``bonus_scale`` multiplies
    ``conf`` (1 in every claim-testing run).
    """
    sah = S * A * H
    threshold = max(2.0 * E, 1.0)
    psi_factor = 1.0 + S * H
    e3 = 3.0 * E
    e2sq = 2.0 * E * E
    exact = E == 0.0
    nxt = H % 2  # V[nxt] holds Ṽ_{h+1}, V[1 - nxt] receives Ṽ_h
    for s in range(S):
        V[nxt, s] = 0.0  # Ṽ_{H+1} := 0
    for h in range(H - 1, -1, -1):
        cur = 1 - nxt
        for s in range(S):
            best = -math.inf
            for a in range(A):
                if a >= n_actions[s]:
                    Q[h, s, a] = -math.inf
                    continue
                i = (h * S + s) * A + a
                n = rel[sah + i]
                if n < threshold:  # "else conf := H", so Q̃⁺ = H (deviation above)
                    q = float(H)
                else:
                    inv_n = 1.0 / n
                    if exact and memo[i] == n:
                        conf = memo_conf[i]
                    else:
                        # φ̃ (Section 3)
                        phi = math.sqrt((2.0 * math.log(n + E) + log_sah_beta) / max(n - E, 1.0))
                        conf = (H + 1) * phi
                        if E > 0.0:  # ψ̃ = (1+SH)(3E/ñ + 2E²/ñ²); it vanishes for exact counts
                            conf += psi_factor * (e3 * inv_n + e2sq * inv_n * inv_n)
                        if bonus_scale != 1.0:
                            conf *= bonus_scale
                        if exact:
                            memo[i] = n
                            memo_conf[i] = conf
                    # Q̃ = (r̃ + Σ_s' Ṽ_{h+1}(s') m̃(s,a,s',h)) / ñ
                    base = 2 * sah + i * S
                    mv = 0.0
                    for s2 in range(S):
                        mv += rel[base + s2] * V[nxt, s2]
                    q = min((mv + rel[i]) * inv_n + conf, float(H))  # Q̃⁺ = min{H, Q̃ + conf}
                Q[h, s, a] = q
                if q > best:
                    best = q
            V[cur, s] = best  # Ṽ_h(s) = max_a Q̃⁺(s, a, h)
        nxt = cur


@njit(cache=True)
def new_memo(S: int, A: int, H: int) -> tuple[np.ndarray, np.ndarray]:
    """An empty memo of :func:`priv_q_into`'s confidence widths: ``(memo, memo_conf)``."""
    return np.full(S * A * H, np.nan), np.empty(S * A * H)


@njit(cache=True)
def greedy_into(Q: np.ndarray, tie_keys: np.ndarray, policy: np.ndarray) -> None:
    """``π(s, h) = argmax_a Q̃⁺(s, a, h)`` (Algorithm 2, "Execute") into ``policy[h, s]``,
    exact ties broken uniformly at random: among the maximising actions the one with the
    largest key (``tie_keys[h, s, a]`` i.i.d. U(0,1), the agent's own non-private
    randomness). Ties are the rule early on (every unvisited pair has ``Q̃⁺ = H``); a fixed
    rule such as the lowest index would make the agent never try the other actions."""
    H, S, A = Q.shape
    for h in range(H):
        for s in range(S):
            qmax = Q[h, s, 0]
            for a in range(1, A):
                if Q[h, s, a] > qmax:
                    qmax = Q[h, s, a]
            best_a, best_key = 0, -2.0
            for a in range(A):
                if Q[h, s, a] == qmax and tie_keys[h, s, a] > best_key:
                    best_a, best_key = a, tie_keys[h, s, a]
            policy[h, s] = best_a


def priv_q(stats: ReleasedStats, beta: float, bonus_scale: float = 1.0, n_actions: np.ndarray | None = None) -> np.ndarray:
    """``Q̃⁺[h, s, a]`` (:func:`priv_q_into`) from a :class:`ReleasedStats`, the planner's
    only data argument (``n_actions``: the MDP's public action sets, all ``A`` if None)."""
    S, A, H = stats.S, stats.A, stats.H
    Q = np.empty((H, S, A))
    na = np.full(S, A, dtype=np.int64) if n_actions is None else np.asarray(n_actions, dtype=np.int64)
    priv_q_into(np.ascontiguousarray(stats.values, dtype=float), float(stats.e), S, A, H, na,
                log_term(S, A, H, beta), float(bonus_scale), Q, np.empty((2, S)), *new_memo(S, A, H))
    return Q


def greedy_policy(Q: np.ndarray, tie_keys: np.ndarray) -> np.ndarray:
    """The greedy policy ``policy[h, s]`` (:func:`greedy_into`)."""
    policy = np.empty(Q.shape[:2], dtype=np.int64)
    greedy_into(np.ascontiguousarray(Q, dtype=float), np.ascontiguousarray(tie_keys, dtype=float), policy)
    return policy
