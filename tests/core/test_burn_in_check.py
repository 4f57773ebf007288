"""The burn-in check: predicted burn-in against measured onset, per private setting."""

import numpy as np
import pandas as pd

from dprl.analysis.burn_in import burn_in_check, to_markdown
from dprl.analysis.claims import to_markdown as claims_markdown


def _table(predicted: float, onsets: list[float], eps: float = 1.0, algorithm: str = "pucb") -> pd.DataFrame:
    rows = []
    for seed, onset in enumerate(onsets):
        for episode in (10, 100, 1000):
            rows.append({"experiment": "tabular_regret", "algorithm": algorithm, "env_label": "garnet", "epsilon": eps,
                         "delta": np.nan, "calibration": "tight", "seed": seed, "episode": episode,
                         # the prediction at the job's horizon is what counts (it may grow with it)
                         "burn_in_episodes": predicted if episode == 1000 else predicted / 2, "onset_episode": onset})
    return pd.DataFrame(rows)


def test_ratio_is_median_prediction_over_median_onset_and_classified():
    tables = {"a": pd.concat([_table(300.0, [100.0, 120.0, 140.0]), _table(100.0, [90.0, 110.0], eps=10.0),
                              _table(10.0, [100.0, np.nan, 200.0], eps=0.1),
                              _table(10.0, [100.0, np.nan, np.nan], eps=0.5),  # most seeds: no onset
                              _table(50.0, [np.nan, np.nan], eps=5.0),
                              _table(np.nan, [1.0, 1.0], eps=np.inf, algorithm="ubev")])}  # non-private: left out
    check = burn_in_check(tables).set_index("epsilon")
    assert list(check.index) == [0.1, 0.5, 1.0, 5.0, 10.0]
    assert check.loc[0.5, "agreement"] == "no onset measured"
    assert check.loc[1.0, "ratio"] == 300.0 / 120.0 and check.loc[1.0, "agreement"] == "conservative"
    assert check.loc[10.0, "ratio"] == 1.0 and check.loc[10.0, "agreement"] == "within 2x"
    assert check.loc[0.1, "onsets_measured"] == 2 and check.loc[0.1, "agreement"] == "optimistic"
    assert check.loc[5.0, "agreement"] == "no onset measured"
    text = "\n".join(to_markdown(burn_in_check(tables)))
    assert "Of 5 private settings, 3 measured an onset" in text and "1 predicted it within 2x, 1 predicted" in text


def test_claims_markdown_carries_the_section_only_when_given():
    claims = pd.DataFrame(columns=["claim", "paper", "source", "kind", "statement", "experiment", "metric", "expected",
                                   "calibration", "epsilon", "measured", "ci_low", "ci_high", "verdict", "regime",
                                   "horizon_needed", "note", "figure"])
    assert "Burn-in predictions" not in claims_markdown(claims)
    assert "Burn-in predictions" in claims_markdown(claims, burn_in_check({"a": _table(300.0, [100.0])}))
    assert burn_in_check({"x": pd.DataFrame({"m": [1]})}).empty  # tables without the columns are skipped


def test_every_miss_outside_2x_names_its_cause():
    """A setting outside 2x carries the cause recorded for its algorithm and direction; one
    within 2x carries none; an algorithm without a recorded cause says so rather than
    passing silently."""
    tables = {"a": pd.concat([_table(300.0, [100.0, 120.0]), _table(100.0, [90.0, 110.0], eps=10.0),
                              _table(10.0, [100.0, 120.0], eps=0.1, algorithm="private_linopt_po"),
                              _table(10.0, [100.0, 120.0], eps=0.2, algorithm="my_plugin")])}
    check = burn_in_check(tables).set_index("epsilon")
    assert "uniform play" in check.loc[1.0, "cause"] and check.loc[10.0, "cause"] == ""
    assert "mirror-descent" in check.loc[0.1, "cause"]
    assert check.loc[0.2, "cause"].startswith("not known")
    text = "\n".join(to_markdown(burn_in_check(tables)))
    assert "Why the predictions outside 2x miss:" in text and "- pucb, conservative: T* counts visits" in text


def test_the_section_does_not_depend_on_the_order_the_tables_are_given_in():
    """`dprl claims ... paper_figures/tables/*.csv` (alphabetical) writes the page the workflow
    (config order) writes."""
    a, b = _table(300.0, [100.0, 120.0]), _table(50.0, [40.0, 60.0], algorithm="dp_ucbvi").assign(experiment="beyond_free")
    forward, backward = burn_in_check({"tabular_regret": a, "beyond_free": b}), burn_in_check({"beyond_free": b, "tabular_regret": a})
    pd.testing.assert_frame_equal(forward, backward)
    assert list(forward["experiment"]) == ["beyond_free", "tabular_regret"]
