"""The privacy levels at which each regime-gated claim was measured inside its regime."""

import numpy as np
import pandas as pd

from dprl.analysis.claims import to_markdown as claims_markdown
from dprl.analysis.privacy_levels import headline, privacy_levels


def _row(claim: str, eps: float, regime: str, verdict: str = "reproduced", need: float = np.nan,
         source: str = "paper") -> dict:
    return {"claim": claim, "paper": "lq", "source": source, "kind": "rate on a hard family", "statement": "s",
            "experiment": "e", "metric": "m", "expected": "x", "calibration": "tight", "epsilon": eps, "measured": 0.5,
            "ci_low": 0.4, "ci_high": 0.6, "verdict": verdict, "regime": regime, "horizon_needed": need, "note": "",
            "figure": ""}


def _claims() -> pd.DataFrame:
    return pd.DataFrame([
        _row("C2", np.nan, "reached"),  # non-private: not a privacy level
        _row("C2", 10.0, "reached"), _row("C2", 1000.0, "reached"),
        _row("C2", 1.0, "not reached", "inconclusive", 6e7), _row("C2", 0.1, "not reached", "inconclusive", 9e8),
        _row("C3", 1000.0, "reached", "not reproduced"), _row("C3", 1.0, "not reached", "inconclusive", 4e8),
        _row("C4", 1.0, "n/a"),  # not gated by a regime: left out
        _row("F2", 1.0, "reached", source="package finding"),  # a finding: never listed
    ])


def test_smallest_level_inside_and_the_cheapest_horizon_outside():
    lv = privacy_levels(_claims()).set_index("claim")
    assert list(lv.index) == ["C2", "C3"]
    assert lv.loc["C2", "smallest_eps_reached"] == 10.0 and bool(lv.loc["C2", "meaningful"])
    assert lv.loc["C2", "private_rows"] == 4 and lv.loc["C2", "verdicts_there"] == "1 reproduced"
    # of the ε <= 10 rows still in their burn-in, the cheapest: ε = 1 at 6e7 (not ε = 0.1 at 9e8)
    assert lv.loc["C2", "eps_not_reached"] == 1.0 and lv.loc["C2", "horizon_needed"] == 6e7
    assert lv.loc["C3", "smallest_eps_reached"] == 1000.0 and not bool(lv.loc["C3", "meaningful"])
    text = headline(privacy_levels(_claims()))
    assert "1 of the 2 claims" in text and "C2 from ε = 10" in text
    assert "C3 (inside from ε = 1000; at ε = 1 needs a horizon of 4e+08)" in text


def test_a_row_that_leaves_its_regime_flips_the_claim_to_not_meaningful():
    """Planted: the ε = 10 row of C2 is measured below its burn-in (as at K = 8000); C2 is then
    inside its regime from ε = 1000 only, and the headline says so."""
    claims = _claims()
    claims.loc[(claims["claim"] == "C2") & (claims["epsilon"] == 10.0), ["regime", "verdict", "horizon_needed"]] = [
        "not reached", "inconclusive", 9e6]
    lv = privacy_levels(claims).set_index("claim")
    assert lv.loc["C2", "smallest_eps_reached"] == 1000.0 and not bool(lv.loc["C2", "meaningful"])
    assert lv.loc["C2", "horizon_needed"] == 9e6
    assert "0 of the 2 claims" in headline(privacy_levels(claims))


def test_claims_markdown_carries_the_section():
    text = claims_markdown(_claims())
    assert "## Privacy levels inside the regime" in text
    assert "| **C3** | lq | 2 | 1000 | 1 not reproduced | **no** | 1 | 4e+08 |" in text
