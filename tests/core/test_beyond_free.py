"""Claim L3 (Qiao & Wang 2023, DP-UCBVI's privacy for free; ``dprl_beyond.claims``): the
crossover ε_c(T) where the seed-paired privacy cost equals the non-private regret, and the
slope of log ε_c against log T judged against the threshold's T^{-1/2}, on synthetic
``beyond_free`` tables built to a correct Privatizer's consequence and to a broken one's."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest

import dprl.analysis.claims as claims_registry
import dprl_beyond.claims as later
from dprl.config.load import load_config_file

EPS = (1.0, 10.0, 100.0, 300.0, 1000.0, 3000.0)
SEEDS = 4
T_MAX = 2_000_000
CHECKPOINTS = np.unique(np.geomspace(2, T_MAX, 20).astype(int))
GARNET = {"env.S": 3, "env.A": 2, "env.H": 2, "env.branching": 2}


def _table(nonprivate, cost, eps=EPS, seeds: int = SEEDS, spread: float = 0.05) -> pd.DataFrame:
    """A ``beyond_free`` table: UCBVI-Bernstein's regret ``nonprivate(T)`` and DP-UCBVI's
    ``nonprivate(T) + cost(T, ε)``, each seed's curves scaled by log-normal factors of its own
    at each checkpoint (seeds differ, as real seeds do)."""
    rng = np.random.default_rng(7)
    T = CHECKPOINTS.astype(float)
    rows = []
    for seed in range(seeds):
        base = np.exp(spread * rng.standard_normal(T.size)) * nonprivate(T)
        rows += [{"algorithm": "ucbvi_bernstein", "epsilon": np.inf, "seed": seed, "episode": t, "regret": r}
                 for t, r in zip(CHECKPOINTS, base)]
        for e in eps:
            priv = base + np.exp(spread * rng.standard_normal(T.size)) * cost(T, e)
            rows += [{"algorithm": "dp_ucbvi", "epsilon": e, "seed": seed, "episode": t, "regret": r}
                     for t, r in zip(CHECKPOINTS, priv)]
    df = pd.DataFrame(rows).assign(env_label="garnet", environment="garnet", calibration="tight", **GARNET)
    df.loc[df["algorithm"] == "ucbvi_bernstein", "calibration"] = "none"
    return df


def _sqrt_t(T):
    return 5.0 * np.sqrt(T)


def _row(df: pd.DataFrame):
    (row,) = later.FREE_CLAIM.evaluate({later.FREE_TABLE: df})
    return row


def test_crossover_is_the_last_fall_through_one_interpolated_log_log():
    eps = np.array([10.0, 100.0, 1000.0])
    # log-log between (100, 2) and (1000, 0.5): halfway in log ε
    assert later.crossover(eps, np.array([4.0, 2.0, 0.5])) == pytest.approx(100 * 10 ** 0.5)
    # a paired cost below zero next: linear in the ratio
    assert later.crossover(eps, np.array([4.0, 2.0, -2.0])) == pytest.approx(100 * 10 ** 0.25)
    # the last fall: a dip below 1 at a smaller ε does not count
    assert later.crossover(eps, np.array([0.5, 2.0, 0.5])) == pytest.approx(100 * 10 ** 0.5)
    assert np.isnan(later.crossover(eps, np.array([0.9, 0.5, 0.1])))  # below 1 everywhere
    assert np.isnan(later.crossover(eps, np.array([9.0, 5.0, 1.5])))  # still above 1 at the largest ε


def test_a_privatizer_error_growing_like_sqrt_k_flips_l3():
    """The planted bug of L3. A correct Privatizer's error is polylog in K, so the privacy
    cost does not grow with T (∝ 1/ε): against a non-private regret ∝ √T, ε_c(T) ∝ T^{-1/2}
    and the row is reproduced. A Privatizer whose error grows like √K (the local model's E_{ε,β})
    makes the privacy term grow like √T/ε: ε_c stays put, the slope's interval excludes −1/2,
    and the row is not reproduced."""
    good = _row(_table(_sqrt_t, lambda T, e: 7.0e5 / e))
    assert good.verdict == "reproduced", good.note
    assert good.ci_low <= -0.5 <= good.ci_high < 0 and good.algorithm == "dp_ucbvi"
    assert "at 4 of the 4 checkpoints" in good.note and "cost ratio at ε = 10" in good.note
    # ε_c at T = 2e6 is 7e5 / (5 √T) = 99; the printed ε* there is 3^1.5 2^0.5 2² / √(2·2e6)
    star = later.printed_threshold(3, 2, 2, T_MAX)
    assert star == pytest.approx(3 ** 1.5 * 2 ** 0.5 * 4 / np.sqrt(4e6))
    found = re.search(r"measured ε_c at T: ([0-9.e+]+) against the printed ε\* = .* = ([0-9.e+-]+) \(ratio ([0-9.e+]+)\)",
                      good.note)
    assert float(found[1]) == pytest.approx(99.0, rel=0.1) and float(found[2]) == pytest.approx(star, rel=1e-2)
    assert float(found[3]) == pytest.approx(float(found[1]) / star, rel=1e-2)

    bad = _row(_table(_sqrt_t, lambda T, e: 1500.0 * np.sqrt(T) / e))
    assert bad.verdict == "not reproduced", bad.note
    assert bad.ci_low > -0.1  # far from -1/2: ε_c stays put
    assert abs(bad.measured) < 0.1


def test_a_nonprivate_regret_below_sqrt_t_leaves_the_threshold_unjudged():
    """On a gapped instance past its burn-in the non-private regret grows like log T, and the
    privacy cost with it (measured on garnet: the cost ratio at each ε flat over the last
    decade): ε_c does not fall like T^{-1/2}, but the threshold's T^{-1/2} presumes the √T term
    is what the non-private learner pays. The row is inconclusive, with the rule's verdict."""
    def log_t(T):
        return 600.0 * np.log(T)

    row = _row(_table(log_t, lambda T, e: 300.0 * log_t(T) / e))  # ε_c = 300 at every T
    assert row.verdict == "inconclusive"
    assert "does not grow like √T here" in row.note and "the rule alone: not reproduced" in row.note


def test_fewer_than_three_checkpoints_with_a_crossover_is_inconclusive():
    # ε_c = 1.2e7 / (5 √T) is inside the sweep (below 3000) only at T >= 6.4e5: at the last two of
    # the four checkpoints of the fit range; the others are left out and said so
    row = _row(_table(_sqrt_t, lambda T, e: 1.2e7 / e))
    assert row.verdict == "inconclusive" and "fewer than 3 checkpoints with a crossover" in row.note
    assert "no crossing inside the sweep at T =" in row.note


def test_a_run_without_dp_ucbvi_is_one_inconclusive_row():
    df = _table(_sqrt_t, lambda T, e: 7.0e5 / e)
    row = _row(df[df["algorithm"] != "dp_ucbvi"])
    assert row.verdict == "inconclusive" and "no dp_ucbvi run" in row.note


def test_l3_is_declared_and_beyond_free_runs_its_sweep():
    """L3 joins through dprl.claims beside L1 and L2; the config's beyond_free experiment is
    the tabular_regret-kind sweep it reads: DP-UCBVI and UCBVI-Bernstein on garnet, at least
    three ε in every preset."""
    (l3,) = (c for c in claims_registry.all_claims() if c.id == "L3")
    assert l3.beyond and l3.reads == ("beyond_free",) and l3.planted_bugs
    for preset in ("smoke", "default", "full"):
        cfg = load_config_file("config.yaml", preset)
        exp = cfg.experiments["beyond_free"]
        specs = [j.spec for j in exp.jobs]
        assert exp.kind.name == "tabular_regret" and {s.environment["name"] for s in specs} == {"garnet"}
        assert {s.algorithm["name"] for s in specs} == {"dp_ucbvi", "ucbvi_bernstein"}
        assert len({s.privacy.epsilon for s in specs if s.privacy}) >= 3
