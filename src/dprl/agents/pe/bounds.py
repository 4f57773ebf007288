"""Smooth upper bounds ``Ψ_X`` on the squared local sensitivity of LSW and LSL (spec,
"LSW and DP-LSW", "LSL and DP-LSL"), vectorised over several batches (leading axis) and
computed exactly without scanning ``k = 0..m``:

- LSW: ``U_k = Σ_s ρ(s) / max(m_s - k, 1)²``. Between consecutive breakpoints
  ``k = m_s - 1`` every term is either constant or ``(m_s - k)^{-2}``, which is log-convex;
  sums of log-convex functions (and constants) are log-convex, so ``-kb + ln U_k`` is
  convex on each piece and its maximum over the piece is at an end. The maximum over all
  ``k >= 0`` is therefore attained in ``{0} ∪ {m_s - 1}`` (beyond the last breakpoint ``U_k``
  is constant and ``e^{-kb}`` decreasing): at most ``N + 1`` candidates.
- LSL: ``U_k = (c_λ sqrt(A(k)) + ||ρ||_2)²`` with ``A(k) = Σ_s ρ(s) min(m_s + k, m)``. ``A`` is
  concave and non-decreasing, so ``sqrt``, the affine map and ``ln`` keep
  ``-kb + ln U_k`` concave in ``k``: its maximiser over ``0 <= k <= m`` is found by a
  vectorised bisection on the sign of the forward difference (``⌈log2 m⌉`` steps).
  ``k`` must reach ``m`` (Balle et al. 2016, "DP-LSL"): a neighbour ``X'`` has ``U_k(X') <= U_{k+1}(X)``, so
  ``Ψ_X' <= e^b Ψ_X`` needs the term ``k + 1 = m`` in ``Ψ_X`` whenever ``k = m - 1`` is in
  ``Ψ_X'``. Stopping at ``m - 1`` (the code before this fix) gave ``|ln Ψ_X - ln Ψ_X'| = 187·b``
  on ``ρ = (.5, .5)``, ``m = 2``, ``c_λ = 1``, ``b = 1e-3``, counts ``(1, 2)`` vs ``(0, 2)``
  (regression test). Beyond ``m`` every term is saturated, so ``k <= m`` is the max over all
  ``k >= 0``.

The generic ``max_k e^{-kb} U_k`` is :func:`dprl.privacy.smooth_sensitivity.log_smooth_bound`.

The sensitivity arguments (Balle et al. 2016, the lemmas behind "DP-LSW" and "DP-LSL"),
step by step, with the norm inequality each step uses. Neighbours: one trajectory
replaced by another (the paper's relation); ``F_max = R_max/(1-γ)`` bounds every
first-visit return; ``m_s`` are the counts of ``X`` (the bound is local at ``X``).

DP-LSW, ``θ_X = M Γ^{1/2} F_X`` with ``M = (Γ^{1/2}Φ)^+`` (data-independent):

1. ``|F_X(s) - F_X'(s)| <= F_max / max(m_s, 1)`` for every state: the count stays (one
   return of ``[0, F_max]`` changes in a mean of ``m_s``), rises (the mean of ``m_s + 1``
   moves by ``|f - F_X(s)|/(m_s + 1)``), falls (by ``|F_X'(s) - f|/m_s``) or ``1 -> 0``
   (``F_X(s) = f`` becomes 0): each at most ``F_max/max(m_s, 1)``.
2. ``||Γ^{1/2}(F_X - F_X')||_2² = Σ_s ρ(s)(F_X(s) - F_X'(s))² <= F_max² Σ_s ρ(s)/max(m_s, 1)²``.
3. ``||θ_X - θ_X'||_2 = ||M Γ^{1/2}(F_X - F_X')||_2 <= ||M||_2 ||Γ^{1/2}(F_X - F_X')||_2``
   (``||Av||_2 <= ||A||_2 ||v||_2``, the operator norm). The paper states it with
   ``||M||_F >= ||M||_2`` (valid, looser by up to ``sqrt(rank)``: 2.45x with identity
   features on the 40-state chain, 1.82x with pairs). **The operator norm is valid here**;
   the ``tight`` calibration uses it (:data:`LSW_NORMS`).

DP-LSL, ``θ_X = argmin_θ H_X(θ)``, ``H_X(θ) = Σ_i h_i(θ) + (λ/2)||θ||²`` with
``h_i(θ) = Σ_{s visited by i} ρ(s)(F_{i,s} - φ(s)ᵀθ)²`` (``H_X/m`` differs from the spec's
objective by a constant in θ, so the minimiser is the spec's ``θ_X``):

1. ``H_X'`` is λ-strongly convex (its Hessian ``2ΦᵀΓ'Φ + λI ⪰ λI``), so with
   ``∇H_X(θ_X) = 0 = ∇H_X'(θ_X')``:
   ``λ||θ_X - θ_X'||² <= <∇H_X'(θ_X) - ∇H_X'(θ_X'), θ_X - θ_X'> = <g, θ_X - θ_X'>``,
   ``g = ∇h_new(θ_X) - ∇h_old(θ_X)`` (Cauchy–Schwarz): ``||θ_X - θ_X'|| <= ||g||/λ``.
2. ``g = -2Φᵀ[(D_new F_new - D_old F_old) - (D_new - D_old)Φθ_X]``, ``D_i = diag(ρ(s)[s ∈ i])``:
   ``||g|| <= 2||Φ||_2 (||D_new F_new - D_old F_old||_2 + ||D_new - D_old||_2 ||Φ||_2 ||θ_X||_2)``
   (``||Φᵀv|| <= ||Φ||_2||v||``, twice). Entrywise ``|ρ(s)(F_new,s - F_old,s)| <= ρ(s) F_max``,
   so the first norm is at most ``F_max ||ρ||_2``; ``||D_new - D_old||_2 <= ||ρ||_∞``.
3. ``θ_X = (ΦᵀDΦ + (λ/2)I)^{-1}ΦᵀD^{1/2} · D^{1/2}F_X`` with ``D = diag(ρ(s) m_s)``;
   ``||(BᵀB + μI)^{-1}Bᵀ||_2 = max_σ σ/(σ² + μ) <= 1/(2√μ)`` (``B = D^{1/2}Φ``, ``μ = λ/2``) and
   ``||D^{1/2}F_X||² <= F_max² Σ_s ρ(s) m_s``: ``||θ_X|| <= F_max sqrt(Σ_s ρ(s) m_s) / sqrt(2λ)``.
4. Together: ``||θ_X - θ_X'|| <= (2 F_max ||Φ||_2 / λ) (c_λ sqrt(Σ_s ρ(s) m_s) + ||ρ||_2)``,
   ``c_λ = ||Φ||_2 ||ρ||_∞ / sqrt(2λ)``: the spec's bound with the operator norm in the
   numerator and in ``c_λ``, and ``λ`` itself in the denominator.

The paper's constants (``||Φ||_F`` in the three places, the offset ``λ - ||ρ||_∞||Φ||_F²``,
which no step needs: it would come from a strong-convexity modulus that discounts the
replaced trajectory's curvature, and makes ``λ > ||ρ||_∞||Φ||_F²`` a requirement) are each
at least the operator-norm ones, so the paper's bound is valid and looser. The authors'
published code (``||Φ||_2`` in all three places, offset ``λ - ||ρ||_∞||Φ||_2²``) lies
between the two and is valid too. **The operator norm is valid here**; the ``tight``
calibration uses step 4 as it stands (:data:`LSL_NORMS`). ``U_k`` keeps its form (only
``c_λ`` changes), so ``Ψ_X`` stays b-smooth for any ``c_λ``.

Both conclusions are checked exactly (``tests/pe/test_pe_exact_sensitivity.py``, the
``pe_exact`` job, :mod:`dprl.agents.pe.exact`): on small chains every replacement pair of
batches is enumerated (returns at the vertices of ``[0, F_max]``, where the linear map to
``θ_X - θ_X'`` attains its largest norm) and the true ``||θ_X - θ_X'||`` is compared with each
bound; a bound halved is exceeded.
"""

