"""One workflow at a time per results directory (dprl.runner.lock)."""

import json
import socket
import subprocess
import sys

import pytest

from dprl.runner.lock import ResultsLocked, _proc_start_ticks, acquire, release


def test_acquire_release(tmp_path):
    lock = tmp_path / "res" / ".dprl-lock.json"
    info = acquire(lock, tmp_path)
    held = json.loads(lock.read_text())
    assert held == info and held["checkout"] == str(tmp_path.resolve()) and held["host"] == socket.gethostname()
    assert acquire(lock, tmp_path)["pid"] == info["pid"]  # re-entrant for the holder
    assert release(lock) and not lock.exists()
    assert not release(lock)


def test_live_holder_is_named_and_its_lock_kept(tmp_path):
    lock = tmp_path / ".dprl-lock.json"
    holder = subprocess.Popen([sys.executable, "-c", "import sys, time; from dprl.runner.lock import acquire; acquire(sys.argv[1], '/other/checkout'); print('ok', flush=True); time.sleep(60)", str(lock)],
                              stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "ok"
        with pytest.raises(ResultsLocked, match=rf"in use by another workflow: pid {holder.pid} on {socket.gethostname()}, started .*checkout /other/checkout"):
            acquire(lock, tmp_path)
        assert not release(lock) and lock.exists()  # not ours: left alone
    finally:
        holder.kill()
        holder.wait()
    # the holder died without releasing: its lock is stale and taken over
    assert acquire(lock, tmp_path)["checkout"] == str(tmp_path.resolve())


def test_reused_pid_is_stale(tmp_path):
    lock = tmp_path / ".dprl-lock.json"
    # our own pid, but "started" at another time: a process that reused a dead holder's pid
    import os

    lock.write_text(json.dumps({"pid": os.getppid(), "pid_start_ticks": (_proc_start_ticks(os.getppid()) or 0) + 1, "host": socket.gethostname()}))
    assert acquire(lock, tmp_path)["pid"] == os.getpid()


def test_other_host_is_refused(tmp_path):
    lock = tmp_path / ".dprl-lock.json"
    lock.write_text(json.dumps({"pid": 1, "host": "elsewhere.example", "started": "2026-01-01T00:00:00+00:00", "checkout": "/x", "command": "snakemake"}))
    with pytest.raises(ResultsLocked, match="pid 1 on elsewhere.example.*another host: cannot check"):
        acquire(lock, tmp_path)
