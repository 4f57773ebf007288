"""Claim L3 (Qiao & Wang 2023, DP-UCBVI's privacy for free; ``dprl_beyond.claims``): the
crossover ε_c(T) where the seed-paired privacy cost equals the non-private regret, and the
slope of log ε_c against log T judged against the threshold's T^{-1/2}, on synthetic
``beyond_free_hard`` tables (the Figure 1 family hard at T, one job per T) built to a correct
Privatizer's consequence and to broken ones': a cost that does not fall with T, a baseline
that does not learn, runs outside their regime; and garnet's ``beyond_free`` reported beside."""

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
HORIZONS = np.geomspace(2e5, T_MAX, 5).astype(int)  # the family's T: one job per T, all in the last decade
CHECKPOINTS = np.unique(np.geomspace(2, T_MAX, 20).astype(int))
GARNET = {"env.S": 3, "env.A": 2, "env.H": 2, "env.branching": 2, "S": 3, "A": 2, "H": 2}
FAMILY = {"env.n": 2, "env.m": 1, "env.H": 2, "env.gap_scale": 20.0, "S": 4, "A": 2, "H": 2}
# UCBVI-Bernstein's burn-in on the family (measured: T* 1.2e4, end of its clamp 8e3-9e3; the
# fixed point 10·T* 1.1e5): every T of HORIZONS is a decade past it
NONPRIVATE_BURN_IN = 1.2e4


def _private_burn_in(eps: float) -> float:
    """DP-UCBVI's predicted burn-in at ``eps``: the non-private one plus a privacy part ∝ 1/ε
    (its T* is E-driven: 4.7e4 at ε = 100 measured, here 2.2e4, a decade below every T the
    crossovers below fall at)."""
    return NONPRIVATE_BURN_IN + 1.0e6 / eps


def _regime(burn_in: float, learned: bool = True) -> dict:
    """A job's regime columns: predicted T*, its fixed point 10·T*, the measured end of its
    clamp (NaN: never ended)."""
    return {"burn_in_episodes": burn_in, "horizon_needed": 10 * burn_in,
            "onset_episode": 0.8 * burn_in if learned else np.nan}


def _rows(algorithm: str, eps: float, seed: int, xs, regrets, label, regime: dict) -> list[dict]:
    return [{"algorithm": algorithm, "alg_label": algorithm, "epsilon": eps, "seed": seed, "episode": x,
             "regret": r, "env_label": label(x), "privacy_label": "nonprivate" if eps == np.inf else f"eps{eps:g}_tight",
             **regime} for x, r in zip(xs, regrets)]


def _curves(nonprivate, cost, eps, seeds, spread, xs, label, np_burn_in, np_learned, dp_burn_in, dp_learned=True):
    """UCBVI-Bernstein's regret ``nonprivate(x)`` and DP-UCBVI's ``nonprivate(x) + cost(x, ε)``
    at horizons ``xs``, each seed's values scaled by log-normal factors of its own (seeds
    differ, as real seeds do)."""
    rng = np.random.default_rng(7)
    x = np.asarray(xs, float)
    rows = []
    for seed in range(seeds):
        base = np.exp(spread * rng.standard_normal(x.size)) * nonprivate(x)
        rows += _rows("ucbvi_bernstein", np.inf, seed, xs, base, label, _regime(np_burn_in, np_learned))
        for e in eps:
            priv = base + np.exp(spread * rng.standard_normal(x.size)) * cost(x, e)
            rows += _rows("dp_ucbvi", e, seed, xs, priv, label, _regime(dp_burn_in(e), dp_learned))
    return pd.DataFrame(rows)


def _family(nonprivate, cost, eps=EPS, seeds: int = SEEDS, spread: float = 0.05, np_burn_in: float = NONPRIVATE_BURN_IN,
            np_learned: bool = True, dp_burn_in=_private_burn_in, dp_learned: bool = True) -> pd.DataFrame:
    """A ``beyond_free_hard`` table: one job per T of :data:`HORIZONS` (its last checkpoint at
    T), the same family (n = 2, m = 1, H = 2, gap scale 20) at every T."""
    df = _curves(nonprivate, cost, eps, seeds, spread, HORIZONS, lambda t: f"lowerbound_horizon_T{t}_gap_scale20",
                 np_burn_in, np_learned, dp_burn_in, dp_learned)
    df = df.assign(T=df["episode"], **{"env.T": df["episode"]}, environment="lowerbound_horizon", calibration="tight",
                   **FAMILY)
    df.loc[df["algorithm"] == "ucbvi_bernstein", "calibration"] = "none"
    return df


def _garnet(nonprivate, cost) -> pd.DataFrame:
    """A ``beyond_free`` table: one run per (algorithm, ε, seed) on garnet, its checkpoints."""
    df = _curves(nonprivate, cost, EPS, SEEDS, 0.05, CHECKPOINTS, lambda t: "garnet", 100.0, True, lambda e: 100.0)
    df = df.assign(environment="garnet", calibration="tight", **GARNET)
    df.loc[df["algorithm"] == "ucbvi_bernstein", "calibration"] = "none"
    return df


