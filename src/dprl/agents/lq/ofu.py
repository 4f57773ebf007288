"""OFU-RL under changing regularizers (Sec. III-A) and Private-OFU-RL (Algorithm 1).

One agent class covers both; they differ only in the :class:`Regularizer` they are given:
:class:`NonPrivateRegularizer` (``H_k = λI``, ``L_k = 0``: OFU-RL of Abbasi-Yadkori &
Szepesvári) or :class:`CentralRegularizer` with :func:`private_ofu_calibration` (two
Gaussian tree counters B1, B2: Private-OFU-RL).

Reading only released statistics is structural: :meth:`OFUAgent.plan` takes the released
:class:`RegularizedStats` as its only data argument, and the agent reaches its data only
through ``regularizer.release()`` (tests run it behind a proxy exposing nothing else).
The kernels are compiled (Numba): :func:`plan_step` (lines 4-5) has the released
``(V_k, U_k)`` and the regularizer's public constants as its only data arguments, and the
compiled loop (:mod:`dprl.agents.lq.loop`) calls it with the output of the counters'
release only; its equality with the NumPy agent is tested (``tests/lq/test_compiled_loop.py``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numba import njit

from dprl.agents.lq.oracle import OptimisticOracle, optimistic_step
from dprl.envs.lq import matmul_into
from dprl.privacy.kernels import cholesky_into
from dprl.privacy.regularizer import RegularizedStats, Regularizer


@dataclass
class Plan:
    """The policy ``π_k`` of one episode and what it was computed from."""

    gains: np.ndarray  # K_h(Θ̃_k), (H, d, n)
    theta_hat: np.ndarray  # Θ̂_k = V_k^{-1} U_k (eq. 7)
    theta_tilde: np.ndarray  # Θ̃_k (eq. 9)
    beta: float  # β_k (Lemma 1, private log-det substitute)
    n_feasible: int
    fallback: bool
    repaired: bool  # V_k needed the eigenvalue floor
    not_pd: bool  # V_k was not positive definite before the floor


@njit(cache=True)
def _cholesky(gram: np.ndarray) -> tuple[np.ndarray, bool]:
    """``(L, ok)`` with ``V = L Lᵀ`` in the lower triangle of ``L``; ``ok`` False when ``V``
    is not positive definite in floating point (never for a ridge or a floored release:
    the callers then fall back to LAPACK)."""
    p = gram.shape[0]
    low = np.zeros((p, p))
    return low, cholesky_into(gram, 0.0, low)


@njit(cache=True)
def _log_det(gram: np.ndarray, low: np.ndarray, ok: bool) -> float:
    """``ln det V``: ``2 Σ ln L_ii`` from the Cholesky factor (a 3×3 ``slogdet`` costs
    ten times more), else ``slogdet``'s log of ``|det V|``."""
    if not ok:
        return np.linalg.slogdet(gram)[1]
    acc = 0.0
    for i in range(gram.shape[0]):
        acc += math.log(low[i, i])
    return 2.0 * acc


@njit(cache=True)
def _solve_spd(gram: np.ndarray, target: np.ndarray, low: np.ndarray, ok: bool) -> np.ndarray:
    """``V⁻¹U`` by the Cholesky factor (forward then backward substitution), else LU."""
    if not ok:
        return np.linalg.solve(gram, target)
    p, q = target.shape
    x = np.empty((p, q))
    for j in range(q):
        for i in range(p):
            acc = target[i, j]
            for k in range(i):
                acc -= low[i, k] * x[k, j]
            x[i, j] = acc / low[i, i]
        for i in range(p - 1, -1, -1):
            acc = x[i, j]
            for k in range(i + 1, p):
                acc -= low[k, i] * x[k, j]
            x[i, j] = acc / low[i, i]
    return x


