"""PrivQ (Algorithm 3): optimistic backward induction on released statistics only."""

from __future__ import annotations

import numpy as np

from dprl.agents.tabular.statistics import ReleasedStats


def priv_q(stats: ReleasedStats, beta: float, bonus_scale: float = 1.0) -> np.ndarray:
    """Optimistic ``Q̃⁺[h, s, a]`` from the released statistics (the only data argument).

    For ``h = H..1``: where ``ñ >= 2E``, ``conf = (H+1)φ̃ + ψ̃`` with
    ``φ̃ = sqrt((2 ln(ñ+E) + 2 ln(SAH/β)) / max(ñ−E, 1))`` and
    ``ψ̃ = (1+SH)(3E/ñ + 2E²/ñ²)`` (Section 3); ``Q̃ = (r̃ + Σ_s' Ṽ_{h+1}(s') m̃(s,a,s')) / ñ``;
    ``Q̃⁺ = min(H, Q̃ + conf)``; ``Ṽ_h = max_a Q̃⁺``.

    Deviation: where ``ñ < max(2E, 1)`` we set ``Q̃⁺ = H`` directly instead of
    ``min(H, Q̃ + H)``. The paper's analysis of that branch is "upper bound ``Q* <= H``"; the
    literal formula divides by a noisy count that may be ``<= 0`` (or by 0 for UBEV) and
    can return an arbitrarily *negative* value, breaking optimism. This is a function of
    the released statistics only, so privacy is unaffected. ``bonus_scale`` multiplies
    ``conf`` (1 in every claim-testing run).
    """
    r, n, m, E = stats.r, stats.n, stats.m, stats.e
    H, S, A = n.shape
    unknown = n < max(2.0 * E, 1.0)
    n_safe = np.where(unknown, 1.0, n)
    inv_n = 1.0 / n_safe
    phi = np.sqrt((2.0 * np.log(n_safe + E) + 2.0 * np.log(S * A * H / beta)) / np.maximum(n_safe - E, 1.0))
    conf = (H + 1) * phi
    if E > 0:  # ψ̃ vanishes for exact counts
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
        V = q.max(axis=1)
    return Q


def greedy_policy(Q: np.ndarray, tie_keys: np.ndarray) -> np.ndarray:
    """``π(s, h) = argmax_a Q̃⁺(s, a, h)`` with exact ties broken uniformly at random:
    among the maximising actions pick the one with the largest key (``tie_keys`` i.i.d.
    U(0,1), the agent's own non-private randomness). Ties are the rule early on (every
    unvisited pair has ``Q̃⁺ = H``); a fixed rule such as the lowest index would make the
    agent never try the other actions."""
    is_max = Q == Q.max(axis=-1, keepdims=True)
    return np.argmax(np.where(is_max, tie_keys, -1.0), axis=-1)
