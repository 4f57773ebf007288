"""Noise calibration and high-probability noise bounds (``mechanisms.md``, "Two calibrations").

``paper`` routes (as printed by the papers) and ``tight`` routes (same guarantee, less
noise or a narrower width) live side by side so that every agent can pick per job, and
so that experiments can show how much the ``tight`` route saves.
"""

from __future__ import annotations

import functools
import math

import numpy as np

CALIBRATIONS = ("paper", "tight")

# SciPy submodules are imported inside the functions that use them: a job process that
# only needs a Laplace scale should not pay ~0.5 s of scipy.stats import at start-up.


# --------------------------------------------------------------------------- Laplace


def laplace_tree_scale(epsilon: float, levels: int, l1_sensitivity: float = 1.0) -> float:
    """Per-node Laplace scale making a tree counter ε-DP: ``b = L·Δ1/ε``.

    Every element lies in at most ``L`` nodes, so one user changes at most ``L`` node sums
    by at most ``Δ1`` in ℓ1 each; basic composition of ``L`` Laplace mechanisms.
    """
    _check_eps(epsilon)
    return levels * l1_sensitivity / epsilon


def laplace_sum_sf(z: float, n_terms: int) -> float:
    """Exact ``P(Σ_{i<=k} Lap(1) > z)``: the sum is ``G1 - G2`` with ``G1, G2 ~ Gamma(k, 1)``
    independent, so ``P = ∫ Γ_sf(z + g; k) γ(g; k) dg`` (one smooth quadrature)."""
    from scipy import integrate, stats

    k = max(int(n_terms), 1)
    if z <= 0:
        return 1.0 - laplace_sum_sf(-z, k) if z < 0 else 0.5
    val, _ = integrate.quad(lambda g: stats.gamma.sf(z + g, k) * stats.gamma.pdf(g, k), 0, np.inf, limit=200, epsabs=1e-300, epsrel=1e-10)
    return float(val)


def laplace_sum_tail(scale: float, n_terms: int, beta: float) -> float:
    """Exact ``x`` with ``P(|Σ_{i<=k} Lap(b)| > x) = β``.

    This is the ``tight`` replacement of PUCB's ``E_ε`` per counter and release (before a
    union bound over counters and episodes): the noise in a release is exactly a sum of
    ``k = popcount(t) <= L`` i.i.d. Laplace node noises, whose tail we compute exactly
    (:func:`laplace_sum_sf`) instead of bounding it.
    """
    if not 0 < beta < 1:
        raise ValueError(f"beta must lie in (0, 1), got {beta}")
    return scale * _laplace_sum_quantile(max(int(n_terms), 1), float(beta))


@functools.lru_cache(maxsize=4096)
def _laplace_sum_quantile(k: int, beta: float) -> float:
    from scipy import optimize

    target = beta / 2.0  # two tails, symmetric
    if k == 1:
        return math.log(1.0 / beta)  # P(|Lap(1)| > z) = e^{-z}
    hi = max(1.0, math.log(1.0 / beta) * 2)
    while laplace_sum_sf(hi, k) > target:
        hi *= 2.0
    return optimize.brentq(lambda z: math.log(laplace_sum_sf(z, k)) - math.log(target), 0.0 if target < 0.5 else 1e-12, hi, xtol=1e-10)


# --------------------------------------------------------------------------- Gaussian


def zcdp_to_dp(rho: float, delta: float) -> float:
    """ε of a ρ-zCDP mechanism at δ by the papers' route: ``ε = ρ + 2 sqrt(ρ ln(1/δ))``."""
    _check_delta(delta)
    return rho + 2.0 * math.sqrt(rho * math.log(1.0 / delta))


def gaussian_delta(epsilon: float, mu: float) -> float:
    """Exact privacy profile of μ-GDP (Balle & Wang 2018, Theorem 8):
    ``δ(ε) = Φ(-ε/μ + μ/2) - e^ε Φ(-ε/μ - μ/2)``."""
    from scipy import special

    if mu <= 0:
        return 0.0
    # e^ε Φ(b) evaluated in log-space so large ε does not overflow.
    a = special.log_ndtr(-epsilon / mu + mu / 2.0)
    b = epsilon + special.log_ndtr(-epsilon / mu - mu / 2.0)
    return float(np.exp(a) - np.exp(b)) if a > b else 0.0


def gaussian_mu(epsilon: float, delta: float) -> float:
    """Largest μ such that μ-GDP is (ε, δ)-DP (root of ``gaussian_delta(ε, μ) = δ``)."""
    from scipy import optimize

    _check_eps(epsilon)
    _check_delta(delta)
    hi = 1.0
    while gaussian_delta(epsilon, hi) < delta:
        hi *= 2.0
    return optimize.brentq(lambda m: gaussian_delta(epsilon, m) - delta, 1e-12, hi, xtol=1e-14, rtol=1e-12)


