"""Claims Z2-Z6 compute the verdicts their statements imply on synthetic tables, including
the regime columns, the expected exponent from the σ's in use, and the equivalence tests
with their positive controls."""

import numpy as np
import pandas as pd
import pytest

from dprl.analysis.claims import evaluate
from dprl.analysis.claims.linmix import CLAIMS, Z4_MARGIN, z4, z5, z6
from dprl.analysis.stats import sqrt_sigma_exponent

CLAIM = {c.id: c for c in CLAIMS}
K = 10000


def _table(curves: dict, seeds: int = 8, noise: float = 0.02, extra=None, burn_in=100.0, onset=50.0, need=1000.0) -> pd.DataFrame:
    """curves: (algorithm, calibration, epsilon) -> f(T)."""
    rng = np.random.default_rng(0)
    rows = []
    for (alg, calib, eps), f in curves.items():
        for seed in range(seeds):
            for ep in np.unique(np.geomspace(1, K, 25).astype(int)):
                T = 2 * ep
                rows.append({"algorithm": alg, "alg_label": alg, "calibration": calib, "epsilon": eps, "delta": 1e-5,
                             "privacy_label": f"{calib}{eps}", "env_label": "mixture", "environment": "mixture", "seed": seed,
                             "episode": ep, "T": T, "regret": f(T) * (1 + noise * rng.standard_normal()),
                             "burn_in_episodes": burn_in, "horizon_needed": need, "onset_episode": onset,
                             "sigma_gram": eps ** -0.8 if np.isfinite(eps) else np.nan, **(extra or {})})
    return pd.DataFrame(rows)


def test_z2_sqrt_reproduced_linear_not():
    df = _table({("ucrl_vtr", "none", np.inf): np.sqrt, ("private_linopt_vi", "tight", 1.0): lambda T: 0.5 * T})
    res = {r.calibration: r for r in CLAIM["Z2"].evaluate({"linmix_regret": df})}
    assert {k: r.verdict for k, r in res.items()} == {"none": "reproduced", "tight": "not reproduced"}
    assert res["tight"].regime == "reached"


def test_z2_linear_below_the_burn_in_is_inconclusive_with_the_horizon():
    df = _table({("private_linopt_vi", "tight", 1.0): lambda T: 0.5 * T}, burn_in=5e4, onset=np.nan, need=6e5)
    row = evaluate(CLAIM["Z2"], {"linmix_regret": df})[0]
    assert row["regime"] == "not reached" and row["verdict"] == "inconclusive" and row["horizon_needed"] == 6e5
    # an onset inside the slope window (after K/10) also means the fit saw the burn-in
    late = evaluate(CLAIM["Z2"], {"linmix_regret": _table({("private_linopt_vi", "tight", 1.0): lambda T: 0.5 * T}, onset=3000.0)})[0]
    assert late["regime"] == "not reached" and late["verdict"] == "inconclusive" and late["horizon_needed"] == 30000.0


def test_z2_long_table_rows_are_separate_and_fitted_over_their_own_last_decade():
    """`full`'s linmix_regime_long runs the paper calibration at ε = 1 to a longer K: its
    rows are its own, fitted over its own last decade (a shared decade would fit only the
    long table, a shared group would mix two horizons in one slope)."""
    short = _table({("private_linopt_vi", "paper", 1.0): lambda T: 0.5 * T})  # still linear at K
    long = _table({("private_linopt_vi", "paper", 1.0): np.sqrt})
    long = long.assign(episode=long["episode"] * 100, T=long["T"] * 100, regret=np.sqrt(long["T"] * 100))
    rows = CLAIM["Z2"].evaluate({"linmix_regret": short, "linmix_regime_long": long})
    assert len(rows) == 2
    assert rows[0].verdict == "not reproduced" and "linmix_regime_long" not in rows[0].note
    assert rows[1].verdict == "reproduced" and rows[1].note.startswith("linmix_regime_long: ε=1")
    assert rows[1].measured == pytest.approx(0.5, abs=0.02)


def _cost_table(cost_of_eps, burn_in=100.0, need=1000.0, calibration="tight"):
    curves = {("ucrl_vtr", "none", np.inf): np.sqrt}
    for eps in (10.0, 100.0, 1000.0):
        curves[("private_linopt_vi", calibration, eps)] = lambda T, e=eps: np.sqrt(T) * (1 + cost_of_eps(e))
    return _table(curves, noise=0.001, burn_in=burn_in, need=need)


