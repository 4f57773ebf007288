"""The documented commands that need a finished run's results or write files run as
written, in copies of the repository (which commands, and why these copies:
tests/core/test_readme_commands.py, the one list of the documentation's commands).

- :data:`SMOKE_COPY`: the working tree with the results of the session's smoke run
  (conftest.smoke_run, shared with test_smoke_dag and test_report) and its ``.snakemake``
  records: ``dprl verify``, ``dprl run-job`` of a smoke job, the report, ``snakemake
  --unlock``, ``dprl claims`` and ``dprl readme-table`` (which rewrite the copy's
  ``paper_figures/`` and pages, never the repository's).
- :data:`REHEARSAL_COPY`: the working tree with the config cut to the fault tests' fast
  experiments (conftest.MINI_EXPERIMENTS): every ``dprl rehearse`` at smoke size. The whole
  smoke preset has a kind of job per experiment, algorithm, environment and privacy kind (76
  on 2026-12-03), each rehearsed in a process of its own: minutes per rehearsal. Its
  ``--collect`` reads the slices of a local ``--config rehearse=True`` run (the documented
  one goes through SLURM: test_rehearse_slurm.py).

Each command's seconds are printed; the run-job command must also rewrite its job's file
byte for byte (docs/one-job.md: a job run by hand writes the same file as the workflow).
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from conftest import MINI_EXPERIMENTS, MINI_SMOKE_OVERRIDES, REPO, copy_repository, snakemake
from test_readme_commands import REHEARSAL_COPY, SMOKE_COPY, _all_commands, run_documented, runs_in_a_copy

from dprl.config.load import load_config_file

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def copies(smoke_run: Path, tmp_path_factory) -> dict[str, Path]:
    smoke = copy_repository(tmp_path_factory.mktemp("docs-smoke"))
    shutil.copytree(smoke_run / "results", smoke / "results", dirs_exist_ok=True)  # copy2: mtimes kept, nothing rerun
    shutil.copytree(smoke_run / ".snakemake", smoke / ".snakemake")  # what the report reads of the run
    rehearsal = copy_repository(tmp_path_factory.mktemp("docs-rehearsal"), MINI_EXPERIMENTS, MINI_SMOKE_OVERRIDES)
    return {SMOKE_COPY: smoke, REHEARSAL_COPY: rehearsal}


def _git_status() -> str:
    """The repository's changes to what the commands run here could write if run there."""
    return subprocess.run(["git", "status", "--porcelain", "--", "README.md", "docs", "paper_figures"], cwd=REPO, capture_output=True, text=True, check=True).stdout


def _job_file(wd: Path, argv: list[str]) -> Path | None:
    """The result file a ``dprl run-job --job`` command writes (``None`` for another command)."""
    if argv[:2] != ["dprl", "run-job"] or "--job" not in argv:
        return None
    preset = argv[argv.index("--preset") + 1] if "--preset" in argv else None
    return wd / load_config_file(str(wd / "config.yaml"), preset).preset_dir / argv[argv.index("--job") + 1]


def test_the_documented_commands_that_need_a_run_or_write_files_run_as_written(copies, capsys):
    runs: dict[tuple[str, tuple[str, ...]], str] = {}  # each once, in the order of the pages
    for doc, n, command in _all_commands():
        if how := runs_in_a_copy(command):
            runs.setdefault((how[0], tuple(how[1])), f"{doc}:{n}")
    ran = {argv[1] if argv[0] == "dprl" else " ".join(w for w in argv if w in ("snakemake", "--report")) for _, argv in runs}
    assert {"verify", "run-job", "rehearse", "readme-table", "claims", "snakemake --report"} <= ran, ran
    status = _git_status()
    timings = []
    if any("--collect" in argv for _, argv in runs):
        setup = snakemake(copies[REHEARSAL_COPY], "--cores", "2", "--config", "preset=smoke", "rehearse=True")
        timings.append(f"{setup.seconds:6.1f} s  {REHEARSAL_COPY}: the slices --collect reads (snakemake --config preset=smoke rehearse=True)")
    failed = []
    for (copy, argv), where in runs.items():
        job = _job_file(copies[copy], list(argv))
        before = job.read_bytes() if job else None
        problem, seconds = run_documented(list(argv), copies[copy])
        timings.append(f"{seconds:6.1f} s  {copy}: {' '.join(argv)}  ({where})")
        if problem:
            failed.append(f"{where}: {problem}")
        elif job and job.read_bytes() != before:  # one-job.md: by hand, the same file as the workflow's
            failed.append(f"{where}: {' '.join(argv)} wrote another {job.name} than the smoke run did")
    with capsys.disabled():
        print("\n[documented commands]\n" + "\n".join(timings))
    assert not failed, "documented commands that fail as written:\n\n" + "\n\n".join(failed)
    assert _git_status() == status, "a documented command run in a copy changed the repository"

    # the runner sees a documented command fail: a job that does not exist, an option misspelt
    wd = copies[SMOKE_COPY]
    assert run_documented(["dprl", "run-job", "--preset", "smoke", "--job", "jobs/audit/no_such/seed0.csv"], wd)[0]
    assert run_documented(["dprl", "verify", "--preset", "smoke", "--quarantined"], wd)[0]
