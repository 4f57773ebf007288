"""Statistical privacy audits (``src/dprl/README.md``, "Privacy audits").

An audit lower-bounds a mechanism's ε from samples: run it ``n`` times on neighbouring
inputs ``D, D'``, pick a rejection region ``E`` on a *separate* calibration set of runs,
then on fresh runs estimate ``p = P[M(D) ∈ E]``, ``p' = P[M(D') ∈ E]`` with
Clopper–Pearson intervals at confidence ``1 - α`` and report
``ε_lb = ln((p_low - δ) / p'_high)``. The audit passes when ``ε_lb <= ε``.

Rejection regions are half-spaces ``{s(y) > c}`` for a family of one-dimensional
statistics of the (flattened) output: every coordinate, the difference of the means, the
Fisher/LDA direction (which finds linear combinations in which the noise cancels, e.g.
noise reused across tree nodes), and any statistics the caller supplies (e.g. the
log-likelihood ratio under the claimed noise model). Both orders ``(D, D')`` and
``(D', D)`` and both signs are tried.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import special

Sampler = Callable[[Any, int, np.random.Generator], np.ndarray]
Statistic = Callable[[np.ndarray], np.ndarray]


@dataclass(frozen=True)
class AuditResult:
    epsilon: float  # claimed
    delta: float  # claimed
    eps_lb: float  # audited lower bound on the true ε
    statistic: str  # which statistic defined the rejection region
    threshold: float
    p: float  # empirical P[M(D) ∈ E] (D the first of the chosen order)
    q: float  # empirical P[M(D') ∈ E]
    n: int  # evaluation runs per input

    @property
    def passed(self) -> bool:
        return bool(self.eps_lb <= self.epsilon)

    def columns(self) -> dict[str, float | bool | str | int]:
        """The columns every audit table records for this audit, under the same names in
        every paper: the claimed ``(ε, δ)``, the audited ``eps_lb``, whether it passed, the
        statistic chosen and the evaluation runs per input."""
        return {"claimed_epsilon": self.epsilon, "claimed_delta": self.delta, "eps_lb": self.eps_lb,
                "passed": self.passed, "statistic": self.statistic, "runs": self.n}


def clopper_pearson(k: np.ndarray | int, n: int, alpha: float) -> tuple[np.ndarray, np.ndarray]:
    """Two-sided Clopper–Pearson interval for ``k`` successes out of ``n`` at level ``1-α``."""
    return _cp_low(k, n, alpha), _cp_high(k, n, alpha)


def _cp_low(k: np.ndarray | int, n: int, alpha: float) -> np.ndarray:
    k = np.asarray(k, dtype=float)
    # the quantile is evaluated only where it is needed (k > 0): it is the audit's hot spot
    out = np.zeros(k.shape)
    pos = k > 0
    out[pos] = special.betaincinv(k[pos], n - k[pos] + 1, alpha / 2)
    return out


def _cp_high(k: np.ndarray | int, n: int, alpha: float) -> np.ndarray:
    k = np.asarray(k, dtype=float)
    out = np.ones(k.shape)
    below = k < n
    out[below] = special.betaincinv(k[below] + 1, n - k[below], 1 - alpha / 2)
    return out


def _eps_lb(k0: np.ndarray, k1: np.ndarray, n: int, delta: float, alpha: float) -> np.ndarray:
    p_low = _cp_low(k0, n, alpha)
    q_high = _cp_high(k1, n, alpha)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.log((p_low - delta) / q_high)
    return np.where(p_low - delta > 0, out, -np.inf)


def max_eps_lb(n: int, delta: float, alpha: float) -> float:
    """The largest ``ε_lb`` an audit of ``n`` runs per input can report: every run on D in the
    rejection region and none on D'. Then Clopper–Pearson bounds the two rates by
    ``(α/2)^{1/n}`` and ``1 − (α/2)^{1/n}``, so ``ε_lb ≈ ln(n / ln(2/α))`` (about 10.2 at
    ``n = 2·10⁵``, ``α = 10⁻³``): a mechanism that leaks completely lands at this cap, not
    at its true ε (∞ for an unnoised one)."""
    return float(_eps_lb(np.array([n]), np.array([0]), n, delta, alpha)[0])


def nodes_from_releases(rel: np.ndarray) -> np.ndarray:
    """Tree-counter releases ``rel[:, t-1, ...]`` (after ``t`` elements) -> node values.

    The node closed at ``t`` is ``release(t) − release(t − 2^{ctz t})`` (``src/dprl/README.md``):
    the releases are an invertible linear function of the noisy nodes, so auditing the
    node values (whose noises are independent) sees exactly what the releases show."""
    T = rel.shape[1]
    out = np.empty_like(rel)
    for t in range(1, T + 1):
        prev = t - (t & -t)
        out[:, t - 1] = rel[:, t - 1] - (rel[:, prev - 1] if prev else 0.0)
    return out


def laplace_llr(mu0: np.ndarray, mu1: np.ndarray, scale: float) -> Statistic:
    """Exact log-likelihood ratio ``ln p_{D'}(y) / p_D(y)`` of independent ``Lap(scale)``
    noises around ``mu0`` (D) and ``mu1`` (D'): ``Σ_i (|y_i − mu0_i| − |y_i − mu1_i|)/b``
    over the coordinates that differ (Neyman–Pearson: the most powerful statistic).

    It is constant on half-lines, so it has atoms; :func:`audit_samples` rounds every
    statistic so that floating-point jitter cannot split an atom between D and D'."""
    mu0, mu1 = np.ravel(mu0), np.ravel(mu1)
    keep = np.flatnonzero(mu0 != mu1)
    a, b = mu0[keep], mu1[keep]
    return lambda y: ((np.abs(y[:, keep] - a) - np.abs(y[:, keep] - b)) / scale).sum(axis=1)


def gaussian_llr(mu0: np.ndarray, mu1: np.ndarray, sigma: float) -> Statistic:
    """Exact log-likelihood ratio ``ln p_{D'}(y) / p_D(y)`` of independent ``N(0, σ²)``
    noises around ``mu0`` and ``mu1``: ``(y − (mu0+mu1)/2)·(mu1 − mu0)/σ²``, linear in ``y``.
    Unlike the fitted LDA direction it needs no covariance estimate, so no power is lost
    to estimation noise."""
    mu0, mu1 = np.ravel(mu0), np.ravel(mu1)
    w = (mu1 - mu0) / sigma**2
    c = float(w @ (mu0 + mu1)) / 2.0
    return lambda y: y @ w - c


def _projections(x0: np.ndarray, x1: np.ndarray, extra: dict[str, Statistic] | None) -> dict[str, Statistic]:
    """Candidate statistics fitted on calibration samples ``x0`` (from D), ``x1`` (from D')."""
    k = x0.shape[1]
    cands: dict[str, Statistic] = {}
    if k <= 64:
        for j in range(k):
            cands[f"coord[{j}]"] = lambda y, j=j: y[:, j]
    diff = x1.mean(0) - x0.mean(0)
    if np.any(diff != 0):
        cands["mean-difference"] = lambda y, w=diff: y @ w
    cov = 0.5 * (np.cov(x0, rowvar=False).reshape(k, k) + np.cov(x1, rowvar=False).reshape(k, k))
    ridge = 1e-10 * max(np.trace(cov) / k, 1e-300)
    try:
        w = np.linalg.solve(cov + ridge * np.eye(k), diff)
        if np.all(np.isfinite(w)) and np.any(w != 0):
            cands["lda"] = lambda y, w=w: y @ w
    except np.linalg.LinAlgError:
        pass
    for name, f in (extra or {}).items():
        cands[name] = f
    return cands


def _quantizer(s0: np.ndarray, s1: np.ndarray) -> Statistic:
    """Round a statistic to a grid of 1e-9 of its spread.

    A statistic with point masses (e.g. a clipped likelihood ratio, or a coordinate that
    the mechanism leaves deterministic on both inputs) must not let floating-point jitter
    of ~1e-16 split an atom differently under D and D': that would fake a huge ε_lb.
    Rounding merges such atoms; it coarsens a continuous statistic only at a scale that
    cannot change any probability measurably.
    """
    both = np.concatenate([s0, s1])
    finite = both[np.isfinite(both)]
    spread = float(np.max(np.abs(finite))) if finite.size else 0.0
    q = 1e-9 * spread if spread > 0 else 1e-300
    return lambda s: np.round(s / q) * q


def _sorted_quantile(x: np.ndarray, q: np.ndarray) -> np.ndarray:
    """``np.quantile(x, q)`` (linear method, numpy's own interpolation formula) of an
    already sorted ``x``, without numpy's partition, which dominated the audit's run time."""
    idx = q * (x.size - 1)
    lo = np.floor(idx).astype(np.intp)
    hi = np.minimum(lo + 1, x.size - 1)
    t = idx - lo
    a, b = x[lo], x[hi]
    diff = b - a
    return np.where(t >= 0.5, b - diff * (1 - t), a + diff * t)


def _sorted_both_signs(s0: np.ndarray, s1: np.ndarray) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """``(sort(s0), sort(s1), sort(s0 ∪ s1))`` of the statistic and of its negation, from two
    sorts of ``n`` values: the pooled sample merges the two sorted halves (a stable sort of two
    sorted runs is one merge), and ``sort(-x) = -reverse(sort(x))``. Sorting dominated the
    audit (three sorts of ``n`` to ``2n`` values per statistic and sign; ``pe_audit`` spent 20
    of its 27 s per job there); the sorted values are the same, so the audit's numbers are.
    With a NaN (which sorts last either way) each sign is sorted on its own."""
    out = []
    if np.isnan(s0).any() or np.isnan(s1).any():
        for x0, x1 in ((s0, s1), (-s0, -s1)):
            a, b = np.sort(x0), np.sort(x1)
            out.append((a, b, np.sort(np.concatenate([a, b]), kind="stable")))
        return out
    a, b = np.sort(s0), np.sort(s1)
    pooled = np.sort(np.concatenate([a, b]), kind="stable")
    out.append((a, b, pooled))
    out.append((-a[::-1], -b[::-1], -pooled[::-1]))
    return out


def _best_region(s0s: np.ndarray, s1s: np.ndarray, pooled: np.ndarray, delta: float,
                 alpha: float) -> tuple[float, float, int]:
    """Best threshold and order for ``{s > c}`` on calibration statistics, given sorted
    (:func:`_sorted_both_signs`): ``s0s``, ``s1s`` and their sorted pool.

    Returns ``(eps_estimate, threshold, order)`` with order 0 meaning ``E`` favours D.
    """
    n = s0s.size
    grid = np.unique(_sorted_quantile(pooled, np.linspace(0.0, 1.0, 401)))
    k0 = n - np.searchsorted(s0s, grid, side="right")
    k1 = n - np.searchsorted(s1s, grid, side="right")
    best = (-np.inf, 0.0, 0)
    for order, (a, b) in enumerate(((k0, k1), (k1, k0))):
        e = _eps_lb(a, b, n, delta, alpha)
        i = int(np.argmax(e))
        if e[i] > best[0]:
            best = (float(e[i]), float(grid[i]), order)
    return best


def audit_samples(
    calib0: np.ndarray,
    calib1: np.ndarray,
    eval0: np.ndarray,
    eval1: np.ndarray,
    epsilon: float,
    delta: float = 0.0,
    alpha: float = 1e-3,
    statistics: dict[str, Statistic] | None = None,
) -> AuditResult:
    """Audit from samples: ``calib*`` choose the region, ``eval*`` (fresh runs) measure it.

    Arrays are ``(n, k)`` outputs of ``n`` independent runs on D (``*0``) and D' (``*1``).
    """
    calib0, calib1, eval0, eval1 = (np.asarray(a, float).reshape(len(a), -1) for a in (calib0, calib1, eval0, eval1))
    best: tuple[float, str, float, int] = (-np.inf, "", 0.0, 0)
    cands = _projections(calib0, calib1, statistics)
    quant: dict[str, Statistic] = {}
    for name, f in cands.items():
        s0, s1 = f(calib0), f(calib1)
        quant[name] = _quantizer(s0, s1)
        s0, s1 = quant[name](s0), quant[name](s1)
        for sign, sorted_ in zip((1.0, -1.0), _sorted_both_signs(s0, s1)):
            e, c, order = _best_region(*sorted_, delta, alpha)
            if e > best[0]:
                best = (e, f"{'+' if sign > 0 else '-'}{name}", c, order)
    _, label, c, order = best
    if not label:
        return AuditResult(epsilon, delta, -np.inf, "none", np.nan, np.nan, np.nan, len(eval0))
    raw, qz = cands[label[1:]], quant[label[1:]]
    f = lambda y: qz(raw(y))  # noqa: E731  (same rounding on the evaluation runs)
    sign = 1.0 if label[0] == "+" else -1.0
    n = len(eval0)
    k0 = int(np.sum(sign * f(eval0) > c))
    k1 = int(np.sum(sign * f(eval1) > c))
    a, b = (k0, k1) if order == 0 else (k1, k0)
    eps_lb = float(_eps_lb(np.array(a), np.array(b), n, delta, alpha))
    return AuditResult(epsilon, delta, eps_lb, label + (" (D' vs D)" if order else ""), c, a / n, b / n, n)


def audit(
    sample: Sampler,
    d0: Any,
    d1: Any,
    epsilon: float,
    delta: float = 0.0,
    n: int = 100_000,
    rng: np.random.Generator | None = None,
    alpha: float = 1e-3,
    statistics: dict[str, Statistic] | None = None,
) -> AuditResult:
    """Audit a mechanism given as ``sample(dataset, n, rng) -> (n, k)`` array of outputs of
    ``n`` independent runs. Uses ``n`` calibration and ``n`` fresh evaluation runs per input."""
    rng = rng if rng is not None else np.random.default_rng(0)
    c0, c1 = sample(d0, n, rng), sample(d1, n, rng)
    e0, e1 = sample(d0, n, rng), sample(d1, n, rng)
    return audit_samples(c0, c1, e0, e1, epsilon, delta, alpha, statistics)
