"""No fault loses or corrupts work.

Each test runs a small workflow (the fast ``counter_error`` and ``audit`` experiments at
smoke size, see ``mini_workflow``) in its own temp dir, disturbs it, lets Snakemake
recover, and asserts that nothing is lost and that the final results are bit-identical to
an undisturbed run of the same config (the ``mini_reference`` fixture):

- a simulation job SIGKILLed mid-run, and the whole workflow SIGKILLed (a crashed
  machine), then ``snakemake`` run again: the same command resumes (the stale lock and
  incomplete outputs of the dead run are cleared, dprl.runner.snakemake_state); the main
  Snakemake process alone SIGKILLed, then the plain README command (no profile) rerun;
  a live run still stops a second one;
- a truncated and a corrupted job result file: aggregation fails with a message naming
  the file and moves it aside (``*.corrupt``); the next run regenerates it;
- the whole workflow interrupted (SIGINT to its process group, as Ctrl-C does; SIGTERM to
  Snakemake alone, as a batch system does) and restarted: finished jobs are reused,
  interrupted ones (marked incomplete) redone;
- two seeds' jobs running concurrently never write the same file (every write of every
  job process is traced), and output/log/benchmark paths are unique per job.
"""

from __future__ import annotations

import collections
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest



from conftest import (  # tests/workflow is on pythonpath (pyproject.toml)
    MINI_EXPERIMENTS,
    MINI_SMOKE_OVERRIDES,
    MINI_TARGETS,
    REPO,
    SNAKEMAKE_TIMEOUT,
    assert_identical_results,
    copy_workflow,
    kill_group,
    running_jobs,
    snakemake,
    start_snakemake,
    stray_temp_files,
    wait_for,
)

pytestmark = pytest.mark.slow

PRESET = "smoke"
# The local default profile (rerun-incomplete, show-failed-logs, ...) is passed
# explicitly: with the Snakefile at the repository root Snakemake does not discover
# workflow/profiles/default by itself (see test_default_profile_is_discovered).
CONFIG = (*MINI_TARGETS, "--config", f"preset={PRESET}", "--workflow-profile", "workflow/profiles/default")


def mini_workflow(dest: Path) -> Path:
    return copy_workflow(dest, MINI_EXPERIMENTS, MINI_SMOKE_OVERRIDES)


def job_files(wd: Path) -> dict[str, Path]:
    res = wd / "results" / PRESET / "jobs"
    return {str(p.relative_to(res)): p for p in sorted(res.rglob("*.csv"))}


def wait_exit(proc, timeout: float = 120.0) -> int:
    try:
        return proc.wait(timeout=timeout)
    except Exception:
        kill_group(proc)
        proc.wait()
        pytest.fail(f"snakemake did not exit within {timeout}s after the fault")


def bg_log(wd: Path) -> str:
    p = wd / "snakemake-bg.log"
    return p.read_text() if p.exists() else ""


def finished_jobs(log: str) -> set[str]:
    """Job files (keys of ``job_files``) of simulate jobs the Snakemake log reports finished."""
    started = {i: f"{e}/{j}.csv" for i, e, j in re.findall(r"Job (\d+): simulate (\S+): (\S+)", log)}
    return {started[i] for i in re.findall(r"Finished jobid: (\d+) \(Rule: simulate\)", log) if i in started}


def incomplete_files(wd: Path) -> set[str]:
    """Outputs Snakemake has marked incomplete (from the error of a plain dry run)."""
    run = snakemake(wd, "-n", *CONFIG[:-2], "--workflow-profile", "none", check=False)
    if "Incomplete files:" not in run.output:
        return set()
    tail = run.output.split("Incomplete files:", 1)[1].splitlines()
    return {line.strip() for line in tail if line.strip().startswith("results/")}


def rerun_after_crash(wd: Path):
    """What a user does after a crash: run the same command again (no --unlock)."""
    run = snakemake(wd, *CONFIG, "--cores", "2", check=False)
    assert run.returncode == 0, f"rerun after the fault failed:\n{run.tail(80)}"
    return run


def snakemake_locks(wd: Path) -> list[Path]:
    return sorted((wd / ".snakemake" / "locks").glob("*.lock"))


