"""A full disk fails cleanly: one-line errors from ``dprl``, no empty lock, result or
benchmark file taken for a good one, no valid result removed.

The disk is a real one: a tmpfs of a few hundred KB mounted in the test's temporary
directory and filled up (the kernel returns ENOSPC as on any full disk); a read-only
tmpfs gives EROFS. Mounting needs root (CAP_SYS_ADMIN); where it is not permitted these
tests are skipped, and ``test_atomic_write_on_enospc_simulated`` still covers the write
path by making ``os.fsync`` fail with ENOSPC."""

from __future__ import annotations

import errno
import json
import os
import re
import subprocess
import sys
from contextlib import contextmanager
from pathlib import Path

import pytest

from dprl.analysis.runtimes import BadBenchmark, read_benchmark, runtime_table
from dprl.cli import main
from dprl.runner.io import atomic_write_bytes, read_result, write_result
from dprl.runner.lock import ResultsLocked, acquire

REPO = Path(__file__).resolve().parents[2]


def smoke_payload() -> str:
    """The ``--spec`` payload of a fast job of the smoke preset (what the rule passes)."""
    from dprl.config.load import load_config_file

    cfg = load_config_file(str(REPO / "config.yaml"), "smoke")
    job = next(j for p, j in sorted(cfg.jobs.items()) if p.startswith("jobs/counter_error/"))
    return json.dumps({"spec": job.spec.to_dict(), "labels": job.labels}, sort_keys=True, default=float)


@contextmanager
def tmpfs(path: Path, size: str = "512k", readonly: bool = False):
    path.mkdir(parents=True, exist_ok=True)
    opts = f"size={size}" + (",ro" if readonly else "")
    got = subprocess.run(["mount", "-t", "tmpfs", "-o", opts, "tmpfs", str(path)], capture_output=True, text=True)
    if got.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here ({got.stderr.strip()}): the simulated ENOSPC test covers writes")
    try:
        yield path
    finally:
        subprocess.run(["umount", "-l", str(path)], check=False)


def fill(disk: Path) -> None:
    """Use up every free byte of ``disk`` (new empty files can still be created, as on a
    real full disk: a tmpfs limits blocks, not inodes)."""
    fd = os.open(disk / "filler", os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    try:
        chunk = 1 << 16
        while chunk:  # unbuffered, down to single bytes: nothing is left
            try:
                os.write(fd, b"\0" * chunk)
            except OSError as err:
                assert err.errno == errno.ENOSPC
                chunk //= 2
    finally:
        os.close(fd)


@pytest.fixture
def full_disk(tmp_path):
    with tmpfs(tmp_path / "disk") as disk:
        (disk / "results").mkdir()
        fill(disk)
        yield disk


def no_trace(disk: Path) -> list[Path]:
    """Files left under results/ (temporary files of atomic writes included)."""
    return sorted(p for p in (disk / "results").rglob("*") if p.is_file())


def test_lock_not_written_on_full_disk(full_disk):
    lock = full_disk / "results" / "smoke" / ".dprl-lock.json"
    lock.parent.mkdir()
    with pytest.raises(OSError) as exc:
        acquire(lock, full_disk)
    assert exc.value.errno == errno.ENOSPC
    assert no_trace(full_disk) == []  # neither an empty lock nor its temporary file


def test_empty_or_unreadable_lock_is_refused_by_name(tmp_path):
    lock = tmp_path / ".dprl-lock.json"
    unreadable = "cannot be read (not a lock written by dprl)"
    for content, what in ((b"", "is empty (0 bytes)"), (b'{"pid": nu', unreadable), (b"[]", unreadable)):
        lock.write_bytes(content)
        with pytest.raises(ResultsLocked, match=re.escape(f"lock file {lock} {what}, so it names no run") + ".*" + re.escape(f"delete {lock}")):
            acquire(lock, tmp_path)
        assert lock.read_bytes() == content  # not taken over, not removed


def run_cli(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "dprl", *args], cwd=cwd, capture_output=True, text=True, timeout=300)


def test_run_job_on_full_disk_one_line_and_keeps_the_valid_result(tmp_path):
    payload = smoke_payload()
    with tmpfs(tmp_path / "disk") as disk:
        out = disk / "results" / "jobs" / "seed0.csv"
        got = run_cli("run-job", "--spec", payload, "--out", str(out), cwd=tmp_path)
        assert got.returncode == 0, got.stderr
        valid = out.read_bytes()
        read_result(out)
        fill(disk)
        got = run_cli("run-job", "--spec", payload, "--out", str(out), cwd=tmp_path)
        assert got.returncode == 2
        errors = [line for line in got.stderr.splitlines() if line.startswith("dprl: error")]
        assert errors == [f"dprl: error: No space left on device writing {out} (errno ENOSPC); nothing was "
                          "written there: free space (or remount read-write) and rerun"], got.stderr
        assert "Traceback" not in got.stderr
        # the result written before is untouched and no partial file is left beside it
        assert out.read_bytes() == valid
        assert [p.name for p in out.parent.iterdir()] == ["seed0.csv"]