@njit(cache=True)
def _radius(logdet: float, p: int, lam_min: float, lam_max: float, nu: float, n: int, noise_radius: float,
            alpha: float) -> float:
    info = max(0.0, logdet - p * math.log(lam_min))
    return noise_radius * math.sqrt(2.0 * math.log(2.0 / alpha) + n * info) + math.sqrt(lam_max) + nu


@njit(cache=True)
def radius(gram: np.ndarray, lam_min: float, lam_max: float, nu: float, n: int, noise_radius: float, alpha: float) -> float:
    """:func:`confidence_radius` from the released ``V_k`` and the regularizer's constants."""
    low, ok = _cholesky(gram)
    return _radius(_log_det(gram, low, ok), gram.shape[0], lam_min, lam_max, nu, n, noise_radius, alpha)


def confidence_radius(stats: RegularizedStats, n: int, noise_radius: float, alpha: float) -> float:
    """``β_k = C_w √(2 ln(2/α) + n ln det(I + Z_kᵀZ_k/λ_min)) + √λ_max + ν`` (Lemma 1), with the
    log-determinant computed from *released* statistics only (:func:`radius`).

    Privacy substitution: ``ln det(I + ZᵀZ/λ_min)`` reads the non-private Gram matrix. On the
    good event ``H_k ⪰ λ_min I``, so ``V_k = ZᵀZ + H_k ⪰ ZᵀZ + λ_min I`` and
    ``ln det V_k - p ln λ_min >= ln det(I + ZᵀZ/λ_min)``: the radius can only grow, so the
    confidence set stays valid, and it is a function of released values (post-processing,
    no privacy cost). For ``H_k = λI`` the two are equal. Off the good event ``V_k`` has
    been floored at ``λ_min`` (counted) and the term is clipped at 0.
    """
    return float(radius(np.ascontiguousarray(stats.gram, dtype=float), float(stats.lam_min), float(stats.lam_max),
                        float(stats.nu), int(n), float(noise_radius), float(alpha)))


@njit(cache=True)
def plan_step(
    gram: np.ndarray, target: np.ndarray, lam_min: float, lam_max: float, nu: float, n: int, noise_radius: float,
    alpha: float, q: np.ndarray, r: np.ndarray, x1: np.ndarray, w_cov: np.ndarray, horizon: int, n_candidates: int,
    rng: np.random.Generator,
) -> tuple[np.ndarray, float, np.ndarray, np.ndarray, int, bool]:
    """Lines 4-5 of Algorithm 1 from the released ``(V_k, U_k)``: ``(Θ̂_k, β_k, Θ̃_k, K_h(Θ̃_k),
    n_feasible, fallback)``."""
    low, ok = _cholesky(gram)  # one factor for eq. 7 and eq. 8
    theta_hat = _solve_spd(gram, target, low, ok)  # eq. 7: Θ̂_k = V_k⁻¹U_k
    beta = _radius(_log_det(gram, low, ok), gram.shape[0], lam_min, lam_max, nu, n, noise_radius, alpha)  # eq. 8
    theta, gains, _, n_feasible, fallback = optimistic_step(theta_hat, gram, beta, q, r, x1, w_cov, horizon,
                                                             n_candidates, rng)  # eq. 9
    return theta_hat, beta, theta, gains, n_feasible, fallback


@njit(cache=True)
def _clip_rows(v: np.ndarray, bound: float) -> int:
    """Scale every row of ``v`` with norm above ``bound`` back to norm ``bound``; the count."""
    clipped = 0
    for h in range(v.shape[0]):
        sq = 0.0
        for i in range(v.shape[1]):
            sq += v[h, i] * v[h, i]
        norm = math.sqrt(sq)
        if norm > bound:
            clipped += 1
            f = bound / norm
            for i in range(v.shape[1]):
                v[h, i] *= f
    return clipped


