"""Zhou (2022) privatizer calibrations and privacy audits (central tree counters, local randomiser)."""

import dataclasses
import math

import numpy as np
import pytest

from dprl.agents.linmix.calibration import (
    paper_sensitivities,
    linopt_calibration,
    replacement_sensitivities,
    tree_depth,
)
from dprl.envs.linear_mixture import make_mixture
from dprl.privacy.calibration import gaussian_mu
from dprl.agents.linmix.build import build_agent
from dprl.experiments.linmix.spec import AGENTS
from dprl.agents.linmix.privacy import audit_features
from dprl.agents.linmix.privacy import central_sampler, local_sampler, neighbouring_statistics
from dprl.experiments.linmix.jobs import run_audit
from dprl.privacy.audit import audit
from dprl.runner.job import JobContext, JobSpec
from dprl.privacy.setting import PrivacySetting

EPS, DELTA = 1.0, 1e-5


def test_tree_depth_is_ceil_log2_K():
    assert [tree_depth(K) for K in (1, 2, 3, 4, 5, 8, 9, 1024, 1025)] == [1, 1, 2, 2, 3, 3, 4, 10, 11]


def test_printed_calibration_is_as_printed():
    feat = make_mixture(6, 2, 3, 2, 4, np.random.default_rng(0)).features()
    K, alpha = 100, 0.05
    cal = linopt_calibration(PrivacySetting(epsilon=EPS, delta=DELTA, calibration="paper"), "central", K, feat, alpha, variant="printed")
    H, d1, m = 4, 3, 7
    sigma_p1 = H * d1 * H**2 / EPS * math.sqrt(32 * m * math.log(4 * H / DELTA))
    assert cal.m == m and cal.sigmas[0] == pytest.approx(sigma_p1)
    assert cal.sigmas[1] == pytest.approx(sigma_p1 / math.sqrt(d1))
    big = sigma_p1 * math.sqrt(m) * (4 * math.sqrt(3) + math.sqrt(8 * math.log(8 * K * H / alpha)))
    assert (cal.p.shift, cal.p.lam_min, cal.p.lam_max) == pytest.approx((2 * big, big, 3 * big))
    nu = cal.sigmas[1] * math.sqrt(m / big) * (math.sqrt(d1) + math.sqrt(2 * math.log(4 * K * H / alpha)))
    assert cal.p.nu == pytest.approx(nu)


def test_tight_is_exactly_eps_and_less_noisy_than_paper():
    feat = make_mixture(6, 2, 3, 2, 4, np.random.default_rng(0)).features()
    for scheme in ("central", "local"):
        tight = linopt_calibration(PrivacySetting(epsilon=EPS, delta=DELTA, calibration="tight"), scheme, 100, feat, 0.05)
        paper = linopt_calibration(PrivacySetting(epsilon=EPS, delta=DELTA, calibration="paper"), scheme, 100, feat, 0.05)
        assert tight.accounted_epsilon == pytest.approx(EPS, rel=1e-6)
        assert paper.accounted_epsilon <= EPS
        assert np.all(tight.sigmas < paper.sigmas)
        assert tight.p.lam_max < paper.p.lam_max
    local = linopt_calibration(PrivacySetting(epsilon=EPS, delta=DELTA, calibration="tight"), "local", 100, feat, 0.05)
    central = linopt_calibration(PrivacySetting(epsilon=EPS, delta=DELTA, calibration="tight"), "central", 100, feat, 0.05)
    assert local.sum_terms == 99 and central.sum_terms == central.m
    assert local.p.lam_min > central.p.lam_min  # sqrt(K) vs sqrt(log K) noise growth


@pytest.mark.parametrize("d, H", [(2, 1), (2, 2), (3, 4)])  # d = 1: no second reward feature, the sum is an upper bound
def test_tight_is_exact_on_the_hardest_pair(d, H):
    """``tight`` sums each stream's own worst case (``STREAMS_PER_STEP``); on the audit
    features one replacement pair attains all four at once, so the privacy loss of that
    pair through the agent's σ's is exactly μ(ε, δ): the sum is the joint worst case, not a
    looser bound. A σ 1% smaller would exceed it (the check has power)."""
    feat = audit_features(d, H)
    cal = linopt_calibration(PrivacySetting(epsilon=EPS, delta=DELTA, calibration="tight"), "central", 64, feat, 0.05)
    a, b = neighbouring_statistics(feat, True), neighbouring_statistics(feat, False)
    per_step = [float(np.sum((x[0] - y[0]) ** 2)) for x, y in zip(a, b)]  # one step's ||Δ||² per stream
    mu2 = cal.m * H * float(np.sum(np.array(per_step) / cal.sigmas**2))
    assert math.sqrt(mu2) == pytest.approx(gaussian_mu(EPS, DELTA), rel=1e-12)
    assert math.sqrt(mu2) / 0.99 > gaussian_mu(EPS, DELTA) * (1 + 1e-3)


