"""Statistics shared by every claim: intervals over seeds, log-log slopes, power-law
exponents, and verdict rules.

Seeds are the independent units. A slope of a curve in T (or m) is fitted to each seed's
own curve, and its 95% interval is Student's t interval over those per-seed slopes
(:func:`t_interval`): the percentile bootstrap over 3-4 seeds covers the true slope far
less often than it claims (simulated: 0.76 at n = 3, 0.78 at n = 4, 0.90 at n = 8; the t
interval: 0.95 for normal per-seed slopes at every n, checked by
``tests/core/test_stats.py``), and a per-seed fit keeps each seed's slope visible, so one
seed whose own curve contradicts a claim cannot be averaged away (:func:`verdict_upper`).
Statistics of several groups of seeds (an exponent fitted across ε or S) keep the 95%
percentile bootstrap over seeds (``scipy.stats.bootstrap``) with a fixed resampling seed,
so a claims table is a deterministic function of results.
"""

from __future__ import annotations

import dataclasses
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats

CONFIDENCE = 0.95
N_RESAMPLES = 2000
BOOT_SEED = 20161120


@dataclass(frozen=True)
class Estimate:
    """A statistic over seeds and its 95% interval (as ``scipy.stats``' result objects carry
    a ``confidence_interval``).

    Attributes:
        value: the point estimate (a seed mean, a fitted slope or exponent).
        low, high: the 95% interval's ends (``low = high = value`` for one seed, or values
            equal up to round-off; NaN when nothing could be estimated).
        n: the number of seeds (independent units) behind it; rules need ``n >= 2``.
        units: the per-seed values it summarises, when it has them (per-seed slopes: the
            linear-seed rule reads them).
        unit_ids: the seed of each unit, when known (a per-seed rule judges each seed in its
            own regime: :func:`dprl.analysis.learning.judged_seeds`).
    """

    value: float
    low: float
    high: float
    n: int  # number of seeds (independent units) behind it
    units: tuple[float, ...] = ()  # the per-seed values it summarises, when it has them
    unit_ids: tuple = ()  # the seed of each unit, when known

    def contains(self, x: float) -> bool:
        return self.low <= x <= self.high

    @classmethod
    def point(cls, value: float, n: int = 1) -> Estimate:
        """One number with no spread (a worst case over jobs, an audit's ratio)."""
        return cls(float(value), float(value), float(value), n)

    @classmethod
    def empty(cls) -> Estimate:
        """Nothing estimated: every rule gives ``inconclusive``."""
        return cls(np.nan, np.nan, np.nan, 0)


def t_interval(values: Sequence[float] | np.ndarray) -> Estimate:
    """Mean of per-seed values and its 95% Student-t interval (``scipy.stats.ttest_1samp``),
    keeping the values. Exact coverage when the per-seed values are normal, whatever the
    number of seeds (>= 2); one seed: the point itself."""
    x = np.asarray(values, dtype=float)
    x = x[np.isfinite(x)]
    if x.size == 0:
        return Estimate(np.nan, np.nan, np.nan, 0)
    value = float(x.mean())
    if x.size < 2 or np.ptp(x) <= 1e-12 * max(1.0, abs(value)):  # equal up to round-off: no spread
        return Estimate(value, value, value, int(x.size), tuple(map(float, x)))
    ci = stats.ttest_1samp(x, 0.0).confidence_interval(CONFIDENCE)
    return Estimate(value, float(ci.low), float(ci.high), int(x.size), tuple(map(float, x)))


def bootstrap_ci(samples: Sequence[float] | np.ndarray) -> Estimate:
    """Seed mean and its 95% percentile-bootstrap CI (every resample's mean in one call:
    the same pairwise sums per resample as one call each, bit for bit)."""
    x = np.asarray(samples, dtype=float)
    x = x[np.isfinite(x)]
    if x.size == 0:
        return Estimate(np.nan, np.nan, np.nan, 0)
    value = float(x.mean())
    if x.size < 2 or np.ptp(x) == 0:
        return Estimate(value, value, value, int(x.size))
    res = stats.bootstrap(
        (x,), np.mean, vectorized=True,
        n_resamples=N_RESAMPLES, confidence_level=CONFIDENCE, method="percentile", rng=np.random.default_rng(BOOT_SEED),
    )
    return Estimate(value, float(res.confidence_interval.low), float(res.confidence_interval.high), int(x.size))


