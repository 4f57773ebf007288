"""Per-job resources of presets larger than the measured default run (config/estimate.py)."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
import yaml

from dprl.config.estimate import STARTUP_SECONDS, scaled_resources
from dprl.config.resources import preset_resources
from dprl.config.load import load_config_file, read_config


def _jobs(preset: str, experiment: str):
    return [j.spec for j in load_config_file("config.yaml", preset).experiments[experiment].jobs]


def test_default_preset_gets_exactly_the_measured_resources():
    measured = yaml.safe_load(open("workflow/resources.yaml"))
    got = preset_resources("default")
    assert set(got) == set(measured) & set(load_config_file("config.yaml", "default").experiments)
    for name, r in got.items():
        assert {k: r[k] for k in ("mem_mb", "runtime", "seconds")} == measured[name], name


def test_longer_jobs_get_time_in_proportion_to_their_work():
    """lq_regime: `full` runs 6e7 episodes where the default measured 1.2e6 (50x): the job's
    time limit must cover it, or the cluster kills every job at the measured 2 minutes."""
    measured = {"mem_mb": 400, "runtime": 2, "seconds": 26.71}
    ref, full = _jobs("default", "lq_regime"), _jobs("full", "lq_regime")
    ratio = full[0].settings["episodes"] / ref[0].settings["episodes"]
    r = scaled_resources(measured, full, ref)
    assert ratio >= 10
    assert r["seconds"] == pytest.approx(STARTUP_SECONDS + (26.71 - STARTUP_SECONDS) * ratio, rel=0.02)
    assert r["runtime"] >= math.ceil(3 * r["seconds"] / 60)
    assert r["mem_mb"] == 400  # memory does not grow with K (online checkpoints)


def test_smaller_jobs_keep_the_measured_values():
    measured = {"mem_mb": 400, "runtime": 2, "seconds": 26.71}
    r = scaled_resources(measured, _jobs("smoke", "lq_regime"), _jobs("default", "lq_regime"))
    assert r == measured


def test_full_preset_estimate_is_consistent():
    full = preset_resources("full", rehearsed=False)  # the work models' estimate
    assert full["lq_regime"]["jobs"] == len(_jobs("full", "lq_regime"))
    assert full["lq_regime"]["hours"] == pytest.approx(full["lq_regime"]["jobs"] * full["lq_regime"]["seconds"] / 3600)
    assert all(r["runtime"] * 60 >= r["seconds"] for r in full.values())


def test_full_requests_come_from_its_committed_rehearsal():
    """paper_figures/rehearsal/full.csv is committed: every experiment of `full` requests its
    jobs' own projections with the margins, and its hours are their sum."""
    from dprl.config.resources import MEM_MARGIN, RUNTIME_MARGIN

    full = preset_resources("full")
    assert {r["source"] for r in full.values()} == {"rehearsed"}
    for r in full.values():
        jobs = r["per_job"].values()
        assert r["hours"] == pytest.approx(sum(j["seconds"] for j in jobs) / 3600)
        assert all(j["runtime"] * 60 >= RUNTIME_MARGIN * j["seconds"] and j["mem_mb"] > MEM_MARGIN * 100 for j in jobs)


def test_a_new_experiment_name_gets_an_estimate_not_nan(tmp_path):
    """A sweep added under a new name is estimated from its kind's measured experiment, or,
    with nothing of its kind measured, from the kind's work model alone."""
    root = Path(__file__).resolve().parents[2]
    cfg = read_config(str(root / "config.yaml"))  # its preset files named from anywhere
    cfg["experiments"]["my_sweep"] = {**cfg["experiments"]["pe_batch"], "kind": "pe_batch"}
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(cfg, sort_keys=False))
    measured = yaml.safe_load((root / "workflow" / "resources.yaml").read_text())
    (tmp_path / "all.yaml").write_text(yaml.safe_dump(measured))
    (tmp_path / "no_pe.yaml").write_text(yaml.safe_dump({k: v for k, v in measured.items() if not k.startswith("pe_")}))

    scaled = preset_resources("default", str(tmp_path / "config.yaml"), str(tmp_path / "all.yaml"))
    assert scaled["my_sweep"]["hours"] == pytest.approx(scaled["pe_batch"]["hours"]) and "model_only" not in scaled["my_sweep"]
    for resources in ("no_pe.yaml", "missing.yaml"):
        model = preset_resources("default", str(tmp_path / "config.yaml"), str(tmp_path / resources))
        assert model["my_sweep"]["model_only"] and math.isfinite(model["my_sweep"]["hours"]) and model["my_sweep"]["hours"] > 0


def test_work_models_count_tree_levels_as_the_counters_do():
    """The work models' import-light level count equals the counters' own."""
    from dprl.experiments.work import tree_levels
    from dprl.privacy.tree_counter import tree_levels as counters

    assert [tree_levels(T) for T in range(1, 4097)] == [counters(T) for T in range(1, 4097)]


def test_an_experiment_default_no_longer_runs_gets_its_work_models_time_not_a_stale_one():
    """tabular_scaling runs in full (4e8 episodes) and smoke only; its resources.yaml entry was
    measured at 2e7 (2 minutes). With nothing in default to scale from, full's jobs get the
    work model's time, or a cluster would kill every one at 2 minutes."""
    from dprl.config.estimate import estimate, model_resources

    jobs = _jobs("full", "tabular_scaling")
    measured = yaml.safe_load(open("workflow/resources.yaml"))["tabular_scaling"]
    r = model_resources(jobs, measured)
    slowest = max(estimate(j).seconds for j in jobs)
    assert r["runtime"] * 60 >= 3 * slowest > 100 * measured["seconds"]
    assert r["mem_mb"] >= measured["mem_mb"]
    full = preset_resources("full", rehearsed=False)["tabular_scaling"]
    assert full["model_only"] and full["runtime"] * 60 >= slowest
