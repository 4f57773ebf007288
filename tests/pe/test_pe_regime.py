"""Regime boundaries of DP-LSW / DP-LSL (agents/pe/regime.py) and the recorded maximiser of
DP-LSW's smooth bound."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from dprl.agents.pe.bounds import lsw_argmax_k, lsw_psi, lsw_u
from dprl.agents.pe.features import feature_matrix, uniform_weights
from dprl.agents.pe.regime import lsl_noise_floor, lsw_regime, visit_probabilities
from dprl.envs.mrp import chain_mrp
from dprl.experiments.pe import jobs
from dprl.runner.job import JobContext

sys.path.insert(0, str(Path(__file__).parent))
from test_pe_jobs import spec  # noqa: E402

MRP = chain_mrp(40, 0.5, 0.99, 200)
RHO = uniform_weights(40, 39)


def test_visit_probabilities_match_the_chain_and_sampling():
    q = visit_probabilities(MRP)
    # start uniform on 0..38, moves only right: s is visited iff the start is <= s (200 steps suffice)
    np.testing.assert_allclose(q[:39], np.arange(1, 40) / 39, atol=1e-9)
    assert q[39] == 0.0
    data = MRP.sample_first_visit(4000, np.random.default_rng(0))
    np.testing.assert_allclose(data.visited.mean(axis=0)[:39], q[:39], atol=0.03)
    short = chain_mrp(40, 0.5, 0.99, 5)  # cut trajectories: far states are reached less often
    qs = visit_probabilities(short)
    assert qs[38] < 0.2 and qs[0] == pytest.approx(1 / 39)


def test_argmax_k_is_the_brute_force_maximiser():
    rng = np.random.default_rng(3)
    rho = rng.random(6)
    for b in (1e-3, 0.05, 0.7):
        counts = rng.integers(0, 60, size=(20, 6)).astype(float)
        k_star = lsw_argmax_k(counts, rho, b)
        ks = np.arange(0, 61, dtype=float)
        score = np.log(lsw_u(counts, rho, np.broadcast_to(ks, (20, ks.size)))) - b * ks
        np.testing.assert_array_equal(k_star, ks[np.argmax(score, axis=1)])
        # and it is where lsw_psi's maximum is attained
        at = np.log(lsw_u(counts, rho, k_star[:, None]))[:, 0] - b * k_star
        np.testing.assert_allclose(np.exp(at), lsw_psi(counts, rho, b), rtol=1e-12)


@pytest.mark.parametrize("feat", ["identity", "pairs"])
def test_lsw_regime_boundaries_hold_for_the_expected_noise(feat):
    """The documented regimes of σ_X ∝ sqrt(Ψ) on expected counts q_s m: flat below 1/b,
    slope −1/2 in [1/b, 1/(b q_min)], slope −1 beyond m* (where the maximiser is k = 0)."""
    phi = feature_matrix(feat, 40)
    q = visit_probabilities(MRP)
    for eps in (1.0, 10.0):
        r = lsw_regime(eps, 0.1, phi, RHO, q)
        d = phi.shape[1]
        assert r.b == pytest.approx(eps / (4 * (d + np.log(20)))) and r.m_flat == pytest.approx(1 / r.b)
        assert r.m_half == pytest.approx(39 / r.b)
        assert r.m_flat < r.m_half < r.m_star < np.inf

        def slope(lo: float, hi: float, b: float = r.b) -> float:
            ms = np.geomspace(lo, hi, 20)
            sig = np.sqrt(lsw_psi(np.outer(ms, q), RHO, b))
            return float(np.polyfit(np.log(ms), np.log(sig), 1)[0])

        assert abs(slope(r.m_flat / 1000, r.m_flat / 100)) < 0.02
        assert slope(3 * r.m_flat, r.m_half / 3) == pytest.approx(-0.5, abs=0.12)
        assert slope(r.m_star, 10 * r.m_star) == pytest.approx(-1.0, abs=1e-6)
        assert lsw_argmax_k(np.outer([r.m_star * 1.01], q), RHO, r.b)[0] == 0
        assert lsw_argmax_k(np.outer([r.m_star * 0.9], q), RHO, r.b)[0] > 0
        assert list(r.regime_of([r.m_flat / 2, r.m_flat * 2, r.m_half * 2, r.m_star * 2])) == [
            "flat", "-1/2", "collapse", "1/m"]


def test_m_star_is_set_by_eps_times_m():
    """m* falls about like 1/ε (ε·m* within a decade from ε = 0.1 to 100, matching the
    10⁵–1.5·10⁶ at ε ∈ {0.1, 1})."""
    phi = feature_matrix("identity", 40)
    q = visit_probabilities(MRP)
    regs = [lsw_regime(e, 0.1, phi, RHO, q) for e in (0.1, 1.0, 10.0, 100.0)]
    m_star = np.array([r.m_star for r in regs])
    eps_m = np.array([r.eps_m_star for r in regs])
    assert np.all(np.diff(m_star) < 0) and eps_m.max() / eps_m.min() < 10
    assert 1e5 <= m_star[1] <= 1.5e5 and 1e6 <= m_star[0] <= 1.5e6


def test_noise_floor_matches_the_large_lambda_release():
    """At the floor, strongly regularised DP-LSL's expected ||θ|| equals its noise norm σ sqrt(d)."""
    from dprl.agents.pe.estimators import DPLSL
    from dprl.envs.mrp import BatchStats

    phi = feature_matrix("identity", 40)
    q = visit_probabilities(MRP)
    values = MRP.true_values()
    floor = lsl_noise_floor(0.1, phi, RHO, q, values, MRP.f_max)
    eps, m = 10.0, floor / 10.0
    est = DPLSL(phi, RHO, 1e12, 0.0, MRP.f_max, eps, 0.1)
    counts = (q * m)[None]
    stats = BatchStats.from_sums(np.array([int(round(m))]), np.round(counts).astype(np.int64),
                                 np.round(counts) * values)
    theta = est.fit(stats)[0]
    noise = est.noise(stats).sigma[0] * np.sqrt(phi.shape[1])
    assert np.linalg.norm(theta) / noise == pytest.approx(1.0, rel=0.02)
    with pytest.raises(ValueError, match="visit probability"):
        lsw_regime(1.0, 0.1, phi, RHO, np.zeros(40))


