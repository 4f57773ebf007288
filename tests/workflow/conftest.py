"""Shared helpers for the end-to-end workflow tests (tests/workflow/).

Every test runs Snakemake in its own temporary copy of the workflow (Snakefile,
config.yaml, workflow/ with symlinks resolved), never in the repository, so tests can run
concurrently with a developer's own results/ and cannot disturb them.
"""

from __future__ import annotations

import filecmp
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]
WORKFLOW_FILES = ("Snakefile", "config.yaml", "workflow")
# Tables whose content is timing, not science: excluded from bit-identity checks.
NONDETERMINISTIC = {"job_runtimes.csv"}
# The fast experiments used by the fault tests, at smoke size and with fewer variants
# (5 jobs of a few seconds each, two seeds so that seeds run concurrently).
MINI_EXPERIMENTS = ("counter_error", "audit")
MINI_SMOKE_OVERRIDES = {
    "counter_error": {
        "algorithms": [{"name": "laplace_tree"}, {"name": "gaussian_tree_vector"}],
        "privacy": {"epsilon": [1.0], "delta": [1.0e-5], "calibration": ["tight"]},
        "seeds": {"count": 2},
    },
    "audit": {"algorithms": [{"name": "laplace_tree"}]},
}
# The fault tests build only the tables (the results); figures/claims derive from them.
MINI_TARGETS = tuple(f"results/smoke/tables/{e}.csv" for e in MINI_EXPERIMENTS)
SNAKEMAKE_TIMEOUT = float(os.environ.get("DPRL_TEST_SNAKEMAKE_TIMEOUT", "600"))


def snakemake_cmd() -> list[str]:
    return [sys.executable, "-m", "snakemake"]


def copy_workflow(dest: Path, experiments: tuple[str, ...] | None = None, smoke_overrides: dict | None = None,
                  bundle_seconds: float | None = 0.0) -> Path:
    """Copy the workflow into ``dest``; optionally keep only some experiments and
    override keys of their ``presets.smoke``. ``bundle_seconds``: written into the copy's
    config (0: one Snakemake job per simulation, what the fault and rerun tests reason
    about); ``None`` keeps config.yaml's (the complete smoke run: what a user runs)."""
    dest.mkdir(parents=True, exist_ok=True)
    if not (REPO / "Snakefile").exists() and not (REPO / "workflow" / "Snakefile").exists():
        pytest.fail(f"no Snakefile in {REPO} or {REPO}/workflow")
    for name in WORKFLOW_FILES:
        src = REPO / name
        if not src.exists():
            continue
        if src.is_dir():
            shutil.copytree(
                src, dest / name, symlinks=False, ignore=shutil.ignore_patterns("__pycache__", ".snakemake")
            )
        else:
            shutil.copy2(src, dest / name)
    if experiments is None and bundle_seconds is None:
        return dest
    cfg = yaml.safe_load((dest / "config.yaml").read_text())
    if bundle_seconds is not None:
        cfg["bundle_seconds"] = bundle_seconds
    if experiments is not None:
        missing = [e for e in experiments if e not in cfg["experiments"]]
        assert not missing, f"experiments {missing} not in config.yaml"
        cfg["experiments"] = {k: v for k, v in cfg["experiments"].items() if k in experiments}
        for preset_file in (cfg.get("preset_files") or {}).values():  # entries of the dropped experiments go too
            path = dest / preset_file
            kept = yaml.safe_load(path.read_text())
            kept["experiments"] = {k: v for k, v in kept["experiments"].items() if k in experiments}
            path.write_text(yaml.safe_dump(kept, sort_keys=False))
        for name, over in (smoke_overrides or {}).items():
            cfg["experiments"][name].setdefault("presets", {}).setdefault("smoke", {}).update(over)
    (dest / "config.yaml").write_text(yaml.safe_dump(cfg, sort_keys=False))
    return dest