def _percentile_interval(draws: np.ndarray) -> tuple[float, float]:
    """The percentile interval of a bootstrap distribution, by ``scipy.stats.quantile``
    (the formula ``scipy.stats.bootstrap`` uses), over its finite draws only: a statistic
    can be undefined on some resamples (a log of a non-positive mean, a slope through one
    point), and those resamples are left out rather than voiding the interval."""
    draws = draws[np.isfinite(draws)]
    if draws.size == 0:
        return np.nan, np.nan
    alpha = (1 - CONFIDENCE) / 2
    low, high = stats.quantile(draws, np.array([alpha, 1 - alpha]))
    return float(low), float(high)


def bootstrap_units(
    units: Sequence[np.ndarray], statistic: Callable[[list[np.ndarray]], float]
) -> Estimate:
    """Bootstrap a statistic of several groups of per-seed values, resampling seeds
    independently within each group (e.g. a slope fitted across T or across ε, where each
    group is one grid point's per-seed values): 95% percentile interval of
    ``scipy.stats.bootstrap`` (:data:`N_RESAMPLES` resamples, generator seeded with
    :data:`BOOT_SEED`).

    Resamples are drawn one of every group at a time, in group order (``batch=1``; one
    group: all at once, which is the same stream), so the generator stream is that of the
    resampling loop this replaced and the intervals equal its intervals up to the last
    bits of ``scipy.stats.quantile`` versus ``numpy.quantile`` (relative 1e-13).
    A group of fewer than two values is held fixed (``scipy.stats.bootstrap`` needs two; a
    resample of one value is that value, and NumPy draws no random bits for it)."""
    units = [np.asarray(u, dtype=float) for u in units]
    value = float(statistic(units))
    n = min(u.size for u in units)
    varying = [i for i, u in enumerate(units) if u.size >= 2]
    if not varying:
        return Estimate(value, value, value, n) if np.isfinite(value) else Estimate(value, np.nan, np.nan, n)

    def resampled(*samples: np.ndarray, axis: int = -1) -> np.ndarray:
        # samples[k]: (batch, size) resamples of units[varying[k]]
        out = np.empty(samples[0].shape[0])
        for b in range(out.size):
            groups = list(units)
            for k, i in enumerate(varying):
                groups[i] = samples[k][b]
            out[b] = statistic(groups)
        return out

    with warnings.catch_warnings():  # NaN draws: handled below by _percentile_interval
        warnings.simplefilter("ignore", stats.DegenerateDataWarning)
        res = stats.bootstrap(
            tuple(units[i] for i in varying), resampled, vectorized=True, batch=None if len(varying) == 1 else 1,
            n_resamples=N_RESAMPLES, confidence_level=CONFIDENCE, method="percentile",
            rng=np.random.default_rng(BOOT_SEED),
        )
    low, high = float(res.confidence_interval.low), float(res.confidence_interval.high)
    if not (np.isfinite(low) and np.isfinite(high)):
        low, high = _percentile_interval(np.asarray(res.bootstrap_distribution, dtype=float))
    return Estimate(value, low, high, n)


def bootstrap_seed_rows(rows: np.ndarray, statistic: Callable[[np.ndarray], float]) -> Estimate:
    """Bootstrap ``statistic(rows)`` resampling whole seeds: ``rows`` has one seed per
    first-axis entry (any trailing shape: a seed's whole curve, or all its cells), so the
    within-seed correlation is kept (:func:`bootstrap_units` on the row indices)."""
    rows = np.asarray(rows)
    index = np.arange(rows.shape[0], dtype=float)
    return bootstrap_units([index], lambda u: statistic(rows[u[0].astype(int)]))