from __future__ import annotations

import numpy as np

from dprl.privacy.smooth_sensitivity import log_smooth_bound


def lsw_u(counts: np.ndarray, rho: np.ndarray, k: np.ndarray) -> np.ndarray:
    """``U_k = Σ_s ρ(s) / max(m_s - k, 1)²`` for counts ``(B, N)`` and ``k`` ``(B, K)`` -> ``(B, K)``."""
    gap = np.maximum(counts[:, None, :] - k[:, :, None], 1.0)
    return np.sum(rho / gap**2, axis=-1)


def lsw_psi(counts: np.ndarray, rho: np.ndarray, b: float) -> np.ndarray:
    """``Ψ_X = max_{k >= 0} e^{-kb} Σ_s ρ(s) / max(m_s - k, 1)²`` per batch (``counts`` ``(B, N)``)."""
    counts = np.atleast_2d(np.asarray(counts, dtype=float))
    cand = np.concatenate([np.zeros((counts.shape[0], 1)), np.maximum(counts - 1.0, 0.0)], axis=1)
    return np.exp(log_smooth_bound(np.log(lsw_u(counts, rho, cand)), b, cand))


def lsw_argmax_k(counts: np.ndarray, rho: np.ndarray, b: float) -> np.ndarray:
    """The maximiser ``k*`` of ``e^{-kb} U_k`` in :func:`lsw_psi` per batch (smallest on ties),
    over the same candidates ``{0} ∪ {m_s - 1}``. Diagnostic only (it selects no noise): ``k* = 0``
    means ``Ψ_X`` is the local sensitivity ``U_0`` and σ_X ∝ 1/m (``regime.py``, claim B2)."""
    counts = np.atleast_2d(np.asarray(counts, dtype=float))
    cand = np.concatenate([np.zeros((counts.shape[0], 1)), np.maximum(counts - 1.0, 0.0)], axis=1)
    if np.isinf(b):
        return np.zeros(counts.shape[0])
    score = np.log(lsw_u(counts, rho, cand)) - b * cand
    best = score.max(axis=1, keepdims=True)
    # smallest k among the (numerically) tied maximisers
    return np.where(score >= best - 1e-12 * np.abs(best), cand, np.inf).min(axis=1)


