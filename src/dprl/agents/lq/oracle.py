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

from dprl.envs.lq import optimal_cost, riccati, theta_to_ab


@dataclass
class OracleResult:
    theta: np.ndarray  # Θ̃_k, (n+d, n)
    gains: np.ndarray  # K_h(Θ̃_k), (H, d, n)
    cost: float  # J*_1(Θ̃_k, x_1) under the agent's noise model
    n_feasible: int  # candidates in C_k ∩ S
    fallback: bool


class OptimisticOracle:
    """Random-search oracle over ``N`` candidates (``n_candidates``), vectorised."""

    def __init__(
        self, n: int, d: int, q: np.ndarray, r: np.ndarray, horizon: int, x1: np.ndarray, noise_radius: float,
        n_candidates: int, rng: np.random.Generator,
    ) -> None:
        if n_candidates < 1:
            raise ValueError(f"the oracle needs at least one candidate, got N={n_candidates}")
        self.n, self.d, self.p = n, d, n + d
        self.q, self.r, self.horizon, self.x1 = q, r, horizon, x1
        self.w_cov = (noise_radius**2 / n) * np.eye(n)
        self.n_candidates = int(n_candidates)
        self.rng = rng

    def _unit_ball(self, count: int) -> np.ndarray:
        """``count`` draws uniform in the unit Frobenius ball of ``(n+d) x n`` matrices."""
        dim = self.p * self.n
        g = self.rng.standard_normal((count, dim))
        g *= (self.rng.random(count) ** (1.0 / dim) / np.linalg.norm(g, axis=1))[:, None]
        return g.reshape(count, self.p, self.n)

    def __call__(self, center: np.ndarray, gram: np.ndarray, beta: float) -> OracleResult:
        """Optimistic ``Θ̃`` in ``{||Θ - center||_gram <= beta} ∩ {||Θ||_F <= 1}``."""
        evals, evecs = np.linalg.eigh(gram)
        inv_sqrt = (evecs * evals ** -0.5) @ evecs.T
        cand = np.empty((self.n_candidates, self.p, self.n))
        cand[0] = center
        if self.n_candidates > 1:
            cand[1:] = center + beta * (inv_sqrt @ self._unit_ball(self.n_candidates - 1))
        norms = np.sqrt(np.einsum("kij,kij->k", cand, cand))
        outside = norms > 1.0
        cand[outside] /= norms[outside, None, None]
        diff = cand - center
        dist2 = np.einsum("kij,il,klj->k", diff, gram, diff)  # ||Θ - Θ̂||_V²
        keep = ~outside | (dist2 <= beta * beta * (1.0 + 1e-9))
        feasible = cand[keep]
        fallback = feasible.shape[0] == 0
        if fallback:
            c = center / max(1.0, float(np.linalg.norm(center)))
            feasible = c[None]
        a, b = theta_to_ab(feasible, self.n)
        p_all, k_all = riccati(a, b, self.q, self.r, self.horizon)
        costs = optimal_cost(p_all, self.w_cov, self.x1)
        j = int(np.argmin(costs))
        return OracleResult(feasible[j], k_all[:, j], float(costs[j]), 0 if fallback else int(feasible.shape[0]), fallback)
