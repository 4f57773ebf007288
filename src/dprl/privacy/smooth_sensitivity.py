"""Smooth-sensitivity Gaussian output perturbation (``mechanisms.md``; Nissim, Raskhodnikova,
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
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class SmoothGaussianConstants:
    """``a`` (sensitivity-to-noise ratio) and ``b`` (smoothness) of the mechanism."""

    epsilon: float
    delta: float
    dim: int
    a: float
    b: float


def smooth_gaussian_constants(epsilon: float, delta: float, dim: int) -> SmoothGaussianConstants:
    """``a = ε / (5 sqrt(2 ln(2/δ)))``, ``b = ε / (4 (d + ln(2/δ)))`` for a ``d``-dimensional release."""
    if not epsilon > 0:
        raise ValueError(f"epsilon must be > 0, got {epsilon}")
    if not 0 < delta < 1:
        raise ValueError(f"delta must lie in (0, 1), got {delta}")
    if dim < 1:
        raise ValueError(f"release dimension must be >= 1, got {dim}")
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
