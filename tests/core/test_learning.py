"""The shared did-it-learn checks (``analysis/learning.py``) and the burn-in margin's evidence
(``analysis/burn_in.BURN_IN_MARGIN``)."""

from __future__ import annotations

import glob
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from dprl.analysis import learning
from dprl.analysis.burn_in import BURN_IN_MARGIN, burn_in_check, burn_in_margin, margin_evidence
from dprl.analysis.regime import ONSET_DECADES
from dprl.analysis.stats import Estimate, paired_slope_by_seed, verdict_sqrt_rate

ROOT = Path(__file__).resolve().parents[2]


def _seeds(onsets: list[float], predicted: float = 1e4, k_max: float = 1e6, algorithm: str = "pucb") -> pd.DataFrame:
    rows = []
    for seed, onset in enumerate(onsets):
        for k in (k_max / 100, k_max / 10, k_max):
            rows.append({"seed": seed, "episode": k, "algorithm": algorithm, "burn_in_episodes": predicted,
                         "onset_episode": onset, "regret": (k ** (0.95 if seed == 0 else 0.5))})
    return pd.DataFrame(rows)


def test_each_seed_is_judged_in_its_own_regime():
    margin = burn_in_margin("pucb")
    k_max = 10**ONSET_DECADES * 1e4 * margin * 1.01
    g = _seeds([5e5, 1e3, np.nan], k_max=k_max)  # seed 0 late onset: still learning; seed 2 never: did not learn
    states = learning.seed_states(g)
    assert dict(states) == {0: "learning", 1: "reached", 2: "not learned"}
    assert learning.any_not_learned(states)
    assert "[0] still in their own burn-in" in learning.seed_note(states)
    short = learning.seed_states(_seeds([np.nan], k_max=k_max * 0.9))
    assert dict(short) == {0: "learning"}  # stopped before the theory's horizon: not evidence


def test_a_linear_seed_still_in_its_burn_in_does_not_refute_the_rate_but_a_stuck_one_does():
    g = _seeds([5e5, 1e3, 1e3])
    est = paired_slope_by_seed(g, "episode", "regret")
    assert est.unit_ids == (0, 1, 2) and verdict_sqrt_rate(est) == "not reproduced"  # seed 0's 0.95
    judged = learning.judged_seeds(est, learning.seed_states(g))
    assert judged.unit_ids == (1, 2) and judged.units == est.units[1:] and (judged.low, judged.high) == (est.low, est.high)
    assert max(judged.units) < 0.9
    stuck = learning.judged_seeds(est, pd.Series({0: "not learned", 1: "reached", 2: "reached"}))
    assert verdict_sqrt_rate(stuck) == "not reproduced"


def test_uniform_play_is_not_measurably_below_itself_and_a_learner_is():
    final = pd.DataFrame({"seed": [0, 1, 2, 3], "regret": [1000.0, 1001.0, 999.0, 1000.5]})
    uniform = np.full(4, 1000.0)
    assert learning.verdict_below_uniform(learning.share_of_uniform(final, uniform)) == "not reproduced"
    learner = final.assign(regret=[640.0, 600.0, 690.0, 655.0])
    assert learning.verdict_below_uniform(learning.share_of_uniform(learner, uniform)) == "reproduced"
    noisy = final.assign(regret=[500.0, 1400.0, 700.0, 1200.0])
    assert learning.verdict_below_uniform(learning.share_of_uniform(noisy, uniform)) == "inconclusive"
    assert learning.verdict_below_uniform(Estimate.empty()) == "inconclusive"


def test_an_interval_wider_than_its_tolerance_cannot_reproduce():
    from functools import partial

    from dprl.analysis.stats import verdict_near
    rule = learning.verdict_width(partial(verdict_near, target=1.0, tol=0.25), 0.25)
    assert rule(Estimate(5.38, -3.06, 13.8, 4)) == "inconclusive"  # contains 1, says nothing
    assert rule(Estimate(1.0, 0.9, 1.1, 4)) == "reproduced"
    assert rule(Estimate(3.0, 2.0, 4.0, 4)) == "not reproduced"


def test_the_margin_is_the_largest_measured_over_predicted_burn_in_of_the_committed_run():
    """BURN_IN_MARGIN is derived from the committed complete run: each algorithm's largest
    measured/predicted ratio, rounded up to two decimals (a new run that measures a larger one
    fails here until the constant follows, and a margin padded beyond the evidence fails too);
    a plug-in's evidence stays within DEFAULT_MARGIN, the margin it is held to."""
    tables = {Path(p).stem: pd.read_csv(p) for p in glob.glob(str(ROOT / "paper_figures" / "tables" / "*.csv"))}
    ev = margin_evidence(burn_in_check(tables)).set_index("algorithm")
    for alg, margin in BURN_IN_MARGIN.items():
        assert margin == pytest.approx(np.ceil(ev.loc[alg, "largest"] * 100) / 100), alg
    # a plug-in that declares its burn-in has no entry (src/dprl names no plug-in): it is held to
    # DEFAULT_MARGIN, which must cover its own evidence, or a correct run of it could be judged not learned
    from dprl.analysis.burn_in import DEFAULT_MARGIN
    from dprl.experiments.registry import plugins

    installed = set(plugins())
    assert set(ev.index) - installed <= set(BURN_IN_MARGIN)
    for alg in set(ev.index) & installed:
        assert ev.loc[alg, "largest"] <= DEFAULT_MARGIN, alg
