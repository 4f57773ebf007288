"""The optimistic step of OFU-RL (eq. 9): ``Θ̃_k ∈ argmin_{Θ ∈ C_k ∩ S} J*_1(Θ, x_1)``.

The problem is non-convex and the paper gives no algorithm. Our documented oracle
(a deviation the paper leaves open; it affects regret, never privacy, since it only
post-processes released statistics):

1. candidates ``Θ̂ + β V^{-1/2} U_j`` with ``U_j`` uniform in the unit Frobenius ball
   (``j = 1..N-1``) plus the centre ``Θ̂``: all lie in ``C_k`` (``||Θ - Θ̂||_V = β||U||_F``);
2. each is projected onto ``{||Θ||_F <= 1}`` (radial scaling: the Euclidean projection);
   projected candidates that leave ``C_k`` are discarded, so every survivor is in ``C_k ∩ S``
   (controllability, the other half of ``S``, fails on a null set and is not checked);
3. ``J*_1`` of all survivors by one Riccati recursion vectorised over candidates; the
   minimiser is returned. If no candidate survives (``C_k ∩ S`` is a thin sliver), the
   projection of ``Θ̂`` onto the ball is used and the fallback is counted.

``J*_1`` (eq. 5) needs the noise covariance, which the agent does not know; it uses the
isotropic ``(C_w²/n) I`` (the largest trace allowed by ``||w|| <= C_w``). This only shifts
which candidate is deemed optimistic; regret is always evaluated with the true ``W``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

from dprl.envs.lq import matmul_into, optimal_costs_into, riccati_into

# A projected candidate counts as inside C_k up to this relative slack on β² (round-off).
_SLACK = 1e-9


@njit(cache=True, error_model="numpy")
def riccati_n2_d1_into(
    a: np.ndarray, b: np.ndarray, q: np.ndarray, r: np.ndarray, p_all: np.ndarray, k_all: np.ndarray,
) -> None:
    """:func:`dprl.envs.lq.riccati_into` for ``n = 2``, ``d = 1`` (every LQ instance of the
    experiments), the oracle's hot spot: one pass over the candidates per step, with the same
    floating-point operations in the same order as the general recursion, so the same bits
    (``tests/lq/test_envs.py``). The batch sits in local contiguous arrays, so the loop
    vectorises; the general recursion streams a dozen temporaries through memory. It lives
    here, not in ``envs/lq.py``, because editing that module changes the code version of every
    experiment (``runner/code_version.py``) and would rerun them all for the same numbers."""
    nb = b.shape[2]
    horizon = k_all.shape[0]
    r00, q00, q01, q10, q11 = r[0, 0], q[0, 0], q[0, 1], q[1, 0], q[1, 1]
    a00, a01, a10, a11 = a[0, 0].copy(), a[0, 1].copy(), a[1, 0].copy(), a[1, 1].copy()
    b0, b1 = b[0, 0].copy(), b[1, 0].copy()
    p = np.zeros((4, nb))  # P_{h+1}: entries 00, 01, 10, 11
    pn = np.empty((4, nb))
    k = np.empty((2, nb))
    p_all[horizon] = 0.0
    for h in range(horizon - 1, -1, -1):
        for c in range(nb):
            btp0 = b0[c] * p[0, c] + b1[c] * p[2, c]  # BᵀP
            btp1 = b0[c] * p[1, c] + b1[c] * p[3, c]
            s = r00 + (btp0 * b0[c] + btp1 * b1[c])  # S = R + BᵀPB
            m0 = btp0 * a00[c] + btp1 * a10[c]  # M = BᵀPA
            m1 = btp0 * a01[c] + btp1 * a11[c]
            k0 = -m0 / s  # eq. 3
            k1 = -m1 / s
            k[0, c] = k0
            k[1, c] = k1
            pa00 = p[0, c] * a00[c] + p[1, c] * a10[c]  # PA
            pa01 = p[0, c] * a01[c] + p[1, c] * a11[c]
            pa10 = p[2, c] * a00[c] + p[3, c] * a10[c]
            pa11 = p[2, c] * a01[c] + p[3, c] * a11[c]
            t00 = (q00 + (a00[c] * pa00 + a10[c] * pa10)) + m0 * k0  # eq. 4: Q + AᵀPA + MᵀK
            t01 = (q01 + (a00[c] * pa01 + a10[c] * pa11)) + m0 * k1
            t10 = (q10 + (a01[c] * pa00 + a11[c] * pa10)) + m1 * k0
            t11 = (q11 + (a01[c] * pa01 + a11[c] * pa11)) + m1 * k1
            pn[0, c] = 0.5 * (t00 + t00)  # symmetrise against drift
            pn[1, c] = 0.5 * (t01 + t10)
            pn[2, c] = 0.5 * (t10 + t01)
            pn[3, c] = 0.5 * (t11 + t11)
        p, pn = pn, p
        for c in range(nb):
            p_all[h, 0, 0, c] = p[0, c]
            p_all[h, 0, 1, c] = p[1, c]
            p_all[h, 1, 0, c] = p[2, c]
            p_all[h, 1, 1, c] = p[3, c]
            k_all[h, 0, 0, c] = k[0, c]
            k_all[h, 0, 1, c] = k[1, c]


@dataclass
class OracleResult:
    theta: np.ndarray  # Θ̃_k, (n+d, n)
    gains: np.ndarray  # K_h(Θ̃_k), (H, d, n)
    cost: float  # J*_1(Θ̃_k, x_1) under the agent's noise model
    n_feasible: int  # candidates in C_k ∩ S
    fallback: bool


@njit(cache=True, error_model="numpy")
def optimistic_step(
    center: np.ndarray, gram: np.ndarray, beta: float, q: np.ndarray, r: np.ndarray, x1: np.ndarray,
    w_cov: np.ndarray, horizon: int, n_candidates: int, rng: np.random.Generator,
) -> tuple[np.ndarray, np.ndarray, float, int, bool]:
    """Eq. 9 by random search (module docstring), compiled: ``(Θ̃, K_h(Θ̃), J*_1(Θ̃), n_feasible,
    fallback)``. Candidates are held batch-last (``(n+d, n, N)``) so every step vectorises
    over them.

    Random stream: ``rng.standard_normal((N-1, (n+d)n))`` then ``rng.random(N-1)``, as
    NumPy draws them (one stream, element by element in C order)."""
    p, n = center.shape
    d = p - n
    dim = p * n
    nc = n_candidates
    # V^{-1/2} = E diag(λ)^{-1/2} Eᵀ
    evals, evecs = np.linalg.eigh(gram)
    inv_sqrt = np.empty((p, p))
    matmul_into(evecs * evals**-0.5, np.ascontiguousarray(evecs.T), inv_sqrt)
    # 1. candidate 0 is Θ̂; candidates 1..N-1 are Θ̂ + β V^{-1/2} U_j with U_j uniform in the
    #    unit Frobenius ball (Gaussian direction, radius U^{1/dim})
    g = np.empty((p, n, nc))
    for c in range(1, nc):
        for i in range(p):
            for j in range(n):
                g[i, j, c] = rng.standard_normal()
    scale = np.empty(nc)
    for c in range(1, nc):
        scale[c] = rng.random() ** (1.0 / dim)
    sq = np.zeros(nc)
    for i in range(p):
        for j in range(n):
            for c in range(1, nc):
                sq[c] += g[i, j, c] * g[i, j, c]
    for c in range(1, nc):
        scale[c] = scale[c] / np.sqrt(sq[c])
    for i in range(p):
        for j in range(n):
            for c in range(1, nc):
                g[i, j, c] *= scale[c]
    cand = np.empty((p, n, nc))
    for i in range(p):
        for j in range(n):
            cand[i, j, 0] = center[i, j]
            for c in range(1, nc):
                cand[i, j, c] = inv_sqrt[i, 0] * g[0, j, c]
            for l in range(1, p):
                for c in range(1, nc):
                    cand[i, j, c] += inv_sqrt[i, l] * g[l, j, c]
            for c in range(1, nc):
                cand[i, j, c] = center[i, j] + beta * cand[i, j, c]
    # 2. radial projection onto ||Θ||_F <= 1 (the Euclidean projection); a projected
    #    candidate that leaves C_k (||Θ - Θ̂||_V > β) is dropped
    sq[:] = 0.0
    for i in range(p):
        for j in range(n):
            for c in range(nc):
                sq[c] += cand[i, j, c] * cand[i, j, c]
    norm = np.sqrt(sq)
    outside = norm > 1.0
    for i in range(p):
        for j in range(n):
            for c in range(nc):
                if outside[c]:
                    cand[i, j, c] = cand[i, j, c] / norm[c]
    dist2 = np.zeros(nc)  # ||Θ - Θ̂||_V² = Σ_j (Θ - Θ̂)_{:,j}ᵀ V (Θ - Θ̂)_{:,j}
    for i in range(p):
        for l in range(p):
            for j in range(n):
                gil = gram[i, l]
                for c in range(nc):
                    dist2[c] += (cand[i, j, c] - center[i, j]) * gil * (cand[l, j, c] - center[l, j])
    limit = beta * beta * (1.0 + _SLACK)
    keep = np.empty(nc, dtype=np.int64)
    nb = 0
    for c in range(nc):
        if not outside[c] or dist2[c] <= limit:
            keep[nb] = c
            nb += 1
    fallback = nb == 0
    if fallback:  # the projection of Θ̂ onto the ball
        s = 0.0
        for i in range(p):
            for j in range(n):
                s += center[i, j] * center[i, j]
        f = max(1.0, np.sqrt(s))
        for i in range(p):
            for j in range(n):
                cand[i, j, 0] = center[i, j] / f
        keep[0] = 0
        nb = 1
    # 3. J*_1 of every survivor (one batch-last Riccati recursion); the first minimiser
    a = np.empty((n, n, nb))  # Θ = [A, B]ᵀ
    b = np.empty((n, d, nb))
    for i in range(n):
        for j in range(n):
            for m in range(nb):
                a[i, j, m] = cand[j, i, keep[m]]
        for j in range(d):
            for m in range(nb):
                b[i, j, m] = cand[n + j, i, keep[m]]
    p_all = np.empty((horizon + 1, n, n, nb))
    k_all = np.empty((horizon, d, n, nb))
    if n == 2 and d == 1:
        riccati_n2_d1_into(a, b, q, r, p_all, k_all)
    else:
        riccati_into(a, b, q, r, p_all, k_all)
    costs = np.empty(nb)
    optimal_costs_into(p_all, w_cov, x1, costs)
    best = int(np.argmin(costs))
    theta = np.empty((p, n))
    for i in range(p):
        for j in range(n):
            theta[i, j] = cand[i, j, keep[best]]
    gains = np.ascontiguousarray(k_all[:, :, :, best])
    return theta, gains, costs[best], 0 if fallback else nb, fallback


class OptimisticOracle:
    """Random-search oracle over ``N`` candidates (``n_candidates``; :func:`optimistic_step`)."""

    def __init__(
        self, n: int, d: int, q: np.ndarray, r: np.ndarray, horizon: int, x1: np.ndarray, noise_radius: float,
        n_candidates: int, rng: np.random.Generator,
    ) -> None:
        if n_candidates < 1:
            raise ValueError(f"the oracle needs at least one candidate, got N={n_candidates}")
        self.n, self.d, self.p = n, d, n + d
        self.q, self.r = np.ascontiguousarray(q, dtype=float), np.ascontiguousarray(r, dtype=float)
        self.horizon = int(horizon)
        self.x1 = np.ascontiguousarray(x1, dtype=float)
        self.w_cov = (noise_radius**2 / n) * np.eye(n)
        self.n_candidates = int(n_candidates)
        self.rng = rng

    def __call__(self, center: np.ndarray, gram: np.ndarray, beta: float) -> OracleResult:
        """Optimistic ``Θ̃`` in ``{||Θ - center||_gram <= beta} ∩ {||Θ||_F <= 1}``."""
        theta, gains, cost, n_feasible, fallback = optimistic_step(
            np.ascontiguousarray(center, dtype=float), np.ascontiguousarray(gram, dtype=float), float(beta),
            self.q, self.r, self.x1, self.w_cov, self.horizon, self.n_candidates, self.rng)
        return OracleResult(theta, gains, float(cost), int(n_feasible), bool(fallback))