@njit(cache=True)
def user_statistics(
    states: np.ndarray, controls: np.ndarray, clip: bool, gamma: float
) -> tuple[np.ndarray, np.ndarray, int]:
    """Line 9: one user's ``(Σ_h z_h z_hᵀ, Σ_h z_h x_{h+1}ᵀ)`` with ``z_h = (x_h, u_h)`` (states
    ``(H+1, n)``, controls ``(H, d)``), and the number of clipped vectors (``clip``:
    ``||z_h|| <= 1+γ``, ``||x_{h+1}|| <= 1``, Lemma 2's bounds)."""
    horizon, d = controls.shape
    n = states.shape[1]
    p = n + d
    z = np.empty((horizon, p))
    x = np.empty((horizon, n))
    for h in range(horizon):
        for i in range(n):
            z[h, i] = states[h, i]
            x[h, i] = states[h + 1, i]
        for i in range(d):
            z[h, n + i] = controls[h, i]
    clipped = 0
    if clip:
        clipped = _clip_rows(z, 1.0 + gamma) + _clip_rows(x, 1.0)
    gram = np.empty((p, p))
    cross = np.empty((p, n))
    matmul_into(z, z, gram, True)  # Σ_h z_h z_hᵀ = ZᵀZ
    matmul_into(z, x, cross, True)  # Σ_h z_h x_{h+1}ᵀ = ZᵀX
    return gram, cross, clipped


class OFUAgent:
    """OFU-RL / Private-OFU-RL for one LQ problem with known ``Q, R, x_1, H, C_w, γ``.

    ``clip``: before sending an episode's statistics, clip each ``z_h`` to norm ``1+γ`` and
    each ``x_{h+1}`` to norm 1 (Lemma 2's bounds), so the counters' sensitivity holds for
    every trajectory. Under Lemma 2 nothing is clipped and the agent is the paper's;
    clipping events are counted. Private agents must clip; non-private ones need not.
    """

    def __init__(
        self, regularizer: Regularizer, oracle: OptimisticOracle, n: int, d: int, noise_radius: float, gamma: float,
        alpha: float, clip: bool,
    ) -> None:
        if not 0 < alpha <= 1:
            raise ValueError(f"confidence level alpha must lie in (0, 1], got {alpha}")
        self.regularizer = regularizer
        self.oracle = oracle
        self.n, self.d = n, d
        self.noise_radius = noise_radius
        self.gamma = gamma
        self.alpha = alpha
        self.clip = clip
        self.n_clipped = 0  # vectors (z or x_{h+1}) clipped so far

    def plan(self, stats: RegularizedStats) -> Plan:
        """Lines 3-5 of Algorithm 1 from the released ``(V_k, U_k)`` only."""
        o = self.oracle
        theta_hat, beta, theta, gains, n_feasible, fallback = plan_step(
            np.ascontiguousarray(stats.gram, dtype=float), np.ascontiguousarray(stats.target, dtype=float),
            float(stats.lam_min), float(stats.lam_max), float(stats.nu), self.n, float(self.noise_radius),
            float(self.alpha), o.q, o.r, o.x1, o.w_cov, o.horizon, o.n_candidates, o.rng)
        return Plan(gains, theta_hat, theta, float(beta), int(n_feasible), bool(fallback),
                    bool(np.any(stats.repaired)), bool(np.any(stats.not_pd)))

    def act(self) -> Plan:
        """The policy for the next episode (line 3: the counters release; lines 4-5)."""
        return self.plan(self.regularizer.release())

    def observe(self, states: np.ndarray, controls: np.ndarray) -> None:
        """Line 9: send ``Σ_h z_h z_hᵀ`` and ``Σ_h z_h x_{h+1}ᵀ`` (states ``(H+1, n)``, controls ``(H, d)``)."""
        gram, cross, clipped = user_statistics(np.ascontiguousarray(states, dtype=float),
                                               np.ascontiguousarray(controls, dtype=float), self.clip, float(self.gamma))
        self.n_clipped += int(clipped)
        self.regularizer.observe(gram, cross)
