"""A rehearsal through the SLURM profile on a real one-node SLURM (dprl.config.rehearse,
"Through the workflow"): under ``--config rehearse=True`` every distinct kind of job's
representative runs its slice as a SLURM job submitted with the partition, ``mem_mb`` and
``runtime`` of the real (bundled) job that runs it, and ``dprl rehearse --collect`` names
the real job whose request is too small.

The too-small request is a config override of the copy's measured resources
(``workflow/resources.yaml``, what the rules read): ``tabular_regret`` gets 100 MB, below
the peak memory of any simulation (the interpreter, NumPy and Numba alone take about 250 MB),
so its bundle is named; ``tabular_gaps`` keeps its 400 MB and a few minutes against jobs of
seconds, so it passes. The cluster comes from tests/conftest.py (``slurm_cluster``): in CI
(CI=true) a missing SLURM fails, elsewhere the test skips with the reason.
"""

from __future__ import annotations

import json
import re

import pandas as pd
import pytest
import yaml
from conftest import copy_workflow, snakemake  # tests/workflow is on pythonpath (pyproject.toml)
from test_slurm import merged_slurm_profile

from dprl.cli import main
from dprl.config.load import load_config_file

pytestmark = pytest.mark.slow

EXPERIMENTS = ("tabular_regret", "tabular_gaps")
TOO_SMALL_MB = 100


@pytest.mark.slurm
def test_rehearsal_through_slurm_names_the_job_whose_request_is_too_small(slurm_cluster, tmp_path, capsys):
    wd = copy_workflow(tmp_path / "wd", EXPERIMENTS)
    res_file = wd / "workflow/resources.yaml"
    measured = yaml.safe_load(res_file.read_text())
    measured["tabular_regret"]["mem_mb"] = TOO_SMALL_MB
    res_file.write_text(yaml.safe_dump(measured, sort_keys=False))
    run = snakemake(wd, "--workflow-profile", merged_slurm_profile(tmp_path), "--config", "preset=smoke",
                    "rehearse=True", "rehearse_slice=40", "rehearse_min_seconds=0", env=slurm_cluster.env, timeout=600)
    with capsys.disabled():
        print(f"\n[slurm] rehearsal slices through SLURM in {run.seconds:.1f} s")

    # one SLURM job per distinct kind of job (2 of tabular_regret, 1 of tabular_gaps), all in this cluster
    submitted = re.findall(r"submitted with SLURM jobid (\d+)", run.output)
    assert len(submitted) == 3, run.tail()
    assert re.search(r"slurm_logs/rule_rehearse_slice/", run.output), run.tail()
    res = wd / "results/smoke"
    requests = json.loads((res / "rehearsal/requests.json").read_text())["jobs"]
    assert sorted(requests) == ["simulate_tabular_gaps_b000", "simulate_tabular_regret_b000"]  # the profile's bundles
    assert requests["simulate_tabular_regret_b000"]["mem_mb"] == TOO_SMALL_MB

    args = ["rehearse", "--preset", "smoke", "--collect", "--config", str(wd / "config.yaml"),
            "--resources", str(res_file), "--results", str(res), "--out", str(res / "rehearsal.csv")]
    capsys.readouterr()
    assert main(args) == 2
    over = [line for line in capsys.readouterr().err.splitlines() if line.startswith("over: ")]
    assert len(over) == 1, over
    assert over[0].startswith("over: simulate_tabular_regret_b000 (jobs/tabular_regret/"), over
    assert f"> requested mem_mb {TOO_SMALL_MB}" in over[0], over

    # each slice ran as a SLURM job granted exactly what the workflow requests for its real job
    table = pd.read_csv(res / "rehearsal.csv")
    assert len(table) == 3 and set(table["slurm_job_id"].astype(str)) == set(submitted)
    assert (table["granted_mem_mb"] == table["requested_mem_mb"]).all(), table
    assert (table["granted_runtime_min"] == table["requested_runtime_min"]).all(), table
    assert set(table.loc[table.experiment == "tabular_regret", "requested_mem_mb"]) == {TOO_SMALL_MB}
    jobs = pd.read_csv(res / "rehearsal_jobs.csv")
    assert sorted(jobs["name"]) == sorted(requests) and (jobs["jobs"] == 4).all()

    # the correct request passes
    assert main([*args, "--experiment", "tabular_gaps"]) == 0
    # a slice that did not come back (its SLURM job killed) is named with its log
    gone = next((res / "rehearsal/slices/tabular_gaps").rglob("*.json"))
    gone.unlink()
    capsys.readouterr()
    assert main([*args, "--experiment", "tabular_gaps"]) == 2
    err = capsys.readouterr().err
    assert "no rehearsal slice" in err and "jobs/tabular_gaps/ubev/" in err and "logs/rehearsal/tabular_gaps" in err, err


def test_rehearsal_through_the_local_workflow_requests_each_simulate_job(tmp_path, capsys):
    """Without bundles (and without SLURM) the real job of a representative is its own
    simulate job: the slice gets that rule's request, and a request that fits passes."""
    wd = copy_workflow(tmp_path / "wd", ("tabular_gaps",), bundle_seconds=0)
    snakemake(wd, "--cores", "1", "--config", "preset=smoke", "rehearse=True", "rehearse_slice=40",
              "rehearse_min_seconds=0", timeout=300)
    res = wd / "results/smoke"
    requests = json.loads((res / "rehearsal/requests.json").read_text())["jobs"]
    paths = list(load_config_file(str(wd / "config.yaml"), "smoke").jobs)
    assert sorted(requests) == sorted(paths) and all(r["members"] == [name] for name, r in requests.items())
    capsys.readouterr()
    assert main(["rehearse", "--preset", "smoke", "--collect", "--config", str(wd / "config.yaml"),
                 "--resources", str(wd / "workflow/resources.yaml"), "--results", str(res),
                 "--out", str(res / "rehearsal.csv")]) == 0
    table = pd.read_csv(res / "rehearsal.csv")
    assert len(table) == 1 and table["request_job"][0] == table["job"][0]  # its own simulate job
    assert table["granted_mem_mb"].isna().all()  # not a SLURM job: nothing granted to record
    assert "tabular_gaps" in capsys.readouterr().out
