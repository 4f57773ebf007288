"""Shared row selections of the claims and figures (``dprl.analysis.selection``)."""

import numpy as np
import pandas as pd
import pytest

from dprl.analysis.selection import final_rows, paired_cost


def _curves() -> pd.DataFrame:
    rows = []
    for alg in ("private", "base"):
        for seed in (0, 1):
            last = 100 if seed == 0 else 50  # jobs may end at different horizons
            for ep in (1, 10, last):
                rows.append({"alg_label": alg, "env_label": "e", "privacy_label": alg, "seed": seed, "episode": ep,
                             "regret": (2.0 if alg == "private" else 1.0) * ep + seed})
    return pd.DataFrame(rows)


def test_final_rows_is_each_jobs_last_checkpoint_in_table_order():
    df = _curves()
    fin = final_rows(df)
    assert list(fin.index) == [2, 5, 8, 11]
    assert fin["episode"].tolist() == [100, 50, 100, 50]
    with pytest.raises(KeyError, match="t"):
        final_rows(df, step="t")


def test_paired_cost_subtracts_the_same_seeds_baseline():
    fin = final_rows(_curves())
    cost = paired_cost(fin[fin["alg_label"] == "private"], fin[fin["alg_label"] == "base"], ["env_label", "seed"],
                       "regret_base")
    assert cost["seed"].tolist() == [0, 1]
    np.testing.assert_array_equal(cost["cost"], [100.0, 50.0])  # 2k+s − (k+s)
    assert (cost["regret_base"] + cost["cost"] == cost["regret"]).all()


def test_paired_cost_refuses_an_ambiguous_baseline():
    fin = final_rows(_curves())
    base = fin[fin["alg_label"] == "base"]
    with pytest.raises(pd.errors.MergeError):
        paired_cost(fin[fin["alg_label"] == "private"], pd.concat([base, base]), ["env_label", "seed"], "regret_base")


def test_paired_cost_drops_unpaired_rows():
    fin = final_rows(_curves())
    base = fin[(fin["alg_label"] == "base") & (fin["seed"] == 0)]
    cost = paired_cost(fin[fin["alg_label"] == "private"], base, ["env_label", "seed"], "regret_base")
    assert cost["seed"].tolist() == [0]
