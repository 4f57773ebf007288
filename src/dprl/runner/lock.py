"""One workflow at a time per results directory.

Snakemake locks its own working directory (``.snakemake/locks``), not the results: two
checkouts whose ``config.yaml`` share a ``results_dir`` would both simulate and write the
same files. The workflow takes this lock when it starts running jobs (``onstart:``) and
releases it when it ends (``onsuccess:``/``onerror:``). The lock file records who holds
it (pid, host, start time, checkout, command) so that the refusal names the other run.
A lock left by a run that died (SIGKILL, reboot) is detected on the same host (its pid is
gone, or now belongs to a process started later) and taken over; on another host, the
message says how to remove it.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import socket
import sys
from pathlib import Path
from typing import Any

LOCK_NAME = ".dprl-lock.json"


class ResultsLocked(RuntimeError):
    """Another live workflow holds the lock of this results directory."""


def _proc_start_ticks(pid: int) -> int | None:
    """Start time of process ``pid`` (clock ticks since boot, /proc), None if gone."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return int(fh.read().rsplit(")", 1)[1].split()[19])
    except (OSError, IndexError, ValueError):
        return None


def holder_alive(info: dict[str, Any]) -> bool | None:
    """Whether the lock's holder still runs: ``None`` if it runs on another host."""
    if info.get("host") != socket.gethostname():
        return None
    pid = int(info.get("pid", -1))
    if pid <= 0:
        return False
    ticks = _proc_start_ticks(pid)
    if ticks is None:
        try:
            os.kill(pid, 0)  # no /proc: only whether the pid exists
        except ProcessLookupError:
            return False
        except PermissionError:
            return True
        return True
    # the pid may have been reused by a process started after the holder
    return info.get("pid_start_ticks") in (None, ticks)


def describe(info: dict[str, Any]) -> str:
    return (f"pid {info.get('pid')} on {info.get('host')}, started {info.get('started')}, "
            f"checkout {info.get('checkout')}, command: {info.get('command')}")


def acquire(lock_file: str | Path, checkout: str | Path) -> dict[str, Any]:
    """Take the lock for this process, or raise :class:`ResultsLocked` naming the holder."""
    path = Path(lock_file)
    path.parent.mkdir(parents=True, exist_ok=True)
    pid = os.getpid()
    info = {
        "pid": pid,
        "pid_start_ticks": _proc_start_ticks(pid),
        "host": socket.gethostname(),
        "started": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "checkout": str(Path(checkout).resolve()),
        "command": " ".join(sys.argv),
    }
    for _ in range(2):
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        except FileExistsError:
            try:
                held = json.loads(path.read_text())
            except (OSError, ValueError):
                held = {}
            if held.get("pid") == pid and held.get("host") == info["host"]:
                return held  # ours already
            alive = holder_alive(held) if held else False
            if alive is False:
                print(f"dprl: taking over the stale lock {path} of a run that is gone ({describe(held)})", file=sys.stderr)
                path.unlink(missing_ok=True)
                continue
            where = "" if alive else " (on another host: cannot check that it still runs; delete the file if it does not)"
            raise ResultsLocked(f"{path.parent} is in use by another workflow: {describe(held)}{where}. "
                                f"Wait for it to finish, or use another results_dir. Lock file: {path}") from None
        with os.fdopen(fd, "w") as fh:
            json.dump(info, fh, indent=1, sort_keys=True)
            fh.write("\n")
        return info
    raise ResultsLocked(f"could not take the lock {path}")


def release(lock_file: str | Path) -> bool:
    """Remove the lock if this process holds it; returns whether it did."""
    path = Path(lock_file)
    try:
        held = json.loads(path.read_text())
    except (OSError, ValueError):
        return False
    if held.get("pid") == os.getpid() and held.get("host") == socket.gethostname():
        path.unlink(missing_ok=True)
        return True
    return False