def group_slope(xs: Sequence[float], groups: Sequence[np.ndarray], log_y: bool = True) -> Estimate:
    """Least-squares slope of the (log) per-group mean against ``xs`` (pass ``log x`` for a
    power-law exponent), with a CI from resampling seeds within each group."""
    x = np.asarray(xs, float)

    def stat(gs: list[np.ndarray]) -> float:
        m = np.array([g.mean() for g in gs])
        if log_y:
            if np.any(m <= 0):
                return np.nan
            m = np.log(m)
        return float(np.polyfit(x, m, 1)[0])

    return bootstrap_units(groups, stat)


def loglog_slope(x: np.ndarray, y: np.ndarray) -> float:
    """Least-squares slope of ``log y`` on ``log x`` (non-positive ``y`` dropped)."""
    x, y = np.asarray(x, float), np.asarray(y, float)
    ok = (x > 0) & (y > 0) & np.isfinite(y)
    if ok.sum() < 2:
        return np.nan
    return float(np.polyfit(np.log(x[ok]), np.log(y[ok]), 1)[0])


def sqrt_sigma_exponent(sigma: pd.Series) -> float:
    """Log-log slope of ``sqrt(σ)`` against its index (ε, or ln(1/δ)): the exponent a
    privacy cost ``∝ sqrt(σ)`` has for the σ's a calibration actually uses (the LQ and
    linear-mixture papers' derivation of C3/Z3). ``NaN`` for fewer than two points."""
    if len(sigma) < 2:
        return float("nan")
    return 0.5 * loglog_slope(sigma.index.to_numpy(float), sigma.to_numpy(float))


def paired_slope_by_seed(df: pd.DataFrame, x: str, y: str, seed: str = "seed") -> Estimate:
    """Log-log slope of ``y`` vs ``x`` fitted to each seed's own curve (over the ``x``
    values every seed has), their mean and Student's t interval over seeds
    (:func:`t_interval`); the per-seed slopes are kept in ``units``. A seed whose curve has
    no positive values enough for a fit is left out."""
    wide = df.pivot_table(index=seed, columns=x, values=y, aggfunc="mean").dropna(axis=1, how="any")
    xs = wide.columns.to_numpy(dtype=float)
    slopes = np.array([loglog_slope(xs, row) for row in wide.to_numpy(dtype=float)], dtype=float)
    ok = np.isfinite(slopes)
    est = t_interval(slopes)
    return dataclasses.replace(est, unit_ids=tuple(wide.index[ok])) if est.units else est


# A seed whose own log-log slope of regret is at least this grows linearly: on a claim that
# regret is sublinear it is a counterexample, whatever the other seeds do (a broken learner
# that fails on some seeds only would otherwise be averaged away).
LINEAR_SLOPE = 0.9


def has_linear_seed(est: Estimate, linear: float = LINEAR_SLOPE) -> bool:
    """Whether any seed's own slope (the estimate's ``units``) is at least ``linear``."""
    return bool(est.units) and max(est.units) >= linear


def verdict_upper(est: Estimate, threshold: float, linear: float | None = LINEAR_SLOPE) -> str:
    """``reproduced`` when the CI contains a value <= threshold and the estimate is sane;
    ``not reproduced`` when the whole CI lies above it, or when any seed's own slope (the
    estimate's ``units``) is at least ``linear``."""
    if not np.isfinite(est.value) or est.n < 2:
        return "inconclusive"
    if linear is not None and has_linear_seed(est, linear):
        return "not reproduced"
    return "reproduced" if est.low <= threshold else "not reproduced"


def verdict_sublinear(est: Estimate, linear: float = LINEAR_SLOPE) -> str:
    """"Regret is sublinear": ``reproduced`` when the CI of the log-log slope lies below 1
    and no seed's own slope (``units``) is at least ``linear`` (a linear regret with a √T
    term fits slopes of 0.99 whose CI ends below 1); ``not reproduced`` otherwise;
    ``inconclusive`` without a finite value over >= 2 seeds."""
    if est.n < 2 or not np.isfinite(est.value):
        return "inconclusive"
    return "reproduced" if est.high < 1 and not has_linear_seed(est, linear) else "not reproduced"


