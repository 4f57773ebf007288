"""The optimistic step of OFU-RL (eq. 9): ``Θ̃_k ∈ argmin_{Θ ∈ C_k ∩ S} J*_1(Θ, x_1)``.

The problem is non-convex and the paper gives no algorithm. Our documented oracle
(a deviation the paper leaves open; it affects regret, never privacy, since it only
post-processes released statistics):

1. candidates ``Θ̂ + β M U_j`` with ``U_j`` uniform in the unit Frobenius ball
   (``j = 1..N-1``) plus the centre ``Θ̂``, where ``M = L^{-T}`` for the Cholesky factor
   ``V = L Lᵀ``: ``MᵀVM = I``, so ``||Θ - Θ̂||_V = β||U||_F`` and all lie in ``C_k``; a
   linear map sends the uniform ball to the uniform ellipsoid ``C_k``, so the candidates have
   the same law as with ``M = V^{-1/2}`` (the oracle's ``eigh`` route until 2026-11-28; the
   two differ by a rotation of ``U``), at a fraction of the cost (a 3×3 ``eigh`` was a tenth
   of an episode);
2. each is projected onto ``{||Θ||_F <= 1}`` (radial scaling: the Euclidean projection);
   projected candidates that leave ``C_k`` are discarded, so every survivor is in ``C_k ∩ S``
   (controllability, the other half of ``S``, fails on a null set and is not checked);
3. ``J*_1`` of all survivors by one Riccati recursion vectorised over candidates; the
   minimiser is returned. If no candidate survives (``C_k ∩ S`` is a thin sliver), the
   projection of ``Θ̂`` onto the ball is used and the fallback is counted.

``J*_1`` (eq. 5) needs the noise covariance, which the agent does not know; it uses the
isotropic ``(C_w²/n) I`` (the largest trace allowed by ``||w|| <= C_w``). This only shifts
which candidate is deemed optimistic; regret is always evaluated with the true ``W``.

The number of candidates ``N`` is this package's choice (default 32, every experiment of
``config.yaml`` but the ``lq_oracle`` ablation). Algorithm 1 plans every episode, so the oracle
is a large part of the loop's cost; the rate does not depend on ``N`` in the range measured on
``lq_regime_eps10`` (Private-OFU-RL, random_lq, ε = 10 tight, K = 1.2·10⁷, seeds 0-3):

- N = 256 → 64: last-decade log-log slope 0.480 → 0.480, 0.492 → 0.494, 0.527 → 0.517,
  0.518 → 0.515; final regret 1-4 % lower; measured onset within two checkpoints;
  277-294 s against 826-867 s per job;
- N = 64 → 32 (2026-11-28, AMD EPYC, ``V^{-1/2}`` candidates): slope 0.480 → 0.486, 0.494 → 0.494, 0.517 → 0.503,
  0.515 → 0.515 (the seed mean C2 judges 0.512 → 0.509); final regret 2.006 → 2.005,
  2.906 → 2.864, 1.132 → 1.127, 5.373 → 5.316 (·10⁵); measured onset 3.2 → 3.6, 9.7 → 7.0,
  8.7 → 7.8, 5.0 → 5.6 (·10⁵); about 78k → 93k episodes per second (the jobs' progress
  lines; the oracle is no longer most of an episode), 123k with the Cholesky map (same seeds:
  C2's seed mean 0.512 → 0.512, ``lq_regime_eps10`` in the committed runs before and after).

The ``lq_oracle`` ablation shows the same at small K (OFU-RL, K = 6000, 6 seeds: median
regret 22.0, 22.1, 22.1 at N = 8, 64, 512; 664 at N = 1, the certainty-equivalent controller).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

from dprl.envs.lq import matmul_into, optimal_costs_into, riccati_into
from dprl.privacy.kernels import cholesky_into, lower_inverse_into

# A projected candidate counts as inside C_k up to this relative slack on β² (round-off).
_SLACK = 1e-9


@dataclass
class OracleResult:
    theta: np.ndarray  # Θ̃_k, (n+d, n)
    gains: np.ndarray  # K_h(Θ̃_k), (H, d, n)
    cost: float  # J*_1(Θ̃_k, x_1) under the agent's noise model
    n_feasible: int  # candidates in C_k ∩ S
    fallback: bool


@njit(cache=True)
def ball_map_into(gram: np.ndarray, out: np.ndarray) -> None:
    """``out = M`` with ``MᵀVM = I`` (step 1): ``L^{-T}`` for the Cholesky factor ``V = L Lᵀ``,
    or ``V^{-1/2}`` from ``eigh`` if ``V`` is not positive definite in floating point (never for
    a ridge Gram or a release floored at ``λ_min > 0``)."""
    p = gram.shape[0]
    low = np.empty((p, p))
    if cholesky_into(gram, 0.0, low):
        inv = np.empty((p, p))
        lower_inverse_into(low, inv)
        for i in range(p):
            for j in range(p):
                out[i, j] = inv[j, i]
    else:
        evals, evecs = np.linalg.eigh(gram)
        matmul_into(evecs * evals**-0.5, np.ascontiguousarray(evecs.T), out)


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
    inv_sqrt = np.empty((p, p))  # M (ball_map_into): MᵀVM = I
    ball_map_into(gram, inv_sqrt)
    # 1. candidate 0 is Θ̂; candidates 1..N-1 are Θ̂ + β M U_j with U_j uniform in the
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
