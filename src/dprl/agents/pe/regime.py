"""Where the rates of Balle, Gomrokchi, Precup (2016) apply (src/dprl/README.md, "Regimes"; spec
``balle2016-policy-evaluation.md``, "Regimes (measured)").

DP-LSW's noise is ``σ_X = (F_max/a)||(Γ^{1/2}Φ)^+||_F sqrt(Ψ_X)`` with
``Ψ_X = max_k e^{-kb} Σ_s ρ(s)/max(m_s - k, 1)²``. With ``m_s ≈ q_s m`` (``q_s`` the
probability that a trajectory visits ``s``) the maximiser ``k`` moves through three regimes:

- ``m ≲ 1/b``: removing every visit costs almost nothing (``e^{-b m} ≈ 1``), so
  ``Ψ ≈ Σ_s ρ(s)``: σ_X is flat in ``m``.
- ``1/b ≲ m ≲ 1/(b q_min)``: the states with ``q_s m b ≲ 1`` are still emptied at no cost;
  their ρ-mass falls like ``1/(b m)`` (on the chain ``q_s`` is spread evenly), so σ_X falls
  like ``m^{-1/2}``.
- beyond, the emptied-state term decays like ``e^{-b q_min m}`` until it meets the local
  sensitivity ``U_0 ≈ Σ_s ρ(s)/(q_s m)²`` at ``m*``; only for ``m > m*`` is the maximiser
  ``k = 0`` and σ_X ∝ 1/m (claim B2).

``m*`` solves ``b q_min m ≈ 2 ln m + const``: it is set by ``ε·m`` up to a logarithm
(``b ∝ ε``). :func:`lsw_regime` computes the three boundaries from a job's own ``(ε, δ)``,
features, ``ρ`` and the MRP's visit probabilities; ``m*`` exactly for the expected counts
(the smallest ``m`` of a fine log grid beyond which the maximiser of ``Ψ`` is ``k = 0``).

DP-LSL (claim B5): for ``λ`` large against the Gram matrix the released weights are
``θ ≈ (2m/λ)ΦᵀΓ_X F_X`` and the noise ``σ → 2F_max||Φ||_F||ρ||_2/(aλ)`` (``Ψ → ||ρ||_2²``),
so their signal-to-noise ratio does not depend on ``λ`` and grows like ``a·m ∝ ε·m``.
:func:`lsl_noise_floor` is the ``ε·m`` at which it reaches 1; below it every private
estimate is about as good as ``θ = 0`` and the choice of ``p`` cannot matter. The factor
:data:`B5_FLOOR_FACTOR` above the floor from which an interior ``p`` was measured to win is
an empirical constant of this package's chain (measured: ``ε·m ≳ 10⁵``), stated as such.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from dprl.agents.pe.bounds import lsw_argmax_k
from dprl.envs.mrp import FiniteMRP
from dprl.privacy.smooth_sensitivity import smooth_gaussian_constants

B5_FLOOR_FACTOR = 2.0  # interior p measured to win from about twice the noise floor (ε·m ≈ 1e5, identity)
_M_GRID = np.geomspace(1.0, 1e10, 1201)  # 0.8% steps in m for m*


def visit_probabilities(mrp: FiniteMRP) -> np.ndarray:
    """``q_s``: probability that a trajectory visits ``s`` (at times ``0..max_len-1``, as
    :meth:`FiniteMRP.sample_first_visit` counts visits); 0 for the absorbing state.

    For every target ``s`` at once: ``s`` is made a trap and the start distribution is
    propagated ``max_len - 1`` transitions; ``q_s`` is the mass in the trap."""
    n = mrp.n_states
    trap = np.broadcast_to(mrp.P, (n, n, n)).copy()  # trap[s] = P with row s replaced by e_s
    trap[np.arange(n), np.arange(n), :] = 0.0
    trap[np.arange(n), np.arange(n), np.arange(n)] = 1.0
    x = np.broadcast_to(mrp.p0, (n, n)).copy()  # x[s] = distribution under trap[s]
    for _ in range(mrp.max_len - 1):
        x = np.einsum("si,sij->sj", x, trap)
    q = x[np.arange(n), np.arange(n)]
    q[mrp.absorbing] = 0.0
    return q


@dataclass(frozen=True)
class LSWRegime:
    """Regime boundaries of DP-LSW's σ_X in the batch size ``m`` (trajectories)."""

    epsilon: float
    delta: float
    d: int
    b: float
    q_min: float  # smallest visit probability over states with ρ(s) > 0
    m_flat: float  # 1/b: σ_X flat below
    m_half: float  # 1/(b q_min): σ_X ∝ m^{-1/2} between m_flat and here
    m_star: float  # beyond: Ψ's maximiser is k = 0 (expected counts), σ_X ∝ 1/m

    @property
    def eps_m_star(self) -> float:
        """``ε·m*``: the boundary as a privacy-data budget (nearly the same across ε)."""
        return self.epsilon * self.m_star

    def regime_of(self, m: np.ndarray) -> np.ndarray:
        """``"flat"``, ``"-1/2"``, ``"collapse"`` or ``"1/m"`` per batch size."""
        m = np.asarray(m, dtype=float)
        return np.select([m < self.m_flat, m < self.m_half, m < self.m_star], ["flat", "-1/2", "collapse"], "1/m")


