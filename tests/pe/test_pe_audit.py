"""B1 audits of DP-LSW and DP-LSL on replacement pairs: the correct mechanisms
satisfy NRS07's conditions and pass; local-sensitivity noise, an inverted β and the old cap
k < m violate them and fail the audit; the exact ε of a pair of Gaussians is right."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from dprl.agents.pe.broken import BROKEN_VARIANTS
from dprl.agents.pe.privacy import AUDIT_PAIRS, audit_pair, pair_releases
from dprl.privacy.calibration import composed_epsilon
from dprl.privacy.smooth_sensitivity import gaussian_pair_delta, gaussian_pair_epsilon

LSW = {"name": "dp_lsw"}
LSL_TIGHT = {"name": "dp_lsl", "c": 1e4, "p": 0.0}  # return change nearly tight
LSL_COUNTS = {"name": "dp_lsl", "c": 0.01, "p": 0.0}  # local sensitivity varies most with the counts
ALGS = {"dp_lsw": LSW, "dp_lsl_c1e4": LSL_TIGHT, "dp_lsl_c0.01": LSL_COUNTS}


def _ncx2_delta(eps, shift, s0, s1, d):
    """Reference: the privacy loss of N(0, s0² I) vs N(μ, s1² I) (s0 != s1) is an affine map of
    a noncentral χ²_d (complete the square), so its tails are ncx2 survival functions."""
    c = 1 / s1**2 - 1 / s0**2
    v = shift / (c * s1**2)
    k = shift**2 / (2 * s1**2) * (1 - 1 / (c * s1**2))
    t = (eps - d * math.log(s1 / s0) - k) / (c / 2)

    def tail(scale, nc):
        dist = stats.ncx2(d, nc)
        return dist.sf(t / scale) if c > 0 else dist.cdf(t / scale)

    return tail(s0**2, (v / s0) ** 2) - math.exp(eps) * tail(s1**2, ((v - shift) / s1) ** 2)


@pytest.mark.parametrize("eps, shift, s0, s1, d", [
    (0.5, 0.7, 1.0, 1.5, 1), (0.5, 0.7, 1.0, 1.5, 2), (1.0, 0.7, 1.3, 1.0, 5), (0.2, 0.01, 1.0, 1.7, 2),
    (12.0, 0.3, 1.0, 2.0, 2), (3.0, 2.0, 2.0, 1.0, 3),
])
def test_gaussian_pair_delta_matches_the_noncentral_chi2_form(eps, shift, s0, s1, d):
    assert gaussian_pair_delta(eps, shift, s0, s1, d) == pytest.approx(_ncx2_delta(eps, shift, s0, s1, d), rel=1e-8, abs=1e-14)


def test_gaussian_pair_epsilon_reduces_to_the_analytic_gaussian_and_is_a_fixed_point():
    for mu, delta, d in [(0.3, 0.1, 1), (1.0, 1e-3, 3), (2.0, 1e-5, 2)]:
        assert gaussian_pair_epsilon(delta, mu, 1.0, 1.0, d) == pytest.approx(composed_epsilon(mu, delta), rel=1e-8)
    eps = gaussian_pair_epsilon(1e-3, 0.4, 1.0, 1.6, 2)
    worst = max(_ncx2_delta(eps, 0.4, 1.0, 1.6, 2), _ncx2_delta(eps, 0.4, 1.6, 1.0, 2))
    assert worst == pytest.approx(1e-3, rel=1e-6)
    # the number: local-sensitivity noise of DP-LSW on a count 2 -> 1 (d = 1) has ε 2.54 at δ = 0.1
    _, _, theta, sigma = pair_releases(LSW, "local_sensitivity", "count_2_to_1", 1, 1.0, 1.0, 0.1)
    assert sigma[1] / sigma[0] == pytest.approx(2.0)
    assert gaussian_pair_epsilon(0.1, abs(theta[0] - theta[1])[0], *sigma, 1) == pytest.approx(2.549, abs=1e-3)


@pytest.mark.parametrize("alg", ALGS, ids=str)
def test_correct_mechanisms_meet_nrs07_conditions_and_controls_break_them(alg):
    """σ_X >= ||θ_X - θ_X'||/a and |ln σ_X²/σ_X'²| <= b on every audited pair, d in {1, 2, 3},
    every audited (ε, δ); each negative control violates the second on a count-changing pair."""
    violated = {v: 0 for v in BROKEN_VARIANTS[ALGS[alg]["name"]]}
    for d in (1, 2, 3):
        for eps, delta in [(0.1, 0.1), (1.0, 0.1), (10.0, 1e-3)]:
            for pair in AUDIT_PAIRS:
                for variant in ("correct", *violated):
                    est, _, theta, sigma = pair_releases(ALGS[alg], variant, pair, d, 1.0, eps, delta)
                    shift_ok = np.linalg.norm(theta[0] - theta[1]) <= est.const.a * min(sigma) * (1 + 1e-12)
                    smooth_ok = abs(2 * math.log(sigma[0] / sigma[1])) <= est.const.b * (1 + 1e-12)
                    if variant == "correct":
                        assert shift_ok and smooth_ok, (d, eps, delta, pair)
                    else:
                        violated[variant] += not (shift_ok and smooth_ok)
    assert all(violated.values()), violated  # (at c = 1e4 only by a little: the audit cannot see it)


@pytest.mark.parametrize("alg", ALGS, ids=str)
def test_audit_passes_for_the_correct_mechanisms(alg):
    rng = np.random.default_rng(2016)
    for pair in AUDIT_PAIRS:
        row = audit_pair(ALGS[alg], "correct", pair, 2, 1.0, 1.0, 0.1, 50_000, rng)
        assert row["passed"] and row["nrs07_conditions"], row
        assert row["eps_lb"] <= row["eps_exact"] + 1e-9
        assert row["accounted_epsilon"] == 1.0


CONTROLS = [(LSW, v, "count_2_to_1") for v in BROKEN_VARIANTS["dp_lsw"]] + [
    (LSL_COUNTS, v, "count_1_to_0") for v in BROKEN_VARIANTS["dp_lsl"]]


@pytest.mark.parametrize("alg, variant, pair", CONTROLS, ids=lambda x: x if isinstance(x, str) else x["name"])
@pytest.mark.parametrize("eps", [0.1, 1.0])
def test_audit_fails_for_every_negative_control(alg, variant, pair, eps):
    """Measured at 5·10⁴ runs, δ = 0.1, d = 2: ε_lb ≈ 4.0 (DP-LSW, exact 4.66) and ≈ 2.2
    (DP-LSL, exact 2.51) against the claimed ε <= 1; the same audit passes the correct mechanism."""
    row = audit_pair(alg, variant, pair, 2, 1.0, eps, 0.1, 50_000, np.random.default_rng(11))
    assert not row["passed"] and row["eps_lb"] > 2 * eps, row
    assert row["eps_lb"] <= row["eps_exact"] + 1e-9
    assert not row["nrs07_conditions"] and math.isnan(row["accounted_epsilon"])


def test_old_k_cap_flagged_beyond_m_equal_1():
    """At m = 2 the old cap is not the local sensitivity; on the issue's two-state pattern
    (counts (1, 2) -> (0, 2)) its σ ratio still breaks b-smoothness: 187·b in ln Ψ at c_λ = 1."""
    from dprl.agents.pe.bounds import lsl_psi

    rho, b, m = np.array([0.5, 0.5]), 1e-3, np.array([2.0, 2.0])
    ln = np.log(lsl_psi(np.array([[1.0, 2.0], [0.0, 2.0]]), m, rho, np.ones(2), b, k_max=m - 1))
    assert abs(ln[0] - ln[1]) / b == pytest.approx(187.1, rel=1e-3)


def _random_replacement_conditions(variant: str, trials: int = 600) -> dict[str, float]:
    """Worst ``||θ_X - θ_X'|| / (a·min σ)`` and ``|ln σ_X²/σ_X'²| / b`` of the estimators' own
    fit and noise over random small batches and neighbours (trajectory 0 replaced by a random
    one; returns random or extreme in [0, F_max]), random features and weights, d·b small."""
    from dprl.agents.pe.broken import variant_class
    from dprl.envs.mrp import FirstVisitData

    rng = np.random.default_rng(7)
    worst = {"shift": 0.0, "smooth": 0.0}
    for _ in range(trials):
        n, d, m = int(rng.integers(1, 5)), int(rng.integers(1, 4)), int(rng.integers(1, 7))
        phi = rng.normal(size=(n, d)) * rng.choice([0.3, 1.0, 3.0])
        rho = rng.dirichlet(np.ones(n)) * rng.uniform(0.3, 1.0)
        vis = rng.uniform(size=(m, n)) < rng.uniform(0.2, 1.0)
        ret = np.where(vis, rng.choice([0.0, 1.0], size=(m, n)) if rng.uniform() < 0.5 else rng.uniform(size=(m, n)), 0.0)
        vis2, ret2 = vis.copy(), ret.copy()
        vis2[0] = rng.uniform(size=n) < rng.uniform()
        ret2[0] = np.where(vis2[0], rng.choice([0.0, 1.0], size=n), 0.0)
        x, y = FirstVisitData(ret, vis).stats(), FirstVisitData(ret2, vis2).stats()
        for name in ("dp_lsw", "dp_lsl"):
            cls = variant_class(name, variant)
            args = () if name == "dp_lsw" else (float(rng.choice([1e-3, 0.1, 1.0, 100.0])), float(rng.choice([0.0, 0.5, 1.0])))
            est = cls(phi, rho, *args, 1.0, 1.0, 0.1)
            s0, s1 = float(est.noise(x).sigma[0]), float(est.noise(y).sigma[0])
            shift = float(np.linalg.norm(est.fit(x)[0] - est.fit(y)[0]))
            worst["shift"] = max(worst["shift"], shift / (est.const.a * min(s0, s1)))
            worst["smooth"] = max(worst["smooth"], abs(2 * math.log(s0 / s1)) / est.const.b)
    return worst


@pytest.mark.parametrize("variant", ["correct", "local_sensitivity"])
def test_nrs07_conditions_on_random_replacement_pairs(variant):
    """Both conditions of NRS07 on random datasets (the sensitivity bounds of the spec cover
    the actual change of θ under replacement; measured: 1.000 for DP-LSW, where the bound is
    attained, 0.9999 for DP-LSL); the same checker flags local-sensitivity noise."""
    worst = _random_replacement_conditions(variant)
    assert worst["shift"] <= 1.0 + 1e-9
    if variant == "correct":
        assert worst["smooth"] <= 1.0 + 1e-9
    else:
        assert worst["smooth"] > 5.0