def incomplete_markers(wd: Path) -> list[Path]:
    d = wd / ".snakemake" / "incomplete"
    return [p for p in d.rglob("*") if p.is_file()] if d.is_dir() else []


# ----------------------------------------------------------------- SIGKILL mid-run


@pytest.mark.parametrize("target", ["job", "workflow"])
def test_sigkill_mid_run_then_rerun(target, mini_reference, tmp_path):
    wd = mini_workflow(tmp_path / "wd")
    proc = start_snakemake(wd, *CONFIG, "--cores", "1")
    try:
        # a job Snakemake saw finish, and a running one
        pids = wait_for(lambda: finished_jobs(bg_log(wd)) and running_jobs(proc), 90, "a finished and a running job")
        time.sleep(0.3)  # into the running job (its result is written atomically at the end)
        pids = running_jobs(proc) or pids
        # what Snakemake has seen finish (a killed job may already have written its file
        # before dying; Snakemake then rightly discards it as incomplete)
        done_before = finished_jobs(bg_log(wd))
        assert done_before
        if target == "job":
            for pid in pids:
                os.kill(pid, signal.SIGKILL)
        else:  # the machine dies: Snakemake and its jobs, no cleanup at all
            kill_group(proc, signal.SIGKILL)
        rc = wait_exit(proc)
    finally:
        kill_group(proc)
    assert rc != 0, "snakemake reported success although a job was killed"
    if target == "job":
        assert "Error in rule simulate" in bg_log(wd), bg_log(wd)[-3000:]
    # jobs that had finished are still there and valid; the killed one left no result
    assert done_before <= set(job_files(wd))
    rerun_after_crash(wd)
    assert_identical_results(wd, mini_reference, PRESET)
    leftovers = stray_temp_files(wd, PRESET)
    # a SIGKILLed writer cannot clean its temp file; it must never be mistaken for a result
    assert all(p.name.startswith(".") and p.suffix == ".tmp" for p in leftovers)


# the command docs/faults.md documents, without the workflow profile
PLAIN = (*MINI_TARGETS, "--config", f"preset={PRESET}", "--cores", "2")


def test_sigkill_of_snakemake_then_same_command_resumes(mini_reference, tmp_path):
    """SIGKILL of the main Snakemake process mid-run (an out-of-memory kill, a closed
    terminal's kill -9) leaves Snakemake's lock and incomplete markers behind; running the
    identical plain command again resumes, and the results are bit-identical."""
    wd = mini_workflow(tmp_path / "wd")
    proc = start_snakemake(wd, *PLAIN)
    try:
        wait_for(lambda: finished_jobs(bg_log(wd)) and running_jobs(proc), 90, "a finished and a running job")
        os.kill(proc.pid, signal.SIGKILL)  # the main process only: its jobs run on, orphaned
        rc = wait_exit(proc)
    finally:
        kill_group(proc)
    assert rc == -signal.SIGKILL
    # what made the rerun fail before: Snakemake's lock and incomplete markers, and ours
    assert snakemake_locks(wd), "the killed run left no Snakemake lock: the test proves nothing"
    assert incomplete_markers(wd), "the killed run left no incomplete marker: the test proves nothing"
    assert (wd / "results" / PRESET / ".dprl-lock.json").exists()
    t0 = time.monotonic()
    run = snakemake(wd, *PLAIN, check=False)
    assert run.returncode == 0, f"the same command did not resume:\n{run.tail(80)}"
    print(f"\n[resume] rerun of the identical command took {time.monotonic() - t0:.1f} s")
    assert f"pid {proc.pid} " in run.output and "removed its stale lock" in run.output, run.tail(40)
    assert "were incomplete; their jobs are rerun" in run.output, run.tail(40)
    assert_identical_results(wd, mini_reference, PRESET)
    # outputs of the killed jobs were moved aside, not deleted; any that the killed job
    # completed is the very file the rerun wrote
    for aside in (wd / "results" / PRESET).rglob("*.incomplete"):
        done = aside.with_name(aside.name.removesuffix(".incomplete"))
        assert aside.read_bytes() == done.read_bytes(), aside
    # nothing of either run is left: locks, claims, markers
    assert not snakemake_locks(wd) and not incomplete_markers(wd)
    assert not list((wd / ".snakemake" / "dprl-lock-owners").glob("*.json"))
    assert not (wd / "results" / PRESET / ".dprl-lock.json").exists()


