"""Smooth-sensitivity Gaussian output perturbation (``src/dprl/README.md``; Nissim, Raskhodnikova,
Smith 2007, "Smooth sensitivity and sampling in private data analysis").

Releasing ``μ_X + N(0, σ_X² I_d)`` is (ε, δ)-DP if for all neighbouring datasets ``X, X'``

    ``σ_X >= ||μ_X - μ_X'||_2 / a``   and   ``|ln(σ_X² / σ_X'²)| <= b``,

with ``a = ε / (5 sqrt(2 ln(2/δ)))`` and ``b = ε / (4 (d + ln(2/δ)))``. A data-dependent
scale satisfying both is ``σ_X = scale · sqrt(Ψ_X) / a`` where ``Ψ_X`` is a ``b``-smooth upper
bound on the squared local sensitivity (divided by ``scale²``):

    ``Ψ_X = max_{k >= 0} e^{-k b} U_k(X)``,

``U_k(X)`` an upper bound on the squared local sensitivity over all datasets within distance
``k`` of ``X`` (non-decreasing in ``k``). Then ``Ψ_X <= e^b Ψ_X'`` for neighbours (the max over
``k`` of ``X'`` is dominated by the max over ``k+1`` of ``X``), which is the second condition, and
``Ψ_X >= U_0(X)`` gives the first.

This module is paper-agnostic: callers supply ``U_k`` as an array over ``k`` (vectorised);
the bounds ``U_k`` of a specific estimator live with that estimator. ``ε = ∞`` is accepted
and gives ``a = ∞``, i.e. ``σ = 0`` (the non-private estimator), which tests use.

Accounting: the mechanism's accounted ε is its nominal ε, by NRS07's theorem (smooth
sensitivity with Gaussian noise, the constants ``a``, ``b`` above), which needs exactly the
two conditions above for every pair of neighbours (the relation is the caller's: for the
2016 paper one trajectory replaced by another); there is no tighter closed-form accounting
of a data-dependent noise scale. The conditions are checked by tests (b-smoothness of ``Ψ``) and audits. For
one *given* pair of releases, :func:`gaussian_pair_epsilon` computes the exact ε of two
isotropic Gaussians with different means and scales, which audits compare with ``ε_lb``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import integrate, optimize, special

from dprl.checks import bracket_upper, check_number


@dataclass(frozen=True)
class SmoothGaussianConstants:
    """``a`` (sensitivity-to-noise ratio) and ``b`` (smoothness) of the mechanism."""

    epsilon: float
    delta: float
    dim: int
    a: float
    b: float

    @property
    def accounted_epsilon(self) -> float:
        """ε of the smooth-sensitivity Gaussian mechanism with the ``(a, b)`` held, by NRS07's
        theorem (:func:`smooth_gaussian_constants` inverted): ``max(5a sqrt(2 ln(2/δ)),
        4b (d + ln(2/δ)))``, reported as the nominal ε when neither constant exceeds the
        nominal ε's (a smaller ``a`` means more noise, a smaller ``b`` a smoother bound), so
        that round-off in the inversion never shows."""
        log_term = math.log(2.0 / self.delta)
        nominal = smooth_gaussian_constants(self.epsilon, self.delta, self.dim)
        if self.a <= nominal.a and self.b <= nominal.b:
            return self.epsilon
        return max(5.0 * self.a * math.sqrt(2.0 * log_term), 4.0 * self.b * (self.dim + log_term))

    @property
    def accounted_delta(self) -> float:
        return self.delta


def smooth_gaussian_constants(epsilon: float, delta: float, dim: int) -> SmoothGaussianConstants:
    """``a = ε / (5 sqrt(2 ln(2/δ)))``, ``b = ε / (4 (d + ln(2/δ)))`` for a ``d``-dimensional release."""
    # ε = inf is the non-private limit (a = inf: no noise); NaN is refused
    check_number("epsilon", epsilon, exclusive_minimum=0.0, allow_inf=True)
    check_number("delta", delta, exclusive_minimum=0.0, exclusive_maximum=1.0)
    check_number("release dimension", dim, minimum=1, integer=True)
    log_term = math.log(2.0 / delta)
    a = epsilon / (5.0 * math.sqrt(2.0 * log_term))
    b = epsilon / (4.0 * (dim + log_term))
    return SmoothGaussianConstants(float(epsilon), float(delta), int(dim), a, b)


def log_smooth_bound(log_u: np.ndarray, b: float, k: np.ndarray | None = None) -> np.ndarray:
    """``ln Ψ = max_k (-k b + ln U_k)`` over the last axis.

    ``k`` (broadcastable to ``log_u``) are the distances at which ``U_k`` is given; by default
    ``0, 1, ..., K``. Callers may pass only the candidate maximisers when the structure of
    their ``U_k`` proves the maximum is attained there (e.g. at breakpoints); the result is
    then the exact maximum over all ``k``. Computed in log space so that ``e^{-k b}`` never
    underflows. Leading axes are independent problems (e.g. several batch sizes at once).
    """
    log_u = np.asarray(log_u, dtype=float)
    k = np.arange(log_u.shape[-1], dtype=float) if k is None else np.asarray(k, dtype=float)
    if math.isinf(b):  # ε = ∞: only k = 0 survives (avoids ∞·0)
        return np.max(np.where(k == 0, log_u, -np.inf), axis=-1)
    return np.max(log_u - b * k, axis=-1)


def smooth_bound(u: np.ndarray, b: float, k: np.ndarray | None = None) -> np.ndarray:
    """``Ψ = max_k e^{-k b} U_k`` over the last axis (see :func:`log_smooth_bound`)."""
    with np.errstate(divide="ignore"):
        return np.exp(log_smooth_bound(np.log(np.asarray(u, dtype=float)), b, k))


def smooth_sigma(psi: float | np.ndarray, scale: float, a: float) -> float | np.ndarray:
    """``σ_X = scale · sqrt(Ψ_X) / a`` (0 when ``a = ∞``, i.e. ``ε = ∞``)."""
    if math.isinf(a):
        return np.zeros_like(np.asarray(psi, dtype=float))[()]
    return scale * np.sqrt(psi) / a


def gaussian_release(theta: np.ndarray, sigma: float, rng: np.random.Generator | None, size: int | None = None) -> np.ndarray:
    """The release ``θ + N(0, σ² I_d)``; with ``size`` an ``(size, d)`` array of independent
    releases (audits). ``σ = 0`` returns ``θ`` unchanged without touching ``rng``."""
    theta = np.asarray(theta, dtype=float)
    if not (sigma >= 0 and np.isfinite(sigma)):
        raise ValueError(f"noise scale must be finite and >= 0, got {sigma}")
    shape = theta.shape if size is None else (int(size), *theta.shape)
    if sigma == 0:
        return np.broadcast_to(theta, shape).copy()
    if rng is None:
        raise ValueError("a noisy release needs the noise generator")
    return theta + sigma * rng.standard_normal(shape)


def _quadratic_region_probability(a2: float, a1: float, a0: float, mean: float, sd: float) -> float:
    """``P[a2 u² + a1 u + a0 > 0]`` for ``u ~ N(mean, sd²)`` (roots by the cancellation-free
    quadratic formula, so that ``a2 -> 0`` tends to the linear case)."""
    cdf = special.ndtr  # scalar SciPy ufunc: ~50× faster than stats.norm in the quadrature
    if a2 == 0.0:
        if a1 == 0.0:
            return float(a0 > 0)
        r = (-a0 / a1 - mean) / sd
        return float(cdf(-r) if a1 > 0 else cdf(r))
    disc = a1 * a1 - 4.0 * a2 * a0
    if disc <= 0.0:
        return float(a2 > 0)
    q = -0.5 * (a1 + math.copysign(math.sqrt(disc), a1))
    lo, hi = sorted(((q / a2 - mean) / sd, (a0 / q - mean) / sd))
    if a2 > 0:
        return float(cdf(lo) + cdf(-hi))
    return float(max(cdf(hi) - cdf(lo), 0.0) if hi < 0 else max(cdf(-lo) - cdf(-hi), 0.0))


def gaussian_pair_delta(epsilon: float, shift: float, sigma0: float, sigma1: float, dim: int) -> float:
    """Hockey-stick divergence ``sup_E P0(E) - e^ε P1(E)`` of ``P0 = N(0, σ0² I_d)`` and
    ``P1 = N(μ, σ1² I_d)``, ``||μ||_2 = shift``: ``P0[L > ε] - e^ε P1[L > ε]`` for the privacy
    loss ``L = ln p0/p1``.

    Along ``μ`` (coordinate ``u``) and across it (``R = ||y_⊥||²``),
    ``L = d ln(σ1/σ0) + (1/σ1² - 1/σ0²) R / 2 + (u - shift)²/(2σ1²) - u²/(2σ0²)``: for fixed
    ``R`` the event ``L > ε`` is a quadratic region in the Gaussian ``u`` (closed form); ``R``
    is ``σ_j² χ²_{d-1}`` under ``P_j`` and is integrated numerically (none when ``d = 1``).
    Equal scales give the analytic Gaussian mechanism with ``μ = shift/σ``.
    """
    check_number("epsilon", epsilon, minimum=0.0)
    check_number("sigma0", sigma0, exclusive_minimum=0.0)
    check_number("sigma1", sigma1, exclusive_minimum=0.0)
    check_number("shift", shift, minimum=0.0)
    check_number("dim", dim, minimum=1, integer=True)
    c = 0.5 * (1.0 / sigma1**2 - 1.0 / sigma0**2)  # coefficient of u² and of R in L
    a1 = -shift / sigma1**2
    a0 = shift**2 / (2.0 * sigma1**2) + dim * math.log(sigma1 / sigma0) - epsilon

    def tail(mean: float, sd: float) -> float:  # P_j[L > ε]
        if dim == 1 or c == 0.0:
            return _quadratic_region_probability(c, a1, a0, mean, sd)
        k = dim - 1
        log_norm = (1.0 - k / 2.0) * math.log(2.0) - special.gammaln(k / 2.0)

        def integrand(t: float) -> float:  # t = ||z_⊥|| ~ χ_{d-1}, R = sd² t²
            dens = math.exp(log_norm + (k - 1) * math.log(t) - 0.5 * t * t) if t > 0 else float(k == 1) * math.exp(log_norm)
            return dens * _quadratic_region_probability(c, a1, a0 + c * sd**2 * t * t, mean, sd)

        # χ_{d-1} has negligible mass beyond sqrt(d-1) + 40; relative accuracy because the
        # tail under P1 is multiplied by e^ε
        return float(integrate.quad(integrand, 0.0, math.sqrt(k) + 40.0, epsabs=0.0, epsrel=1e-11, limit=400)[0])

    return tail(0.0, sigma0) - math.exp(epsilon) * tail(shift, sigma1)


def gaussian_pair_epsilon(delta: float, shift: float, sigma0: float, sigma1: float, dim: int) -> float:
    """Exact ε at ``δ`` of the pair ``N(θ0, σ0² I_d)``, ``N(θ1, σ1² I_d)`` with
    ``||θ0 - θ1||_2 = shift``: the smallest ``ε >= 0`` with both hockey-stick divergences
    (both orders) at most ``δ``. This is the privacy of one release mechanism on one pair of
    neighbouring inputs; an audit of that pair cannot exceed it (up to its confidence level).
    """
    check_number("delta", delta, exclusive_minimum=0.0, exclusive_maximum=1.0)
    best = 0.0
    for s0, s1 in ((sigma0, sigma1), (sigma1, sigma0)):
        f = lambda e, s0=s0, s1=s1: gaussian_pair_delta(e, shift, s0, s1, dim) - delta  # noqa: E731
        if f(0.0) <= 0:
            continue
        hi = bracket_upper("gaussian_pair_epsilon", lambda e, f=f: f(e) > 0)
        best = max(best, optimize.brentq(f, 0.0, hi, xtol=1e-10))
    return best
