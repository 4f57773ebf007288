"""Resuming after Snakemake's main process was killed (SIGKILL, out of memory, reboot).

Snakemake 9 (file persistence, its default) keeps two kinds of state in ``.snakemake``
that a killed run leaves behind, and each stops the next plain ``snakemake``:

- ``locks/<n>.input.lock`` and ``<n>.output.lock``: the files the run reads and writes,
  one path a line. They do not say which process wrote them, so Snakemake cannot tell a
  dead run's lock from a live one's and refuses (``LockException``, "run --unlock").
- ``incomplete/<base64 of the output path>``: a marker per output of a started job,
  ``{"external_jobid": ...}``; after a kill they mark outputs that may be partial, and
  Snakemake refuses (``IncompleteFilesException``) unless given ``--rerun-incomplete``.

The workflow records which process holds which lock files (:func:`claim`, from its
``onstart`` hook, when Snakemake has just written them): ``.snakemake/dprl-lock-owners/
<pid>.json`` with the process's identity (pid, start time, host; as for the results lock,
:mod:`dprl.runner.lock`) and each lock file's inode, mtime and size. When the Snakefile
is parsed, :func:`recover` then proves a lock stale before removing it: its owner ran on
this host and is gone, and the lock file is still the very file it claimed. A lock nobody
claims (a run killed in the second between taking Snakemake's lock and ``onstart``, a
run of other code) or claimed by a live process or one on another host is left alone,
so a live run still stops a second one. Incomplete markers are then cleared only when no
lock file is left and no live run is recorded (markers are written only under a lock, so
a job that is still running has one), and their outputs are moved aside to
``<name>.incomplete``, not deleted (``--rerun-incomplete`` would delete them): Snakemake
reruns the jobs, and a complete file whose job Snakemake never saw finish (it died, or
could not record it on a full disk) is kept for inspection. Markers of cluster jobs (an
external job id: the job may still run after Snakemake died) are left to Snakemake.
"""

from __future__ import annotations

import atexit
import base64
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from collections.abc import Callable
from typing import Any

from dprl.runner.io import atomic_write_text
from dprl.runner.lock import describe, holder_alive, process_identity

OWNERS = "dprl-lock-owners"


@dataclass
class Recovery:
    """What :func:`recover` found and did."""

    cleared_locks: list[str] = field(default_factory=list)
    dead_owners: list[dict[str, Any]] = field(default_factory=list)
    live_locks: bool = False  # a lock that is not proven stale remains
    incomplete: list[str] = field(default_factory=list)  # outputs whose marker was cleared (moved aside)
    kept_markers: list[str] = field(default_factory=list)  # markers left to Snakemake, and why

    def messages(self) -> list[str]:
        """One line per action, for the console."""
        out = []
        for owner in self.dead_owners:
            out.append(f"dprl: the Snakemake run {describe(owner)} was killed; removed its stale lock "
                       f"({', '.join(Path(p).name for p in owner.get('cleared', [])) or 'already gone'})")
        if self.incomplete:
            out.append(f"dprl: {len(self.incomplete)} output(s) of a run that stopped were incomplete; their jobs "
                       f"are rerun (any file moved aside to *.incomplete): {', '.join(self.incomplete[:5])}"
                       + (" ..." if len(self.incomplete) > 5 else ""))
        out += [f"dprl: {why}" for why in self.kept_markers]
        return out


def _owners_dir(snakemake_dir: Path) -> Path:
    return Path(snakemake_dir) / OWNERS


def _identity(path: Path) -> dict[str, int] | None:
    try:
        st = path.stat()
    except FileNotFoundError:
        return None
    return {"ino": st.st_ino, "mtime_ns": st.st_mtime_ns, "size": st.st_size}


def claim(snakemake_dir: str | Path, lock_files: list[str], command: str = "") -> Path:
    """Record that this process holds ``lock_files`` (Snakemake's, just written); the
    record is removed when the process exits normally (:func:`release`, atexit)."""
    record = {
        **process_identity(),
        "command": command,
        "locks": [{"path": str(Path(f).resolve()), **(_identity(Path(f)) or {})} for f in lock_files],
    }
    path = _owners_dir(Path(snakemake_dir)) / f"{record['pid']}.json"
    atomic_write_text(path, json.dumps(record, sort_keys=True) + "\n")
    atexit.register(release, snakemake_dir)
    return path


def release(snakemake_dir: str | Path) -> None:
    """Remove this process's claim, if any."""
    (_owners_dir(Path(snakemake_dir)) / f"{os.getpid()}.json").unlink(missing_ok=True)


def _read_owners(snakemake_dir: Path) -> list[tuple[Path, dict[str, Any] | None]]:
    d = _owners_dir(snakemake_dir)
    out = []
    for p in sorted(d.glob("*.json")) if d.is_dir() else []:
        try:
            rec = json.loads(p.read_text())
            out.append((p, rec if isinstance(rec, dict) and isinstance(rec.get("pid"), int) else None))
        except (OSError, ValueError):
            out.append((p, None))  # cannot be proven dead
    return out


