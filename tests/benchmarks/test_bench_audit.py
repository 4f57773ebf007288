"""Benchmark of the audit's analysis (choosing the region on calibration runs and
evaluating it), against the previous implementation measured in the same run. Run with
``pytest tests/benchmarks/test_bench_audit.py --benchmark-only -o addopts=""``.

The previous implementation evaluated both Clopper–Pearson bounds of every count with
``scipy.stats.beta.ppf`` and took quantiles with ``np.quantile`` (a partition) for every
statistic and sign; the current one inverts only the bound it uses, sorts each statistic
once for both signs and interpolates quantiles of the merged sorted data. Same thresholds,
same ε_lb (asserted).
"""

import numpy as np
import pytest
from scipy import stats

from dprl.experiments.mechanisms import jobs
from dprl.privacy import audit as audit_mod
from dprl.privacy.tree_counter import tree_levels
from dprl.privacy.setting import PrivacySetting

T, DIM, N = 8, 2, 60_000


def _reference_eps_lb(k0, k1, n, delta, alpha):
    k0, k1 = np.asarray(k0, float), np.asarray(k1, float)
    p_low = np.where(k0 > 0, stats.beta.ppf(alpha / 2, k0, n - k0 + 1), 0.0)
    np.where(k0 < n, stats.beta.ppf(1 - alpha / 2, k0 + 1, n - k0), 1.0)  # computed and unused, as before
    np.where(k1 > 0, stats.beta.ppf(alpha / 2, k1, n - k1 + 1), 0.0)
    q_high = np.where(k1 < n, stats.beta.ppf(1 - alpha / 2, k1 + 1, n - k1), 1.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.log((p_low - delta) / q_high)
    return np.where(p_low - delta > 0, out, -np.inf)


def _reference_best_region(s0, s1, delta, alpha):
    n = s0.size
    grid = np.unique(np.quantile(np.concatenate([s0, s1]), np.linspace(0.0, 1.0, 401)))
    s0s, s1s = np.sort(s0), np.sort(s1)
    k0 = n - np.searchsorted(s0s, grid, side="right")
    k1 = n - np.searchsorted(s1s, grid, side="right")
    best = (-np.inf, 0.0, 0)
    for order, (a, b) in enumerate(((k0, k1), (k1, k0))):
        e = _reference_eps_lb(a, b, n, delta, alpha)
        i = int(np.argmax(e))
        if e[i] > best[0]:
            best = (float(e[i]), float(grid[i]), order)
    return best


@pytest.fixture(scope="module")
def samples():
    alg = "gaussian_tree_vector"
    noise = jobs.counter_noise(alg, PrivacySetting(epsilon=1.0, delta=1e-5, calibration="tight"), tree_levels(T))
    d0, d1 = jobs.neighbouring_streams(alg, T, DIM)
    sample = jobs._audit_sampler(alg, noise, T, DIM)
    rng = np.random.default_rng(0)
    runs = [sample(d, N, rng) for d in (d0, d1, d0, d1)]
    return runs, jobs.tree_llr_statistics(alg, noise, d0, d1, DIM)


def _analyse(samples):
    runs, statistics = samples
    return audit_mod.audit_samples(*runs, epsilon=1.0, delta=1e-5, statistics=statistics)


def test_audit_analysis_current(benchmark, samples):
    res = benchmark.pedantic(_analyse, args=(samples,), rounds=3, iterations=1)
    assert np.isfinite(res.eps_lb)


def _reference_both_signs(s0, s1):
    return [(s0, s1, None), (-s0, -s1, None)]


def test_audit_analysis_reference(benchmark, samples, monkeypatch):
    current = _analyse(samples)
    # per statistic and sign: np.quantile of the pool and two sorts, as before
    monkeypatch.setattr(audit_mod, "_sorted_both_signs", _reference_both_signs)
    monkeypatch.setattr(audit_mod, "_best_region", lambda s0, s1, _, delta, alpha: _reference_best_region(s0, s1, delta, alpha))
    monkeypatch.setattr(audit_mod, "_eps_lb", _reference_eps_lb)
    res = benchmark.pedantic(_analyse, args=(samples,), rounds=3, iterations=1)
    assert res.eps_lb == pytest.approx(current.eps_lb, rel=1e-9) and res.statistic == current.statistic
