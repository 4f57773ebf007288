"""OFU-RL / Private-OFU-RL: ridge reduction (C4), released-statistics-only planning, β_k
substitute, non-PD handling, clipping, oracle feasibility, calibration formulas."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dprl.agents.lq.calibration import private_ofu_calibration, sensitivities
from dprl.agents.lq.ofu import OFUAgent, confidence_radius
from dprl.agents.lq.oracle import OptimisticOracle
from dprl.agents.lq.build import build_agent
from dprl.agents.lq.episodes import ridge_estimate, run_episodes
from dprl.envs.lq import optimal_cost, random_system, riccati, rollout, theta_to_ab
from dprl.privacy.calibration import composed_epsilon
from dprl.privacy.regularizer import CentralRegularizer, NonPrivateRegularizer, RegularizerCalibration
from dprl.privacy.setting import PrivacySetting
from dprl.runner.checkpoints import log_checkpoints

PARAMS = {"n_candidates": 32, "alpha": 0.1, "lam": 0.1}


def _system(seed=0):
    return random_system(2, 1, 10, np.random.default_rng(seed))


def _play(system, agent, episodes, seed=1):
    rng = np.random.default_rng(seed)
    zs, xs = [], []
    for _ in range(episodes):
        plan = agent.act()
        states, controls, _ = rollout(system, plan.gains, system.sample_noise(rng, system.horizon))
        agent.observe(states, controls)
        zs.append(np.hstack([states[:-1], controls]))
        xs.append(states[1:])
    return np.vstack(zs), np.vstack(xs)


def test_constant_regularizer_is_exactly_ridge():
    """Claim C4: H_k = λI, L_k = 0 gives the standard ridge estimate."""
    s = _system()
    built = build_agent("ofu_rl", PARAMS, None, s, 40, np.random.default_rng(0), np.random.default_rng(1))
    z, x = _play(s, built.agent, 40)
    theta_hat = built.agent.plan(built.agent.regularizer.release()).theta_hat
    np.testing.assert_allclose(theta_hat, ridge_estimate(z, x, PARAMS["lam"]), rtol=1e-11, atol=1e-13)
    # and a non-ridge λ would not match (the comparison can fail)
    assert not np.allclose(theta_hat, ridge_estimate(z, x, 10 * PARAMS["lam"]), rtol=1e-6)


def test_noiseless_central_regularizer_reduces_to_ofu_rl():
    """Private-OFU-RL's code path with exact counters and η = λ is OFU-RL (same policies)."""
    s = _system()
    p, lam = s.n + s.d, PARAMS["lam"]
    cal = RegularizerCalibration(1.0, 1.0, shift=lam, lam_min=lam, lam_max=lam, nu=0.0)
    agents = []
    for reg in (NonPrivateRegularizer((), p, s.n, lam), CentralRegularizer((), p, s.n, 64, cal, None, noise=False)):
        oracle = OptimisticOracle(s.n, s.d, s.q, s.r, s.horizon, s.x1, s.noise_radius, 16, np.random.default_rng(3))
        agents.append(OFUAgent(reg, oracle, s.n, s.d, s.noise_radius, s.gamma, 0.1, clip=False))
    rng = np.random.default_rng(5)
    for _ in range(30):
        plans = [a.act() for a in agents]
        np.testing.assert_allclose(plans[0].gains, plans[1].gains, rtol=1e-9, atol=1e-12)
        states, controls, _ = rollout(s, plans[0].gains, s.sample_noise(rng, s.horizon))
        for a in agents:
            a.observe(states, controls)


class ReleaseOnly:
    """The only view of the data an agent gets: observe (send) and release (receive)."""

    def __init__(self, inner):
        self._inner = inner

    def observe(self, gram, target):
        self._inner.observe(gram, target)

    def release(self):
        return self._inner.release()