def gaussian_sigma_tight(
    epsilon: float, delta: float, sensitivity: float, compositions: float = 1.0
) -> float:
    """Smallest σ such that ``compositions`` Gaussian mechanisms of ℓ2 sensitivity ``Δ``
    and scale σ are jointly (ε, δ)-DP.

    The k-fold composition of Gaussian mechanisms is exactly a Gaussian mechanism with
    sensitivity ``sqrt(k)·Δ`` (μ² adds up under GDP), so the analytic Gaussian calibration
    applies to the composed mechanism: ``σ = sqrt(k) Δ / μ(ε, δ)``. A tree counter is the
    composition of ``L`` node releases; several counters on the same users add their
    ``L·Δ_i²/σ_i²`` terms the same way.
    """
    return math.sqrt(compositions) * sensitivity / gaussian_mu(epsilon, delta)


def gaussian_sigma_zcdp(epsilon: float, delta: float, sensitivity: float, compositions: float = 1.0) -> float:
    """σ by the zCDP route: total ρ = k Δ²/(2σ²) with ε = ρ + 2 sqrt(ρ ln(1/δ)) solved for ρ."""
    _check_eps(epsilon)
    _check_delta(delta)
    log_inv = math.log(1.0 / delta)
    rho = (math.sqrt(log_inv + epsilon) - math.sqrt(log_inv)) ** 2
    return math.sqrt(compositions * sensitivity**2 / (2.0 * rho))


def tree_counter_mu(sigma: float, sensitivity: float, levels: int) -> float:
    """μ of a Gaussian tree counter: ``sqrt(L)·Δ/σ``."""
    return math.sqrt(levels) * sensitivity / sigma


def composed_epsilon(mu: float, delta: float) -> float:
    """Smallest ε at which μ-GDP satisfies (ε, δ)-DP."""
    from scipy import optimize

    _check_delta(delta)
    if gaussian_delta(0.0, mu) <= delta:
        return 0.0
    hi = 1.0
    while gaussian_delta(hi, mu) > delta:
        hi *= 2.0
    return optimize.brentq(lambda e: gaussian_delta(e, mu) - delta, 0.0, hi, xtol=1e-12)


# --------------------------------------------------------------------------- noise norms


def chi2_norm_bound(sigma: float, dim: int, beta: float) -> float:
    """Exact ``1-β`` quantile of ``||N(0, σ² I_dim)||_2`` (tight route)."""
    from scipy import stats

    return sigma * math.sqrt(stats.chi2.isf(beta, dim))


def laurent_massart_norm_bound(sigma: float, dim: int, beta: float) -> float:
    """Laurent–Massart bound on ``||N(0, σ² I_dim)||_2`` at level β (papers' route):
    ``||g||² <= σ²(d + 2 sqrt(d ln(1/β)) + 2 ln(1/β))``."""
    log_inv = math.log(1.0 / beta)
    return sigma * math.sqrt(dim + 2.0 * math.sqrt(dim * log_inv) + 2.0 * log_inv)


def symmetric_gaussian_norm_bound_paper(sigma: float, dim: int, beta: float) -> float:
    """The papers' operator-norm bound for a symmetric Gaussian matrix with entry variance
    σ²: ``σ (4 sqrt(dim) + sqrt(8 ln(1/β)))`` (Chowdhury et al. 2021, Zhou 2022)."""
    return sigma * (4.0 * math.sqrt(dim) + math.sqrt(8.0 * math.log(1.0 / beta)))


def symmetric_gaussian_norm_bound_tight(sigma: float, dim: int, beta: float) -> float:
    """A sharper valid bound on the operator norm of a symmetric Gaussian matrix whose
    entries ``p <= q`` are i.i.d. ``N(0, σ²)``.

    ``||W||_op <= ||W||_F`` and ``||W||_F² = Σ_p W_pp² + 2 Σ_{p<q} W_pq² <= 2 σ² χ²_{dim(dim+1)/2}``,
    so the exact χ² quantile gives a valid bound. The paper's bound is also valid; the
    smaller of two data-independent valid bounds at the same β is itself valid (the
    choice does not depend on the noise), so we return the minimum.
    """
    from scipy import stats

    q = dim * (dim + 1) // 2
    frob = sigma * math.sqrt(2.0 * stats.chi2.isf(beta, q))
    return min(frob, symmetric_gaussian_norm_bound_paper(sigma, dim, beta))


# --------------------------------------------------------------------------- checks


def _check_eps(epsilon: float) -> None:
    if not (epsilon > 0):
        raise ValueError(f"epsilon must be > 0, got {epsilon}")


def _check_delta(delta: float) -> None:
    if not (0 < delta < 1):
        raise ValueError(f"delta must lie in (0, 1), got {delta}")
