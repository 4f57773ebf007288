"""Clearing what a killed Snakemake left behind, and only that (dprl.runner.snakemake_state).

Locks and incomplete markers are written by Snakemake's own file persistence (the
version installed), so the tests read the layout Snakemake really uses."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from snakemake.persistence.file import FilePersistence

from dprl.runner import snakemake_state as st

CLAIMER = """
import sys, time
from dprl.runner.snakemake_state import claim
claim(sys.argv[1], sys.argv[2:], "snakemake --cores 2")
print("ok", flush=True)
time.sleep(60)
"""


def killed_run(tmp_path: Path, outputs: list[str], external_jobid: str | None = None) -> tuple[Path, list[Path]]:
    """A working directory as a Snakemake run killed mid-run leaves it: its lock files,
    an incomplete marker and a (partial) file per output, and its claim, by a process
    now dead. Returns ``.snakemake`` and the lock files."""
    sdir = tmp_path / ".snakemake"
    pers = FilePersistence(path=sdir)
    pers._write_locks("input", ["results/in.csv"])
    pers._write_locks("output", outputs)
    for out in outputs:
        (tmp_path / out).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / out).write_text("partial")
        pers._mark_incomplete(out, external_jobid)
    locks = st.lock_files(sdir)
    proc = subprocess.Popen([sys.executable, "-c", CLAIMER, str(sdir), *map(str, locks)], stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "ok"
    proc.kill()  # SIGKILL: no atexit, the claim stays
    proc.wait()
    assert len(list((sdir / st.OWNERS).glob("*.json"))) == 1
    return sdir, locks


def test_dead_run_is_cleared(tmp_path):
    # the second key's base64 is longer than a file name may be: Snakemake splits it into @-dirs
    outs = ["results/smoke/jobs/a/seed0.csv", "results/smoke/jobs/" + "/".join(["x" * 100] * 3) + "/seed1.csv"]
    sdir, locks = killed_run(tmp_path, outs)
    assert len(locks) == 2
    assert any(p.name.startswith("@") for p in (sdir / "incomplete").rglob("*"))
    rec = st.recover(sdir, tmp_path)
    assert sorted(rec.cleared_locks) == sorted(str(p) for p in locks) and not st.lock_files(sdir)
    assert sorted(rec.incomplete) == sorted(outs) and not rec.kept_markers
    # moved aside, not deleted: Snakemake reruns their jobs
    assert not any((tmp_path / o).exists() for o in outs)
    assert all((tmp_path / (o + ".incomplete")).read_text() == "partial" for o in outs)
    assert not [p for p in (sdir / "incomplete").rglob("*") if p.is_file()]
    assert not list((sdir / st.OWNERS).glob("*.json"))
    msg = "\n".join(rec.messages())
    assert "was killed; removed its stale lock (0.input.lock, 0.output.lock)" in msg and "2 output(s) of a run that stopped" in msg
    # Snakemake now sees neither a lock nor an incomplete file
    pers = FilePersistence(path=sdir)
    assert not list(pers._read_locks()) and not pers._filter_incomplete_keys(outs)


def test_marker_keys_decode_as_snakemake_encodes(tmp_path):
    pers = FilePersistence(path=tmp_path / ".snakemake")
    keys = ["results/a b/ü.csv", "r/" + "y" * 700 + ".tsv"]
    for k in keys:
        pers._mark_incomplete(k, None)
    inc = tmp_path / ".snakemake" / "incomplete"
    assert sorted(st.marker_key(inc, p) for p in inc.rglob("*") if p.is_file()) == sorted(keys)


def test_live_owner_keeps_everything(tmp_path):
    sdir = tmp_path / ".snakemake"
    pers = FilePersistence(path=sdir)
    pers._write_locks("output", ["results/out.csv"])
    pers._mark_incomplete("results/out.csv", None)
    (tmp_path / "results").mkdir()
    (tmp_path / "results/out.csv").write_text("being written")
    locks = st.lock_files(sdir)
    live = subprocess.Popen([sys.executable, "-c", CLAIMER, str(sdir), *map(str, locks)], stdout=subprocess.PIPE, text=True)
    try:
        assert live.stdout.readline().strip() == "ok"
        rec = st.recover(sdir, tmp_path)
        assert not rec.cleared_locks and not rec.incomplete and rec.live_locks
        assert st.lock_files(sdir) == locks and (tmp_path / "results/out.csv").exists()
        assert pers._filter_incomplete_keys(["results/out.csv"])
    finally:
        live.kill()
        live.wait()
    # once it is gone, the same lock is stale
    assert st.recover(sdir, tmp_path).incomplete == ["results/out.csv"]


def test_unclaimed_or_replaced_lock_is_not_removed(tmp_path):
    sdir, locks = killed_run(tmp_path, ["results/o.csv"])
    # a new run rewrote a lock file of the same name since: not the file the dead run claimed
    locks[1].unlink()
    locks[1].write_text("results/o.csv\nresults/p.csv\n")
    rec = st.recover(sdir, tmp_path)
    assert rec.cleared_locks == [str(locks[0])] and st.lock_files(sdir) == [locks[1]]
    assert rec.live_locks and not rec.incomplete and (tmp_path / "results/o.csv").exists()
    # a lock no dprl run claims at all is never removed either
    assert st.recover(sdir, tmp_path).live_locks and st.lock_files(sdir) == [locks[1]]


def test_other_host_claim_is_not_trusted(tmp_path):
    sdir = tmp_path / ".snakemake"
    FilePersistence(path=sdir)._write_locks("output", ["results/o.csv"])
    lock = st.lock_files(sdir)[0]
    (sdir / st.OWNERS).mkdir()
    (sdir / st.OWNERS / "1.json").write_text(json.dumps(
        {"pid": 1, "host": "elsewhere.example", "locks": [{"path": str(lock), "ino": lock.stat().st_ino,
                                                            "mtime_ns": lock.stat().st_mtime_ns, "size": lock.stat().st_size}]}))
    rec = st.recover(sdir, tmp_path)
    assert not rec.cleared_locks and lock.exists()


@pytest.mark.parametrize("how", ["cluster job", "dry run", "corrupt marker"])
def test_markers_left_to_snakemake(how, tmp_path):
    sdir, _ = killed_run(tmp_path, ["results/o.csv"], external_jobid="4242" if how == "cluster job" else None)
    if how == "corrupt marker":
        next(p for p in (sdir / "incomplete").rglob("*") if p.is_file()).write_text("")  # killed mid-write
    rec = st.recover(sdir, tmp_path, clear_incomplete=how != "dry run")
    assert rec.cleared_locks  # the stale lock goes in every case
    assert not rec.incomplete and rec.kept_markers and (tmp_path / "results/o.csv").exists()
    assert ("4242" in rec.kept_markers[0]) == (how == "cluster job")


def test_claim_is_released_at_exit(tmp_path):
    sdir = tmp_path / ".snakemake"
    code = f"from dprl.runner.snakemake_state import claim; claim({str(sdir)!r}, [])"
    subprocess.run([sys.executable, "-c", code], check=True)
    assert not list((sdir / st.OWNERS).glob("*.json"))
    st.claim(sdir, [])
    assert (sdir / st.OWNERS / f"{os.getpid()}.json").exists()
    st.release(sdir)
    assert not list((sdir / st.OWNERS).glob("*.json"))


def test_runs_jobs_reads_snakemake_command_lines():
    exe = "/usr/bin/snakemake"
    assert st.runs_jobs([exe, "--cores", "2", "--config", "preset=smoke"])
    assert st.runs_jobs([str(Path(st.__file__).parents[3] / "x" / "snakemake" / "__main__.py"), "--cores", "1"])
    for extra in (["-n"], ["-np"], ["--dry-run"], ["--touch"], ["--unlock"], ["--nolock"]):
        assert not st.runs_jobs([exe, "--cores", "2", *extra]), extra
    assert not st.runs_jobs(["/usr/bin/python", "--cores", "2"])  # not Snakemake: unknown