def test_agent_reads_only_released_statistics():
    s = _system()
    cal = private_ofu_calibration(PrivacySetting(epsilon=1.0, delta=1e-3, calibration="tight"), 32, s.horizon, s.gamma, s.n, s.d, 0.1)

    def make_agent(regularizer, oracle_seed):
        oracle = OptimisticOracle(s.n, s.d, s.q, s.r, s.horizon, s.x1, s.noise_radius, 8, np.random.default_rng(oracle_seed))
        return OFUAgent(regularizer, oracle, s.n, s.d, s.noise_radius, s.gamma, 0.1, clip=True)

    inner = CentralRegularizer((), s.n + s.d, s.n, 32, cal.regularizer, np.random.default_rng(2))
    agent = make_agent(ReleaseOnly(inner), 3)
    _play(s, agent, 10)  # the agent runs with nothing but observe/release available
    # the plan is a function of the released statistics (and the oracle's own randomness)
    # only: an agent that saw no data at all plans identically from the same release
    stats = inner.release()
    fresh = make_agent(ReleaseOnly(CentralRegularizer((), s.n + s.d, s.n, 32, cal.regularizer, np.random.default_rng(7))), 4)
    agent.oracle.rng = np.random.default_rng(4)
    np.testing.assert_array_equal(agent.plan(stats).gains, fresh.plan(stats).gains)


def test_private_logdet_substitute_upper_bounds_the_nonprivate_term():
    rng = np.random.default_rng(0)
    z = rng.standard_normal((200, 3))
    gram = z.T @ z
    lam_min = 5.0
    for _ in range(20):  # any regularizer with H ⪰ λ_min I (the good event)
        m = rng.standard_normal((3, 3))
        h = lam_min * np.eye(3) + m @ m.T
        stats = NonPrivateRegularizer((), 3, 2, 1.0).release()
        stats.gram, stats.lam_min, stats.lam_max, stats.nu = gram + h, lam_min, lam_min, 0.0
        beta = confidence_radius(stats, 2, 0.1, 0.1)
        exact = 0.1 * math.sqrt(2 * math.log(20) + 2 * np.linalg.slogdet(np.eye(3) + gram / lam_min)[1]) + math.sqrt(lam_min)
        assert beta >= exact - 1e-12
    stats.gram = gram + lam_min * np.eye(3)  # H = λ_min I: equality
    assert confidence_radius(stats, 2, 0.1, 0.1) == pytest.approx(
        0.1 * math.sqrt(2 * math.log(20) + 2 * np.linalg.slogdet(np.eye(3) + gram / lam_min)[1]) + math.sqrt(lam_min))


def test_non_positive_definite_releases_are_floored_counted_and_never_used():
    s = _system()
    cal = RegularizerCalibration(sigma_gram=50.0, sigma_target=1.0, shift=0.0, lam_min=1.0, lam_max=3.0, nu=1.0)
    reg = CentralRegularizer((), 3, 2, 64, cal, np.random.default_rng(0))
    oracle = OptimisticOracle(s.n, s.d, s.q, s.r, s.horizon, s.x1, s.noise_radius, 8, np.random.default_rng(1))
    agent = OFUAgent(reg, oracle, s.n, s.d, s.noise_radius, s.gamma, 0.1, clip=True)
    rng = np.random.default_rng(2)
    seen_not_pd = False
    for _ in range(20):
        stats = reg.release()
        if reg.n_users:
            assert np.linalg.eigvalsh(stats.gram)[0] >= cal.lam_min * (1 - 1e-9)
        seen_not_pd |= bool(stats.not_pd)
        plan = agent.plan(stats)
        assert np.all(np.isfinite(plan.gains))
        states, controls, _ = rollout(s, plan.gains, s.sample_noise(rng, s.horizon))
        agent.observe(states, controls)
    assert seen_not_pd and reg.n_not_pd > 0 and reg.n_repaired >= reg.n_not_pd


def test_private_agent_clips_statistics_to_the_sensitivity_bound():
    s = _system()
    built = build_agent("private_ofu_rl", PARAMS, PrivacySetting(epsilon=1.0, delta=1e-3, calibration="tight"), s, 8,
                        np.random.default_rng(0), np.random.default_rng(1))
    agent = built.agent
    sent = []
    agent.regularizer.observe = lambda g, t: sent.append((g, t))
    states = np.array([[1.0, 0.0], [3.0, 4.0], [0.0, 0.5]])  # ||x|| = 5 > 1
    controls = np.array([[10.0], [0.0]])  # ||z|| > 1 + γ
    agent.observe(states, controls)
    g, t = sent[0]
    d1, d2 = sensitivities(2, s.gamma)
    assert np.linalg.norm(g) <= d1 + 1e-12 and np.linalg.norm(t) <= d2 + 1e-12
    assert agent.n_clipped == 3


