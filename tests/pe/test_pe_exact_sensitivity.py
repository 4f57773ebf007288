"""The exact check of the sensitivity bounds (``agents/pe/exact.py``; the arguments in
``agents/pe/bounds.py``): on small chains every replacement pair of batches is enumerated and
the true ||θ_X - θ_X'|| is compared with each bound at X. Paper (Frobenius), tight (operator
norm) and the authors' published constants hold on every pair; the tight bound halved is
exceeded, so the check can fail."""

from __future__ import annotations

from functools import cache

import numpy as np
import pytest

from dprl.agents.pe.estimators import DPLSW
from dprl.agents.pe.exact import PLANTED, check_bound, dense_features, replacement_pairs, variant_estimators
from dprl.agents.pe.features import feature_matrix, uniform_weights
from dprl.envs.mrp import FirstVisitData

# (features, N states incl. the absorbing last one, batch sizes m)
CHAINS = (("identity", 4, (1, 2)), ("pairs", 5, (1,)), ("dense", 4, (1, 2, 3)))
ALGS = ({"name": "dp_lsw"}, {"name": "dp_lsl", "c": 0.01, "p": 0.5}, {"name": "dp_lsl", "c": 1.0, "p": 0.5},
        {"name": "dp_lsl", "c": 100.0, "p": 0.5})


def _task(feat: str, n: int) -> tuple[np.ndarray, np.ndarray]:
    phi = dense_features(n, 2, n - 1) if feat == "dense" else feature_matrix(feat, n)
    return phi, uniform_weights(n, n - 1)


@cache
def _pairs(n: int, m: int):
    return replacement_pairs(n, n - 1, m)


def _worst(alg: dict, feat: str, n: int, ms: tuple[int, ...]) -> dict[str, float]:
    phi, rho = _task(feat, n)
    out = {}
    for variant, (est, scale) in variant_estimators(alg, phi, rho).items():
        out[variant] = max(check_bound(est, _pairs(n, m), scale).max_ratio for m in ms)
    return out


def test_enumeration_is_every_replacement_pair():
    """(9(2m-1))^n ordered pairs; counts move by at most one per state; both orders present."""
    for n, m in ((3, 1), (4, 2), (3, 3)):
        x, y = _pairs(n, m)
        assert len(x) == (9 * (2 * m - 1)) ** (n - 1)
        assert np.all(np.abs(x.counts - y.counts) <= 1) and np.all(x.counts <= m) and np.all(x.m == m)
        keys = {(tuple(a), tuple(b)) for a, b in zip(x.counts, y.counts)}
        assert all((b, a) in keys for a, b in keys)


@pytest.mark.parametrize("feat, n, ms", CHAINS)
def test_vertices_dominate_sampled_batches_of_real_trajectories(feat, n, ms):
    """The enumeration's maximum is the supremum: random batches of explicit trajectories
    (random visit sets and returns in [0, F_max], one replaced) never exceed it."""
    phi, rho = _task(feat, n)
    rng = np.random.default_rng(7)
    for alg in (ALGS[0], ALGS[2]):
        est = variant_estimators(alg, phi, rho)["tight"][0]
        for m in ms:
            worst = check_bound(est, _pairs(n, m)).max_change
            for _ in range(200):
                visits = rng.uniform(size=(m + 1, n)) < rng.uniform(size=(1, n))
                visits[:, n - 1] = True  # every trajectory ends in the absorbing state
                # returns in [0, F_max] where visited (0 elsewhere: FirstVisitData's convention)
                ret = np.where(visits & (np.arange(n) < n - 1), rng.choice([0.0, 1.0, rng.uniform()], size=(m + 1, n)), 0.0)
                x = FirstVisitData(ret[:m], visits[:m]).stats()
                y = FirstVisitData(ret[1:], visits[1:]).stats()  # trajectory 0 replaced by trajectory m
                change = float(np.linalg.norm(est.fit(x) - est.fit(y)))
                assert change <= worst * (1 + 1e-9)


@pytest.mark.parametrize("feat, n, ms", CHAINS)
@pytest.mark.parametrize("alg", ALGS, ids=lambda a: f"{a['name']}_c{a.get('c', '')}")
def test_every_bound_holds_and_the_halved_one_is_caught(alg, feat, n, ms):
    """paper, tight and as published: true change <= bound on every pair (ratio <= 1). The
    planted tight bound halved is exceeded wherever tight is within a factor 2 of the truth
    (DP-LSW everywhere, DP-LSL at large c: λ dominates, the ||ρ||_2 term is attained)."""
    worst = _worst(alg, feat, n, ms)
    for variant in ("paper", "tight", "as published"):
        assert worst[variant] <= 1 + 1e-9, (variant, worst)
    assert worst["paper"] <= worst["tight"] * (1 + 1e-9)  # Frobenius >= operator
    if alg["name"] == "dp_lsw" or alg["c"] == 100.0:
        assert worst[PLANTED] > 1.5, worst


