"""The one-node SLURM harness itself: it runs a batch job with a nested srun the way the
Snakemake jobstep plugin runs it, writes nothing to /etc, stops cleanly (jobs, daemons
and directory gone) even when the body raises, and a second cluster on the same host
(another test session) neither collides with the session's nor outlives a killed owner.

Every cluster here comes from the session's owner (tests/conftest.py), so these tests
pass in any order relative to each other and to tests/workflow/test_slurm.py.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))  # --import-mode=importlib
from slurm_cluster import OUR_ROOT_PREFIX, SlurmCluster, _pid_alive, _pid_is, host_lock, reap_stale_clusters

pytestmark = pytest.mark.slurm

HERE = Path(__file__).resolve().parent
# The path srun would read without SLURM_CONF: a test cluster must never write it.
DEFAULT_CONF = Path("/etc/slurm/slurm.conf")
FINAL = ("COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "OUT_OF_MEMORY", "NODE_FAIL")
# What the Snakemake jobstep plugin keeps of SLURM_* for the srun it runs inside a job
# (snakemake-executor-plugin-slurm-jobstep, Executor.run_job); everything else, with
# SLURM_CONF, SRUN_* and SBATCH_*, it drops.
JOBSTEP_KEEPS = (
    "SLURM_JOB_ID SLURM_JOBID SLURM_ARRAY_JOB_ID SLURM_ARRAY_TASK_ID SLURM_ARRAY_TASK_MIN "
    "SLURM_ARRAY_TASK_MAX SLURM_ARRAY_TASK_STEP SLURM_CLUSTER_NAME SLURM_SUBMIT_DIR SLURM_SUBMIT_HOST"
)
# A batch script line that runs its command with the environment the jobstep gives srun.
JOBSTEP_ENV = (
    "keep=' " + JOBSTEP_KEEPS + " '; for v in $(env | sed -n 's/^\\(S[A-Z]*_[A-Z_]*\\)=.*/\\1/p'); do "
    'case "$v" in SLURM_*|SRUN_*|SBATCH_*) case "$keep" in *" $v "*) ;; *) unset "$v";; esac;; esac; done; '
)


def daemon_pids(cluster: SlurmCluster) -> dict[str, int]:
    return {d: int(cluster.pidfile(d).read_text()) for d in ("munged", "slurmctld", "slurmd")}


def wait_dead(pids: list[int], timeout: float = 10.0) -> list[int]:
    """The pids still alive after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and any(_pid_alive(p) for p in pids):
        time.sleep(0.1)
    return [p for p in pids if _pid_alive(p)]


def submit(cluster: SlurmCluster, script: str, out: Path, name: str = "dprltest") -> str:
    """Submit ``script`` as a batch job; returns its job id."""
    r = cluster.run(
        "sbatch", "--parsable", "-p", cluster.partition, "--mem", "100", "-c", "1", "-J", name, "-o", str(out),
        "--wrap", script, timeout=60,
    )
    jobid = r.stdout.strip().split(";")[0]
    assert jobid.isdigit(), (r.stdout, r.stderr)
    return jobid


def job_state(cluster: SlurmCluster, jobid: str) -> str:
    return cluster.run("squeue", "-h", "--states=all", "-j", jobid, "-o", "%T", check=False).stdout.strip()


def wait_state(cluster: SlurmCluster, jobid: str, states: tuple[str, ...], timeout: float = 60.0) -> str:
    state, deadline = "", time.monotonic() + timeout
    while time.monotonic() < deadline:
        state = job_state(cluster, jobid)
        if state in states:
            break
        time.sleep(0.2)
    return state


def test_batch_job_with_nested_srun_and_no_host_config(slurm_cluster, tmp_path):
    """A batch job whose nested srun runs with the jobstep plugin's environment (no
    SLURM_CONF) reaches this cluster, although /etc/slurm/slurm.conf is not ours."""
    cluster = slurm_cluster
    assert cluster.node_state() == "idle"
    assert not (DEFAULT_CONF.exists() and DEFAULT_CONF.resolve() == cluster.conf.resolve())
    assert not [t for t in _etc_slurm_links() if OUR_ROOT_PREFIX in str(t)], _etc_slurm_links()
    out = tmp_path / "job.out"
    jobid = submit(cluster, JOBSTEP_ENV + 'env | grep -c "^SLURM_CONF=" ; srun -n1 hostname && echo ok', out)
    state = wait_state(cluster, jobid, FINAL)
    text = out.read_text() if out.exists() else ""
    assert state == "COMPLETED", (state, text)
    # "0": the srun really ran without SLURM_CONF; then the step's output and ours
    assert text.split() == ["0", cluster.hostname, "ok"], text


def _etc_slurm_links() -> list[Path]:
    """Where the symlinks under /etc/slurm point (an older version of the harness linked
    its config there, host-wide); none may point into a test cluster."""
    root = DEFAULT_CONF.parent
    return [Path(os.path.realpath(p)) for p in root.rglob("*") if p.is_symlink()] if root.is_dir() else []