def test_oracle_returns_points_of_the_confidence_set_and_the_ball():
    s = _system()
    rng = np.random.default_rng(0)
    oracle = OptimisticOracle(s.n, s.d, s.q, s.r, s.horizon, s.x1, s.noise_radius, 256, rng)
    for beta, scale in ((0.3, 1.0), (5.0, 1.0), (0.2, 0.2)):
        m = rng.standard_normal((3, 3))
        gram = 10 * scale * (m @ m.T + np.eye(3))
        centre = 0.4 * rng.standard_normal((3, 2))
        res = oracle(centre, gram, beta)
        diff = res.theta - centre
        assert np.trace(diff.T @ gram @ diff) <= beta**2 * (1 + 1e-8) or res.fallback
        assert np.linalg.norm(res.theta) <= 1 + 1e-12
        # optimism: no worse than the centre (a candidate) when the centre is feasible
        if np.linalg.norm(centre) <= 1:
            a, b = theta_to_ab(centre, s.n)
            p_all, _ = riccati(a, b, s.q, s.r, s.horizon)
            assert res.cost <= float(optimal_cost(p_all, oracle.w_cov, s.x1)) + 1e-12


def test_cholesky_route_matches_lapack_and_maps_the_unit_ball_onto_the_confidence_set():
    """Θ̂ = V⁻¹U and ln det V by the Cholesky factor equal LAPACK's to round-off (condition
    numbers up to 1e9, as for OFU-RL's ridge Gram late in a run); the oracle's M = L^{-T}
    has MᵀVM = I (its transpose L⁻¹, a plausible slip, does not); a V that is not positive
    definite falls back to LAPACK exactly."""
    from dprl.agents.lq.ofu import _cholesky, _log_det, _solve_spd
    from dprl.agents.lq.oracle import ball_map_into

    rng = np.random.default_rng(5)
    for cond in (1.0, 1e3, 1e9):
        q, _ = np.linalg.qr(rng.standard_normal((3, 3)))
        gram = (q * np.geomspace(1.0, cond, 3)) @ q.T
        gram = 0.5 * (gram + gram.T)
        target = rng.standard_normal((3, 2))
        low, ok = _cholesky(gram)
        assert ok
        np.testing.assert_allclose(_solve_spd(gram, target, low, ok), np.linalg.solve(gram, target), rtol=1e-12 * cond, atol=0)
        assert _log_det(gram, low, ok) == pytest.approx(np.linalg.slogdet(gram)[1], abs=1e-13 + 1e-15 * cond)  # the matrix's own round-off
        m = np.empty((3, 3))
        ball_map_into(gram, m)
        assert np.allclose(m.T @ gram @ m, np.eye(3), atol=1e-9) and np.allclose(np.tril(m, -1), 0.0)
        if cond > 1:
            assert not np.allclose(m @ gram @ m.T, np.eye(3), atol=1e-3)  # L⁻¹ in place of L^{-T}
    indefinite = np.diag([2.0, -1.0, 3.0]) + 0.1
    target = rng.standard_normal((3, 2))
    low, ok = _cholesky(indefinite)
    assert not ok
    np.testing.assert_array_equal(_solve_spd(indefinite, target, low, ok), np.linalg.solve(indefinite, target))
    assert _log_det(indefinite, low, ok) == np.linalg.slogdet(indefinite)[1]


def test_single_candidate_oracle_is_certainty_equivalence():
    s = _system()
    oracle = OptimisticOracle(s.n, s.d, s.q, s.r, s.horizon, s.x1, s.noise_radius, 1, np.random.default_rng(0))
    centre = 0.3 * np.ones((3, 2))
    res = oracle(centre, np.eye(3), 0.5)
    np.testing.assert_array_equal(res.theta, centre)
    _, k = riccati(*theta_to_ab(centre, s.n), s.q, s.r, s.horizon)
    np.testing.assert_allclose(res.gains, k)