def test_tight_lsw_is_attained_with_identity_and_pairs():
    """With uniform ρ the operator-norm bound of DP-LSW is exact (every return 0 -> F_max at
    count 1); the paper's Frobenius bound is looser (measured 0.577 = 1/sqrt(3), 0.707 = 1/sqrt(2))."""
    for feat, n in (("identity", 4), ("pairs", 5)):
        w = _worst(ALGS[0], feat, n, (1,))
        assert w["tight"] == pytest.approx(1.0, rel=1e-9)
        assert w["paper"] < 0.75


def test_a_wrong_norm_fails_the_check():
    """A second planted bug: DP-LSW's bound with ||(Γ^{1/2}Φ)||_2 (the matrix, not its
    pseudo-inverse) is far too small and caught."""

    class Wrong(DPLSW):
        def __init__(self, *a, **k):
            super().__init__(*a, **k)
            self.pinv_norm = float(np.linalg.norm(np.sqrt(self.rho)[:, None] * self.phi, 2))

    phi, rho = _task("identity", 4)
    assert check_bound(Wrong(phi, rho, 1.0, 1.0, 0.1), _pairs(4, 1)).max_ratio > 2.0


def test_the_pe_exact_job_writes_the_check_of_every_variant():
    """The job (config's pe_exact) on a small chain: one row per (m, variant), deterministic,
    the same numbers as the check called directly."""
    from dprl.experiments.pe import jobs
    from dprl.runner.job import JobContext, JobSpec

    spec = JobSpec("pe_exact", "pe_exact", {"name": "dp_lsl", "c": 100.0, "p": 0.5}, {"name": "small_chain_dense", "N": 4},
                   None, {"m_max": 2}, 0)
    df = jobs.run_exact(JobContext(spec))
    assert df.equals(jobs.run_exact(JobContext(spec)))
    assert len(df) == 2 * 4 and set(df["variant"]) == {"paper", "tight", "as published", PLANTED}
    worst = _worst({"name": "dp_lsl", "c": 100.0, "p": 0.5}, "dense", 4, (1, 2))
    got = df.groupby("variant")["max_ratio"].max()
    for variant, ratio in worst.items():
        assert got[variant] == pytest.approx(ratio, rel=1e-12)


def _b1_rows(monkeypatch, halve_tight: bool) -> dict[str, dict]:
    """B1 on the real pe_exact job's rows (DP-LSW, identity, m <= 2) and a two-row tight audit
    that passes; with ``halve_tight`` the tight calibration's sensitivity bound is halved."""
    import pandas as pd

    from dprl.analysis.claims import evaluate
    from dprl.analysis.claims.pe import CLAIMS
    from dprl.experiments.pe import jobs
    from dprl.runner.job import JobContext, JobSpec

    if halve_tight:
        bound = DPLSW.sensitivity_bound
        monkeypatch.setattr(DPLSW, "sensitivity_bound",
                            lambda self, stats: bound(self, stats) * (0.5 if self.calibration == "tight" else 1.0))
    spec = JobSpec("pe_exact", "pe_exact", {"name": "dp_lsw"}, {"name": "small_chain", "N": 4}, None, {"m_max": 2}, 0)
    exact = jobs.run_exact(JobContext(spec)).assign(algorithm="dp_lsw", calibration="none")
    audit = pd.DataFrame([
        {"calibration": "tight", "epsilon": 1.0, "delta": 0.1, "algorithm": "dp_lsw", "variant": v, "pair": "count_2_to_1",
         "mechanism": "dp_lsw" if v == "correct" else f"dp_lsw:{v}", "m": 2, "d": 2, "count_x": 2, "count_x_prime": 1,
         "eps_lb": lb, "passed": lb <= 1.0, "eps_exact": 1.0 if v == "correct" else 2.5, "runs": 100000}
        for v, lb in (("correct", 0.3), ("local_sensitivity", 2.0))])
    claim = next(c for c in CLAIMS if c.id == "B1")
    return {r["calibration"]: r for r in evaluate(claim, {"pe_audit": audit, "pe_exact": exact})}


@pytest.mark.parametrize("halve_tight", [False, True])
def test_b1_flips_when_the_tight_bound_is_too_small(halve_tight, monkeypatch):
    """Planted in the estimator the pe_exact job builds: the tight calibration's sensitivity
    bound halved. B1's tight row (audit passing) turns not reproduced on the exact check alone;
    the as-published row is untouched."""
    rows = _b1_rows(monkeypatch, halve_tight)
    assert rows["tight"]["verdict"] == ("not reproduced" if halve_tight else "reproduced"), rows["tight"]["note"]
    assert rows["as published"]["verdict"] == "reproduced"
