"""OFU-RL under changing regularizers (Sec. III-A) and Private-OFU-RL (Algorithm 1).

One agent class covers both; they differ only in the :class:`Regularizer` they are given:
:class:`NonPrivateRegularizer` (``H_k = λI``, ``L_k = 0``: OFU-RL of Abbasi-Yadkori &
Szepesvári) or :class:`CentralRegularizer` with :func:`private_ofu_calibration` (two
Gaussian tree counters B1, B2: Private-OFU-RL).

Reading only released statistics is structural: :meth:`OFUAgent.plan` takes the released
:class:`RegularizedStats` as its only data argument, and the agent reaches its data only
through ``regularizer.release()`` (tests run it behind a proxy exposing nothing else).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from dprl.agents.lq.oracle import OptimisticOracle
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


def confidence_radius(stats: RegularizedStats, n: int, noise_radius: float, alpha: float) -> float:
    """``β_k = C_w √(2 ln(2/α) + n ln det(I + Z_kᵀZ_k/λ_min)) + √λ_max + ν`` (Lemma 1), with the
    log-determinant computed from *released* statistics only.

    Privacy substitution: ``ln det(I + ZᵀZ/λ_min)`` reads the non-private Gram matrix. On the
    good event ``H_k ⪰ λ_min I``, so ``V_k = ZᵀZ + H_k ⪰ ZᵀZ + λ_min I`` and
    ``ln det V_k - p ln λ_min >= ln det(I + ZᵀZ/λ_min)``: the radius can only grow, so the
    confidence set stays valid, and it is a function of released values (post-processing,
    no privacy cost). For ``H_k = λI`` the two are equal. Off the good event ``V_k`` has
    been floored at ``λ_min`` (counted) and the term is clipped at 0.
    """
    p = stats.gram.shape[-1]
    _, logdet = np.linalg.slogdet(stats.gram)
    info = max(0.0, float(logdet) - p * math.log(stats.lam_min))
    return noise_radius * math.sqrt(2.0 * math.log(2.0 / alpha) + n * info) + math.sqrt(stats.lam_max) + stats.nu


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
        theta_hat = np.linalg.solve(stats.gram, stats.target)  # eq. 7
        beta = confidence_radius(stats, self.n, self.noise_radius, self.alpha)  # eq. 8
        res = self.oracle(theta_hat, stats.gram, beta)  # eq. 9
        return Plan(res.gains, theta_hat, res.theta, beta, res.n_feasible, res.fallback,
                    bool(np.any(stats.repaired)), bool(np.any(stats.not_pd)))

    def act(self) -> Plan:
        """The policy for the next episode (line 3: the counters release; lines 4-5)."""
        return self.plan(self.regularizer.release())

    def observe(self, states: np.ndarray, controls: np.ndarray) -> None:
        """Line 9: send ``Σ_h z_h z_hᵀ`` and ``Σ_h z_h x_{h+1}ᵀ`` (states ``(H+1, n)``, controls ``(H, d)``)."""
        z = np.hstack([states[:-1], controls])
        x_next = states[1:]
        if self.clip:
            z = self._clip(z, 1.0 + self.gamma)
            x_next = self._clip(x_next, 1.0)
        self.regularizer.observe(z.T @ z, z.T @ x_next)

    def _clip(self, v: np.ndarray, bound: float) -> np.ndarray:
        norms = np.linalg.norm(v, axis=1)
        over = norms > bound
        if over.any():
            self.n_clipped += int(over.sum())
            v = v.copy()
            v[over] *= (bound / norms[over])[:, None]
        return v