def test_live_run_still_stops_a_second_one(mini_reference, tmp_path):
    """The stale-lock recovery never takes a live run's lock: a second identical command
    started while the first runs jobs is refused and changes nothing; the first finishes
    with the reference results."""
    wd = mini_workflow(tmp_path / "wd")
    proc = start_snakemake(wd, *PLAIN[:-1], "1")
    try:
        wait_for(lambda: running_jobs(proc) and list((wd / ".snakemake" / "dprl-lock-owners").glob("*.json")),
                 90, "a run that holds its locks and runs a job")
        locks = {p: p.stat().st_mtime_ns for p in snakemake_locks(wd)}
        assert locks
        second = snakemake(wd, *PLAIN, check=False)
        assert second.returncode != 0, "a second run started beside a live one"
        assert ("IncompleteFilesException" in second.output or "LockException" in second.output
                or "Directory cannot be locked" in second.output), second.tail(40)
        assert "removed its stale lock" not in second.output and "their jobs are rerun" not in second.output
        assert {p: p.stat().st_mtime_ns for p in snakemake_locks(wd)} == locks  # left alone
        assert wait_exit(proc, 300) == 0, bg_log(wd)[-3000:]
    finally:
        kill_group(proc)
    assert_identical_results(wd, mini_reference, PRESET)


def test_full_disk_then_same_command_resumes(mini_reference, tmp_path):
    """The mini workflow on a real small file system (a tmpfs) with about half the space a
    run needs: the run fails; no empty or partial lock or result is left; once space is
    freed the same command finishes with the reference results and no bad benchmark."""
    disk = tmp_path / "disk"
    disk.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64m", "tmpfs", str(disk)], capture_output=True, text=True)
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.strip()} (tests/core/test_full_disk.py simulates ENOSPC)")
    try:
        wd = mini_workflow(disk / "wd")
        st = os.statvfs(disk)
        with open(disk / "filler", "wb") as fh:  # leave 100 KB: a mini run writes about 200 KB
            fh.write(b"\0" * (st.f_bavail * st.f_frsize - 100 * 1024))
        # not the snakemake() helper: it saves the output in the working directory (full)
        cmd = [sys.executable, "-m", "snakemake", *PLAIN]
        failed = subprocess.run(cmd, cwd=wd, capture_output=True, text=True, timeout=SNAKEMAKE_TIMEOUT)
        assert failed.returncode != 0, "the run did not hit the full disk: the test proves nothing"
        assert "No space left on device" in failed.stdout + failed.stderr
        res = wd / "results" / PRESET
        lock = res / ".dprl-lock.json"
        assert not lock.exists() or json.loads(lock.read_text())["pid"] > 0  # never an empty lock
        from dprl.runner.io import read_result

        for f in job_files(wd).values():
            read_result(f)  # every result on disk is complete
        (disk / "filler").unlink()
        run = snakemake(wd, *PLAIN, check=False)
        assert run.returncode == 0, run.tail(80)
        assert_identical_results(wd, mini_reference, PRESET)
        from dprl.analysis.runtimes import read_benchmark

        for b in (res / "benchmarks").rglob("*.tsv"):
            read_benchmark(b)  # every benchmark of a finished job is whole
        assert not lock.exists() and not stray_temp_files(wd, PRESET)
    finally:
        subprocess.run(["umount", "-l", str(disk)], check=False)


