"""Result files: atomic, self-verifying; aggregation names and quarantines corrupt files."""

import numpy as np
import pandas as pd
import pytest

from dprl.analysis.aggregate import CorruptResultsFound, aggregate
from dprl.runner.io import CorruptResultError, read_result, write_result

META = {"spec": {"experiment": "e", "kind": "k", "algorithm": {"name": "a", "p": 1}, "environment": {"name": "v"},
                 "privacy": {"epsilon": 1.0, "delta": None, "calibration": "tight"}, "settings": {}, "seed": 3},
        "labels": {"alg_label": "a", "env_label": "v", "privacy_label": "eps1_tight"}}


def frame():
    return pd.DataFrame({"t": [1, 2, 3], "x": [0.1, 1 / 3, np.pi]})


def test_roundtrip_exact(tmp_path):
    write_result(tmp_path / "r.csv", frame(), META)
    df, meta = read_result(tmp_path / "r.csv")
    pd.testing.assert_frame_equal(df, frame())
    assert meta == META
    assert not list(tmp_path.glob(".*tmp"))


@pytest.mark.parametrize("damage", ["truncate", "flip", "empty", "footer"])
def test_corruption_is_detected(tmp_path, damage):
    p = tmp_path / "r.csv"
    write_result(p, frame(), META)
    raw = p.read_bytes()
    if damage == "truncate":
        p.write_bytes(raw[: len(raw) // 2])
    elif damage == "flip":
        i = raw.index(b"0.1")
        p.write_bytes(raw[:i] + b"0.2" + raw[i + 3:])
    elif damage == "empty":
        p.write_bytes(b"")
    else:
        p.write_bytes(raw.replace(b"rows=3", b"rows=4"))
    with pytest.raises(CorruptResultError, match=str(p)):
        read_result(p)


def test_aggregate_names_and_quarantines_corrupt_files(tmp_path):
    good, bad = tmp_path / "a" / "jobs/e/a/v/eps1_tight/seed3.csv", tmp_path / "b" / "jobs/e/a/v/eps1_tight/seed3.csv"
    write_result(good, frame(), META)
    write_result(bad, frame(), META)
    bad.write_bytes(bad.read_bytes()[:-20])
    with pytest.raises(CorruptResultsFound, match=f"{bad}: no end-of-file footer"):
        aggregate([good, bad])
    assert not bad.exists() and bad.with_name("seed3.csv.corrupt").exists()
    out = aggregate([good])
    assert list(out["seed"]) == [3, 3, 3] and out["epsilon"].iloc[0] == 1.0 and out["alg.p"].iloc[0] == 1


def test_results_are_readable_by_others(tmp_path):
    import os
    import stat

    old = os.umask(0o022)
    try:
        write_result(tmp_path / "r.csv", frame(), META)
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "r.csv").stat().st_mode) == 0o644
