"""LQ systems: Assumption 1 checks, Riccati, exact policy cost, regret."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import linalg

from dprl.envs.lq import (
    LQSystem, RegretEvaluator, double_integrator, optimal_cost, policy_cost, random_system, riccati, rollout,
)


def _base(**over):
    kw = dict(a=[[0.5, 0.1], [0.0, 0.4]], b=[[0.0], [0.3]], q=np.eye(2), r=np.eye(1), x1=[1.0, 0.0], horizon=5,
              noise_radius=0.1, c_a=0.6, c_b=0.35)
    kw.update(over)
    return kw


def test_valid_system_builds_and_derives_gamma():
    s = LQSystem(**_base())
    assert s.gamma == pytest.approx((1 - 0.6 - 0.1) / 0.35)
    assert s.theta.shape == (3, 2)


@pytest.mark.parametrize("over, message", [
    (dict(a=[[0.9, 0.6], [0.0, 0.4]], c_a=0.99, b=[[0.0], [0.3]], c_b=0.35, noise_radius=0.005), r"1\(a\).*\|\|Theta\|\|_F"),
    (dict(a=[[0.5, 0.0], [0.0, 0.4]], b=[[0.3], [0.0]]), r"1\(a\).*not controllable"),
    (dict(c_a=0.3), r"1\(b\).*\|\|A\|\|"),
    (dict(c_b=0.2), r"1\(b\).*\|\|B\|\|"),
    (dict(c_a=1.0), r"1\(b\).*C_A, C_B < 1"),
    (dict(x1=[1.0, 0.5]), r"1\(c\)"),
    (dict(noise_radius=1.0), r"1\(d\)"),
    (dict(noise_radius=0.45), r"1\(e\)"),
    (dict(gamma=2.0), r"1\(e\).*> 1"),
    (dict(q=-np.eye(2)), r"Q must be symmetric positive definite"),
    (dict(r=np.zeros((1, 1))), r"R must be symmetric positive definite"),
    (dict(horizon=0), r"horizon H must be >= 1"),
])
def test_assumption_1_violations_are_refused_with_named_condition(over, message):
    with pytest.raises(ValueError, match=message):
        LQSystem(**_base(**over))


def test_generators_meet_assumption_1_and_are_seeded():
    s1 = random_system(3, 2, 10, np.random.default_rng(5))
    s2 = random_system(3, 2, 10, np.random.default_rng(5))
    assert np.array_equal(s1.a, s2.a) and np.array_equal(s1.b, s2.b) and np.array_equal(s1.x1, s2.x1)
    assert np.linalg.norm(s1.theta) <= 1 + 1e-12
    assert s1.c_a + s1.gamma * s1.c_b + s1.noise_radius <= 1 + 1e-12
    di = double_integrator(10)
    assert np.linalg.norm(di.a, 2) == pytest.approx(di.c_a) and np.linalg.norm(di.theta) <= 1


def test_noise_is_bounded_zero_mean_with_documented_covariance():
    s = random_system(2, 1, 10, np.random.default_rng(0))
    w = s.sample_noise(np.random.default_rng(1), 200_000)
    assert np.linalg.norm(w, axis=1).max() <= s.noise_radius
    np.testing.assert_allclose(w.mean(0), 0, atol=5e-4)
    np.testing.assert_allclose(np.cov(w, rowvar=False), s.w_cov, atol=5e-5)


@pytest.mark.parametrize("d", [1, 2])
def test_long_horizon_riccati_matches_scipy_dare(d):
    rng = np.random.default_rng(3)
    s = random_system(3, d, 10, rng)
    p_all, k_all = riccati(s.a, s.b, s.q, s.r, 300)
    p_inf = linalg.solve_discrete_are(s.a, s.b, s.q, s.r)
    np.testing.assert_allclose(p_all[0], p_inf, rtol=1e-10, atol=1e-12)
    k_inf = -np.linalg.solve(s.r + s.b.T @ p_inf @ s.b, s.b.T @ p_inf @ s.a)
    np.testing.assert_allclose(k_all[0], k_inf, rtol=1e-9, atol=1e-12)


def test_riccati_fast_path_n2_d1_equals_the_general_recursion_bit_for_bit():
    """The Riccati recursion on every experiment's instances (n = 2, d = 1) takes a fused path;
    it must give the very numbers of the general one (the committed LQ results of
    lq_regime were first produced by the general path) and be a Riccati solver."""
    from dprl.envs.lq import riccati_into, riccati_into_general

    rng = np.random.default_rng(11)
    for nb in (1, 7, 256):
        a = 0.5 * rng.standard_normal((2, 2, nb))
        b = 0.5 * rng.standard_normal((2, 1, nb))
        m = rng.standard_normal((2, 2))
        q, r = m @ m.T + 0.1 * np.eye(2), np.array([[rng.uniform(0.1, 2.0)]])
        fast = np.empty((11, 2, 2, nb)), np.empty((10, 1, 2, nb))
        slow = np.empty((11, 2, 2, nb)), np.empty((10, 1, 2, nb))
        riccati_into(a, b, q, r, *fast)
        riccati_into_general(a, b, q, r, *slow)
        assert np.array_equal(fast[0], slow[0]) and np.array_equal(fast[1], slow[1])
    s = random_system(2, 1, 10, np.random.default_rng(3))
    p_all, _ = riccati(s.a, s.b, s.q, s.r, 300)  # the fast path
    np.testing.assert_allclose(p_all[0], linalg.solve_discrete_are(s.a, s.b, s.q, s.r), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("d", [1, 2])
def test_batched_riccati_equals_one_system_at_a_time(d):
    rng = np.random.default_rng(4)
    a = 0.4 * rng.standard_normal((7, 3, 3))
    b = 0.4 * rng.standard_normal((7, 3, d))
    p_all, k_all = riccati(a, b, np.eye(3), np.eye(d), 6)
    for j in range(7):
        p1, k1 = riccati(a[j], b[j], np.eye(3), np.eye(d), 6)
        np.testing.assert_allclose(p_all[:, j], p1, rtol=1e-12)
        np.testing.assert_allclose(k_all[:, j], k1, rtol=1e-12)


def test_expected_cost_matches_monte_carlo():
    s = random_system(2, 1, 6, np.random.default_rng(7), c_a=0.8, c_b=0.6, noise_radius=0.15)
    gains = 0.3 * np.random.default_rng(8).standard_normal((s.horizon, s.d, s.n))  # an arbitrary LTV policy
    exact = float(policy_cost(s.a, s.b, s.q, s.r, gains, s.w_cov, s.x1))
    rng = np.random.default_rng(9)
    m = 200_000
    x = np.broadcast_to(s.x1, (m, s.n)).copy()
    cost = np.zeros(m)
    for h in range(s.horizon):
        u = x @ gains[h].T
        cost += np.einsum("ki,ij,kj->k", x, s.q, x) + np.einsum("ki,ij,kj->k", u, s.r, u)
        x = x @ s.a.T + u @ s.b.T + s.sample_noise(rng, m)
    se = cost.std() / np.sqrt(m)
    assert abs(cost.mean() - exact) < 4 * se
    # and the vectorised simulation agrees with the per-episode rollout used by the agents
    noise = s.sample_noise(np.random.default_rng(10), s.horizon)
    _, _, c1 = rollout(s, gains, noise)
    xs = [s.x1]
    c2 = 0.0
    for h in range(s.horizon):
        u = gains[h] @ xs[-1]
        c2 += xs[-1] @ s.q @ xs[-1] + u @ s.r @ u
        xs.append(s.a @ xs[-1] + s.b @ u + noise[h])
    assert c1 == pytest.approx(c2, rel=1e-12)


def test_regret_is_zero_for_optimal_policy_and_positive_otherwise():
    s = double_integrator(10)
    ev = RegretEvaluator(s)
    p_all, k_all = riccati(s.a, s.b, s.q, s.r, s.horizon)
    assert ev.optimal == pytest.approx(float(optimal_cost(p_all, s.w_cov, s.x1)))
    assert ev.regret(k_all) == pytest.approx(0.0, abs=1e-12)
    assert ev.regret(np.zeros_like(k_all)) > 1e-6
    assert ev.regret(k_all + 0.05) > 0
