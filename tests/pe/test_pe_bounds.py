"""The smooth bounds Ψ_X of LSW and LSL against brute force, and their b-smoothness."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from dprl.agents.pe.bounds import gs_lsl_sqrt_psi, lsl_psi, lsw_psi
from dprl.privacy.smooth_sensitivity import log_smooth_bound, smooth_gaussian_constants, smooth_sigma


def _lsw_local(counts, rho):
    return sum(r / max(c, 1) ** 2 for c, r in zip(counts, rho))


def _lsl_local(counts, rho, m, c_lam):
    return (c_lam * math.sqrt(sum(r * c for c, r in zip(counts, rho))) + math.sqrt(sum(r * r for r in rho))) ** 2


def _brute(counts, local, b, top):
    """max over all count vectors m' in {0..top}^n of e^{-b·dist} LS(m'), dist = max_s |m_s - m'_s|
    (one changed trajectory moves every m_s by at most one): the definition of a b-smooth
    bound built from local sensitivities, by exhaustive search."""
    best = 0.0
    for other in itertools.product(range(top + 1), repeat=len(counts)):
        dist = max(abs(a - o) for a, o in zip(counts, other))
        best = max(best, math.exp(-b * dist) * local(other))
    return best


@pytest.mark.parametrize("seed", range(6))
def test_lsw_psi_matches_brute_force(seed):
    rng = np.random.default_rng(seed)
    n, m = 3, 7
    counts = rng.integers(0, m + 1, size=n)
    rho = rng.dirichlet(np.ones(n))
    for b in (0.01, 0.2, 1.5):
        brute = _brute(counts, lambda c: _lsw_local(c, rho), b, m)
        # the spec's formula with an explicit loop over k as a second reference
        loop = max(math.exp(-k * b) * _lsw_local([c - k for c in counts], rho) for k in range(m + 1))
        got = float(lsw_psi(counts[None, :], rho, b)[0])
        assert got == pytest.approx(brute, rel=1e-12)
        assert got == pytest.approx(loop, rel=1e-12)


@pytest.mark.parametrize("seed", range(6))
def test_lsl_psi_matches_brute_force(seed):
    rng = np.random.default_rng(100 + seed)
    n, m = 3, 6
    counts = rng.integers(0, m + 1, size=n)
    rho = rng.dirichlet(np.ones(n))
    c_lam = float(rng.uniform(0.05, 2.0))
    for b in (0.001, 0.05, 0.3, 2.0):
        # datasets of m trajectories: m'_s in [0, m]; the spec's bound takes 0 <= k <= m
        brute = max(
            math.exp(-b * k) * _lsl_local(np.minimum(counts + k, m), rho, m, c_lam) for k in range(m + 1)
        )
        exhaustive = max(  # every count vector of m trajectories, at its distance from counts
            math.exp(-b * max(abs(a - o) for a, o in zip(counts, other))) * _lsl_local(other, rho, m, c_lam)
            for other in itertools.product(range(m + 1), repeat=n)
        )
        got = float(lsl_psi(counts[None, :], np.array([m]), rho, np.array([c_lam]), b)[0])
        assert got == pytest.approx(brute, rel=1e-12)
        assert got == pytest.approx(exhaustive, rel=1e-12)


def test_lsl_psi_vectorised_over_batches_and_large_m():
    rng = np.random.default_rng(7)
    rho = np.full(5, 0.2)
    m = np.array([10, 1000, 100000])
    counts = np.stack([rng.integers(0, mm + 1, size=5) for mm in m])
    c_lam = np.array([0.3, 0.1, 0.01])
    b = 0.004
    got = lsl_psi(counts, m, rho, c_lam, b)
    for j in range(3):  # scan every k (the reference the bisection replaces)
        k = np.arange(m[j] + 1)
        a_k = np.minimum(counts[j][None, :] + k[:, None], m[j]) @ rho
        ref = np.max(np.exp(-b * k) * (c_lam[j] * np.sqrt(a_k) + np.linalg.norm(rho)) ** 2)
        assert got[j] == pytest.approx(ref, rel=1e-12)
    # the global bound dominates the smooth one (Σρ = 1)
    assert np.all(np.sqrt(got) <= gs_lsl_sqrt_psi(m, rho, c_lam) * (1 + 1e-12))


def test_lsw_psi_large_counts_no_underflow():
    counts = np.array([[200000, 150000, 0]])
    rho = np.array([0.5, 0.5, 0.0])
    psi = lsw_psi(counts, rho, 1e-4)
    k = np.arange(0, 200001)
    ref = np.max(np.exp(-1e-4 * k) * (rho / np.maximum(counts[0][None, :] - k[:, None], 1) ** 2).sum(axis=1))
    assert psi[0] == pytest.approx(ref, rel=1e-10)


def _replacement_pairs(rng: np.random.Generator, n_pairs: int, m: int, n_states: int) -> tuple[np.ndarray, np.ndarray]:
    """First-visit counts ``(n_pairs, N)`` of random batches of ``m`` trajectories and of their
    neighbours under the paper's relation: one trajectory replaced by another (so every
    state's count moves by at most one, in either direction). Visit probabilities are drawn
    per batch and state from {0, U(0,1), 1} so that empty and saturated states are common."""
    prob = rng.uniform(size=(n_pairs, 1, n_states))
    prob = np.where(rng.uniform(size=prob.shape) < 0.25, 1.0, np.where(rng.uniform(size=prob.shape) < 0.2, 0.0, prob))
    visits = rng.uniform(size=(n_pairs, m, n_states)) < prob
    other = visits.copy()
    other[:, 0] = rng.uniform(size=(n_pairs, n_states)) < rng.uniform(size=(n_pairs, 1))  # trajectory 0 replaced
    return visits.sum(axis=1).astype(float), other.sum(axis=1).astype(float)


def _worst_smoothness(psi: np.ndarray, psi_nb: np.ndarray, b: float) -> float:
    """The checker: ``max |ln Ψ_X - ln Ψ_X'| / b`` over the pairs (b-smooth iff <= 1)."""
    return float(np.max(np.abs(np.log(psi) - np.log(psi_nb))) / b)


