"""Shared claim statistics: group slopes and the ±0.1 rule for fitted rates."""

import numpy as np

from dprl.analysis.stats import Estimate, group_slope, verdict_near


def test_group_slope_recovers_a_power_law():
    rng = np.random.default_rng(0)
    xs = np.array([1.0, 2.0, 4.0, 8.0])
    groups = [x**-0.5 * (1 + 0.01 * rng.standard_normal(50)) for x in xs]
    est = group_slope(np.log(xs), groups)
    assert abs(est.value + 0.5) < 0.01 and est.low <= -0.5 <= est.high


def test_verdict_near():
    assert verdict_near(Estimate(-0.39, -0.49, -0.29, 8), -0.5) == "reproduced"
    assert verdict_near(Estimate(0.0, -0.1, 0.1, 8), -0.5) == "not reproduced"
    assert verdict_near(Estimate(0.0, np.nan, np.nan, 8), -0.5) == "inconclusive"
    assert verdict_near(Estimate(0.0, -2.0, 2.0, 8), -0.5, width_limit=2.0) == "inconclusive"


def test_rate_measured_outside_its_regime_is_inconclusive_never_not_reproduced():
    import numpy as np

    from dprl.analysis.base import Claim, ClaimResult
    from dprl.analysis.claims import evaluate

    results = [
        ClaimResult(0.9, 0.8, 1.0, "not reproduced", "tight", "slope", regime="not reached", horizon_needed=3e7),
        ClaimResult(0.9, 0.8, 1.0, "not reproduced", "tight", "slope", regime="reached"),
        ClaimResult(0.5, 0.4, 0.6, "reproduced", "tight", "slope", regime="not reached", horizon_needed=3e7),
    ]
    claim = Claim("X1", "p", "s", ("e",), "m", "<= 0.6", lambda tables: results)
    rows = evaluate(claim, {"e": __import__("pandas").DataFrame({"a": [1]})})
    assert [r["verdict"] for r in rows] == ["inconclusive", "not reproduced", "reproduced"]
    assert "needs about 3e+07" in rows[0]["note"] and rows[0]["horizon_needed"] == 3e7
    assert rows[1]["regime"] == "reached" and np.isnan(rows[1]["horizon_needed"])
