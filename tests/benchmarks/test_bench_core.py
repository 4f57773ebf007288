"""Benchmarks of the backbone. Skipped in the normal test run; run with
``pytest tests/benchmarks/test_bench_core.py --benchmark-only -o addopts=""``.

Targets: one tree-counter step for 10^5 counters < 2 ms; `snakemake -n` on the default
config < 10 s; per-job start-up overhead (`dprl run-job` minus the job's own work) < 1.5 s.
"""

import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from dprl.config.load import load_config_file
from dprl.privacy.noise import GaussianNoise, LaplaceNoise
from dprl.privacy.tree_counter import TreeCounter

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("noise", [LaplaceNoise(1.0), GaussianNoise(1.0), None], ids=["laplace", "gaussian", "exact"])
def test_tree_counter_step_1e5_counters(benchmark, noise):
    n = 100_000
    c = TreeCounter((n,), 10**6, noise, np.random.default_rng(0))
    x = (np.random.default_rng(1).random(n) < 0.1).astype(float)
    benchmark(c.update, x)


def test_snakemake_dry_run_default(benchmark, tmp_path):
    for name in ("Snakefile", "config.yaml"):
        shutil.copy(ROOT / name, tmp_path / name)
    shutil.copytree(ROOT / "workflow", tmp_path / "workflow")

    def dry():
        subprocess.run(["snakemake", "-n", "--cores", "8", "--quiet", "all"], cwd=tmp_path, check=True, capture_output=True)

    benchmark.pedantic(dry, rounds=3, iterations=1)


def test_job_startup_overhead(benchmark, tmp_path):
    """Wall time of a whole `dprl run-job` process for the smallest audit job."""
    cfg = load_config_file(str(ROOT / "config.yaml"), "smoke")
    job = next(j for j in cfg.jobs.values() if j.spec.kind == "audit")
    payload = json.dumps({"spec": job.spec.to_dict(), "labels": job.labels})
    out = tmp_path / "r.csv"

    def run():
        subprocess.run([sys.executable, "-m", "dprl.cli", "run-job", "--spec", payload, "--out", str(out)], check=True, capture_output=True)

    benchmark.pedantic(run, rounds=5, iterations=1)
