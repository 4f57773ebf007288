"""`dprl rehearse`: a slice of every distinct kind of job, projected to its horizon and
compared with the workflow's requests (dprl.config.rehearse)."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from dprl.cli import main
from dprl.config import rehearse
from dprl.config.load import load_config_file

SLICE = ["--preset", "smoke", "--experiment", "tabular_regret", "--slice", "40", "--min-seconds", "0"]


def test_groups_one_representative_per_kind_of_job() -> None:
    exps = load_config_file("config.yaml", "smoke").experiments
    gs = rehearse.groups({"tabular_regret": exps["tabular_regret"]})
    assert sorted(g.algorithm for g in gs) == ["pucb", "ubev"]
    assert sum(len(g.specs) for g in gs) == len(exps["tabular_regret"].jobs)
    rep = gs[0].representative
    assert rehearse.horizon_key(rep) == ("settings", "episodes")
    assert rehearse.with_horizon(rep, ("settings", "episodes"), 40).settings["episodes"] == 40
    # pe_exact's work grows geometrically in m_max: no linear horizon, run whole
    assert rehearse.horizon_key(exps["pe_exact"].jobs[0].spec) is None


def _requests(runtime_of):
    """The rule's requests with the runtime ``runtime_of(spec)`` (minutes; None keeps the rule's):
    a verdict of these tests must not depend on how loaded the machine is."""
    real = rehearse.requested_resources

    def patched(*args):
        request = real(*args)
        # memory far above any job's (the projections' memory is the child's own peak: rehearse.own_peak_rss_mb)
        return lambda path, spec: {**request(path, spec), "mem_mb": 10**6,
                             **({} if runtime_of(spec) is None else {"runtime": runtime_of(spec)})}

    return patched


def test_rehearsal_writes_the_table(tmp_path, capsys, monkeypatch) -> None:
    monkeypatch.setattr(rehearse, "requested_resources", _requests(lambda spec: 1e6))  # every job fits
    out = tmp_path / "rehearsal.csv"
    assert main(["rehearse", *SLICE, "--out", str(out)]) == 0
    table = pd.read_csv(out)
    assert set(table["algorithm"]) == {"pucb", "ubev"}
    assert (table["horizon_key"] == "settings.episodes").all()
    assert (table["slice_n2"] == 40).all() and (table["slice_n1"] == 10).all()
    assert (table["horizon"] == 3000).all()
    # the projection covers the full horizon: at least the timed slice, plus start-up
    assert (table["projected_s"] >= table["t2_s"]).all() and (table["peak_rss_mb"] > 50).all()
    assert table["jobs"].sum() == 4
    text = capsys.readouterr().out
    assert "tabular_regret" in text and "validate" in text and "total" in text and "work model" in text


def test_update_replaces_only_the_rehearsed_experiments_rows(tmp_path, monkeypatch) -> None:
    """`--update --experiment X` re-measures X into a committed table: the other experiments'
    rows stay as measured, X's are the new slice's, and the record says when and how."""
    import json

    monkeypatch.setattr(rehearse, "requested_resources", _requests(lambda spec: 1e6))
    out = tmp_path / "rehearsal.csv"
    assert main(["rehearse", *SLICE, "--out", str(out)]) == 0
    first = pd.read_csv(out)
    other = first.assign(experiment="tabular_pac", job="jobs/tabular_pac/x.csv", t2_s=123.0)
    pd.concat([other, first.assign(t2_s=-1.0)]).to_csv(out, index=False)  # tabular_pac before tabular_regret
    assert main(["rehearse", *SLICE, "--out", str(out), "--update"]) == 0
    got = pd.read_csv(out)
    # the preset's order (tabular_regret before tabular_pac), the other rows untouched
    assert got["experiment"].tolist() == ["tabular_regret"] * len(first) + ["tabular_pac"] * len(first)
    assert (got.loc[got.experiment == "tabular_pac", "t2_s"] == 123.0).all()
    assert (got.loc[got.experiment == "tabular_regret", "t2_s"] > 0).all()  # re-measured, not the planted -1
    record = json.loads(out.with_suffix(".json").read_text())
    assert record["updates"][-1]["experiments"] == ["tabular_regret"] and "local processes" in record["updates"][-1]["how"]
    from dprl.analysis.doc_blocks import cost_source, rehearsal_line

    assert "re-measured since, `tabular_regret` at" in rehearsal_line(record, "smoke")
    assert "(`tabular_regret` re-measured at `" in cost_source({"a": {"source": "rehearsed"}}, record, "smoke")
    # nothing to update: refused before any slice runs, no table written
    assert main(["rehearse", *SLICE, "--out", str(tmp_path / "none.csv"), "--update"]) != 0
    assert not (tmp_path / "none.csv").exists()


def test_a_job_over_its_request_is_named(tmp_path, monkeypatch, capsys) -> None:
    # PUCB's requested runtime deliberately far below any run (0.06 ms); UBEV's far above any
    monkeypatch.setattr(rehearse, "requested_resources",
                        _requests(lambda spec: 1e-6 if spec.algorithm["name"] == "pucb" else 1e6))
    out = tmp_path / "rehearsal.csv"
    assert main(["rehearse", *SLICE, "--out", str(out)]) == 2
    over = [line for line in capsys.readouterr().err.splitlines() if line.startswith("over: ")]
    assert len(over) == 1
    assert "jobs/tabular_regret/pucb/" in over[0] and "requested runtime" in over[0]
    assert out.exists()  # the table is written before the verdict


def test_a_bad_slice_is_refused_before_any_run() -> None:
    with pytest.raises(ValueError, match="at least 8"):
        rehearse.rehearse("smoke", slice_units=4)
    with pytest.raises(ValueError, match="no experiment nosuch"):
        rehearse.rehearse("smoke", only=["nosuch"])


def test_a_slice_the_job_refuses_grows() -> None:
    # a hard family's instance is tuned to its T: lowerbound_horizon needs T >= 4·gap_scale²·n·m
    # (here 4·25·2·1 = 200), so slices (n1, n2) = (10, 40), (40, 160), (160, 640) are refused
    # and the first accepted one is (640, 2560)
    exps = load_config_file("config.yaml", "smoke").experiments
    rep = next(g for g in rehearse.groups({"tabular_hard": exps["tabular_hard"]}) if g.algorithm == "pucb").representative
    d = rep.to_dict()
    d["environment"].update(n=2, m=1, T=8000, gap_scale=5.0)
    m = rehearse.measure(d, 40, min_seconds=0.0)
    assert m["horizon_key"] == "environment.T"
    assert (m["n1"], m["n2"], m["whole"]) == (640, 2560, False)
    assert m["t2"] > 0 and m["per_unit"] >= 0


def test_slurm_times_and_memory_are_read() -> None:
    # what `scontrol show job` prints for TimeLimit and MinMemoryNode (granted_resources)
    assert [rehearse._slurm_minutes(t) for t in ("00:02:00", "1-00:00:00", "10:30", "5", "1-02:03:00")] == \
        [2.0, 1440.0, 10.5, 5.0, 1563.0]
    assert rehearse._slurm_minutes("UNLIMITED") == float("inf")
    assert [rehearse._slurm_mb(m) for m in ("400M", "2G", "512", "1T")] == [400.0, 2048.0, 512.0, 1024.0**2]
    assert rehearse.granted_resources({}) == {}  # not in a SLURM job


def test_per_experiment_checks_the_projection_on_default_runs():
    """On `default` the projected mean job is set beside the default run's measured mean (its
    jobs ran to the end): ``default_ratio`` is their quotient, per experiment."""
    table = pd.DataFrame({"experiment": ["a", "a", "b"], "jobs": [2, 2, 1], "group_cpu_s": [10.0, 30.0, 7.0],
                          "measured_default_mean_s": [5.0, 5.0, 14.0]})
    got = rehearse.per_experiment(table, {"a": 0.02, "b": 0.001}, {"a": 0.01}).set_index("experiment")
    assert got.loc["a", "projected_mean_s"] == pytest.approx(10.0) and got.loc["a", "default_ratio"] == pytest.approx(2.0)
    assert got.loc["b", "default_ratio"] == pytest.approx(0.5)
    assert got.loc["a", "ratio"] == pytest.approx(40.0 / 3600 / 0.02) and got.loc["a", "model_h"] == pytest.approx(0.01)
    assert math.isnan(got.loc["b", "model_h"])