def lock_files(snakemake_dir: str | Path) -> list[Path]:
    """Snakemake's lock files (``locks/<n>.input.lock``, ``<n>.output.lock``)."""
    d = Path(snakemake_dir) / "locks"
    return sorted(p for p in d.glob("*.lock") if p.is_file()) if d.is_dir() else []


def marker_key(incomplete_dir: Path, marker: Path) -> str | None:
    """The output path an incomplete marker stands for (Snakemake stores it base64-encoded,
    split into ``@``-prefixed directory names when longer than a file name may be)."""
    parts = marker.relative_to(incomplete_dir).parts
    chunks = [p[1:] if p.startswith("@") else p for p in parts[:-1]] + [parts[-1]]
    try:
        return base64.urlsafe_b64decode("".join(chunks).encode()).decode()
    except (ValueError, UnicodeDecodeError):
        return None


def _clear_stale_locks(snakemake_dir: Path, rec: Recovery) -> bool:
    """Remove the lock files claimed by dead processes of this host; whether any live or
    unknown owner is recorded."""
    live_owner = False
    for path, owner in _read_owners(snakemake_dir):
        if owner is None or owner["pid"] == os.getpid():
            live_owner = live_owner or owner is None
            continue
        if holder_alive(owner) is not False:  # alive, or on another host
            live_owner = True
            continue
        cleared = []
        for lock in owner.get("locks", []):
            lp = Path(lock["path"])
            # the very file it wrote: a new run may have written a lock of the same name
            if _identity(lp) == {k: lock.get(k) for k in ("ino", "mtime_ns", "size")}:
                lp.unlink(missing_ok=True)
                cleared.append(str(lp))
                rec.cleared_locks.append(str(lp))
        rec.dead_owners.append({**owner, "cleared": cleared})
        path.unlink(missing_ok=True)
    return live_owner


def recover(
    snakemake_dir: str | Path = ".snakemake",
    workdir: str | Path = ".",
    clear_incomplete: bool | Callable[[], bool] = True,
) -> Recovery:
    """Clear what a killed Snakemake left in ``snakemake_dir`` that provably belongs to no
    live run (see the module docstring). With ``clear_incomplete`` false (a dry run) only
    stale locks are removed; a callable is asked only when there are markers (parsing
    Snakemake's command line takes most of a second). Outputs are resolved against
    ``workdir``."""
    sdir, wd = Path(snakemake_dir), Path(workdir).resolve()
    rec = Recovery()
    live_owner = _clear_stale_locks(sdir, rec)
    rec.live_locks = bool(lock_files(sdir))
    inc = sdir / "incomplete"
    markers = [p for p in sorted(inc.rglob("*")) if p.is_file() and p.name != "migration_underway"] if inc.is_dir() else []
    if not markers:
        return rec
    if rec.live_locks or live_owner:
        return rec  # a run may be running these jobs: Snakemake decides (its lock stops us)
    if not (clear_incomplete() if callable(clear_incomplete) else clear_incomplete):
        rec.kept_markers.append(f"{len(markers)} output(s) of a run that stopped are incomplete; a run (not a dry run) reruns them")
        return rec
    for m in markers:
        key = marker_key(inc, m)
        try:
            external = json.loads(m.read_text()).get("external_jobid")
        except (OSError, ValueError, AttributeError):
            external = "unknown"  # cut short by the kill: a cluster job id cannot be ruled out
        out = (wd / key).resolve() if key is not None else None
        if out is None or wd not in out.parents:
            rec.kept_markers.append(f"incomplete marker {m} does not name a file of this workflow; left to Snakemake")
            continue
        if external is not None:
            rec.kept_markers.append(f"{key}: incomplete, of cluster job {external} that may still run; left to Snakemake")
            continue
        if out.is_dir():
            rec.kept_markers.append(f"{key}: an incomplete directory; left to Snakemake (--rerun-incomplete)")
            continue
        # the output first: killed in between, a marker without output is ignored by Snakemake
        try:
            out.replace(out.with_name(out.name + ".incomplete"))
        except FileNotFoundError:
            pass
        m.unlink(missing_ok=True)
        rec.incomplete.append(key)
    return rec


def runs_jobs(argv: list[str]) -> bool:
    """Whether the Snakemake command line ``argv`` (``sys.argv``) runs jobs under its lock:
    not a dry run, ``--touch``, ``--unlock`` or ``--nolock`` (only then may incomplete
    outputs be removed). False if ``argv`` is not a Snakemake command line."""
    prog = Path(argv[0]).name if argv else ""
    if prog != "snakemake" and not argv[0].endswith(os.path.join("snakemake", "__main__.py")):
        return False
    from snakemake.cli import get_argument_parser

    try:
        args, _ = get_argument_parser().parse_known_args(argv[1:])
    except SystemExit:  # argparse refused it: Snakemake will say why
        return False
    return not any(getattr(args, name, False) for name in ("dryrun", "touch", "unlock", "nolock"))
