"""One workflow at a time per results directory.

Snakemake locks its own working directory (``.snakemake/locks``), not the results: two
checkouts whose ``config.yaml`` share a ``results_dir`` would both simulate and write the
same files. The workflow takes this lock when it starts running jobs (``onstart:``) and
releases it when it ends (``onsuccess:``/``onerror:``). The lock file records who holds
it (pid, host, start time, checkout, command) so that the refusal names the other run.
A lock left by a run that died (SIGKILL, reboot) is detected on the same host (its pid is
gone, or now belongs to a process started later) and taken over; on another host, the
message says how to remove it.

The lock file appears complete or not at all: it is written to a temporary file, fsynced,
and hard-linked to its name (the link is the atomic, exclusive step), so a full disk or a
kill leaves no empty lock. A lock file that is empty or unreadable all the same (written
by another tool, damaged) names no run, so whether a run still uses the directory cannot
be checked: it is refused with a message saying so, never taken over as a lock of nobody.
"""

from __future__ import annotations

import datetime as dt
import errno
import json
import os
import socket
import sys
import tempfile
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


def process_identity(pid: int | None = None) -> dict[str, Any]:
    """Who a process is, in the terms :func:`holder_alive` checks: pid, its start time
    (so that a reused pid is not mistaken for it) and host."""
    pid = os.getpid() if pid is None else pid
    return {"pid": pid, "pid_start_ticks": _proc_start_ticks(pid), "host": socket.gethostname()}


def read_lock(path: Path) -> dict[str, Any] | None:
    """The holder recorded in the lock file, ``None`` if there is no lock file.

    Raises :class:`ResultsLocked` if the file exists but names no holder (empty, not
    JSON, no pid/host): nothing proves that no run uses the directory."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return None
    try:
        held = json.loads(raw)
        if not isinstance(held, dict) or not isinstance(held.get("pid"), int) or not held.get("host"):
            raise ValueError("no pid and host")
    except ValueError:
        what = "is empty (0 bytes)" if not raw.strip() else "cannot be read (not a lock written by dprl)"
        raise ResultsLocked(
            f"the lock file {path} {what}, so it names no run: whether another workflow still "
            f"writes {path.parent} cannot be checked. If none does, delete {path} and rerun."
        ) from None
    return held


def _create_exclusive(path: Path, data: bytes) -> bool:
    """Create ``path`` holding ``data`` if it does not exist; whether it did.

    The data goes to a temporary file first (fsynced), which is then hard-linked to
    ``path``: the link fails if ``path`` exists and otherwise makes the complete file
    appear at once. Where hard links are not supported, ``O_EXCL`` creation is the
    fallback, and a failed write removes the partial file."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, 0o644)
        try:
            os.link(tmp, path)
            return True
        except FileExistsError:
            return False
        except OSError as err:
            if err.errno not in (errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EXDEV, errno.EMLINK):
                raise
    finally:
        Path(tmp).unlink(missing_ok=True)
    try:
        xfd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    except FileExistsError:
        return False
    try:
        with os.fdopen(xfd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
    except BaseException:
        path.unlink(missing_ok=True)
        raise
    return True


def acquire(lock_file: str | Path, checkout: str | Path) -> dict[str, Any]:
    """Take the lock for this process, or raise :class:`ResultsLocked` naming the holder.

    An ``OSError`` (full disk, read-only file system) propagates and leaves no lock file."""
    path = Path(lock_file)
    path.parent.mkdir(parents=True, exist_ok=True)
    info = {
        **process_identity(),
        "started": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "checkout": str(Path(checkout).resolve()),
        "command": " ".join(sys.argv),
    }
    data = (json.dumps(info, indent=1, sort_keys=True) + "\n").encode()
    for _ in range(2):
        if _create_exclusive(path, data):
            return info
        held = read_lock(path)
        if held is None:
            continue  # released meanwhile
        if held.get("pid") == info["pid"] and held.get("host") == info["host"]:
            return held  # ours already
        alive = holder_alive(held)
        if alive is False:
            print(f"dprl: taking over the stale lock {path} of a run that is gone ({describe(held)})", file=sys.stderr)
            path.unlink(missing_ok=True)
            continue
        where = "" if alive else " (on another host: cannot check that it still runs; delete the file if it does not)"
        raise ResultsLocked(f"{path.parent} is in use by another workflow: {describe(held)}{where}. "
                            f"Wait for it to finish, or use another results_dir. Lock file: {path}")
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
