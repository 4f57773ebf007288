"""Zhou (2022) privatizer calibrations and privacy audits (central tree counters, local randomiser)."""

import math

import numpy as np
import pytest

from dprl.agents.linmix.calibration import (
    accounted_epsilon,
    paper_sensitivities,
    privatizer_calibration,
    replacement_sensitivities,
    tree_depth,
)
from dprl.envs.linear_mixture import make_mixture
from dprl.experiments.linmix.jobs import _audit_features, central_sampler, local_sampler, run_audit
from dprl.privacy.audit import audit
from dprl.runner.job import JobContext, JobSpec

EPS, DELTA = 1.0, 1e-5


def test_tree_depth_is_ceil_log2_K():
    assert [tree_depth(K) for K in (1, 2, 3, 4, 5, 8, 9, 1024, 1025)] == [1, 1, 2, 2, 3, 3, 4, 10, 11]


def test_paper_calibration_is_as_printed():
    feat = make_mixture(6, 2, 3, 2, 4, np.random.default_rng(0)).features()
    K, alpha = 100, 0.05
    cal = privatizer_calibration("central", "paper", EPS, DELTA, K, feat, alpha)
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
        tight = privatizer_calibration(scheme, "tight", EPS, DELTA, 100, feat, 0.05)
        paper = privatizer_calibration(scheme, "paper", EPS, DELTA, 100, feat, 0.05)
        assert accounted_epsilon(tight, feat, DELTA) == pytest.approx(EPS, rel=1e-6)
        # the printed Δ_r = 1 is an add/remove sensitivity; the paper route's slack still
        # covers the replacement sensitivities
        assert accounted_epsilon(paper, feat, DELTA) <= EPS
        assert np.all(tight.sigmas < paper.sigmas)
        assert tight.p.lam_max < paper.p.lam_max
    local = privatizer_calibration("local", "tight", EPS, DELTA, 100, feat, 0.05)
    central = privatizer_calibration("central", "tight", EPS, DELTA, 100, feat, 0.05)
    assert local.sum_terms == 99 and central.sum_terms == central.m
    assert local.p.lam_min > central.p.lam_min  # sqrt(K) vs sqrt(log K) noise growth


def test_replacement_sensitivities_of_nonnegative_features():
    feat = _audit_features(2, 1)
    sens = replacement_sensitivities(feat)
    paper = paper_sensitivities(2, 1)
    assert sens.gram_p == pytest.approx(paper.gram_p) and sens.target_p == pytest.approx(paper.target_p)
    assert sens.gram_r == pytest.approx(math.sqrt(2)) and sens.target_r == pytest.approx(math.sqrt(2))


@pytest.mark.parametrize("scheme", ["central", "local"])
@pytest.mark.parametrize("route", ["paper", "tight"])
def test_audit_passes_correct_and_fails_broken(scheme, route):
    feat = _audit_features(2, 1)
    K = 3  # two releases after user 1 (levels 0 and 1 of the tree)
    cal = privatizer_calibration(scheme, route, EPS, DELTA, K, feat, 0.05)
    make = (lambda s: central_sampler(cal, feat, K, s)) if scheme == "central" else (lambda s: local_sampler(cal, feat, s))
    ok = audit(make(1.0), True, False, EPS, DELTA, n=10000, rng=np.random.default_rng(0))
    assert ok.passed, ok
    broken = audit(make(0.05), True, False, EPS, DELTA, n=10000, rng=np.random.default_rng(1))
    assert not broken.passed, broken


def test_audit_job_rows():
    spec = JobSpec("linmix_audit", "linmix_audit", {"name": "local_randomizer"}, {"name": "neighbouring_users", "K": 4, "d": 2, "H": 1},
                   {"epsilon": EPS, "delta": DELTA, "calibration": "tight"}, {"runs": 5000, "alpha": 1e-3}, 0)
    df = run_audit(JobContext(spec))
    assert list(df["mechanism"]) == ["local_randomizer"] and bool(df["passed"].iloc[0])
    assert df["eps_accounted"].iloc[0] == pytest.approx(EPS, rel=1e-6)