def test_sigkill_of_a_bundle_midway_then_rerun(tmp_path):
    """A bundle (several simulations in one Snakemake job, as on SLURM) killed after some
    of its simulations wrote their files: the rerun redoes the bundle and the results
    are bit-identical to an undisturbed one-simulation-per-job run."""
    # simulations of a few seconds each, so that the kill lands inside the bundle
    over = {"counter_error": {**MINI_SMOKE_OVERRIDES["counter_error"],
                              "environments": [{"name": "stream", "T": 2048, "dim": 3, "counters": 2000}]},
            "audit": MINI_SMOKE_OVERRIDES["audit"]}
    ref = copy_workflow(tmp_path / "ref", MINI_EXPERIMENTS, over)
    snakemake(ref, *CONFIG, "--cores", "2")
    bundled = (*MINI_TARGETS, "--config", f"preset={PRESET}", "bundle_seconds=1000",
               "--workflow-profile", "workflow/profiles/default")
    wd = copy_workflow(tmp_path / "wd", MINI_EXPERIMENTS, over)
    proc = start_snakemake(wd, *bundled, "--cores", "1")
    try:
        def bundle_midway():
            pids = running_jobs(proc, "run-bundle")
            return pids if pids and any((wd / "results" / PRESET / "jobs" / "counter_error").rglob("*.csv")) else None

        pids = wait_for(bundle_midway, 120, "a bundle that has written some of its results", interval=0.02)
        for pid in pids:
            os.kill(pid, signal.SIGKILL)
        rc = wait_exit(proc)
    finally:
        kill_group(proc)
    assert rc != 0
    assert "Error in rule simulate_counter_error_b000" in bg_log(wd), bg_log(wd)[-3000:]
    run = snakemake(wd, *bundled, "--cores", "2", check=False)
    assert run.returncode == 0, run.tail(80)
    assert_identical_results(wd, ref, PRESET)
    assert "simulate_counter_error_b000" in run.output  # the bundle was redone


# ------------------------------------------------------ truncated / corrupt results