def _sqrt_t(T):
    return 5.0 * np.sqrt(T)


def _row(df: pd.DataFrame, garnet: pd.DataFrame | None = None):
    tables = {later.FREE_HARD_TABLE: df} | ({later.FREE_TABLE: garnet} if garnet is not None else {})
    (row,) = later.FREE_CLAIM.evaluate(tables)
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
    and the row is reproduced, inside the regime. A Privatizer whose error grows like √K (the
    local model's E_{ε,β}) makes the privacy term grow like √T/ε: ε_c stays put (a DP-UCBVI
    whose cost does not fall with T), the slope's interval excludes −1/2, and the row is not
    reproduced."""
    good = _row(_family(_sqrt_t, lambda T, e: 7.0e5 / e))
    assert good.verdict == "reproduced" and good.regime == "reached", good.note
    assert good.ci_low <= -0.5 <= good.ci_high < 0 and good.algorithm == "dp_ucbvi"
    assert "at 5 of the 5 horizons" in good.note and "cost ratio at T by ε: 1: " in good.note
    # ε_c at T = 2e6 is 7e5 / (5 √T) = 99; the printed ε* there is 4^1.5 2^0.5 2² / √(2·2e6)
    star = later.printed_threshold(4, 2, 2, T_MAX)
    assert star == pytest.approx(4 ** 1.5 * 2 ** 0.5 * 4 / np.sqrt(4e6))
    found = re.search(r"measured ε_c at T: ([0-9.e+]+) against the printed ε\* = .* = ([0-9.e+-]+) \(ratio ([0-9.e+]+)\)",
                      good.note)
    assert float(found[1]) == pytest.approx(99.0, rel=0.1) and float(found[2]) == pytest.approx(star, rel=1e-2)
    assert float(found[3]) == pytest.approx(float(found[1]) / star, rel=1e-2)
    assert "lowerbound_horizon n=2 m=1 H=2 gap scale 20" in good.note

    bad = _row(_family(_sqrt_t, lambda T, e: 1500.0 * np.sqrt(T) / e))  # ε_c = 300 at every T
    assert bad.verdict == "not reproduced" and bad.regime == "reached", bad.note
    assert bad.ci_low > -0.1  # far from -1/2: ε_c stays put
    assert abs(bad.measured) < 0.1


def test_a_baseline_that_does_not_learn_is_never_reproduced():
    """A non-private baseline whose regret grows like T (the cost ∝ 1/ε crosses it at an ε_c
    ∝ 1/T): its slope lies above the √T band, so the threshold's T^{-1/2} is not predicted and
    the row is inconclusive, with the rule's verdict. One that never ends its clamp, past the
    theory's horizon (10·T*·margin) at the T of the fit: not reproduced. One at uniform play
    (on the family no policy loses more): DP-UCBVI's paired cost is at most zero against it,
    nothing crosses, inconclusive."""
    linear = _row(_family(lambda T: 0.02 * T, lambda T, e: 2.0e6 / e))
    assert linear.verdict == "inconclusive" and linear.regime == "reached", linear.note
    assert "does not grow like √T here" in linear.note and "the rule alone: not reproduced" in linear.note

    stuck = _row(_family(_sqrt_t, lambda T, e: 7.0e5 / e, np_learned=False))
    assert stuck.verdict == "not reproduced", stuck.note
    assert "did not end its clamp" in stuck.note

    uniform = _row(_family(lambda T: 12.0 * np.sqrt(T), lambda T, e: -0.05 * np.sqrt(T)))
    assert uniform.verdict == "inconclusive" and "fewer than 3 horizons with a crossover" in uniform.note


def test_a_dp_ucbvi_that_does_not_learn_is_not_reproduced():
    """DP-UCBVI planted as a non-learner (its regret at uniform play's, 12√T on this family,
    its clamp never ended): its cost stays above the non-private regret at every ε, nothing
    crosses, and the row must not escape to "fewer than 3 horizons": not reproduced, naming
    the T past the theory's horizon. The same table with DP-UCBVI's clamp ended (a learner
    whose privacy is never free inside the sweep) stays inconclusive."""
    uniform = lambda T, e: 12.0 * np.sqrt(T) - _sqrt_t(T)  # noqa: E731
    stuck = _row(_family(_sqrt_t, uniform, dp_learned=False))
    assert stuck.verdict == "not reproduced" and stuck.regime == "reached", stuck.note
    assert "never ended its clamp at T = 6.32e+05, 1.12e+06, 2e+06" in stuck.note  # 10·T*·margin = 3.8e5
    slow = _row(_family(_sqrt_t, uniform))
    assert slow.verdict == "inconclusive" and "fewer than 3 horizons with a crossover" in slow.note, slow.note


def test_runs_before_their_burn_in_are_inconclusive_with_the_horizon_they_need():
    """The regime gate: DP-UCBVI's predicted burn-in at ε_c (interpolated between the ε that
    bracket the crossover) must lie a decade before each T; a sweep whose every T is inside
    its burn-in gives the rule's verdict as "would be" and the horizon needed."""
    row = _row(_family(_sqrt_t, lambda T, e: 7.0e5 / e, dp_burn_in=lambda e: 1.0e8 / e))
    assert row.verdict == "inconclusive" and row.regime == "not reached", row.note
    # ε_c at T = 2e6 is 99: T* = 1e8 / 99 = 1e6, needing 1e7 (the largest over the fit's T: ε_c falls with T)
    assert row.horizon_needed == pytest.approx(10 * 1.0e8 / (7.0e5 / (5 * np.sqrt(2e6))), rel=0.1)
    assert "would be reproduced" in row.note and "outside it at T = 2e+05" in row.note

    base = _row(_family(_sqrt_t, lambda T, e: 7.0e5 / e, np_burn_in=1.0e5))  # baseline's T* a decade before 1e6 only
    assert base.verdict == "inconclusive" and base.regime == "not reached", base.note