def per_seed_note(est: Estimate) -> str:
    """The per-seed values of an estimate, for a row's note."""
    return f"per-seed slopes [{', '.join(f'{u:.2f}' for u in est.units)}]" if est.units else ""


EXPONENT_TOL = 0.1  # a fitted exponent "matches" a predicted rate when its CI comes within 0.1
# For a paper's exponent: a power law fitted over a finite grid is off by round-off and by
# the lower-order terms the grid still sees; 0.05 is half the smallest gap between the
# exponents the claims separate (−1/2 against −1/4 and +1/4 against +1/2: 1/4) minus the
# CI's own half-width budget, so a row can separate them only with a CI narrower than 0.4.
PAPER_EXPONENT_TOL = 0.05


def verdict_exponent(est: Estimate, target: float, wrong: float, tol: float = PAPER_EXPONENT_TOL) -> str:
    """Two-sided test of a paper's exponent ``target`` against the nearest plausible wrong
    one ``wrong`` (e.g. −1/4 for −1/2: the noise of a bug that scales σ with ε^(-1/2)):
    ``reproduced`` when the CI widened by ``tol`` contains ``target`` and excludes
    ``wrong``; ``not reproduced`` when it excludes ``target``; ``inconclusive`` when it
    contains both (too wide to tell them apart) or is not finite."""
    if not (np.isfinite(est.value) and np.isfinite(est.low) and np.isfinite(est.high)) or est.n < 2:
        return "inconclusive"
    low, high = est.low - tol, est.high + tol
    if not low <= target <= high:
        return "not reproduced"
    return "inconclusive" if low <= wrong <= high else "reproduced"


def verdict_near(est: Estimate, target: float, tol: float = EXPONENT_TOL, width_limit: float | None = None) -> str:
    """For O(·) rates: ``reproduced`` when the CI widened by ``tol`` contains ``target``
    (a fitted power law is never exact; a degenerate CI would otherwise miss by
    rounding); ``inconclusive`` without a finite CI over >= 2 seeds or when the CI is
    wider than ``width_limit``."""
    if not (np.isfinite(est.value) and np.isfinite(est.low) and np.isfinite(est.high)) or est.n < 2:
        return "inconclusive"
    if width_limit is not None and est.high - est.low > width_limit:
        return "inconclusive"
    return "reproduced" if est.low - tol <= target <= est.high + tol else "not reproduced"


def verdict_inside(est: Estimate, low: float, high: float) -> str:
    """"Inside a window", also "equivalence within a margin" (``[−margin, +margin]``): a
    two-sided test of a rate or of an equivalence. ``reproduced`` when the whole CI lies
    inside ``[low, high]`` (ends included), ``not reproduced`` when it misses the interval
    entirely, ``inconclusive`` when it straddles an end (too wide to tell) or is not finite
    over >= 2 seeds."""
    if not _judgeable(est):
        return "inconclusive"
    if low <= est.low and est.high <= high:
        return "reproduced"
    return "not reproduced" if est.high < low or est.low > high else "inconclusive"


def verdict_overlaps(est: Estimate, low: float, high: float) -> str:
    """"Meets a window" (a scaling the paper bounds between two powers, e.g. between S and
    S²): ``reproduced`` when the CI meets ``[low, high]``, ``not reproduced`` when it misses
    it entirely, ``inconclusive`` without a finite value over >= 2 seeds."""
    if est.n < 2 or not np.isfinite(est.value):
        return "inconclusive"
    return "reproduced" if (est.high >= low and est.low <= high) else "not reproduced"


# A √T (√K) rate measured two-sided: 1/2 ± 0.1, the tolerance of a power law fitted over a
# grid of a decade or two, narrow enough to reject both log T (slope -> 0) and linear regret.
SQRT_RATE_WINDOW = (0.4, 0.6)


