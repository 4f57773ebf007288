"""The smoke preset's experiments of every paper (:data:`SLURM_EXPERIMENTS`) through the
SLURM profile on a real one-node SLURM give results bit-identical to a local run.

The cluster comes from the session's owner in tests/conftest.py (``slurm_cluster``;
tests/cluster/slurm_cluster.py starts it from the Debian packages ``slurm-wlm`` and
``munge`` in a temporary directory, config included). Snakemake gets the cluster's
environment (``SLURM_CONF``, and ``PATH`` with the srun shim for the jobs' nested srun),
and its SLURM executor plugin passes it on to sbatch/squeue/scancel, which it runs with
the inherited environment; the test checks that the jobs landed in *this* cluster. In CI
(CI=true) a missing SLURM fails this test; on a developer machine it skips with the
reason.

Profiles: Snakemake gives a workflow profile precedence over ``--profile`` per key, so the
test builds one workflow profile in the temp dir: workflow/profiles/slurm/config.yaml
with the keys of tests/cluster/profile/config.yaml (partition, squeue status, fast
polling) laid over it. Everything else is the shipped SLURM profile.
"""

from __future__ import annotations

import os
import re

import pytest
import yaml
from conftest import REPO, assert_identical_results, copy_workflow, smoke_table_targets, snakemake, stray_temp_files  # tests/workflow is on pythonpath (pyproject.toml)

# Each SLURM job starts two Snakemake processes before its simulation (the jobstep, then
# the job), so the smoke preset takes minutes on a 2-core machine; generous bound.
SLURM_TIMEOUT = float(os.environ.get("DPRL_TEST_SLURM_TIMEOUT", "2400"))

pytestmark = [pytest.mark.slurm, pytest.mark.slow]


def merged_slurm_profile(dest) -> str:
    prof = yaml.safe_load((REPO / "workflow/profiles/slurm/config.yaml").read_text())
    over = yaml.safe_load((REPO / "tests/cluster/profile/config.yaml").read_text())
    assert prof["executor"] == "slurm"
    for key, value in over.items():
        if isinstance(value, dict) and isinstance(prof.get(key), dict):
            prof[key] = {**prof[key], **value}
        else:
            prof[key] = value
    d = dest / "slurm-test-profile"
    d.mkdir()
    (d / "config.yaml").write_text(yaml.safe_dump(prof, sort_keys=False))
    return str(d)


# One experiment of each paper and of the shared mechanisms, several bundles each: what the
# test checks (sbatch, bundles, nested srun, identical results) does not depend on the kind,
# and the whole smoke preset through SLURM took 204 s of a CI run near its 20-minute budget.
SLURM_EXPERIMENTS = ("counter_error", "tabular_hard", "lq_regret", "linmix_hard", "pe_batch")


def test_smoke_on_slurm_is_bit_identical_to_local(slurm_cluster, smoke_local, tmp_path):
    wd = copy_workflow(tmp_path / "slurm", SLURM_EXPERIMENTS)
    profile = merged_slurm_profile(tmp_path)
    targets = smoke_table_targets(wd)
    run = snakemake(
        wd, "--workflow-profile", profile, *targets, "--config", "preset=smoke", env=slurm_cluster.env, timeout=SLURM_TIMEOUT
    )
    print(f"[slurm] smoke preset through SLURM in {run.seconds:.1f} s")

    # the simulations really went through sbatch, in bundles (the profile's
    # bundle_seconds): fewer cluster jobs than simulations, each a simulate_* bundle rule
    submitted = re.findall(r"submitted with SLURM jobid (\d+)", run.output)
    assert submitted, f"no job was submitted to SLURM:\n{run.tail()}"
    jobs = list((wd / "results/smoke/jobs").rglob("*.csv"))
    assert jobs and len(submitted) < len(jobs), (len(submitted), len(jobs))
    assert re.search(r"slurm_logs/rule_simulate_\w+_b\d{3}/", run.output), run.tail()
    # Every job of this run (the plugin names them after its run id) is in this cluster's
    # queue and completed: the plugin's sbatch reached this cluster through the
    # SLURM_CONF it inherited, not a host-wide config.
    run_id = re.search(r"SLURM run ID: (\S+)", run.output)
    assert run_id, run.tail()
    accounted = slurm_cluster.run("squeue", "-h", "--states=all", "-o", "%i %T %j").stdout.split("\n")
    ours = {jobid: state for jobid, state, name in (line.split() for line in accounted if line.strip()) if name == run_id[1]}
    assert sorted(ours, key=int) == sorted(submitted, key=int), (ours, submitted)
    assert set(ours.values()) == {"COMPLETED"}, ours

    assert all((wd / t).exists() for t in targets)
    assert_identical_results(wd, smoke_local, "smoke", claims=False, experiments=SLURM_EXPERIMENTS)
    assert not stray_temp_files(wd, "smoke")
