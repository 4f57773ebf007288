"""Every shell command of the documentation (``README.md`` and ``docs/*.md``) is written so
that it runs.

The commands are the lines of ``bash`` code blocks (without their ``#`` comment) and the
inline code spans that begin with a program a reader runs (:data:`PROGRAMS`). Each one is

- parsed: by ``bash -n`` (shell syntax) and ``shlex``; a ``dprl`` command by the package's
  own argument parser, a ``snakemake`` command by Snakemake's; files it names in the
  repository must exist; and a ``snakemake`` command may not put a target after
  ``--config`` (Snakemake's ``--config`` takes every following word up to the next option as
  a ``key=value`` override, so ``--config preset=smoke results/...csv`` is read as a
  malformed override and the command fails: a target goes before ``--config``);
- run as written when it is cheap (:func:`runs_as_written`): ``dprl validate`` and
  ``dprl jobs`` (they read ``config.yaml`` only), ``snakemake -n`` and any ``--help``; a
  ``snakemake`` command of the smoke preset is run as a dry run (``-n`` added), which
  builds its whole job graph from the config without running a job.

The others are only parsed, because running them would take long or change the machine:
the simulations themselves (``snakemake`` without ``-n``: minutes to hours), the report
(it needs a finished run's results), SLURM submissions, installs (``pip``, ``conda``, a
venv: network and a changed environment), the test suite and the benchmarks (``pytest``:
this test is part of it), ``dprl readme-table``/``claims`` (they rewrite committed files),
``dprl run-job``/``verify``/``rehearse``/``runtimes`` (they need or write results) and the
log-following commands (``tail -f`` never ends; they read a run's logs). A synopsis's
notation is read before parsing: ``[--opt X]`` as the option given, ``P`` and ``DIR`` as a
preset and a directory (:data:`PLACEHOLDERS`); prose that names a subcommand alone
(``dprl runtimes``, run by the workflow with its arguments) is checked to name one.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
DOCUMENTS = [README, *sorted((ROOT / "docs").glob("*.md"))]
KEY_VALUE = re.compile(r"[A-Za-z_][\w.]*=\S*")
PROGRAMS = ("snakemake", "dprl", "pip", "python", "python3.11", "pytest", "conda", "tail", "find", "grep")
SHELL_BLOCKS = ("bash", "sh", "shell")
PLACEHOLDERS = {"P": "smoke", "DIR": "results/docs-check"}  # words a synopsis stands for
OPERATORS = {"&&", "||", "|", ";", "&"}


def shell_commands(text: str) -> list[tuple[int, str]]:
    """``(line number, command)`` of every shell command of a Markdown text: the lines of
    ``bash`` code blocks (without a trailing ``  # comment``) and the inline code spans
    (which may wrap over lines) that start with one of :data:`PROGRAMS`. A span that is the
    bare word ``dprl`` names the package, not a command."""
    out, fenced, prose = [], None, []
    for n, line in enumerate(text.splitlines(), 1):
        if line.lstrip().startswith("```"):
            fenced = None if fenced is not None else line.lstrip()[3:].strip()
            prose.append("")
            continue
        if fenced is not None:
            prose.append("")
            command = re.split(r"\s+#\s", line, maxsplit=1)[0].strip()
            if fenced in SHELL_BLOCKS and command:
                out.append((n, command))
            continue
        prose.append(line)
    body = "\n".join(prose)
    for m in re.finditer(r"(?<!`)`([^`]+)`(?!`)", body):
        span = " ".join(m.group(1).split())
        if span.split(" ")[0] in PROGRAMS and span != "dprl":
            out.append((body.count("\n", 0, m.start()) + 1, span))
    return sorted(out)


def snakemake_commands(text: str) -> list[tuple[int, str]]:
    """The ``snakemake`` commands among :func:`shell_commands` (each simple command of a
    compound line on its own)."""
    return [(n, " ".join(shlex.quote(w) for w in simple)) for n, c in shell_commands(text)
            for simple in simple_commands(c) if simple[0] == "snakemake"]


def concrete(command: str) -> str:
    """A synopsis read as a command: ``[--opt X]`` gives the option, :data:`PLACEHOLDERS`
    their value."""
    command = re.sub(r"(?<!\S)\[(-[^\]]*)\]", r"\1", command)
    return " ".join(PLACEHOLDERS.get(w, w) for w in command.split(" "))


def simple_commands(command: str) -> list[list[str]]:
    """The words of each simple command of a compound one (``a && b | c``)."""
    lexer = shlex.shlex(concrete(command), posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    out: list[list[str]] = [[]]
    for word in lexer:
        if word in OPERATORS:
            out.append([])
        else:
            out[-1].append(word)
    return [words for words in out if words]


def config_problems(command: str) -> list[str]:
    """The words after ``--config`` (up to the next option) that are not ``key=value``."""
    words = shlex.split(command)
    bad = []
    for i, w in enumerate(words):
        if w == "--config":
            for after in words[i + 1:]:
                if after.startswith("-"):
                    break
                if not KEY_VALUE.fullmatch(after):
                    bad.append(after)
    return bad


def _named_files(words: list[str]) -> list[str]:
    """Repository files a command names (scripts, requirement files, local packages, test
    paths); outputs (``results/``), the venv and globs are not checked."""
    if words[0] not in ("python", "python3.11", "pip", "pytest", "conda"):
        return []
    return [w for w in words[1:] if not w.startswith("-") and ("/" in w or w.endswith((".py", ".lock", ".yml")))
            and not w.startswith(("results/", ".venv")) and not any(ch in w for ch in "*$=")]


def parse_problems(command: str) -> list[str]:
    """Why a documented command would not run as written, short of running it."""
    problems = []
    shell = subprocess.run(["bash", "-n", "-c", concrete(command)], capture_output=True, text=True)
    if shell.returncode:
        return [f"bash: {shell.stderr.strip()}"]
    for words in simple_commands(command):
        problems += [f"names {w}, which does not exist" for w in _named_files(words) if not (ROOT / w).exists()]
        if words[0] == "dprl":
            problems += _argparse_problems("dprl", words[1:])
        elif words[0] == "snakemake":
            problems += [f"after --config: {w}" for w in config_problems(shlex.join(words))]
            problems += _argparse_problems("snakemake", words[1:])
    return problems


def _argparse_problems(program: str, args: list[str]) -> list[str]:
    if program == "dprl":
        from dprl.cli import build_parser

        parser = build_parser()
    else:
        from snakemake.cli import get_argument_parser

        parser = get_argument_parser()
    parser.exit_on_error = False
    if "--help" in args or "-h" in args:
        return []  # runs_as_written runs it
    if program == "dprl" and len(args) == 1:  # prose naming a subcommand (`dprl runtimes`): it must exist
        choices = next(a.choices for a in parser._actions if a.choices and isinstance(a.choices, dict))
        return [] if args[0] in choices else [f"dprl has no subcommand {args[0]!r}"]
    try:
        _, unknown = parser.parse_known_args(args)
    except (SystemExit, Exception) as err:  # argparse exits on some errors despite exit_on_error
        return [f"{program} refuses its arguments: {err}"]
    return [f"{program} does not know {unknown}"] if unknown else []


def runs_as_written(command: str) -> list[str] | None:
    """The argv to run for a cheap command (see the module docstring), or ``None`` for one
    that is only parsed. A compound command is only parsed."""
    simple = simple_commands(command)
    if len(simple) != 1:
        return None
    words = simple[0]
    if "--help" in words:
        return words
    if words[:2] in (["dprl", "validate"], ["dprl", "jobs"]):
        return words
    if words[0] == "snakemake" and "--report" not in words and "--workflow-profile" not in words:
        if "-n" in words:
            return words
        if "preset=smoke" in words:
            return [words[0], "-n", *words[1:]]
    return None


def _all_commands() -> list[tuple[str, int, str]]:
    return [(doc.relative_to(ROOT).as_posix(), n, c) for doc in DOCUMENTS for n, c in shell_commands(doc.read_text())]


def test_the_extractor_finds_block_lines_and_spans_but_not_names():
    text = ("```bash\nsnakemake --cores 1 --config preset=smoke results/x.csv  # one table\n```\n"
            "and `snakemake --config preset=smoke --report r.html` inline, `dprl` the package,\n"
            "`pip install -r a.lock && pip\ninstall -e .` wrapped\n```\npytest not a shell block\n```\n")
    found = shell_commands(text)
    assert [n for n, _ in found] == [2, 4, 5]
    assert found[2][1] == "pip install -r a.lock && pip install -e ."
    smk = snakemake_commands(text)
    assert config_problems(smk[0][1]) == ["results/x.csv"] and config_problems(smk[1][1]) == []


def test_the_parser_catches_what_would_not_run():
    assert parse_problems("dprl validate --preset smoke") == []
    assert parse_problems("dprl verify [--preset P] [--quarantine]") == []
    assert parse_problems("dprl validat --preset smoke")  # no such subcommand
    assert parse_problems("dprl runtimes") == [] and parse_problems("dprl runtime")
    assert parse_problems("dprl validate --presett smoke")
    assert parse_problems("snakemake --cores 1 --config preset=smoke results/x.csv")
    assert parse_problems("snakemake --corez 1")
    assert parse_problems("python .ci/no_such_script.py")
    assert parse_problems('tail -f "unclosed')
    assert runs_as_written("snakemake --cores 2 --config preset=smoke") == ["snakemake", "-n", "--cores", "2", "--config", "preset=smoke"]
    assert runs_as_written("snakemake --cores 2") is None and runs_as_written("pip install -e .") is None


def test_every_documented_command_parses():
    commands = _all_commands()
    assert len({doc for doc, _, _ in commands}) >= 5 and any("--config" in c for _, _, c in commands)
    bad = [f"{doc}:{n}: {c!r}: {'; '.join(p)}" for doc, n, c in commands if (p := parse_problems(c))]
    assert not bad, "documented commands that would not run as written:\n" + "\n".join(bad)


def test_no_documented_snakemake_command_puts_a_word_that_is_not_key_value_after_config():
    commands = [(doc.name, n, c) for doc in DOCUMENTS for n, c in snakemake_commands(doc.read_text())]
    assert any("--config" in c for _, _, c in commands)
    bad = [f"{doc}:{n}: {c!r} (after --config: {config_problems(c)})" for doc, n, c in commands if config_problems(c)]
    assert not bad, "a target after --config is read as an override; put it before --config:\n" + "\n".join(bad)


@pytest.mark.xdist_group("serial")
def test_the_cheap_documented_commands_run_as_written():
    """``dprl validate``/``jobs``, ``--help`` and Snakemake dry runs of the smoke preset, each
    once, from the repository root with the interpreter running the tests."""
    runs = {tuple(argv): f"{doc}:{n}" for doc, n, c in _all_commands() if (argv := runs_as_written(c))}
    assert any(a[0] == "snakemake" for a in runs) and any(a[:2] == ("dprl", "validate") for a in runs)
    bin_dir = str(Path(sys.executable).parent)
    env = {**os.environ, "PATH": bin_dir + os.pathsep + os.environ.get("PATH", "")}
    failed = []
    for argv, where in runs.items():
        cmd = [sys.executable, "-m", "dprl", *argv[1:]] if argv[0] == "dprl" else [sys.executable, "-m", *argv]
        done = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
        if done.returncode:
            failed.append(f"{where}: {' '.join(argv)} exited {done.returncode}:\n{(done.stdout + done.stderr)[-1500:]}")
    assert not failed, "\n\n".join(failed)
