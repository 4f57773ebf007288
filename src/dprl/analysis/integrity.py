"""Every result checked against its job, every table against its inputs.

A job file carries its spec and labels (``runner/io.py``); its checksum proves it is
intact, not that it belongs where it lies: ``cp seed0.csv seed1.csv`` makes an intact
file that counts seed 0 twice. So a job file is also checked against its path (the path
built from the spec and labels stored in it must be the one it lies at) and, when a
config is at hand, against the job the config expects at that path (spec and labels).

An aggregate table gets a sidecar ``<experiment>.inputs.json`` written with it: the
SHA-256 of the table and of every job file it was built from. A table is good when its
bytes still hash to the recorded value and each input still hashes to what was
aggregated (and, with a config, the inputs are exactly the experiment's jobs).

Every check returns all problems found, one line per file, so one run names every bad
file. ``dprl verify`` runs all of them; the workflow runs the job checks before
aggregation (rule ``verify_jobs``), aggregation re-checks its inputs, and figures and
claims check their tables.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dprl.runner.io import CorruptResultError, atomic_write_text, read_result
from dprl.runner.job import canonical_json, job_path

SIDECAR_SUFFIX = ".inputs.json"


class IntegrityError(RuntimeError):
    """Some results or tables are corrupt or misplaced; the message names every one."""

    def __init__(self, problems: list[str], what: str = "integrity check") -> None:
        self.problems = problems
        super().__init__(f"{what} found {len(problems)} bad file(s):\n  " + "\n  ".join(problems))


def sha256_file(path: str | Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def _same(a: Any, b: Any) -> bool:
    """Equal as stored JSON (floats and tuples normalised the way result headers are)."""
    return canonical_json(a) == canonical_json(b)


def expected_member(job: Any) -> dict[str, Any]:
    """What a config's ``Job`` expects in its file's header: ``{"spec", "labels"}``."""
    return {"spec": job.spec.to_dict(), "labels": job.labels}


def check_job_meta(path: str | Path, meta: dict[str, Any], expected: dict[str, Any] | None = None) -> list[str]:
    """Problems of an intact job file's header: the path its spec and labels build must
    be the file's own; with ``expected`` (``{"spec", "labels"}`` of the config's job at
    this path, :func:`expected_member`), spec and labels must equal the config's."""
    out = []
    spec, labels = meta.get("spec") or {}, meta.get("labels") or {}
    try:
        built = job_path(spec["experiment"], labels, spec["seed"])
    except (KeyError, TypeError):
        return [f"{path}: header has no complete spec and labels"]
    if not str(path).endswith("/" + built) and str(path) != built:
        return [f"{path}: holds the result of {built} (spec seed {spec['seed']}), not of this path"]
    if expected is not None:
        want = expected["spec"]
        if not _same(spec, want):
            diff = sorted(k for k in want if not _same(spec.get(k), want[k]))
            out.append(f"{path}: spec differs from the current config's job ({', '.join(diff)})")
        elif not _same(labels, expected["labels"]):
            out.append(f"{path}: labels differ from the current config's job")
    return out


def check_job_file(path: str | Path, expected: dict[str, Any] | None = None) -> tuple[list[str], tuple[Any, dict] | None]:
    """All problems of one job file, and its ``(table, meta)`` if it is intact."""
    try:
        df, meta = read_result(path)
    except CorruptResultError as err:
        return [str(err)], None
    return check_job_meta(path, meta, expected), (df, meta)


def quarantine(path: Path) -> Path | None:
    """Move a bad file aside (``<name>.corrupt``) so that the next ``snakemake`` run
    regenerates it (``None`` if it is gone already: another check moved it)."""
    bad = path.with_name(path.name + ".corrupt")
    try:
        path.replace(bad)
    except FileNotFoundError:
        return None
    return bad


def tables_built_from(preset_dir: str | Path, job_files: list[Path]) -> set[Path]:
    """The aggregate tables of the experiments these job files belong to."""
    jobs = Path(preset_dir) / "jobs"
    return {Path(preset_dir) / "tables" / f"{Path(p).relative_to(jobs).parts[0]}.csv" for p in job_files if jobs in Path(p).parents}


def quarantine_all(preset_dir: str | Path, bad: list[Path]) -> None:
    """Move every bad file aside, and the table (with its checksums) of every experiment
    with a bad job file: Snakemake does not rerun a job whose output exists when only
    its inputs are missing, so the table must go for the jobs to be redone."""
    bad = [Path(p) for p in dict.fromkeys(bad)]
    for p in bad + sorted(tables_built_from(preset_dir, bad) - set(bad)):
        for q in (p, sidecar_of(p)) if p.parent.name == "tables" else (p,):
            if q.exists():
                quarantine(q)


def scan_job_files(preset_dir: str | Path, skip: str | None = None) -> list[tuple[Path, list[str]]]:
    """Every job file under ``<preset_dir>/jobs`` (but experiment ``skip``), checked
    without a config (checksum; stored spec builds its path): the bad ones and why."""
    jobs = Path(preset_dir) / "jobs"
    out = []
    for p in sorted(jobs.glob("*/**/*.csv")) if jobs.exists() else []:
        if skip is not None and p.relative_to(jobs).parts[0] == skip:
            continue
        found, _ = check_job_file(p)
        if found:
            out.append((p, found))
    return out


# ----------------------------------------------------------------------- tables


def sidecar_of(table: str | Path) -> Path:
    table = Path(table)
    return table.with_name(table.stem + SIDECAR_SUFFIX)


