"""Calibration helpers: analytic Gaussian, zCDP route, Laplace and Gaussian noise bounds."""

import math

import numpy as np
import pytest
from scipy import stats

from dprl.privacy import calibration as cal


@pytest.mark.parametrize("eps,delta", [(0.1, 1e-5), (1.0, 1e-5), (1.0, 0.1), (5.0, 1e-3), (10.0, 1e-6)])
def test_analytic_gaussian_hits_delta(eps, delta):
    mu = cal.gaussian_mu(eps, delta)
    assert cal.gaussian_delta(eps, mu) == pytest.approx(delta, rel=1e-6)
    # δ(ε) is decreasing in ε and increasing in μ
    assert cal.gaussian_delta(eps * 1.1, mu) < delta < cal.gaussian_delta(eps, mu * 1.1)
    assert cal.composed_epsilon(mu, delta) == pytest.approx(eps, rel=1e-6)


def test_analytic_gaussian_matches_closed_form_definition():
    """δ(ε) of μ-GDP equals P[Z > ε/μ - μ/2] - e^ε P[Z > ε/μ + μ/2] (Dong, Roth, Su 2019)."""
    eps, mu = 1.3, 0.8
    direct = stats.norm.sf(eps / mu - mu / 2) - math.exp(eps) * stats.norm.sf(eps / mu + mu / 2)
    assert cal.gaussian_delta(eps, mu) == pytest.approx(direct, rel=1e-10)


@pytest.mark.parametrize("eps,delta,k", [(0.1, 1e-5, 1), (1.0, 1e-5, 11), (10.0, 1e-3, 17)])
def test_tight_sigma_is_smaller_than_zcdp(eps, delta, k):
    tight = cal.gaussian_sigma_tight(eps, delta, 1.0, k)
    zcdp = cal.gaussian_sigma_zcdp(eps, delta, 1.0, k)
    assert tight < zcdp
    # the zCDP route is itself valid: its composed μ gives δ(ε) <= δ
    assert cal.gaussian_delta(eps, math.sqrt(k) / zcdp) <= delta
    rho = k / (2 * zcdp**2)
    assert cal.zcdp_to_dp(rho, delta) == pytest.approx(eps, rel=1e-9)


def test_laplace_tree_scale():
    assert cal.laplace_tree_scale(0.5, 11, 2.0) == pytest.approx(44.0)
    with pytest.raises(ValueError):
        cal.laplace_tree_scale(0.0, 3)


@pytest.mark.parametrize("k", [1, 3, 11])
def test_laplace_sum_tail_is_valid_and_not_trivial(k):
    rng = np.random.default_rng(0)
    b, beta = 2.0, 0.01
    x = cal.laplace_sum_tail(b, k, beta)
    s = (b * (rng.standard_exponential((400000, k)) - rng.standard_exponential((400000, k)))).sum(1)
    frac = np.mean(np.abs(s) > x)
    # exact quantile: the empirical tail matches β within binomial error
    assert abs(frac - beta) < 5 * np.sqrt(beta / 400000)
    assert cal.laplace_sum_sf(x / b, k) == pytest.approx(beta / 2, rel=1e-6)


def test_norm_bounds_are_valid():
    rng = np.random.default_rng(1)
    sigma, d, beta = 1.5, 6, 0.01
    g = sigma * rng.standard_normal((200000, d))
    norms = np.linalg.norm(g, axis=1)
    assert np.mean(norms > cal.chi2_norm_bound(sigma, d, beta)) == pytest.approx(beta, abs=0.002)
    assert cal.laurent_massart_norm_bound(sigma, d, beta) >= cal.chi2_norm_bound(sigma, d, beta)
    p = 4
    w = sigma * rng.standard_normal((50000, p, p))
    w = np.triu(w) + np.swapaxes(np.triu(w, 1), -1, -2)
    op = np.abs(np.linalg.eigvalsh(w)).max(axis=1)
    tight = cal.symmetric_gaussian_norm_bound_tight(sigma, p, beta)
    assert np.mean(op > tight) <= beta
    assert tight <= cal.symmetric_gaussian_norm_bound_paper(sigma, p, beta)


def test_tight_noise_bounds_cover_a_sum_of_nodes():
    """The Regularizer's tight (Σ, ||z||) for a release summing ``k`` Gaussian nodes cover
    that sum at their failure probabilities; bounds built on the per-node σ (a broken
    variant that forgets the summed terms) do not."""
    rng = np.random.default_rng(2)
    sigma_g, sigma_t, k, p, dof, beta = 1.5, 0.7, 4, 3, 6, 0.02
    gram_bound, target_bound = cal.tight_noise_bounds(sigma_g, sigma_t, k, p, dof, beta, beta)
    w = sigma_g * rng.standard_normal((k, 40000, p, p)).sum(axis=0)
    w = np.triu(w) + np.swapaxes(np.triu(w, 1), -1, -2)
    op = np.abs(np.linalg.eigvalsh(w)).max(axis=1)
    z = np.linalg.norm(sigma_t * rng.standard_normal((k, 40000, dof)).sum(axis=0), axis=1)
    assert np.mean(op > gram_bound) <= beta
    assert np.mean(z > target_bound) == pytest.approx(beta, abs=0.004)  # the exact χ² quantile
    broken_gram, broken_target = cal.tight_noise_bounds(sigma_g, sigma_t, 1, p, dof, beta, beta)
    assert np.mean(op > broken_gram) > 10 * beta and np.mean(z > broken_target) > 10 * beta