def test_paper_calibration_formulas_and_tight_guarantee():
    K, H, gamma, n, d, alpha = 1000, 10, 1.0, 2, 1, 0.1
    eps, delta = 1.0, 1e-3
    paper = private_ofu_calibration(PrivacySetting(epsilon=eps, delta=delta, calibration="paper"), K, H, gamma, n, d, alpha)
    tight = private_ofu_calibration(PrivacySetting(epsilon=eps, delta=delta, calibration="tight"), K, H, gamma, n, d, alpha)
    L = 10  # floor(log2 1000) + 1
    assert paper.levels == L
    d1, d2 = H * (1 + gamma) ** 2, H * (1 + gamma)
    # printed σ² times 4.5/2: the pair's replacement sensitivity (calibration.py docstring)
    printed = private_ofu_calibration(PrivacySetting(epsilon=eps, delta=delta, calibration="paper"), K, H, gamma, n, d, alpha, variant="printed")
    assert printed.regularizer.sigma_gram ** 2 == pytest.approx(2.25 * 8 * L * d1**2 * math.log(2 / delta) / eps**2)
    assert printed.regularizer.sigma_target ** 2 == pytest.approx(2.25 * 8 * L * d2**2 * math.log(2 / delta) / eps**2)
    # the exact solve of the same zCDP route: ε/2 = ρ + 2 sqrt(ρ ln(2/δ)) per counter
    rho = (math.sqrt(math.log(2 / delta) + eps / 2) - math.sqrt(math.log(2 / delta))) ** 2
    assert paper.regularizer.sigma_gram ** 2 == pytest.approx(2.25 * L * d1**2 / (2 * rho))
    lam = paper.regularizer.sigma_gram * math.sqrt(L) * (4 * math.sqrt(n + d) + math.sqrt(8 * math.log(4 * K / alpha)))
    assert paper.regularizer.lam_min == pytest.approx(lam)
    assert paper.regularizer.shift == pytest.approx(2 * lam) and paper.regularizer.lam_max == pytest.approx(3 * lam)
    nu = paper.regularizer.sigma_target * math.sqrt(L / lam) * (math.sqrt(2 * n * (n + d)) + math.sqrt(4 * math.log(2 * K / alpha)))
    assert paper.regularizer.nu == pytest.approx(nu)
    # tight: the pair is exactly (ε, δ); less noise and narrower constants than paper
    assert tight.exact_epsilon("joint", delta) == pytest.approx(eps, rel=1e-6)
    assert paper.exact_epsilon("joint", delta) <= eps
    assert paper.exact_epsilon("gram", delta / 2) <= eps / 2
    assert paper.exact_epsilon("target", delta / 2) <= eps
    assert tight.regularizer.sigma_gram < paper.regularizer.sigma_gram
    assert tight.regularizer.lam_min < paper.regularizer.lam_min and tight.regularizer.nu < paper.regularizer.nu
    # a power-of-two K: the paper's ceil(log2 K) would undercount the nodes an episode is in
    assert private_ofu_calibration(PrivacySetting(epsilon=eps, delta=delta, calibration="paper"), 1024, H, gamma, n, d, alpha).levels == 11
    assert composed_epsilon(tight.mu("gram"), delta / 2) == pytest.approx(tight.claimed("gram")[0])


def test_run_episodes_records_counts_and_regret():
    s = _system()
    built = build_agent("private_ofu_rl", PARAMS, PrivacySetting(epsilon=1.0, delta=1e-3, calibration="paper"), s, 50,
                        np.random.default_rng(0), np.random.default_rng(1))
    df = run_episodes(built, s, 50, np.random.default_rng(2), log_checkpoints(50, 8))
    assert df["episode"].iloc[-1] == 50
    assert {"n_repaired", "n_not_pd", "n_clipped", "n_oracle_fallback"} <= set(df.columns)
    assert np.all(np.diff(df["regret"]) >= -1e-12)  # per-episode regret is non-negative