def copy_repository(dest: Path, experiments: tuple[str, ...] | None = None, smoke_overrides: dict | None = None) -> Path:
    """Copy the repository's working tree into ``dest``: its tracked files as they are on
    disk (the pages, ``paper_figures/``, the sources; not ``.git`` nor the ignored outputs
    under ``results/``), the workflow by :func:`copy_workflow` (``bundle_seconds`` as
    config.yaml says; ``experiments``, ``smoke_overrides``: as there). For commands that
    write committed files (``dprl readme-table``, ``dprl claims --out-dir paper_figures``),
    which must never write the repository's."""
    tracked = subprocess.run(["git", "ls-files", "-z"], cwd=REPO, capture_output=True, text=True, check=True).stdout
    for rel in filter(None, tracked.split("\0")):
        src = REPO / rel
        if Path(rel).parts[0] in WORKFLOW_FILES or not src.is_file():  # the workflow below; a file deleted on disk
            continue
        (dest / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(src, dest / rel)
    return copy_workflow(dest, experiments, smoke_overrides, bundle_seconds=None)


class Run:
    """A finished Snakemake run: return code and combined output."""

    def __init__(self, args: list[str], returncode: int, output: str, seconds: float) -> None:
        self.args, self.returncode, self.output, self.seconds = args, returncode, output, seconds

    def tail(self, n: int = 60) -> str:
        return "\n".join(self.output.splitlines()[-n:])

    def __repr__(self) -> str:
        return f"<Run rc={self.returncode} {self.seconds:.1f}s {' '.join(self.args)}>\n{self.tail()}"


def snakemake(workdir: Path, *args: str, env: dict | None = None, check: bool = True, timeout: float | None = None) -> Run:
    """Run Snakemake to completion in ``workdir`` (its default workflow profile applies)."""
    cmd = snakemake_cmd() + list(args)
    t0 = time.monotonic()
    proc = subprocess.Popen(
        cmd, cwd=workdir, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True
    )
    try:
        out, _ = proc.communicate(timeout=timeout or SNAKEMAKE_TIMEOUT)
    except subprocess.TimeoutExpired:
        kill_group(proc)
        out, _ = proc.communicate()
        pytest.fail(f"snakemake timed out after {timeout or SNAKEMAKE_TIMEOUT}s: {cmd}\n{out[-5000:]}")
    run = Run(cmd, proc.returncode, out, time.monotonic() - t0)
    log_no = len(list(workdir.glob("snakemake-run-*.log")))
    (workdir / f"snakemake-run-{log_no}.log").write_text(" ".join(cmd) + "\n" + out)
    if check and proc.returncode != 0:
        pytest.fail(f"snakemake failed (rc={proc.returncode}) in {workdir}: {' '.join(args)}\n{run.tail(80)}")
    return run


def start_snakemake(workdir: Path, *args: str, env: dict | None = None) -> subprocess.Popen:
    """Start Snakemake in the background, in its own process group (for fault injection)."""
    log = open(workdir / "snakemake-bg.log", "a")
    # A shell without job control starts background commands with SIGINT ignored, and the
    # child inherits that (a CI launched as `bash .ci/run &` did): Snakemake then never sees
    # the Ctrl-C the fault tests send. A terminal's Ctrl-C reaches it with the default action.
    return subprocess.Popen(
        snakemake_cmd() + list(args), cwd=workdir, env=env, stdout=log, stderr=subprocess.STDOUT, text=True,
        start_new_session=True, preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )


def kill_group(proc: subprocess.Popen, sig: int = signal.SIGKILL) -> None:
    try:
        os.killpg(proc.pid, sig)
    except ProcessLookupError:
        pass


def descendants(pid: int) -> list[int]:
    """All live descendants of ``pid`` (from /proc)."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as fh:
                stat = fh.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if stat[0] == "Z":
            continue
        children.setdefault(int(stat[1]), []).append(int(entry))
    out, todo = [], [pid]
    while todo:
        for c in children.get(todo.pop(), []):
            out.append(c)
            todo.append(c)
    return out


def cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def running_jobs(proc: subprocess.Popen, command: str = "run-job") -> list[int]:
    """Pids of the ``dprl run-job`` (or ``run-bundle``) processes Snakemake is running."""
    return [p for p in descendants(proc.pid) if command in cmdline(p) and "dprl" in cmdline(p) and "/bin/sh" not in cmdline(p).split(" ")[0]]


def wait_for(predicate, timeout: float, what: str, interval: float = 0.05):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(interval)
    pytest.fail(f"timed out after {timeout}s waiting for {what}")


def result_files(workdir: Path, preset: str, claims: bool = True, experiments: tuple[str, ...] | None = None) -> dict[str, Path]:
    """Deterministic results of a run: every job file, every table (minus timing
    tables), and the claims table (``claims``); keyed by path relative to results/<preset>/.
    ``experiments``: only those experiments' job files and tables."""
    res = workdir / "results" / preset
    files = {}
    for pattern in ("jobs/**/*.csv", "tables/*.csv") + (("figures/claims.csv",) if claims else ()):
        for p in res.glob(pattern):
            rel = p.relative_to(res)
            of = rel.parts[1] if rel.parts[0] == "jobs" else rel.stem if rel.parts[0] == "tables" else None
            if p.name not in NONDETERMINISTIC and (experiments is None or of in experiments):
                files[str(rel)] = p
    return files


def assert_identical_results(got: Path, ref: Path, preset: str, only_tables: bool = False, claims: bool = True,
                             experiments: tuple[str, ...] | None = None) -> None:
    """Same set of result files, byte for byte (``claims=False``: a run that stopped at its
    tables, compared with a complete one; ``experiments``: a run of some experiments,
    compared with those of a complete one)."""
    a, b = result_files(got, preset, claims, experiments), result_files(ref, preset, claims, experiments)
    if only_tables:
        a = {k: v for k, v in a.items() if k.startswith("tables/")}
        b = {k: v for k, v in b.items() if k.startswith("tables/")}
    assert b, f"reference run {ref} has no results"
    assert sorted(a) == sorted(b), f"different result files:\n only in {got}: {sorted(set(a) - set(b))}\n only in {ref}: {sorted(set(b) - set(a))}"
    differ = [k for k in sorted(a) if not filecmp.cmp(a[k], b[k], shallow=False)]
    assert not differ, f"results differ from the reference run: {differ}"


def stray_temp_files(workdir: Path, preset: str) -> list[Path]:
    """Leftover temporary files of atomic writes (``.name.XXXX.tmp``) under results/."""
    return sorted((workdir / "results" / preset).rglob(".*.tmp"))


# --------------------------------------------------------------------------- fixtures
# The SLURM cluster fixtures (slurm_owner, slurm_cluster) live in tests/conftest.py: one
# owner per session for every SLURM test, in tests/cluster/ as well as here.


@pytest.fixture(scope="session")
def mini_reference(tmp_path_factory) -> Path:
    """An undisturbed local run of the fast experiments (smoke preset): the reference
    every fault test compares against."""
    wd = copy_workflow(tmp_path_factory.mktemp("mini-reference"), MINI_EXPERIMENTS, MINI_SMOKE_OVERRIDES)
    snakemake(wd, *MINI_TARGETS, "--config", "preset=smoke", "--cores", "2")
    return wd


def smoke_table_targets(wd: Path) -> list[str]:
    """The results tables of the smoke preset: one per experiment in the config."""
    from dprl.config.load import load_config_file

    cfg = load_config_file(str(wd / "config.yaml"), "smoke")
    return [f"{cfg.preset_dir}/tables/{e}.csv" for e in cfg.experiments]


@pytest.fixture(scope="session")
def smoke_run(tmp_path_factory) -> Path:
    """One complete run of the smoke preset (simulations, tables, figures, claims, manifest,
    report pages), shared by the tests that read its outputs (test_smoke_dag, test_report,
    test_documented_commands)."""
    wd = copy_workflow(tmp_path_factory.mktemp("smoke-run"), bundle_seconds=None)  # bundled, as config.yaml says
    snakemake(wd, "--config", "preset=smoke", "--cores", "2", timeout=max(SNAKEMAKE_TIMEOUT, 1500))
    return wd


@pytest.fixture(scope="session")
def smoke_local(smoke_run) -> Path:
    """The undisturbed local run of the smoke preset that the SLURM run is compared with:
    the complete run above (its job files and tables are what a table-only local run
    writes; one smoke simulation fewer per session)."""
    return smoke_run