def test_replacement_sensitivities_of_nonnegative_features():
    feat = audit_features(2, 1)
    sens = replacement_sensitivities(feat)
    paper = paper_sensitivities(2, 1)
    assert sens.gram_p == pytest.approx(paper.gram_p) and sens.target_p == pytest.approx(paper.target_p)
    assert sens.gram_r == pytest.approx(math.sqrt(2)) and sens.target_r == pytest.approx(math.sqrt(2))


def built_linopt(scheme: str, route: str, feat, K: int, sigma_scale: float = 1.0):
    """The private LinOpt agent built by the factory; ``sigma_scale`` != 1 scales the σ's of
    the agent's own regularizers after it is built (a test-only hook: a broken agent)."""
    name = "private_linopt_vi" if scheme == "central" else "ldp_linopt_vi"
    built = build_agent(name, AGENTS[name].defaults(),
                        PrivacySetting(epsilon=EPS, delta=DELTA, calibration=route), feat, K,
                        np.random.default_rng(0), np.random.default_rng(0))
    for reg in (built.agent.reg_p, built.agent.reg_r):
        c = reg.calibration
        reg.calibration = dataclasses.replace(c, sigma_gram=c.sigma_gram * sigma_scale, sigma_target=c.sigma_target * sigma_scale)
    return built


@pytest.mark.parametrize("scheme", ["central", "local"])
@pytest.mark.parametrize("route", ["paper", "tight"])
def test_audit_passes_correct_and_fails_broken(scheme, route):
    feat = audit_features(2, 1)
    K = 3  # two releases after user 1 (levels 0 and 1 of the tree)
    sampler = central_sampler if scheme == "central" else local_sampler
    cal = built_linopt(scheme, route, feat, K).calibration
    ok = audit(sampler(built_linopt(scheme, route, feat, K), feat), True, False, EPS, DELTA, n=10000, rng=np.random.default_rng(0))
    assert ok.passed, ok
    # broken: noise scaled to use the budget exactly, then quartered (`paper` has slack; at
    # δ = 1e-5 and 10^4 runs the audit reaches ε_lb ≈ 0.8 on a halved one, true ε 2.15)
    sens = replacement_sensitivities(feat).as_array()
    mu = math.sqrt(cal.m * feat.horizon * float(np.sum((sens / cal.sigmas) ** 2)))
    broken_agent = built_linopt(scheme, route, feat, K, 0.25 * mu / gaussian_mu(EPS, DELTA))
    broken = audit(sampler(broken_agent, feat), True, False, EPS, DELTA, n=10000, rng=np.random.default_rng(1))
    assert not broken.passed, broken


def test_audit_job_rows():
    spec = JobSpec("linmix_audit", "linmix_audit", {"name": "local_randomizer"}, {"name": "neighbouring_users", "K": 4, "d": 2, "H": 1},
                   PrivacySetting(epsilon=EPS, delta=DELTA, calibration="tight"), {"runs": 5000, "alpha": 1e-3}, 0)
    df = run_audit(JobContext(spec))
    assert list(df["mechanism"]) == ["local_randomizer"] and bool(df["passed"].iloc[0])
    assert df["eps_exact"].iloc[0] == pytest.approx(EPS, rel=1e-6)


# ------------------------------------------------------------------ replacement accounting

GRID = (0.1, 1.0, 10.0, 100.0, 189.0, 1000.0)


@pytest.mark.parametrize("scheme", ["central", "local"])
@pytest.mark.parametrize("route", ["paper", "tight"])
def test_accounted_epsilon_within_nominal_at_every_eps(scheme, route):
    feat = make_mixture(10, 3, 2, 2, 2, np.random.default_rng(0)).features()
    for eps in GRID:
        cal = linopt_calibration(PrivacySetting(epsilon=eps, delta=DELTA, calibration=route), scheme, 2000, feat, 0.05)
        assert cal.accounted_epsilon <= eps * (1 + 1e-9), (scheme, route, eps)