def test_f3_expected_exponent_comes_from_the_sigmas_in_use():
    """The tight calibration's exponents are this package's finding F3, judged against its
    own σ's (σ ∝ ε^-0.8 in the table: cost ∝ sqrt σ predicts -0.4, not the paper's -0.5)."""
    sig = pd.Series([10.0 ** -0.8, 100.0 ** -0.8], index=[10.0, 100.0])
    assert sqrt_sigma_exponent(sig) == pytest.approx(-0.4)
    good = CLAIM["F3"].evaluate({"linmix_regret": _cost_table(lambda e: 5 * e ** -0.4)})
    assert abs(good[0].measured + 0.4) < 0.05 and good[0].verdict == "reproduced" and good[0].regime == "reached"
    assert "expected -0.400" in good[0].note and "paper's route -0.5" in good[0].note
    assert good[1].verdict == "inconclusive"  # one δ only
    bad = CLAIM["F3"].evaluate({"linmix_regret": _cost_table(lambda e: 5 * e ** -1.0)})
    assert bad[0].verdict == "not reproduced"
    assert CLAIM["Z3"].evaluate({"linmix_regret": _cost_table(lambda e: 5 * e ** -0.4)})[0].verdict == "inconclusive"  # no paper rows


def test_z3_judges_the_paper_calibration_against_the_papers_exponent():
    good = CLAIM["Z3"].evaluate({"linmix_regret": _cost_table(lambda e: 5 * e ** -0.5, calibration="paper")})
    assert good[0].verdict == "reproduced" and "the paper's exponent -0.5" in good[0].note
    wrong = CLAIM["Z3"].evaluate({"linmix_regret": _cost_table(lambda e: 5 * e ** -0.25, calibration="paper")})
    assert wrong[0].verdict == "not reproduced"  # the nearest wrong exponent is rejected
    outside = evaluate(CLAIM["Z3"], {"linmix_regret": _cost_table(lambda e: 5 * e ** -1.0, burn_in=1e6, need=1e7,
                                                                  calibration="paper")})[0]
    assert outside["regime"] == "not reached" and outside["verdict"] == "inconclusive" and outside["horizon_needed"] == 1e7


def test_z3_reads_the_eps10_table_as_rows_of_its_own():
    """linmix_regime_eps10 (the paper calibration's ε grid at a longer K) adds its own ε row,
    labelled with the table and at its smallest ε; it states no δ row (its grid has one δ:
    linmix_regret's states that). A wrong exponent there fails its own row."""
    main = _cost_table(lambda e: 5 * e ** -0.5, calibration="paper")
    eps10 = _cost_table(lambda e: 5 * (10 * e) ** -0.5, calibration="paper")
    eps10["epsilon"] = eps10["epsilon"] / 10  # the grid {1, 10, 100}
    rows = CLAIM["Z3"].evaluate({"linmix_regret": main, "linmix_regime_eps10": eps10})
    assert [r.note.startswith("linmix_regime_eps10: ") for r in rows] == [False, False, True]
    assert rows[2].verdict == "reproduced" and rows[2].epsilon == 1.0 and rows[2].regime == "reached"
    eps10["regret"] = np.where(eps10["calibration"] == "paper", eps10["regret"] ** 1.2, eps10["regret"])
    assert CLAIM["Z3"].evaluate({"linmix_regret": main, "linmix_regime_eps10": eps10})[2].verdict != "reproduced"
    late = _cost_table(lambda e: 5 * e ** -0.5, calibration="paper", burn_in=1e6, need=1e7)
    row = CLAIM["Z3"].evaluate({"linmix_regret": main, "linmix_regime_eps10": late})[2]
    assert row.regime == "not reached" and row.horizon_needed == 1e7
    assert [r.note.startswith("linmix_regime_eps10: ") for r in CLAIM["Z2"].evaluate({"linmix_regret": main, "linmix_regime_eps10": eps10})].count(True) == 4