def test_lsl_regression_counterexample_of_the_old_k_cap():
    """ρ = (.5, .5), m = 2, c_λ = 1, b = 1e-3, counts (1, 2) vs (0, 2) gave
    |ln Ψ - ln Ψ'| = 187·b with k < m; k <= m gives exactly b."""
    rho, b, m, c_lam = np.array([0.5, 0.5]), 1e-3, np.array([2.0, 2.0]), np.array([1.0, 1.0])
    counts = np.array([[1.0, 2.0], [0.0, 2.0]])
    psi = lsl_psi(counts, m, rho, c_lam, b)
    assert _worst_smoothness(psi[:1], psi[1:], b) == pytest.approx(1.0, rel=1e-9)
    old = lsl_psi(counts, m, rho, c_lam, b, k_max=m - 1)
    assert _worst_smoothness(old[:1], old[1:], b) == pytest.approx(187.1, rel=1e-3)


@pytest.mark.parametrize("which, k_cap", [("lsw", None), ("lsl", "m"), ("lsl", "m-1 (old, broken)")])
def test_smooth_bounds_are_b_smooth_on_random_replacement_neighbours(which, k_cap):
    """|ln Ψ_X - ln Ψ_X'| <= b for random neighbouring batches (one trajectory replaced) with
    m·b < 1, for both bounds; the same checker flags the old LSL cap k < m. (LSW has no cap:
    its maximum is over all k >= 0, through the breakpoints.)"""
    rng = np.random.default_rng(2016)
    worst = 0.0
    for m in (1, 2, 3, 5, 8, 13):
        for n_states in (1, 2, 4):
            rho = rng.dirichlet(np.ones(n_states)) * rng.uniform(0.2, 1.0)
            for mb in (0.02, 0.3, 0.95):  # m·b < 1: the regime the old test (m·b = 2.5) missed
                b = mb / m
                c0, c1 = _replacement_pairs(rng, 400, m, n_states)
                assert np.all(np.abs(c0 - c1) <= 1)
                if which == "lsw":
                    p0, p1 = lsw_psi(c0, rho, b), lsw_psi(c1, rho, b)
                else:
                    ms = np.full(len(c0), float(m))
                    c_lam = rng.uniform(0.01, 3.0, size=len(c0))
                    k_max = None if k_cap == "m" else ms - 1  # None: the default range, k <= m
                    p0 = lsl_psi(c0, ms, rho, c_lam, b, k_max=k_max)
                    p1 = lsl_psi(c1, ms, rho, c_lam, b, k_max=k_max)
                worst = max(worst, _worst_smoothness(p0, p1, b))
    if k_cap == "m-1 (old, broken)":
        assert worst > 2.0  # the checker flags the old cap (measured: 2.1e2·b at m = 1)
    else:
        assert worst <= 1.0 + 1e-9


def test_smooth_helper_constants_and_infinite_epsilon():
    c = smooth_gaussian_constants(1.0, 0.1, 40)
    assert c.a == pytest.approx(1.0 / (5 * math.sqrt(2 * math.log(20))))
    assert c.b == pytest.approx(1.0 / (4 * (40 + math.log(20))))
    inf = smooth_gaussian_constants(math.inf, 0.1, 3)
    assert smooth_sigma(2.0, 5.0, inf.a) == 0.0
    assert log_smooth_bound(np.log([[1.0, 4.0, 9.0]]), inf.b)[0] == 0.0  # only k = 0
    for bad in [(0.0, 0.1, 1), (1.0, 0.0, 1), (1.0, 1.0, 1), (1.0, 0.1, 0)]:
        with pytest.raises(ValueError):
            smooth_gaussian_constants(*bad)