@pytest.mark.parametrize("scheme", ["central", "local"])
def test_printed_zcdp_route_is_not_private_at_large_eps(scheme):
    """Zhou's printed closed form drops ρ from ε = ρ + 2 sqrt(ρ ln(1/δ)): at H = 2,
    δ = 1e-5 it is private up to ε ≈ 189 and about 3,800-DP at "ε = 1000"."""
    feat = make_mixture(10, 3, 2, 2, 2, np.random.default_rng(0)).features()
    acc = {eps: linopt_calibration(PrivacySetting(epsilon=eps, delta=DELTA, calibration="paper"), scheme, 2000, feat, 0.05,
                                   variant="printed").accounted_epsilon for eps in (100.0, 189.0, 200.0, 1000.0)}
    assert acc[100.0] <= 100.0 and acc[200.0] > 200.0
    assert acc[1000.0] == pytest.approx(3800, rel=0.02)
    corrected = linopt_calibration(PrivacySetting(epsilon=1.0, delta=DELTA, calibration="paper"), scheme, 2000, feat, 0.05)
    printed = linopt_calibration(PrivacySetting(epsilon=1.0, delta=DELTA, calibration="paper"), scheme, 2000, feat, 0.05, variant="printed")
    # at small ε the exact solve differs from the printed closed form by well under 1%
    assert corrected.sigmas[0] / printed.sigmas[0] == pytest.approx(1.0, abs=0.01)
    assert np.all(corrected.sigmas >= printed.sigmas)


@pytest.mark.parametrize("route", ["paper", "tight"])
def test_accounting_agrees_with_dp_accounting(route):
    """Independent check with Google's PLD accountant: ``4H`` streams, each ``m`` Gaussian
    node releases with its replacement sensitivity."""
    from dp_accounting.pld import privacy_loss_distribution as pld

    feat = make_mixture(10, 3, 2, 2, 2, np.random.default_rng(0)).features()
    eps = 1.0
    cal = linopt_calibration(PrivacySetting(epsilon=eps, delta=DELTA, calibration=route), "central", 64, feat, 0.05)
    sens = replacement_sensitivities(feat).as_array()
    total = None
    for s_c, sigma in zip(sens, cal.sigmas):
        part = pld.from_gaussian_mechanism(sigma, sensitivity=s_c, value_discretization_interval=1e-4)
        part = part.self_compose(cal.m * feat.horizon)
        total = part if total is None else total.compose(part)
    eps_lib = total.get_epsilon_for_delta(DELTA)
    assert cal.accounted_epsilon == pytest.approx(eps_lib, rel=3e-3, abs=3e-3)
    assert eps_lib <= eps * 1.003


@pytest.mark.parametrize("scheme", ["central", "local"])
def test_agent_noise_path_has_the_calibrated_scales(scheme):
    """Measure every stream's σ from releases of the Privatizer the agent builds
    (``privatizers``), with σ_gram != σ_target, and account the measured σ's under
    replacement. Catches a Gram counter drawing with the target's σ (or the reverse)."""
    from dprl.agents.linmix.build import build_agent, privatizers

    feat = make_mixture(10, 3, 2, 2, 2, np.random.default_rng(0)).features()
    privacy = PrivacySetting(epsilon=EPS, delta=DELTA, calibration="tight")
    name = "private_linopt_vi" if scheme == "central" else "ldp_linopt_vi"
    setup = build_agent(name, AGENTS[name].defaults(), privacy, feat, 64,
                        np.random.default_rng(0), np.random.default_rng(1))
    cal = setup.calibration
    assert setup.agent.reg_p.calibration == cal.p and setup.agent.reg_r.calibration == cal.r
    assert cal.p.sigma_gram / cal.p.sigma_target > 1.2
    runs = 20_000
    reg_p, reg_r = privatizers(scheme, cal.p, cal.r, feat, 64, np.random.default_rng(2), batch_shape=(runs,))
    measured = []
    for reg, p in ((reg_p, feat.d1), (reg_r, feat.d2)):
        reg.observe(np.zeros((runs, feat.horizon, p, p)), np.zeros((runs, feat.horizon, p, 1)))
        st = reg.release()
        iu = np.triu_indices(p)
        measured += [float((st.gram - reg.calibration.shift * np.eye(p))[..., iu[0], iu[1]].std()), float(st.target.std())]
    np.testing.assert_allclose(measured, cal.sigmas, rtol=0.03)
    measured_cal = dataclasses.replace(cal, sigmas=np.array(measured))
    assert measured_cal.accounted_epsilon <= EPS * 1.06