def test_a_nonprivate_regret_below_sqrt_t_leaves_the_threshold_unjudged():
    """On a gapped instance past its burn-in the non-private regret grows like log T, and the
    privacy cost with it (measured on garnet: the cost ratio at each ε flat over the last
    decade): ε_c does not fall like T^{-1/2}, but the threshold's T^{-1/2} presumes the √T term
    is what the non-private learner pays. The row is inconclusive, with the rule's verdict."""
    def log_t(T):
        return 600.0 * np.log(T)

    row = _row(_family(log_t, lambda T, e: 300.0 * log_t(T) / e))  # ε_c = 300 at every T
    assert row.verdict == "inconclusive"
    assert "does not grow like √T here" in row.note and "the rule alone: not reproduced" in row.note


def test_garnet_is_reported_beside_the_family_and_never_decides():
    """``beyond_free`` (garnet, its non-private regret ∝ log T: the committed run's slope 0.10)
    is measured by the same rule and reported in the family's row, outside the gate; the
    family's verdict stands."""
    def log_t(T):
        return 600.0 * np.log(T)

    garnet = _garnet(log_t, lambda T, e: 300.0 * log_t(T) / e)
    row = _row(_family(_sqrt_t, lambda T, e: 7.0e5 / e), garnet)
    assert row.verdict == "reproduced", row.note
    detail = row.note.split("also measured, outside the gate: ", 1)[1]
    assert detail.startswith("garnet (beyond_free") and "inconclusive" in detail
    assert "outside the √T band: the threshold is not predicted there" in detail


def test_fewer_than_three_horizons_with_a_crossover_is_inconclusive():
    # ε_c = 1.7e7 / (5 √T) is inside the sweep (below 3000) only at T >= 1.3e6: at the last of
    # the five T; the others are left out and said so
    row = _row(_family(_sqrt_t, lambda T, e: 1.7e7 / e))
    assert row.verdict == "inconclusive" and "fewer than 3 horizons with a crossover" in row.note
    assert "no crossing inside the sweep at T =" in row.note


def test_a_run_without_dp_ucbvi_is_one_inconclusive_row():
    df = _family(_sqrt_t, lambda T, e: 7.0e5 / e)
    row = _row(df[df["algorithm"] != "dp_ucbvi"])
    assert row.verdict == "inconclusive" and "no dp_ucbvi run" in row.note


def test_l3_is_declared_and_its_experiments_run_its_sweeps():
    """L3 joins through dprl.claims beside L1 and L2; the config's beyond_free_hard is the
    tabular_hard-kind sweep it decides on (DP-UCBVI and UCBVI-Bernstein on one Figure 1 family,
    at least three ε and three T in the last decade in default and full, the same T for every
    algorithm), beyond_free the garnet sweep reported beside it."""
    (l3,) = (c for c in claims_registry.all_claims() if c.id == "L3")
    assert l3.beyond and l3.reads == ("beyond_free_hard",) and l3.optional == ("beyond_free",) and l3.planted_bugs
    for preset in ("smoke", "default", "full"):
        cfg = load_config_file("config.yaml", preset)
        specs = [j.spec for j in cfg.experiments["beyond_free_hard"].jobs]
        assert cfg.experiments["beyond_free_hard"].kind.name == "tabular_hard"
        assert {s.environment["name"] for s in specs} == {"lowerbound_horizon"}
        assert {s.algorithm["name"] for s in specs} == {"dp_ucbvi", "ucbvi_bernstein"}
        Ts = {a: sorted({s.environment["T"] for s in specs if s.algorithm["name"] == a}) for a in ("dp_ucbvi", "ucbvi_bernstein")}
        assert Ts["dp_ucbvi"] == Ts["ucbvi_bernstein"]
        if preset != "smoke":
            assert len({s.privacy.epsilon for s in specs if s.privacy}) >= 3
            assert sum(t >= max(Ts["dp_ucbvi"]) / 10 for t in Ts["dp_ucbvi"]) >= later.FREE_MIN_T
        specs = [j.spec for j in cfg.experiments["beyond_free"].jobs]
        assert cfg.experiments["beyond_free"].kind.name == "tabular_regret"
        assert {s.environment["name"] for s in specs} == {"garnet"}