def test_read_only_file_system_one_line(tmp_path, capsys):
    with tmpfs(tmp_path / "ro", readonly=True) as ro:
        rc = main(["manifest", "--out", str(ro / "m.json"), "--preset", "smoke", "--jobs-dir", str(tmp_path),
                   "--cores", "1", "--runtimes", str(write_runtimes(tmp_path)), "--config-hash", "x"])
    err = capsys.readouterr().err
    assert rc == 2 and "Traceback" not in err
    assert f"dprl: error: Read-only file system writing {ro}" in err and "(errno EROFS)" in err


def write_runtimes(d: Path) -> Path:
    p = d / "runtimes.csv"
    p.write_text("experiment,jobs\n")
    return p


def test_atomic_write_on_enospc_simulated(tmp_path, monkeypatch):
    """Without a small file system: ``os.fsync`` fails with ENOSPC, as it does on a full
    disk when the data are flushed."""
    target = tmp_path / "r.csv"
    target.write_bytes(b"old and valid\n")

    def full(fd):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(os, "fsync", full)
    with pytest.raises(OSError) as exc:
        atomic_write_bytes(target, b"new")
    assert exc.value.errno == errno.ENOSPC and exc.value.filename == str(target)
    assert target.read_bytes() == b"old and valid\n" and [p.name for p in tmp_path.iterdir()] == ["r.csv"]


def test_benchmark_written_on_full_disk_is_detected(tmp_path, caplog):
    """Snakemake writes benchmark files in place (not atomically): on a full disk it
    leaves an empty one. Readers name it and leave its job out; good files still count."""
    from snakemake.benchmark import BenchmarkRecord, write_benchmark_records

    good = tmp_path / "benchmarks" / "exp" / "seed0.tsv"
    good.parent.mkdir(parents=True)
    write_benchmark_records([BenchmarkRecord(running_time=1.5)], str(good), False)
    with tmpfs(tmp_path / "disk") as disk:
        bad = disk / "benchmarks" / "exp" / "seed1.tsv"
        bad.parent.mkdir(parents=True)
        fill(disk)
        with pytest.raises(OSError):
            write_benchmark_records([BenchmarkRecord(running_time=2.5)], str(bad), False)
        assert bad.exists() and bad.stat().st_size == 0  # what Snakemake leaves behind
        with pytest.raises(BadBenchmark, match=r"is empty \(0 bytes\)"):
            read_benchmark(bad)
        caplog.set_level("WARNING")
        df = runtime_table([str(good), str(bad)])
    assert list(df["wall_s"]) == [1.5]
    assert f"benchmark file {bad} is empty (0 bytes): its job is left out" in caplog.text


@pytest.mark.parametrize("cut", ["header only", "mid line", "missing"])
def test_truncated_benchmark_is_detected(cut, tmp_path):
    from snakemake.benchmark import BenchmarkRecord, write_benchmark_records

    p = tmp_path / "b.tsv"
    write_benchmark_records([BenchmarkRecord(running_time=3.25)], str(p), False)
    raw = p.read_bytes()
    assert float(read_benchmark(p)["s"].iloc[-1]) == 3.25
    if cut == "header only":
        p.write_bytes(raw[: raw.index(b"\n") + 1])
    elif cut == "mid line":
        p.write_bytes(raw[:-3])
    else:
        p.unlink()
    with pytest.raises(BadBenchmark, match={"header only": "no measurement line", "mid line": "no final newline",
                                            "missing": "missing"}[cut]):
        read_benchmark(p)


def test_manifest_skips_only_the_bad_benchmark(tmp_path):
    from snakemake.benchmark import BenchmarkRecord, write_benchmark_records

    from dprl.analysis.manifest import build_manifest

    res = tmp_path / "results"
    jobs = res / "jobs" / "exp"
    jobs.mkdir(parents=True)
    for name, secs in (("a", 100.0), ("b", None)):
        write_result(jobs / f"{name}.csv", __import__("pandas").DataFrame({"x": [1]}), {"k": name})
        b = res / "benchmarks" / "exp" / f"{name}.tsv"
        b.parent.mkdir(parents=True, exist_ok=True)
        if secs is None:
            b.write_bytes(b"")
        else:
            write_benchmark_records([BenchmarkRecord(running_time=secs)], str(b), False)
    man = build_manifest("smoke", str(res / "jobs"), 1, str(write_runtimes(tmp_path)), "h", reference_episodes=0)
    # the good benchmark still counts: the run started 100 s before its result was written
    assert man["wall_time_s"] >= 100.0
