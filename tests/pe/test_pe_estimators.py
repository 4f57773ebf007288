"""LSW / LSL and their DP versions: closed forms, ε = ∞, noise formulas, what is released."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
from scipy import optimize

from dprl.agents.pe.estimators import DPLSL, DPLSW, LSL, LSW, Release
from dprl.agents.pe.features import feature_matrix, uniform_weights, weighted_rmse
from dprl.envs.mrp import chain_mrp


@pytest.fixture(scope="module")
def batch():
    mrp = chain_mrp(n_states=12, gamma=0.9)
    data = mrp.sample_first_visit(400, np.random.default_rng(0))
    return mrp, data.prefix_stats(np.array([5, 40, 400]))


@pytest.mark.parametrize("feat", ["identity", "pairs"])
def test_dp_estimators_equal_nonprivate_at_infinite_epsilon(batch, feat):
    mrp, st = batch
    phi, rho = feature_matrix(feat, mrp.n_states), uniform_weights(mrp.n_states, mrp.absorbing)
    rng = np.random.default_rng(1)
    rel, rep = DPLSW(phi, rho, mrp.f_max, math.inf, 0.1).release(st, rng)
    np.testing.assert_array_equal(rel.theta, LSW(phi, rho).fit(st))
    assert np.all(rep.sigma == 0)
    for smooth in (True, False):
        rel, rep = DPLSL(phi, rho, 2.0, 0.5, mrp.f_max, math.inf, 0.1, smooth=smooth).release(st, rng)
        np.testing.assert_array_equal(rel.theta, LSL(phi, rho, 2.0, 0.5).fit(st))
        assert np.all(rep.sigma == 0)


def test_lsw_identity_recovers_first_visit_averages(batch):
    mrp, st = batch
    assert np.all(st.counts[-1, : mrp.absorbing] > 0)  # every non-absorbing state visited
    phi, rho = feature_matrix("identity", mrp.n_states), uniform_weights(mrp.n_states, mrp.absorbing)
    theta = LSW(phi, rho).fit(st)
    np.testing.assert_allclose(theta[:, : mrp.absorbing], st.mean_returns[:, : mrp.absorbing], atol=1e-12)


def test_lsw_and_lsl_minimise_their_objectives(batch):
    mrp, st = batch
    phi, rho = feature_matrix("pairs", mrp.n_states), uniform_weights(mrp.n_states, mrp.absorbing)
    f = st.mean_returns[-1]
    theta = LSW(phi, rho).fit(st)[-1]
    ref = optimize.lsq_linear(np.sqrt(rho)[:, None] * phi, np.sqrt(rho) * f).x
    np.testing.assert_allclose(theta, ref, atol=1e-9)
    lsl = LSL(phi, rho, 3.0, 0.5)
    m = float(st.m[-1])
    lam = lsl.lam(m)
    assert lam == pytest.approx(rho.max() * np.linalg.norm(phi) ** 2 + 3.0 * m**0.5)
    w = rho * st.counts[-1] / m

    def objective(t: np.ndarray) -> float:
        return float(np.sum(w * (f - phi @ t) ** 2) + lam / (2 * m) * t @ t)

    opt = optimize.minimize(objective, np.zeros(phi.shape[1]), method="BFGS", options={"gtol": 1e-12})
    np.testing.assert_allclose(lsl.fit(st)[-1], opt.x, atol=1e-6)


def test_noise_scales_follow_the_spec(batch):
    mrp, st = batch
    phi, rho = feature_matrix("identity", mrp.n_states), uniform_weights(mrp.n_states, mrp.absorbing)
    eps, delta, d = 1.0, 0.1, phi.shape[1]
    a = eps / (5 * math.sqrt(2 * math.log(2 / delta)))
    b = eps / (4 * (d + math.log(2 / delta)))
    est = DPLSW(phi, rho, mrp.f_max, eps, delta)
    counts = st.counts[1]
    psi = max(math.exp(-k * b) * np.sum(rho / np.maximum(counts - k, 1) ** 2) for k in range(int(counts.max()) + 1))
    frob = np.linalg.norm(np.linalg.pinv(np.sqrt(rho)[:, None] * phi))
    assert est.noise(st).sigma[1] == pytest.approx(mrp.f_max / a * frob * math.sqrt(psi), rel=1e-12)
    lsl = DPLSL(phi, rho, 2.0, 0.5, mrp.f_max, eps, delta)
    gs = DPLSL(phi, rho, 2.0, 0.5, mrp.f_max, eps, delta, smooth=False)
    m = float(st.m[1])
    lam = lsl.lam(m)
    c_lam = np.linalg.norm(phi) * rho.max() / math.sqrt(2 * lam)
    psi = max(math.exp(-k * b) * (c_lam * math.sqrt(np.sum(rho * np.minimum(counts + k, m))) + np.linalg.norm(rho)) ** 2
              for k in range(int(m)))
    scale = 2 * mrp.f_max * np.linalg.norm(phi) / (a * (lam - rho.max() * np.linalg.norm(phi) ** 2))
    assert lsl.noise(st).sigma[1] == pytest.approx(scale * math.sqrt(psi), rel=1e-12)
    assert gs.noise(st).sigma[1] == pytest.approx(scale * (c_lam * math.sqrt(m) + np.linalg.norm(rho)), rel=1e-12)
    assert np.all(gs.noise(st).sigma >= lsl.noise(st).sigma)


def test_release_holds_only_the_noisy_weights(batch):
    """Structural: the published object has one field, the noisy θ; values and errors are
    computed from it; its noise is θ̃ - θ_X with the reported σ and comes from the given rng."""
    mrp, st = batch
    assert [f.name for f in dataclasses.fields(Release)] == ["theta"]
    phi, rho = feature_matrix("identity", mrp.n_states), uniform_weights(mrp.n_states, mrp.absorbing)
    est = DPLSW(phi, rho, mrp.f_max, 1.0, 0.1)
    r1, rep = est.release(st, np.random.default_rng(9))
    r2, _ = est.release(st, np.random.default_rng(9))
    np.testing.assert_array_equal(r1.theta, r2.theta)
    z = (r1.theta - est.fit(st)) / rep.sigma[:, None]
    ref = np.random.default_rng(9).standard_normal(z.shape)
    np.testing.assert_allclose(z, ref, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(r1.values(phi), r1.theta @ phi.T)
    v = mrp.true_values()
    assert weighted_rmse(v, r1.values(phi), rho).shape == (3,)


def test_estimator_input_validation():
    phi, rho = feature_matrix("identity", 4), uniform_weights(4, 3)
    with pytest.raises(ValueError, match="c must be > 0"):
        LSL(phi, rho, 0.0, 0.5)
    with pytest.raises(ValueError, match="F_max"):
        DPLSW(phi, rho, math.inf, 1.0, 0.1)
    with pytest.raises(ValueError, match="delta"):
        DPLSW(phi, rho, 1.0, 1.0, 0.0)
    with pytest.raises(ValueError, match="weights"):
        LSW(phi, rho[:3])
    with pytest.raises(ValueError, match="sum"):
        DPLSL(phi, 2 * rho, 1.0, 0.5, 1.0, 1.0, 0.1, smooth=False)
    with pytest.raises(ValueError, match="unknown feature map"):
        feature_matrix("tiles", 4)