def lsw_regime(epsilon: float, delta: float, phi: np.ndarray, rho: np.ndarray, q: np.ndarray) -> LSWRegime:
    """Boundaries of DP-LSW's regimes for one job's constants (see the module docstring).

    ``b`` is the smooth bound's (``src/dprl/README.md``: ``b = ε / (4(d + ln(2/δ)))``); ``m*`` is the
    smallest grid ``m`` after which :func:`~dprl.agents.pe.bounds.lsw_argmax_k` of the expected
    counts ``q_s m`` is 0 at every larger grid ``m`` (``inf`` if not below ``10^10``)."""
    rho, q = np.asarray(rho, dtype=float), np.asarray(q, dtype=float)
    if rho.shape != q.shape:
        raise ValueError(f"rho and q must have the same shape, got {rho.shape} and {q.shape}")
    live = rho > 0
    if np.any(q[live] <= 0):
        raise ValueError("every state with rho > 0 needs a positive visit probability")
    const = smooth_gaussian_constants(epsilon, delta, int(np.asarray(phi).shape[1]))
    q_min = float(q[live].min())
    k_star = lsw_argmax_k(np.outer(_M_GRID, q), rho, const.b)
    bad = np.nonzero(k_star > 0)[0]
    if bad.size and bad[-1] == _M_GRID.size - 1:
        m_star = math.inf
    else:
        m_star = float(_M_GRID[bad[-1] + 1]) if bad.size else float(_M_GRID[0])
    return LSWRegime(float(epsilon), float(delta), const.dim, const.b, q_min, 1.0 / const.b,
                     1.0 / (const.b * q_min), m_star)


def lsl_noise_floor(delta: float, phi: np.ndarray, rho: np.ndarray, q: np.ndarray, values: np.ndarray,
                    f_max: float) -> float:
    """``ε·m`` at which strongly regularised DP-LSL's signal-to-noise ratio reaches 1:
    ``5 sqrt(2 ln(2/δ)) F_max ||Φ||_F ||ρ||_2 sqrt(d) / ||Φᵀ diag(ρ q) V||`` (module docstring;
    ``E[m_s F_X(s)] = m q_s V(s)``, ``sqrt(d)`` turns the per-coordinate σ into a norm)."""
    phi, rho, q, values = (np.asarray(x, dtype=float) for x in (phi, rho, q, values))
    signal = float(np.linalg.norm(phi.T @ (rho * q * values)))
    if not signal > 0:
        return math.inf
    return (5.0 * math.sqrt(2.0 * math.log(2.0 / delta)) * f_max * float(np.linalg.norm(phi))
            * float(np.linalg.norm(rho)) * math.sqrt(phi.shape[1]) / signal)
