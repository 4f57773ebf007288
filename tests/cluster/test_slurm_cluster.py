"""The one-node SLURM harness itself: it starts, runs a batch job and a nested srun,
and stops cleanly (daemons gone, /etc/slurm/slurm.conf link removed)."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))  # --import-mode=importlib
from slurm_cluster import SYSTEM_CONF, SlurmCluster, _pid_alive, require_slurm_or_skip

pytestmark = pytest.mark.slurm


def test_cluster_start_job_stop(tmp_path):
    require_slurm_or_skip()
    cluster = SlurmCluster()
    with cluster:
        print(f"SLURM started in {cluster.start_seconds:.2f} s: {cluster.describe()}")
        assert cluster.node_state() == "idle"
        assert SYSTEM_CONF.resolve() == cluster.conf.resolve()
        pids = {d: int(cluster.pidfile(d).read_text()) for d in ("munged", "slurmctld", "slurmd")}
        out = tmp_path / "job.out"
        # a batch job with a nested srun and no SLURM_CONF in its environment, as the
        # Snakemake jobstep plugin runs it
        r = cluster.run(
            "sbatch", "--parsable", "-p", cluster.partition, "--mem", "100", "-c", "1",
            "-o", str(out), "--wrap", "env -u SLURM_CONF srun -n1 hostname && echo ok", timeout=60,
        )
        jobid = r.stdout.strip().split(";")[0]
        assert jobid.isdigit()
        state, deadline = "", time.monotonic() + 60
        while time.monotonic() < deadline:
            state = cluster.run("squeue", "-h", "--states=all", "-j", jobid, "-o", "%T").stdout.strip()
            if state in ("COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "OUT_OF_MEMORY", "NODE_FAIL"):
                break
            time.sleep(0.2)
        assert state == "COMPLETED", (state, out.read_text() if out.exists() else "")
        assert out.read_text().split() == [cluster.hostname, "ok"]
        assert cluster.run("squeue", "-h", "--states=all", "-o", "%T").stdout.split() == ["COMPLETED"]
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and any(_pid_alive(p) for p in pids.values()):
        time.sleep(0.1)
    assert not any(_pid_alive(p) for p in pids.values()), pids
    assert not SYSTEM_CONF.is_symlink()
    assert not cluster.root.exists()


def test_cluster_stops_after_failure():
    """Daemons are stopped even when the body raises."""
    require_slurm_or_skip()
    cluster = SlurmCluster()
    with pytest.raises(RuntimeError, match="boom"):
        with cluster:
            pid = int(cluster.pidfile("slurmctld").read_text())
            raise RuntimeError("boom")
    time.sleep(0.2)
    assert not _pid_alive(pid)
    assert not os.path.exists(cluster.root)