def write_sidecar(table: str | Path, inputs: dict[str, str]) -> None:
    """Record the table's checksum and its inputs' (path -> SHA-256) next to it. Write it
    after the table (both atomically)."""
    record = {"table": Path(table).name, "sha256": sha256_file(table), "inputs": dict(sorted(inputs.items()))}
    atomic_write_text(sidecar_of(table), json.dumps(record, indent=1, sort_keys=True) + "\n")


def check_table(table: str | Path, expected_inputs: list[str] | None = None) -> list[str]:
    """Problems of one aggregate table: edited since aggregation, built from inputs that
    changed since, or (with ``expected_inputs``) from another set of jobs than the config's."""
    table, side = Path(table), sidecar_of(table)
    if not table.exists():
        return [f"{table}: missing"]
    try:
        record = json.loads(side.read_text())
        recorded, inputs = record["sha256"], record["inputs"]
    except FileNotFoundError:
        return [f"{table}: no {side.name} (checksums of its inputs); re-aggregate it"]
    except (ValueError, KeyError, TypeError):
        return [f"{side}: unreadable"]
    out = []
    if sha256_file(table) != recorded:
        out.append(f"{table}: edited after aggregation (checksum differs from {side.name})")
    changed = [p for p, digest in inputs.items() if not Path(p).exists() or sha256_file(p) != digest]
    if changed:
        out.append(f"{table}: {len(changed)} input(s) changed or missing since aggregation: {', '.join(changed[:5])}{' ...' if len(changed) > 5 else ''}")
    if expected_inputs is not None and sorted(expected_inputs) != sorted(inputs):
        extra, missing = set(inputs) - set(expected_inputs), set(expected_inputs) - set(inputs)
        out.append(f"{table}: aggregated from other jobs than the config's ({len(missing)} missing, {len(extra)} not in the config)")
    return out


def inputs_unreachable(table: str | Path) -> bool:
    """True when *none* of the inputs the table's sidecar records exists from the current
    directory: the command runs elsewhere than the workflow directory (the recorded paths
    are relative to it), which says nothing about the table, so it must not be moved aside."""
    try:
        inputs = json.loads(sidecar_of(table).read_text())["inputs"]
    except (OSError, ValueError, KeyError, TypeError):
        return False
    return bool(inputs) and not any(Path(p).exists() for p in inputs)


def check_tables(tables: list[str | Path]) -> list[str]:
    return [p for t in tables for p in check_table(t)]


def publish_table(table: str | Path, out: str | Path) -> None:
    """Copy a checked aggregate table beside the figures (``<figures>/tables/``), where it
    is committed with them, so that a reader can audit every number of the claims table
    and ``dprl claims`` can rebuild it without simulating. Its sidecar records the table's
    checksum and, as ``aggregated_from``, one SHA-256 of the job files' digests it was built
    from (the job files themselves stay in the results directory), and no live inputs, so
    the published table checks anywhere."""
    problems = check_table(table)
    if problems:
        raise IntegrityError(problems, "publishing a table")
    inputs = json.loads(sidecar_of(table).read_text())["inputs"]
    data = Path(table).read_bytes()
    atomic_write_text(out, data.decode("utf-8"))
    record = {"table": Path(out).name, "sha256": hashlib.sha256(data).hexdigest(), "inputs": {},
              "aggregated_from": {"jobs": len(inputs), "sha256": hashlib.sha256(canonical_json(inputs).encode()).hexdigest()}}
    atomic_write_text(sidecar_of(out), json.dumps(record, indent=1, sort_keys=True) + "\n")


# ----------------------------------------------------------------------- a whole preset


@dataclass
class Report:
    problems: list[str] = field(default_factory=list)
    checked_jobs: int = 0
    missing_jobs: int = 0
    checked_tables: int = 0
    strays: list[str] = field(default_factory=list)  # job files not in the config
    bad_files: list[Path] = field(default_factory=list)  # bad job files and tables



def verify_jobs(cfg: Any, experiments: list[str] | None = None) -> Report:
    """Every existing job file of ``cfg``'s preset (or of some experiments): checksum, and
    spec and labels against its path and the config. Missing files are counted, not
    problems (jobs not run yet)."""
    rep = Report()
    names = experiments if experiments is not None else list(cfg.experiments)
    for name in names:
        for job in cfg.experiments[name].jobs:
            path = Path(cfg.preset_dir) / job.path
            if not path.exists():
                rep.missing_jobs += 1
                continue
            rep.checked_jobs += 1
            problems, _ = check_job_file(path, expected_member(job))
            if problems:
                rep.problems += problems
                rep.bad_files.append(path)
        known = {str(Path(cfg.preset_dir) / j.path) for j in cfg.experiments[name].jobs}
        jobs_dir = Path(cfg.preset_dir) / "jobs" / name
        if jobs_dir.exists():
            rep.strays += sorted(str(p) for p in jobs_dir.rglob("*.csv") if str(p) not in known)
    return rep


def verify_preset(cfg: Any) -> Report:
    """:func:`verify_jobs` plus every aggregate table of the preset that exists."""
    rep = verify_jobs(cfg)
    for name, exp in cfg.experiments.items():
        table = Path(cfg.preset_dir) / "tables" / f"{name}.csv"
        if table.exists():
            rep.checked_tables += 1
            problems = check_table(table, [f"{cfg.preset_dir}/{j.path}" for j in exp.jobs])
            if problems:
                rep.problems += problems
                rep.bad_files.append(table)
    return rep