def test_corrupt_result_detected_named_and_regenerated(mini_reference, tmp_path):
    wd = tmp_path / "wd"
    shutil.copytree(mini_reference, wd, symlinks=True)  # keeps mtimes and .snakemake metadata
    for log in wd.glob("snakemake-*.log"):
        log.unlink()
    files = sorted(job_files(wd).values())
    assert len(files) >= 2
    truncated, corrupt = files[0], files[-1]
    data = truncated.read_bytes()
    truncated.write_bytes(data[: len(data) // 2])  # e.g. a disk filled up, a copy cut short
    raw = bytearray(corrupt.read_bytes())
    i = raw.index(b"\n") + 3  # flip one byte inside the first data row
    raw[i] = ord("7") if raw[i] != ord("7") else ord("3")
    corrupt.write_bytes(bytes(raw))

    # the newer inputs make Snakemake re-aggregate; aggregation must refuse, naming the file
    run = snakemake(wd, *CONFIG, "--cores", "2", "--keep-going", check=False)
    assert run.returncode != 0, "aggregation accepted a truncated/corrupt result file"
    logs = run.output + "".join(p.read_text() for p in (wd / "results" / PRESET / "logs" / "aggregate").glob("*.log"))
    named = {n.removeprefix(str(wd) + "/") for n in re.findall(r"corrupt result file (\S+?):", logs)}
    rel = {str(p.relative_to(wd)) for p in (truncated, corrupt)}
    assert rel <= named, f"message does not name {rel}: {sorted(named)}\n{run.tail(60)}"

    # aggregation moved the corrupt files aside (*.corrupt) so that a plain rerun
    # regenerates them, which is what its message tells the user to do
    for name in named:
        assert not (wd / name).exists() and (wd / (name + ".corrupt")).exists(), name
    snakemake(wd, *CONFIG, "--cores", "2")
    assert_identical_results(wd, mini_reference, PRESET)


def test_silently_corrupted_result_caught_on_forced_reaggregation(mini_reference, tmp_path):
    """Bit rot that keeps the mtime does not trigger Snakemake; re-aggregating (as any
    forced rerun of aggregation does) still catches it and names the file."""
    wd = tmp_path / "wd"
    shutil.copytree(mini_reference, wd, symlinks=True)
    victim = sorted(job_files(wd).values())[0]
    st = victim.stat()
    raw = bytearray(victim.read_bytes())
    raw[-80] ^= 0x01
    victim.write_bytes(bytes(raw))
    os.utime(victim, ns=(st.st_atime_ns, st.st_mtime_ns))
    run = snakemake(wd, *CONFIG, "--cores", "2", "--forcerun", "aggregate", check=False)
    assert run.returncode != 0
    rel = str(victim.relative_to(wd))
    assert f"corrupt result file {rel}" in run.output + "".join(
        p.read_text() for p in (wd / "results" / PRESET / "logs" / "aggregate").glob("*.log")
    )
    snakemake(wd, *CONFIG, "--cores", "2")
    assert_identical_results(wd, mini_reference, PRESET)


def test_default_profile_applies_when_named(tmp_path):
    """The local profile works as documented in workflow/profiles/README.md. (Snakemake discovers a
    workflow profile automatically only in ``profiles/default`` next to the Snakefile; the
    Snakefile sits at the repository root, whose layout is fixed, so the profile is named
    explicitly. Correctness does not depend on it: results are written atomically, so a
    killed job leaves no output to be mistaken for a finished one.)"""
    wd = copy_workflow(tmp_path / "wd", MINI_EXPERIMENTS, MINI_SMOKE_OVERRIDES)
    run = snakemake(wd, "-n", *MINI_TARGETS, "--config", f"preset={PRESET}",
                    "--workflow-profile", "workflow/profiles/default")
    assert "Using workflow specific profile workflow/profiles/default" in run.output, run.output[-2000:]


# ------------------------------------------------------- interrupted and restarted


@pytest.mark.parametrize("how", ["SIGINT-group", "SIGTERM-snakemake"])
def test_interrupt_and_restart(how, mini_reference, tmp_path):
    wd = mini_workflow(tmp_path / "wd")
    proc = start_snakemake(wd, *CONFIG, "--cores", "2")
    try:
        # some jobs finished, others running
        wait_for(
            lambda: "(Rule: simulate)" in bg_log(wd) and running_jobs(proc), 120,
            "a job Snakemake saw finish and a running one",
        )
        # Snakemake 9.27's SIGTERM handler takes the scheduler lock; a SIGTERM that lands
        # while the main thread holds it (selecting jobs, finishing one) deadlocks
        # Snakemake (upstream race, seen in 2 of 15 tries with the ILP scheduler, 0 of 40
        # with the greedy one our profiles use). Let the scheduler settle first, as it
        # is most of the time when a batch system's SIGTERM arrives.
        time.sleep(0.2)
        if how == "SIGINT-group":
            os.killpg(proc.pid, signal.SIGINT)  # Ctrl-C in the terminal
        else:
            proc.send_signal(signal.SIGTERM)  # e.g. the login session or a batch system ends
        rc = wait_exit(proc)
    finally:
        kill_group(proc)
    assert rc != 0
    # A job interrupted after writing its file is still "incomplete" for Snakemake (it
    # never saw the job succeed), and is rightly redone; everything else must be reused.
    incomplete = incomplete_files(wd)
    finished = {k: p.stat().st_mtime_ns for k, p in job_files(wd).items() if f"results/{PRESET}/jobs/{k}" not in incomplete}
    assert finished
    assert not list((wd / ".snakemake" / "locks").glob("*")), "interrupted snakemake left its lock behind"
    snakemake(wd, *CONFIG, "--cores", "2")
    after = job_files(wd)
    # nothing finished before the interrupt was lost or recomputed
    assert {k: after[k].stat().st_mtime_ns for k in finished} == finished
    assert_identical_results(wd, mini_reference, PRESET)
    assert not stray_temp_files(wd, PRESET)


# ------------------------------------------------ concurrent seeds, distinct files


def test_job_paths_unique_and_seed_specific():
    """Static: every job of every preset has its own output path, which names its seed;
    log and benchmark paths are derived from the same wildcards, so they are unique too."""
    from dprl.config.load import load_config_file

    for preset in ("smoke", "default", "full"):
        cfg = load_config_file(str(REPO / "config.yaml"), preset)
        n_jobs = sum(len(exp.jobs) for exp in cfg.experiments.values())
        paths = [j.path for exp in cfg.experiments.values() for j in exp.jobs]
        assert len(set(paths)) == len(paths) == n_jobs == len(cfg.jobs), f"{preset}: job paths collide"
        specs = collections.Counter(json.dumps(j.spec.to_dict(), sort_keys=True, default=str) for j in cfg.jobs.values())
        assert max(specs.values()) == 1, f"{preset}: two jobs with the same spec"
        for path, job in cfg.jobs.items():
            assert f"seed{job.spec.seed}" in path, f"{path} does not name seed {job.spec.seed}"


TRACER = textwrap.dedent(
    '''
    # Loaded through PYTHONPATH by every Python process of the test run: records every
    # file a `dprl run-job` process opens for writing, creates or renames into place.
    import builtins, os, sys, time
    _dir = os.environ.get("DPRL_TRACE_WRITES")
    if _dir and "run-job" in sys.argv:
        _log = open(os.path.join(_dir, f"{os.getpid()}.tsv"), "a", buffering=1)
        _log.write(f"{time.time()}\\tstart\\t{' '.join(sys.argv)}\\n")
        _open, _os_open, _replace, _rename = builtins.open, os.open, os.replace, os.rename

        def _rec(kind, path):
            try:
                _log.write(f"{time.time()}\\t{kind}\\t{os.path.abspath(os.fsdecode(path))}\\n")
            except Exception:
                pass

        def open(file, mode="r", *a, **k):
            if isinstance(file, (str, bytes, os.PathLike)) and any(c in mode for c in "wax+"):
                _rec("open", file)
            return _open(file, mode, *a, **k)

        def os_open(path, flags, *a, **k):
            if flags & (os.O_WRONLY | os.O_RDWR | os.O_CREAT):
                _rec("open", path)
            return _os_open(path, flags, *a, **k)

        def replace(src, dst, *a, **k):
            _rec("rename", dst)
            return _replace(src, dst, *a, **k)

        def rename(src, dst, *a, **k):
            _rec("rename", dst)
            return _rename(src, dst, *a, **k)

        builtins.open, os.open, os.replace, os.rename = open, os_open, replace, rename
        import atexit
        atexit.register(lambda: _log.write(f"{time.time()}\\tend\\t\\n"))
        # compiled jobs finish in well under a second; hold each job process a little so
        # that jobs the scheduler starts together are seen to run together
        time.sleep(1.5)
    '''
)


def test_concurrent_seeds_never_write_the_same_file(mini_reference, tmp_path):
    """Dynamic: run the mini workflow on 2 cores with every write of every job process
    traced; jobs (of different seeds and algorithms) overlap in time, and no file is
    written by two job processes."""
    wd = mini_workflow(tmp_path / "wd")
    trace = tmp_path / "trace"
    trace.mkdir()
    hook = tmp_path / "hook"
    hook.mkdir()
    (hook / "sitecustomize.py").write_text(TRACER)
    env = dict(os.environ, DPRL_TRACE_WRITES=str(trace), PYTHONPATH=os.pathsep.join(filter(None, [str(hook), os.environ.get("PYTHONPATH")])))
    snakemake(wd, *CONFIG, "--cores", "2", env=env)

    writers: dict[str, set[int]] = collections.defaultdict(set)
    spans, seeds = {}, {}
    for f in trace.glob("*.tsv"):
        pid = int(f.stem)
        lines = [line.split("\t", 2) for line in f.read_text().splitlines()]
        t = [float(x[0]) for x in lines]
        spans[pid] = (min(t), max(t))
        m = re.search(r'"seed": (\d+)', lines[0][2])
        seeds[pid] = int(m.group(1)) if m else None
        for _, kind, path in lines:
            if kind in ("open", "rename") and path.startswith(str(wd)):
                writers[path].add(pid)
    n_jobs = len(job_files(mini_reference))
    assert len(spans) == n_jobs, f"traced {len(spans)} job processes, expected {n_jobs}"
    shared = {p: sorted(w) for p, w in writers.items() if len(w) > 1}
    assert not shared, f"files written by more than one job process: {shared}"
    # temp files are per process and live next to their target
    tmps = [p for p in writers if p.endswith(".tmp")]
    assert tmps and all(Path(p).name.startswith(".") for p in tmps)
    # the test is meaningful only if jobs really ran at the same time. (Which pairs the
    # scheduler starts together varies between runs; the write check above covers every
    # pair of processes, so any two concurrent jobs show that concurrency happened.)
    overlapping = [
        (a, b) for a in spans for b in spans
        if a < b and spans[a][0] < spans[b][1] and spans[b][0] < spans[a][1]
    ]
    assert overlapping, ("no two jobs overlapped in time; the test proved nothing: "
                         f"{sorted((round(a, 2), round(b, 2), seeds[pid]) for pid, (a, b) in spans.items())}")
    assert_identical_results(wd, mini_reference, PRESET)