def verdict_sqrt_rate(est: Estimate, window: tuple[float, float] = SQRT_RATE_WINDOW) -> str:
    """:func:`verdict_inside` the window, and ``not reproduced`` when any seed's own slope
    (``units``) is at least :data:`LINEAR_SLOPE`: one seed that stays linear contradicts a
    √T rate whatever the others do."""
    if has_linear_seed(est) and est.n >= 2:
        return "not reproduced"
    return verdict_inside(est, *window)


def verdict_unless_counterexamples(est: Estimate, rule: Callable[[Estimate], str], counterexamples: int) -> str:
    """A rule that one counterexample refutes: ``not reproduced`` when ``counterexamples`` > 0
    (units the claim cannot allow whatever the others do, e.g. a seed with zero regret at some
    horizon: it never explored), else ``rule(est)``. For a rule that depends on its group, with
    ``rule_of_group``: the group counts its counterexamples."""
    return "not reproduced" if counterexamples > 0 else rule(est)


def _judgeable(est: Estimate, n_min: int = 2) -> bool:
    """An estimate a rule can judge: a finite value and interval over at least ``n_min`` seeds."""
    return bool(np.isfinite(est.value) and np.isfinite(est.low) and np.isfinite(est.high)) and est.n >= n_min


def verdict_above(est: Estimate, threshold: float = 0.0, n_min: int = 2) -> str:
    """"The interval lies above a threshold": a lower bound's fitted constant (threshold 0),
    an ordering ``a > b`` paired by seed (the CI of ``a − b`` against 0), an advantage.
    ``reproduced`` when the CI lies strictly above ``threshold``; ``not reproduced`` when it
    lies at or below it (upper end <= threshold: every value the data allow refutes it);
    ``inconclusive`` when it straddles the threshold (a tie cannot be rejected), or without a
    finite estimate over >= ``n_min`` seeds."""
    if not _judgeable(est, n_min):
        return "inconclusive"
    if est.low > threshold:
        return "reproduced"
    return "not reproduced" if est.high <= threshold else "inconclusive"


def verdict_at_most(est: Estimate, threshold: float, n_min: int = 1) -> str:
    """"The interval lies at or below a threshold" (a bound that may be met with equality,
    e.g. an accounted ε against its nominal one): ``reproduced`` when the CI's upper end is
    <= ``threshold``; ``not reproduced`` when its lower end is above it; ``inconclusive`` when
    it straddles it, or without a finite estimate over >= ``n_min`` units (default 1: a
    worst case over jobs is one number)."""
    if not _judgeable(est, n_min):
        return "inconclusive"
    if est.high <= threshold:
        return "reproduced"
    return "not reproduced" if est.low > threshold else "inconclusive"


def verdict_worst_at_most(est: Estimate, threshold: float) -> str:
    """"The worst case is at most a threshold", for a deterministic check over many cells
    or checkpoints reported as a range (``value = high`` = the worst, ``[low, high]`` = [min,
    max], not a sampling interval): ``reproduced`` when the worst is <= ``threshold``, ``not
    reproduced`` when it is above (one cell above refutes, whatever the others),
    ``inconclusive`` when it is not finite. :func:`verdict_at_most` of the worst as a point."""
    return verdict_at_most(Estimate.point(est.high), threshold)


def verdict_at_least(est: Estimate, threshold: float, n_min: int = 2) -> str:
    """"Not refuted unless the whole interval lies below a threshold" (a stated coverage
    ``>= 1 − β``; the mirror of :func:`verdict_upper`): ``reproduced`` when the CI's upper
    end reaches ``threshold``, ``not reproduced`` when it ends below it, ``inconclusive``
    without a finite estimate over >= ``n_min`` units."""
    if not _judgeable(est, n_min):
        return "inconclusive"
    return "reproduced" if est.high >= threshold else "not reproduced"


def verdict_ordering(diff: Estimate) -> str:
    """An ordering ``a > b`` paired by seed, from the estimate of ``a − b``: :func:`verdict_above` 0."""
    return verdict_above(diff, 0.0)