def test_stop_cancels_jobs_and_removes_everything(slurm_owner, tmp_path):
    """Stopping the session's cluster cancels a running job, ends the daemons and removes
    its directory; the next user gets a new cluster."""
    cluster = slurm_owner.get()
    pids = daemon_pids(cluster)
    pidfile = tmp_path / "job.pid"
    jobid = submit(cluster, f"echo $$ > {pidfile}; exec sleep 600", tmp_path / "job.out")
    assert wait_state(cluster, jobid, ("RUNNING",) + FINAL) == "RUNNING"
    job_pid = int(wait_for_text(pidfile))
    assert _pid_alive(job_pid)
    slurm_owner.stop()
    assert slurm_owner.current is None
    assert not wait_dead([*pids.values(), job_pid]), pids
    assert not cluster.root.exists()
    again = slurm_owner.get()
    assert again is not cluster and again.root != cluster.root and again.node_state() == "idle"


def wait_for_text(path: Path, timeout: float = 30.0) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if path.exists() and path.read_text().strip():
            return path.read_text().strip()
        time.sleep(0.1)
    raise AssertionError(f"{path} not written in {timeout} s")


def test_fresh_cluster_stops_after_failure(slurm_owner):
    """A cluster of its own replaces the shared one (never two at once in a session), and
    its daemons are stopped even when the body raises."""
    shared = slurm_owner.get()
    shared_pids = daemon_pids(shared)
    with pytest.raises(RuntimeError, match="boom"):
        with slurm_owner.fresh() as cluster:
            assert not wait_dead(list(shared_pids.values())), "the shared cluster still runs"
            assert slurm_owner.current is cluster and cluster.node_state() == "idle"
            pids = daemon_pids(cluster)
            raise RuntimeError("boom")
    assert slurm_owner.current is None
    assert not wait_dead(list(pids.values())), pids
    assert not cluster.root.exists()


def test_second_cluster_on_the_host_and_its_dead_owner(slurm_cluster, tmp_path):
    """Another session's cluster (a child process here) runs next to ours: separate
    ports, jobs and config; when its owner is SIGKILLed, the next start reaps it."""
    child = subprocess.Popen([sys.executable, "-c", _CHILD], cwd=HERE, stdout=subprocess.PIPE, text=True)
    try:
        line = child.stdout.readline()
        assert line, f"the second cluster did not start (exit {child.wait(timeout=60)})"
        root = Path(json.loads(line)["root"])
        theirs = SlurmCluster(root=root)
        assert root != slurm_cluster.root
        ports = {"ours": _ports(slurm_cluster.conf), "theirs": _ports(theirs.conf)}
        assert len(ports["ours"]) == len(ports["theirs"]) == 2 and not set(ports["ours"]) & set(ports["theirs"]), ports
        # one job on each cluster (both may get the same job id): each sees only its own
        a = submit(slurm_cluster, "echo ours", tmp_path / "a.out", name="ours")
        b = submit(theirs, "echo theirs", tmp_path / "b.out", name="theirs")
        assert wait_state(slurm_cluster, a, FINAL) == "COMPLETED" and wait_state(theirs, b, FINAL) == "COMPLETED"
        assert (tmp_path / "a.out").read_text() == "ours\n" and (tmp_path / "b.out").read_text() == "theirs\n"
        ours_jobs = slurm_cluster.run("squeue", "-h", "--states=all", "-o", "%j").stdout.split()
        assert "ours" in ours_jobs and "theirs" not in ours_jobs, ours_jobs
        assert theirs.run("squeue", "-h", "--states=all", "-o", "%i %j").stdout.split() == [b, "theirs"]
        their_pids = daemon_pids(theirs)
        # Under the host lock from here on, so that a parallel session's start cannot
        # reap the cluster between the kill and our own reaping.
        with host_lock():
            assert root not in reap_stale_clusters(), "reaped while its owner lives"
            child.send_signal(signal.SIGKILL)
            child.wait(timeout=30)
            # the owner died without stopping anything: the daemons run on
            assert all(_pid_alive(p) and _pid_is(p, d) for d, p in their_pids.items()), their_pids
            assert root in reap_stale_clusters()
    finally:
        child.kill()
        child.wait(timeout=30)
    assert not wait_dead(list(their_pids.values())), their_pids
    assert not root.exists()
    assert slurm_cluster.node_state() == "idle"  # ours untouched


def _ports(conf: Path) -> list[int]:
    """SlurmctldPort and SlurmdPort of a slurm.conf."""
    return [int(p) for p in re.findall(r"^Slurm(?:ctld|d)Port=(\d+)$", conf.read_text(), re.M)]


# Starts a cluster in a fresh temporary directory (so it has an owner lock), reports it,
# then waits to be killed: the owner of a "second session".
_CHILD = """
import json, time
from slurm_cluster import SlurmCluster
c = SlurmCluster().start()
print(json.dumps(c.describe()), flush=True)
time.sleep(600)
"""
