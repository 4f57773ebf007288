"""The static checks CI runs (.ci/lint.py: ruff, snakefmt --check, snakemake --lint with a
justified allow-list) pass on the repository, and each one fails on a deliberately bad file."""

from __future__ import annotations

import importlib.util
import shutil
import sys
import textwrap
from pathlib import Path

from conftest import REPO, copy_workflow  # tests/workflow is on pythonpath (pyproject.toml)

_spec = importlib.util.spec_from_file_location("ci_lint", REPO / ".ci" / "lint.py")
lint = sys.modules.setdefault("ci_lint", importlib.util.module_from_spec(_spec))  # dataclasses look it up
_spec.loader.exec_module(lint)


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text))
    return path


def test_ruff_passes_on_the_code():
    problems = lint.ruff()
    assert not problems, "\n".join(problems)


def test_snakefmt_passes_on_the_workflow():
    problems = lint.snakefmt()
    assert not problems, "\n".join(problems)


def test_snakemake_lint_has_only_justified_lints(tmp_path):
    problems = lint.snakemake_lint(copy_workflow(tmp_path / "wf"))
    assert not problems, "\n".join(problems)


def test_every_silenced_lint_says_why():
    assert all(len(a.why) > 80 for a in lint.ALLOWED)


def test_ruff_and_snakefmt_fail_on_bad_files(tmp_path):
    shutil.copy(REPO / "pyproject.toml", tmp_path)  # the project's rules and widths
    _write(tmp_path / "workflow" / "rules" / "ok.smk", 'rule ok:\n    output:\n        "ok",\n')
    _write(tmp_path / "Snakefile", 'rule all:\n  input: "ok"\n')
    _write(tmp_path / "bad.py", "import os\n\n\ndef f(x):\n    return x == None\n")
    ruff = "\n".join(lint.ruff(tmp_path))
    assert "F401" in ruff and "E711" in ruff
    assert "Snakefile" in "\n".join(lint.snakefmt(tmp_path))
    (tmp_path / "bad.py").write_text("def f(x):\n    return x is None\n")
    _write(tmp_path / "Snakefile", 'rule all:\n    input:\n        "ok",\n')
    assert lint.ruff(tmp_path) == [] and lint.snakefmt(tmp_path) == []


def test_snakemake_lint_fails_on_an_unjustified_lint_and_on_a_stale_entry(tmp_path):
    _write(
        tmp_path / "Snakefile",
        """\
        rule a:
            output:
                "out/a.txt",
            log:
                "logs/a.log",
            params:
                prefix="out/a",
            shell:
                "touch {output} 2> {log}"
        """,
    )
    lints, error = lint.run_snakemake_lint(tmp_path)
    assert error is None
    conda = next(a for a in lint.ALLOWED if "conda" in a.title)
    stale = lint.Allowed("No log directive defined", r"rule a", "rule a has a log")
    assert lint.judge(lints, (conda, stale)) == [
        "snakemake --lint: rule a: Param prefix is a prefix of input or output file but hardcoded",
        "snakemake --lint: allow-list entry 'No log directive defined' (rule a) silences nothing; remove it",
    ]
    assert sorted(lint.judge(lints, ())) == [
        "snakemake --lint: rule a: Param prefix is a prefix of input or output file but hardcoded",
        "snakemake --lint: rule a: Specify a conda environment or container for each rule.",
    ]


def test_a_broken_workflow_is_an_error_not_a_pass(tmp_path):
    _write(tmp_path / "Snakefile", "rule a:\n    output:\n        undefined_name,\n")
    (problem,) = lint.snakemake_lint(tmp_path, allowed=())
    assert problem.startswith("snakemake --lint failed") and "undefined_name" in problem
