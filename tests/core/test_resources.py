"""A committed rehearsal becomes its preset's requests (dprl.config.resources): one source for
the workflow's rules, `dprl validate`'s hours and the rehearsal's own comparison."""

from __future__ import annotations

import math
import shutil
from pathlib import Path

import pytest

from dprl.config import rehearse
from dprl.config.projection import spec_hash
from dprl.config.resources import MEM_MARGIN, RUNTIME_MARGIN, job_request, preset_resources, rehearsal_file

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def smoke_table():
    """A local rehearsal of smoke's tabular_regret (4 jobs, two groups), as committed tables are."""
    return rehearse.rehearse("smoke", str(REPO / "config.yaml"), str(REPO / "workflow/resources.yaml"),
                             slice_units=40, only=["tabular_regret"], min_seconds=0.0)


def _run_dir(tmp_path, monkeypatch, table=None):
    shutil.copy(REPO / "config.yaml", tmp_path / "config.yaml")
    shutil.copytree(REPO / "workflow" / "presets", tmp_path / "workflow" / "presets")
    if table is not None:
        f = rehearsal_file(tmp_path / "paper_figures", "smoke")
        f.parent.mkdir(parents=True)
        rehearse.write_table(table, f)
    monkeypatch.chdir(tmp_path)  # figures_dir is relative to the run directory
    return preset_resources("smoke", "config.yaml", str(REPO / "workflow/resources.yaml"))


def test_a_committed_rehearsal_is_what_the_preset_requests(smoke_table, tmp_path, monkeypatch):
    got = _run_dir(tmp_path, monkeypatch, smoke_table)["tabular_regret"]
    assert got["source"] == "rehearsed"
    summary = rehearse.per_experiment(smoke_table, {}).set_index("experiment")
    # validate's hours are the rehearsal's projection, summed over the same jobs
    assert got["hours"] == pytest.approx(summary.loc["tabular_regret", "projected_h"], rel=1e-4)
    assert len(got["per_job"]) == 4
    for g, row in zip(rehearse.groups({"tabular_regret": _exp("tabular_regret")}), smoke_table.itertuples()):
        req = job_request(got, g.label, g.representative)
        assert req["runtime"] == max(1, math.ceil(RUNTIME_MARGIN * row.projected_s / 60))
        assert req["mem_mb"] == math.ceil(MEM_MARGIN * row.projected_mb / 100) * 100


def test_without_a_rehearsal_the_work_models_scale_the_default_run(tmp_path, monkeypatch):
    got = _run_dir(tmp_path, monkeypatch)["tabular_regret"]
    assert got["source"] == "scaled" and "per_job" not in got


def test_a_stale_row_falls_back_to_the_work_models(smoke_table, tmp_path, monkeypatch):
    stale = smoke_table.copy()
    stale.loc[0, "spec_hash"] = "0" * 12  # measured on another spec: the config was edited since
    got = _run_dir(tmp_path, monkeypatch, stale)["tabular_regret"]
    assert got["source"] == "scaled" and "per_job" not in got


def _exp(name):
    from dprl.config.load import load_config_file

    return load_config_file(str(REPO / "config.yaml"), "smoke").experiments[name]


def test_rows_carry_the_representatives_spec_hash(smoke_table):
    reps = {g.label: spec_hash(g.representative) for g in rehearse.groups({"tabular_regret": _exp("tabular_regret")})}
    assert dict(zip(smoke_table["job"], smoke_table["spec_hash"])) == reps


def test_projections_of_default_jobs_agree_with_their_measured_times():
    """The extrapolation, checked where jobs ran to the end: the committed local rehearsal of
    `default` (paper_figures/rehearsal/default.csv) projects each experiment's mean job; the
    committed default run measured it (workflow/resources.yaml, wall seconds per job). A
    projection leaves out compilation (its warm-up) and most of a process's start-up, which
    dominate jobs of seconds, so: where jobs last 20 s or more the projection is within 2x
    of the measurement; everywhere, the request a projection gives (RUNTIME_MARGIN x, at
    least the one minute SLURM counts in) covers the measured mean job."""
    import pandas as pd

    table = pd.read_csv(REPO / "paper_figures/rehearsal/default.csv")
    s = rehearse.per_experiment(table, {}).set_index("experiment")
    assert s["measured_default_mean_s"].notna().all()  # every experiment was measured by the default run
    long = s[s["measured_default_mean_s"] >= 20.0]
    assert len(long) >= 4
    off = long[(long["default_ratio"] > 2.0) | (long["default_ratio"] < 0.5)]
    assert off.empty, f"projected / measured mean job outside [0.5, 2]: {off['default_ratio'].round(2).to_dict()}"
    uncovered = s[s["measured_default_mean_s"] > (RUNTIME_MARGIN * s["projected_mean_s"]).clip(lower=60.0)]
    assert uncovered.empty, f"measured mean job above its projected request: {uncovered['measured_default_mean_s'].to_dict()}"
