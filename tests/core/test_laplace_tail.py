"""The exact tail of a sum of Laplace variables (``laplace_sum_tail``, PUCB's tight ``E``,
the Laplace counter's tight error bound) is accurate for any number of terms, and raises
where it cannot be."""

import math

import numpy as np
import pytest
from scipy import stats

from dprl.privacy import calibration as cal


@pytest.mark.parametrize("z", [0.0, 0.3, 2.0, 40.0])
def test_two_terms_closed_form(z):
    # P(Lap(1) + Lap(1) > z) = e^{-z} (2 + z) / 4 for z >= 0
    assert cal.laplace_sum_sf(z, 2) == pytest.approx(math.exp(-z) * (2 + z) / 4, rel=1e-12)
    assert cal.laplace_sum_logsf(400.0, 2) == pytest.approx(-400.0 + math.log(402 / 4), rel=1e-13)


def test_symmetry_and_one_term():
    assert cal.laplace_sum_sf(0.0, 7) == pytest.approx(0.5, rel=1e-13)
    assert cal.laplace_sum_sf(-1.3, 5) == pytest.approx(1 - cal.laplace_sum_sf(1.3, 5), rel=1e-12)
    assert cal.laplace_sum_tail(2.0, 1, 0.01) == pytest.approx(2.0 * math.log(100.0))


@pytest.mark.parametrize("k", [250, 600])
def test_many_terms_match_simulation(k):
    """The old quadrature returned 0.0 here (from ~200 terms on): every draw would then
    exceed the "bound" and this test fails on it."""
    rng = np.random.default_rng(k)
    n, beta, b = 20000, 0.05, 1.5
    x = cal.laplace_sum_tail(b, k, beta)
    assert x > 0
    s = b * (rng.standard_exponential((n, k)) - rng.standard_exponential((n, k))).sum(axis=1)
    frac = float(np.mean(np.abs(s) > x))
    assert abs(frac - beta) < 5 * math.sqrt(beta * (1 - beta) / n), (frac, x)


def test_large_k_tends_to_the_normal_quantile_and_deep_tails_are_finite():
    k, beta = 100_000, 1e-6
    x = cal.laplace_sum_tail(1.0, k, beta)
    z_normal = math.sqrt(2 * k) * stats.norm.isf(beta / 2)  # CLT: variance 2k
    assert x == pytest.approx(z_normal, rel=2e-3)
    # the tail never underflows silently: a 1e-300 level still gives a finite, larger value
    assert cal.laplace_sum_tail(1.0, 30, 1e-300) > cal.laplace_sum_tail(1.0, 30, 1e-6) > 0
    # monotone in k (Anderson: an extra symmetric log-concave term fattens the tail)
    xs = [cal.laplace_sum_tail(1.0, k, 1e-4) for k in (100, 199, 200, 201, 400)]
    assert all(a < b for a, b in zip(xs, xs[1:]))


def test_raises_where_it_cannot_be_accurate():
    with pytest.raises(ValueError, match="terms exceed"):
        cal.laplace_sum_tail(1.0, cal.LAPLACE_SUM_MAX_TERMS + 1, 0.01)
    with pytest.raises(ValueError, match="beta"):
        cal.laplace_sum_tail(1.0, 3, 0.0)
    with pytest.raises(ValueError, match="scale"):
        cal.laplace_sum_tail(0.0, 3, 0.01)
