"""Measure Snakemake's scheduling overhead on the one-node SLURM.

Runs a seeded random sample of the jobs of a preset (default: ``default``) through the
SLURM profile on a real one-node cluster (tests/cluster/slurm_cluster.py, honest CPU
count), and optionally the same sample locally, then reports

    compute   = sum of the jobs' own wall times (Snakemake ``benchmark:`` files, column s)
    capacity  = Snakemake wall time x cores
    overhead  = 1 - compute / capacity

plus the overhead per cluster job: the summed SLURM elapsed times (from squeue) minus
the summed benchmark times, per cluster job, i.e. what starting the job's two Snakemake
instances (job script, then job step) adds to every job. The SLURM profile bundles
simulations (``bundle_seconds`` in workflow/profiles/slurm/bundle.yaml), so a cluster
job is a bundle and its benchmark file covers the whole bundle.

    python tests/cluster/measure_overhead.py --jobs 0 [--preset default] [--local] [--out f.json]
        [--set group-components='{"sims": 20}']

``--jobs 0`` runs every job of the preset (the honest measurement); a
positive number runs a seeded random sample. ``--set KEY=YAML`` overrides one key of the
merged SLURM profile (to compare bundle sizes).

Needs root and slurm-wlm/munge (like the cluster tests). Prints a JSON summary.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(REPO / "tests" / "workflow"))

from slurm_cluster import SlurmCluster  # noqa: E402


def sample_jobs(preset: str, n: int, seed: int) -> list[str]:
    from dprl.config.load import load_config_file

    cfg = load_config_file(str(REPO / "config.yaml"), preset)
    paths = sorted(cfg.jobs)
    rng = random.Random(seed)
    chosen = paths if n <= 0 or n >= len(paths) else rng.sample(paths, n)
    return [f"{cfg.preset_dir}/{p}" for p in sorted(chosen)], len(paths)


def benchmark_seconds(wd: Path, preset: str) -> dict[str, float]:
    """Wall seconds of every Snakemake job that ran simulations (one simulation or a
    bundle), from its benchmark file."""
    out = {}
    for b in sorted((wd / "results" / preset / "benchmarks").rglob("*.tsv")):
        lines = b.read_text().splitlines()
        out[str(b.relative_to(wd))] = float(lines[1].split("\t")[0])
    return out


def capacity_summary(wall: float, bench: dict[str, float], cores: int) -> dict:
    """Compute, capacity used and overhead = 1 - compute / (wall x cores) of one run."""
    compute = sum(bench.values())
    return {
        "cores": cores,
        "wall_s": round(wall, 1),
        "compute_s": round(compute, 1),
        "overhead_fraction": round(1 - compute / (wall * cores), 3),
        "snakemake_jobs": len(bench),
        "snakemake_job_s_mean": round(statistics.mean(bench.values()), 2),
        "snakemake_job_s_median": round(statistics.median(bench.values()), 2),
    }


def run(cmd: list[str], cwd: Path, env: dict, cluster: SlurmCluster | None = None) -> tuple[float, dict[str, tuple[str, str]]]:
    """Run Snakemake; with a cluster, poll squeue meanwhile (finished jobs leave it after
    MinJobAge) and return every completed job's (start, end)."""
    seen: dict[str, tuple[str, str]] = {}

    def poll() -> None:
        r = cluster.run("squeue", "-h", "--states=all", "-o", "%i|%S|%e|%T", check=False)
        for line in r.stdout.splitlines():
            jid, start, end, state = line.split("|")
            if state == "COMPLETED":
                seen[jid] = (start, end)

    t0 = time.monotonic()
    with open(cwd / "snakemake.log", "w") as log:
        proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=log, stderr=subprocess.STDOUT)
        while proc.poll() is None:
            time.sleep(5)
            if cluster is not None:
                poll()
    wall = time.monotonic() - t0
    if cluster is not None:
        poll()
    if proc.returncode != 0:
        raise SystemExit(f"snakemake failed in {cwd}; see {cwd}/snakemake.log")
    return wall, seen


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--preset", default="default")
    ap.add_argument("--jobs", type=int, default=0, help="0: every job of the preset; n: a seeded random sample of n jobs")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--local", action="store_true", help="also run the sample locally for comparison")
    ap.add_argument("--cpu-factor", type=int, default=1)
    ap.add_argument("--out")
    ap.add_argument("--set", action="append", default=[], metavar="KEY=YAML", help="override a profile key")
    a = ap.parse_args()

    from test_slurm import merged_slurm_profile  # tests/workflow/ (loads its conftest helpers)
    from conftest import copy_workflow

    targets, total = sample_jobs(a.preset, a.jobs, a.seed)
    root = Path(tempfile.mkdtemp(prefix="dprl-overhead-"))
    report: dict = {"preset": a.preset, "preset_jobs": total, "sample_jobs": len(targets), "workdir": str(root)}
    with SlurmCluster(cpu_factor=a.cpu_factor) as cluster:
        cores = cluster.cpus
        wd = copy_workflow(root / "slurm")
        prof = merged_slurm_profile(root)
        if a.set:
            import yaml

            pf = Path(prof) / "config.yaml"
            merged = yaml.safe_load(pf.read_text())
            for item in a.set:
                key, _, value = item.partition("=")
                merged[key] = yaml.safe_load(value)
            pf.write_text(yaml.safe_dump(merged, sort_keys=False))
        report["profile"] = (Path(prof) / "config.yaml").read_text()
        cmd = [sys.executable, "-m", "snakemake", "--workflow-profile", prof, *targets, "--config", f"preset={a.preset}"]
        wall, seen = run(cmd, wd, cluster.env, cluster)
        bench = benchmark_seconds(wd, a.preset)
    from datetime import datetime

    elapsed = [(datetime.fromisoformat(e) - datetime.fromisoformat(st)).total_seconds() for st, e in seen.values()]
    compute = sum(bench.values())
    n_cluster = len(elapsed)
    report["slurm"] = {
        **capacity_summary(wall, bench, cores),
        "simulations": len(targets),
        "cluster_jobs": n_cluster,
        "cluster_elapsed_s_sum": round(sum(elapsed), 1),
        # what each cluster job adds to the compute of the simulations it runs
        # (submission to start is not in SLURM's elapsed; this is start-up + teardown)
        "overhead_s_per_cluster_job": round((sum(elapsed) - compute) / n_cluster, 2) if n_cluster else None,
    }
    if a.local:
        wd = copy_workflow(root / "local")
        cmd = [sys.executable, "-m", "snakemake", "--workflow-profile", "workflow/profiles/default", "--cores", str(cores),
               *targets, "--config", f"preset={a.preset}"]
        wall, _ = run(cmd, wd, dict(os.environ))
        report["local"] = capacity_summary(wall, benchmark_seconds(wd, a.preset), cores)
    text = json.dumps(report, indent=2)
    print(text)
    if a.out:
        Path(a.out).write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