def _sized(x: str, values, regret_of, seeds: int = 8, noise: float = 0.03, env: str = "spread_mixture", curve=np.sqrt):
    """Checkpointed regret level(seed)·regret_of(x)·curve(k) on instances paired across x."""
    rng = np.random.default_rng(1)
    rows = []
    for seed in range(seeds):
        level = rng.uniform(50, 500)  # instances differ by seed, paired across x
        for v in values:
            jitter = np.exp(noise * rng.standard_normal())
            for ep in np.unique(np.geomspace(1, K, 20).astype(int)):
                rows.append({"algorithm": "private_linopt_vi", "alg_label": "private_linopt_vi", "calibration": "tight",
                             "epsilon": 1000.0, "delta": 1e-5, "privacy_label": "tight1000", "env_label": f"{env}{v}",
                             "environment": env, "seed": seed, "episode": ep, "T": 2 * ep, x: v,
                             "regret": level * regret_of(v) * curve(ep) * jitter,
                             "burn_in_episodes": 100.0, "horizon_needed": 1000.0, "onset_episode": 50.0})
    return pd.DataFrame(rows)


S_GRID = (10, 30, 100, 300)


def test_z4_equivalence_needs_flat_paired_regret_and_a_rejected_control():
    rows = z4({"linmix_states": _sized("S", S_GRID, lambda S: 1.0)})
    assert [r.verdict for r in rows] == ["reproduced"] and "rejected as it must be" in rows[0].note
    assert abs(rows[0].measured) < Z4_MARGIN / 2
    assert z4({"linmix_states": _sized("S", S_GRID, lambda S: S ** 0.5)})[0].verdict == "not reproduced"  # tabular √S
    # regret that hardly grows in k (log): the control at k ∝ S is not rejected, the test has no power
    flat_curve = _sized("S", S_GRID, lambda S: 1.0, curve=lambda k: np.log(np.e + k) ** 0.2)
    row = z4({"linmix_states": flat_curve})[0]
    assert row.verdict == "inconclusive" and "no power" in row.note
    # growth within the margin but not provably inside it: undecided
    assert z4({"linmix_states": _sized("S", S_GRID, lambda S: S ** 0.2, noise=0.4)})[0].verdict == "inconclusive"
    # below the burn-in (predicted past the run's end) the paired instances are flat by construction: no verdict
    burn = _sized("S", S_GRID, lambda S: 1.0).assign(onset_episode=np.nan, burn_in_episodes=1e5, horizon_needed=1e6)
    assert evaluate(CLAIM["Z4"], {"linmix_states": burn})[0]["verdict"] == "inconclusive"
    # past the horizon the theory gives (10·T*·margin) without an onset: did not learn, whatever the fit
    stuck = _sized("S", S_GRID, lambda S: 1.0).assign(onset_episode=np.nan, horizon_needed=1e6)
    assert evaluate(CLAIM["Z4"], {"linmix_states": stuck})[0]["verdict"] == "not reproduced"


def test_z4_lumpable_rows_cannot_reproduce():
    assert [r.verdict for r in z4({"linmix_states": _sized("S", S_GRID, lambda S: 1.0, env="mixture")})] == ["inconclusive"]


A_GRID = (2, 4, 8, 16, 32)


def test_z5_one_sided_equivalence_with_control():
    assert [r.verdict for r in z5({"linmix_actions": _sized("A", A_GRID, lambda A: np.log(A) ** 0.5)})] == ["reproduced"]
    assert z5({"linmix_actions": _sized("A", A_GRID, lambda A: 1.0)})[0].verdict == "reproduced"  # one-sided
    assert z5({"linmix_actions": _sized("A", A_GRID, lambda A: np.log(A) ** 1.5)})[0].verdict == "not reproduced"
    weak = _sized("A", A_GRID, lambda A: np.log(A) ** 0.5, curve=lambda k: np.log(np.e + k) ** 0.2)
    assert z5({"linmix_actions": weak})[0].verdict == "inconclusive"


def test_z6_ldp_larger_and_faster():
    df = _table({("private_linopt_vi", "tight", 1.0): np.sqrt, ("ldp_linopt_vi", "tight", 1.0): lambda T: T ** 0.8})
    assert z6({"linmix_ldp": df})[0].verdict == "reproduced"
    df2 = _table({("private_linopt_vi", "tight", 1.0): lambda T: T ** 0.8, ("ldp_linopt_vi", "tight", 1.0): np.sqrt})
    assert z6({"linmix_ldp": df2})[0].verdict == "not reproduced"


def test_claim_ids():
    assert [c.id for c in CLAIMS] == ["Z1", "Z2", "Z3", "Z4", "Z5", "Z6", "Z7", "Z8", "F3"]
    assert [c.id for c in CLAIMS if c.finding] == ["F3"]