def test_batch_job_records_the_maximiser_and_the_regime():
    s = spec("pe_batch", "dp_lsw", "chain", {"epsilon": 30.0, "delta": 0.1, "calibration": "paper"},
             settings={"m_max": 3000, "points_per_decade": 2, "features": "identity"})
    df = jobs.run_batch(JobContext(s))
    ctx = JobContext(s)
    stats = MRP.sample_prefix_stats(df["m"].to_numpy(), ctx.env_rng)  # the job's own batches
    b = 30.0 / (4 * (40 + np.log(20)))
    np.testing.assert_array_equal(df["argmax_k"].to_numpy(), lsw_argmax_k(stats.counts, RHO, b))
    assert (df["argmax_k"].iloc[:-1] > 0).all() and df["argmax_k"].iloc[-1] == 0  # m* ≈ 1600 at ε = 30
    reg = lsw_regime(30.0, 0.1, feature_matrix("identity", 40), RHO, visit_probabilities(MRP))
    assert df["m_star"].iloc[0] == pytest.approx(reg.m_star) and df["m_flat"].iloc[0] == pytest.approx(reg.m_flat)
    lsw = jobs.run_batch(JobContext(spec("pe_batch", "lsw", "chain", None, settings={"m_max": 100})))
    assert lsw["argmax_k"].isna().all() and lsw["m_star"].isna().all()


def test_regime_figure_draws_from_job_tables(tmp_path):
    """The pe_regime figure from real (small) job tables, with and without the regime columns."""
    from dprl.analysis.figures.catalog import FIGURES

    frames = []
    for alg, priv in (("dp_lsw", 1.0), ("dp_lsw", 100.0), ("dp_lsl", 100.0)):
        s = spec("pe_batch", alg, "chain", {"epsilon": priv, "delta": 0.1, "calibration": "paper"},
                 settings={"m_max": 300, "points_per_decade": 2})
        frames.append(jobs.run_batch(JobContext(s)).assign(algorithm=alg, epsilon=priv, delta=0.1, seed=0))
    df = pd.concat(frames, ignore_index=True)
    fig = FIGURES["pe_regime"]
    fig.make({"pe_batch": df}, tmp_path / "a")
    fig.make({"pe_batch": df.drop(columns=["m_star", "m_flat", "m_half", "eps_m_floor"])}, tmp_path / "b")
    assert all((tmp_path / f"{s}.{x}").stat().st_size > 0 for s in "ab" for x in ("pdf", "png"))
