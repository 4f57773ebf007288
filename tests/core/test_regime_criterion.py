"""The one regime criterion (``analysis/regime.onset_regime``): a rate is inside its regime when
the horizon is a decade past the later of the predicted burn-in and its measured end, and each
paper's claims decide their regime through it."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dprl.analysis.base import NOT_LEARNED, ClaimResult, RegimeCheck, overall_regime
from dprl.analysis.burn_in import burn_in_margin
from dprl.analysis.regime import ONSET_DECADES, onset_regime
from dprl.analysis.stats import Estimate

SPAN = 10**ONSET_DECADES


def test_reached_a_decade_past_the_later_of_prediction_and_measurement():
    assert onset_regime(1e7, 1e5, 5e5) == ("reached", pytest.approx(math.nan, nan_ok=True), 5e5)
    assert onset_regime(1e7, 1e6, 5e5)[0] == "reached"


def test_an_early_measured_end_does_not_excuse_a_short_run():
    reg, need, burn_in = onset_regime(5e6, 1e6, 1e5)  # measured early, predicted late
    assert reg == "not reached" and burn_in == 1e6 and need == pytest.approx(SPAN * 1e6)


def test_an_optimistic_prediction_does_not_excuse_a_late_measured_end():
    reg, need, _ = onset_regime(5e6, 1e5, 1e6)
    assert reg == "not reached" and need == pytest.approx(SPAN * 1e6)


def test_no_measured_end_is_not_reached_whatever_the_prediction():
    reg, need, _ = onset_regime(1e9, 1e3, float("nan"))
    assert reg == "not reached" and need == pytest.approx(SPAN * 1e9)  # the end lies beyond the run


def test_no_measured_end_past_the_theorys_horizon_did_not_learn():
    """No escape: a run a decade past its predicted burn-in times the algorithm's margin whose
    burn-in did not end is evidence against the claim; one that stopped before stays not reached."""
    margin = burn_in_margin("pucb")
    assert onset_regime(SPAN * 1e5 * margin, 1e5, float("nan"), algorithm="pucb")[0] == NOT_LEARNED
    reg, need, _ = onset_regime(SPAN * 1e5 * margin * 0.99, 1e5, float("nan"), algorithm="pucb")
    assert reg == "not reached" and need > SPAN * 1e5 * margin * 0.99
    assert onset_regime(1e9, float("nan"), float("nan"), algorithm="pucb")[0] == "not reached"  # no prediction
    assert onset_regime(1e9, 1e3, float("nan"))[0] == "not reached"  # no algorithm: the rule as before


def test_a_run_that_did_not_learn_refutes_its_row_whatever_the_rule_says():
    check = RegimeCheck(NOT_LEARNED, note="; regime: ...")
    assert check.state == "reached" and check.not_learned
    row = ClaimResult.from_estimate(Estimate(0.5, 0.45, 0.55, 4), verdict="reproduced", check=check, note="slope")
    assert row.verdict == "not reproduced" and "did not learn within the horizon the theory gives" in row.note
    assert row.outside_regime_is_inconclusive().verdict == "not reproduced"
    whole = overall_regime([RegimeCheck("reached"), check, RegimeCheck("not reached", 1e9)])
    assert whole.not_learned and whole.state == "reached"
    assert not overall_regime([RegimeCheck("reached"), RegimeCheck("not reached", 1e9)]).not_learned


def test_the_planned_fixed_point_is_a_floor_on_the_horizon_needed():
    assert onset_regime(1e6, 2e5, 1e5, planned=3e6)[1] == pytest.approx(3e6)
    assert onset_regime(1e6, 2e5, 1e5, planned=1e6)[1] == pytest.approx(SPAN * 2e5)


def test_a_plugin_is_judged_by_its_measured_onset_alone():
    assert onset_regime(1e6, float("nan"), 1e5)[0] == "reached"
    assert onset_regime(1e6, float("nan"), 2e5)[0] == "not reached"


@pytest.mark.parametrize("module", ["tabular", "lq", "linmix", "pe"])
def test_every_paper_decides_its_regime_through_the_criterion(module, monkeypatch):
    """Planting a criterion that never reaches flips every paper's reached regimes: no paper
    keeps a rule of its own."""
    import importlib
    claims = importlib.import_module(f"dprl.analysis.claims.{module}")
    calls = []

    def never(k_max, predicted, onset, planned=float("nan"), algorithm=None):
        calls.append((k_max, predicted, onset))
        return "not reached", 1e99, max(np.nan_to_num(predicted), np.nan_to_num(onset))

    import pandas as pd

    def decide() -> str:
        out = _decide(module, claims, pd)
        return out.state if isinstance(out, RegimeCheck) else out[0]  # a module not yet on RegimeCheck: a tuple

    assert decide() == "reached"  # the frames are a decade past their burn-in
    monkeypatch.setattr(claims, "onset_regime", never)
    assert decide() == "not reached" and calls


def _decide(module, claims, pd):
    if module == "tabular":
        g = pd.DataFrame({"episode": [1e6, 1e7], "seed": [0, 0], "algorithm": ["pucb", "pucb"], "burn_in_episodes": [1e5, 1e5],
                          "onset_episode": [1e5, 1e5], "horizon_needed": [1e6, 1e6]})
        out = claims.regime(g)
    elif module == "lq":
        g = pd.DataFrame({"episode": [1e6, 1e7], "seed": [0, 0], "algorithm": ["private_ofu_rl"] * 2, "burn_in_episodes": [1e5, 1e5],
                          "onset_episode": [1e5, 1e5], "horizon_needed": [1e6, 1e6]})
        out = claims._regime(g, 1e7)
    elif module == "linmix":
        g = pd.DataFrame({"episode": [1e6, 1e7], "seed": [0, 0], "algorithm": ["private_linopt_vi"] * 2, "burn_in_episodes": [1e5, 1e5],
                          "onset_episode": [1e5, 1e5], "horizon_needed": [1e6, 1e6]})
        out = claims.regime(g, 1e7)
    else:
        g = pd.DataFrame({"m": [1e3, 1e6], "seed": [0, 0], "m_star": [1e3, 1e3], "epsilon": [1.0, 1.0],
                          "argmax_k": [0, 0]})
        out = claims.b2_regime(g)
    return out
