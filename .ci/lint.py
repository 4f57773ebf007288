#!/usr/bin/env python3
"""The static checks of CI; tests/workflow/test_lint.py runs the same ones.

- ``ruff check``: the Python code, rules in pyproject.toml ``[tool.ruff]``;
- ``snakefmt --check``: the Snakefile and workflow/rules/*.smk, ``[tool.snakefmt]``;
- ``snakemake --lint``: no lint but those in ``ALLOWED``, each with the reason it is
  silenced; an entry that silences nothing is an error too, so none outlives its cause.

Usage: ``python .ci/lint.py [ruff] [snakefmt] [snakemake]`` (default: all three) from any
directory; exit status 1 with every problem listed if a check fails.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SNAKEFMT_PATHS = ("Snakefile", "workflow")


@dataclass(frozen=True)
class Lint:
    """One lint of ``snakemake --lint``: ``item`` is ``rule <name>`` or ``snakefile <path>``."""

    item: str
    title: str


@dataclass(frozen=True)
class Allowed:
    """Lints silenced on purpose: ``title`` exactly, on every item that ``items`` matches."""

    title: str
    items: str  # regular expression, matched in full against Lint.item
    why: str

    def covers(self, lint: Lint) -> bool:
        return lint.title == self.title and re.fullmatch(self.items, lint.item) is not None


ALLOWED = (
    Allowed(
        "Specify a conda environment or container for each rule.",
        r"rule .+",
        "Every rule runs this repository's dprl package with the interpreter that runs "
        "Snakemake (DPRL), so all jobs use the one environment the README sets up (pip install "
        "-e ., or environment.yml / requirements.lock). A `conda:` directive would not take "
        "effect under --use-conda: DPRL calls that interpreter by its absolute path, not the "
        "conda environment's python.",
    ),
    Allowed(
        "Shell command directly uses variable DPRL from outside of the rule",
        r"rule .+",
        "DPRL is `<sys.executable> -m dprl` (common.smk), the interpreter running Snakemake. "
        "Passed through params, its path would become a rerun trigger (Snakemake reruns a job "
        "whose params changed): every job would rerun when the workflow is started from "
        "another virtual environment, although no result depends on that path.",
    ),
)

_HEADER = re.compile(r"Lints for (?:rule (?P<rule>\S+) \(line \d+, .+\)|snakefile (?P<snakefile>.+)):")
_TITLE = re.compile(r" {4}\* (?P<title>.+):")


def parse_lints(text: str, directory: Path) -> list[Lint]:
    """The lints in the text output of ``snakemake --lint`` (Snakemake 9's CLI ignores
    ``--lint json``: it calls ``WorkflowApi.lint()`` without the flag)."""
    lints, item = [], None
    for line in text.splitlines():
        if m := _HEADER.fullmatch(line):
            if m["rule"]:
                item = f"rule {m['rule']}"
            else:
                path = Path(m["snakefile"])
                item = f"snakefile {path.relative_to(directory) if path.is_relative_to(directory) else path}"
        elif item is not None and (m := _TITLE.fullmatch(line)):
            lints.append(Lint(item, m["title"]))
    return lints


def run_snakemake_lint(directory: Path) -> tuple[list[Lint], str | None]:
    """The lints of ``snakemake --lint`` on the workflow in ``directory``, and an error
    message if Snakemake failed without reporting lints (e.g. a broken Snakefile)."""
    directory = directory.resolve()
    run = subprocess.run(
        [sys.executable, "-m", "snakemake", "--lint", "--directory", str(directory)],
        cwd=directory,
        capture_output=True,
        text=True,
        env={**os.environ, "NO_COLOR": "1"},
    )
    output = run.stdout + run.stderr
    lints = parse_lints(output, directory)
    if run.returncode != 0 and not lints:
        return [], f"snakemake --lint failed (exit {run.returncode}) without lints:\n{output[-3000:]}"
    return lints, None


def judge(lints: list[Lint], allowed: tuple[Allowed, ...]) -> list[str]:
    """Lints no entry of ``allowed`` covers, and entries that cover no lint."""
    problems = [f"snakemake --lint: {x.item}: {x.title}" for x in lints if not any(a.covers(x) for a in allowed)]
    problems += [
        f"snakemake --lint: allow-list entry {a.title!r} ({a.items}) silences nothing; remove it"
        for a in allowed
        if not any(a.covers(x) for x in lints)
    ]
    return problems


def snakemake_lint(directory: Path = REPO, allowed: tuple[Allowed, ...] = ALLOWED) -> list[str]:
    """Problems of ``snakemake --lint`` on the workflow in ``directory``."""
    lints, error = run_snakemake_lint(directory)
    return [error] if error else judge(lints, allowed)


def _tool(args: list[str], name: str, root: Path) -> list[str]:
    run = subprocess.run([sys.executable, "-m", *args], cwd=root, capture_output=True, text=True)
    return [] if run.returncode == 0 else [f"{name} failed (exit {run.returncode}):\n{run.stdout}{run.stderr}"]


def ruff(root: Path = REPO) -> list[str]:
    """Problems of ``ruff check`` on the Python files under ``root`` (its pyproject.toml)."""
    return _tool(["ruff", "check", "--quiet", "--output-format", "concise", "."], "ruff check", root)


def snakefmt(root: Path = REPO) -> list[str]:
    """Files under ``root`` that ``snakefmt`` would change, with the diff."""
    return _tool(["snakefmt", "--check", "--diff", *SNAKEFMT_PATHS], "snakefmt --check", root)


CHECKS = {"ruff": ruff, "snakefmt": snakefmt, "snakemake": snakemake_lint}


def main(names: list[str]) -> int:
    unknown = sorted(set(names) - set(CHECKS))
    if unknown:
        print(f"unknown checks {unknown}; choose from {list(CHECKS)}", file=sys.stderr)
        return 2
    problems = [p for name in names or CHECKS for p in CHECKS[name]()]
    for p in problems:
        print(p, file=sys.stderr)
    print(f"lint: {', '.join(names or CHECKS)}: {len(problems)} problem(s)", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