def lsl_log_u(counts: np.ndarray, m: np.ndarray, rho: np.ndarray, c_lam: np.ndarray, k: np.ndarray) -> np.ndarray:
    """``ln U_k = 2 ln(c_λ sqrt(Σ_s ρ(s) min(m_s + k, m)) + ||ρ||_2)``; ``k`` ``(B, K)``, ``c_λ`` ``(B,)``."""
    a_k = np.sum(rho * np.minimum(counts[:, None, :] + k[:, :, None], m[:, None, None]), axis=-1)
    return 2.0 * np.log(c_lam[:, None] * np.sqrt(a_k) + np.linalg.norm(rho))


def lsl_psi(counts: np.ndarray, m: np.ndarray, rho: np.ndarray, c_lam: np.ndarray, b: float,
            k_max: np.ndarray | None = None) -> np.ndarray:
    """``Ψ_X = max_{0 <= k <= m} e^{-kb} (c_λ sqrt(Σ_s ρ(s) min(m_s + k, m)) + ||ρ||_2)²`` per batch.

    ``counts`` ``(B, N)``, ``m`` ``(B,)`` batch sizes, ``c_λ`` ``(B,)`` (``λ`` depends on ``m``).
    ``k_max`` (default ``m``, the b-smooth bound) caps the range at ``0 <= k <= k_max``; only
    the negative control of the old cap ``k_max = m - 1`` (not b-smooth) passes it.
    """
    counts = np.atleast_2d(np.asarray(counts, dtype=float))
    m = np.asarray(m, dtype=float).reshape(-1)
    c_lam = np.broadcast_to(np.asarray(c_lam, dtype=float), m.shape)
    if np.isinf(b):
        return np.exp(lsl_log_u(counts, m, rho, c_lam, np.zeros((m.size, 1)))[:, 0])

    def f(k: np.ndarray) -> np.ndarray:
        return lsl_log_u(counts, m, rho, c_lam, k[:, None])[:, 0] - b * k

    hi = m.copy() if k_max is None else np.broadcast_to(np.asarray(k_max, dtype=float), m.shape).copy()
    if np.any(hi < 0):
        raise ValueError("k_max must be >= 0")
    lo = np.zeros_like(m)
    # invariant: the maximiser lies in [lo, hi]; f concave, so f(mid+1) > f(mid) puts it above mid
    for _ in range(int(np.ceil(np.log2(max(hi.max() + 1.0, 2.0)))) + 1):
        mid = np.floor((lo + hi) / 2.0)
        up = (mid < hi) & (f(np.minimum(mid + 1.0, hi)) > f(mid))
        lo = np.where(up, mid + 1.0, lo)
        hi = np.where(up, hi, mid)
    return np.exp(f(lo))  # e^{-b k*} U_{k*} at the maximiser k*


def gs_lsl_sqrt_psi(m: np.ndarray, rho: np.ndarray, c_lam: np.ndarray) -> np.ndarray:
    """Global-sensitivity replacement of ``sqrt(Ψ_X)``: ``c_λ sqrt(m) + ||ρ||_2`` (spec, GS-DP-LSL)."""
    return np.asarray(c_lam) * np.sqrt(np.asarray(m, dtype=float)) + np.linalg.norm(rho)
