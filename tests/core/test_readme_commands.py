"""Every shell command of the documentation (``README.md`` and ``docs/*.md``) is written so
that it runs.

The commands are the lines of ``bash`` code blocks and of indented code blocks (without
their ``#`` comment; a line ending in ``\\`` joined with the next) and the inline code spans
that begin with a program a reader runs (:data:`PROGRAMS`). Each one is

- parsed: by ``bash -n`` (shell syntax) and ``shlex``; a ``dprl`` command by the package's
  own argument parser, a ``snakemake`` command by Snakemake's; files it names in the
  repository must exist; and a ``snakemake`` command may not put a target after
  ``--config`` (Snakemake's ``--config`` takes every following word up to the next option as
  a ``key=value`` override, so ``--config preset=smoke results/...csv`` is read as a
  malformed override and the command fails: a target goes before ``--config``; the output
  of a command substitution, ``$(dprl parts ... --targets PART)``, counts as targets);
- run as written from the repository when it is cheap and writes nothing there
  (:func:`runs_as_written`, here): ``dprl validate``, ``jobs`` and ``parts`` (they read
  ``config.yaml`` and the committed rehearsal), ``snakemake -n`` and any ``--help``; every
  other local ``snakemake`` run (of the smoke preset, of ``default``: minutes to an hour) as
  a dry run, ``-n`` added, which builds its whole job graph from the config without running
  a job;
- run as written in a copy of the repository when it needs a finished run's results or
  writes files (:func:`runs_in_a_copy`; ``tests/workflow/test_documented_commands.py``,
  slow-marked because it needs the session's smoke run): in a copy holding the smoke run's
  results, ``dprl verify``, ``dprl run-job`` of a smoke job, ``dprl claims`` and ``dprl
  readme-table`` (they rewrite the copy's ``paper_figures/`` and pages, never the
  repository's), the smoke run's report (``snakemake --report``) and ``snakemake --unlock``
  (it would remove a live run's locks here); ``dprl rehearse`` at smoke size
  (:func:`at_smoke_size`: rehearsing ``default`` or ``full`` times every kind of job of that
  preset, minutes to hours), in a copy cut to a few fast experiments.

The others are only parsed, because running them would take long, need what the test
machine lacks, or change the machine: SLURM submissions (``--workflow-profile
workflow/profiles/slurm``; ``tests/workflow/test_slurm.py`` runs the profile on a local
cluster), the report of a preset other than smoke (no results), a command that reads a
``default`` or ``full`` run's results (``results/default/...``: that run takes an hour or
more; :data:`NEEDS_A_LONG_RUN`), installs (``pip``,
``conda``, a venv: network and a changed environment), the test suite and the benchmarks
(``pytest``: this test is part of it; ``tests/benchmarks/newcomer_path.py`` clones and
installs), ``.ci/relock.py`` (the registry), the commands that follow or count a ``full``
run's logs (``tail -f`` never ends; ``find``, ``grep``: no such run here) and any compound
command (``a && b``, ``a | b``, ``a $(b)``). A synopsis's notation is read before
parsing: ``[--opt X]`` as the option given, ``P`` and ``DIR`` as a preset and a directory
(:data:`PLACEHOLDERS`); prose that names a subcommand alone whose parser refuses it without
arguments (``dprl runtimes``, run by the workflow with its arguments) is checked to name
one (:func:`names_a_subcommand`), and one that runs alone (``dprl readme-table``) is run.
"""

from __future__ import annotations

import contextlib
import glob
import io
import os
import re
import shlex
import subprocess
import sys
import time
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
SUBSTITUTED = "$(...)"  # a command substitution's output, in the command around it


def shell_commands(text: str) -> list[tuple[int, str]]:
    """``(line number, command)`` of every shell command of a Markdown text: the lines of
    ``bash`` code blocks and of indented code blocks (four spaces after a blank line) that
    start with one of :data:`PROGRAMS`, each without a trailing ``  # comment`` and joined
    with the lines a trailing ``\\`` continues it on; and the inline code spans (which may
    wrap over lines) that start with one of :data:`PROGRAMS`. A span that is the bare word
    ``dprl`` names the package, not a command."""
    out, fenced, prose = [], None, []
    pending: tuple[int, str] | None = None  # a command that a trailing backslash continues
    after_blank = in_block = False  # the previous line: blank; a command of an indented code block
    for n, line in enumerate(text.splitlines(), 1):
        if line.lstrip().startswith("```"):
            fenced = None if fenced is not None else line.lstrip()[3:].strip()
            prose.append("")
            after_blank = in_block = False
            continue
        if fenced is None:
            blank = not line.strip()
            code = line.startswith("    ") and not blank and (
                pending is not None or (after_blank or in_block) and line.split()[0] in PROGRAMS)
            after_blank, in_block = blank, code
            if not code:
                prose.append(line)
                continue
        prose.append("")
        command = re.split(r"\s+#\s", line, maxsplit=1)[0].strip()
        if (fenced is None or fenced in SHELL_BLOCKS) and command:
            start, command = (pending[0], f"{pending[1]} {command}") if pending else (n, command)
            pending = (start, command[:-1].rstrip()) if command.endswith("\\") else None
            if pending is None:
                out.append((start, command))
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
    """The words of each simple command of a compound one (``a && b | c``); a command
    substitution ``$(c)`` is a simple command of its own, and one word, :data:`SUBSTITUTED`,
    of the command it is in (its output: words that are not ``key=value``)."""
    lexer = shlex.shlex(concrete(command), posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    words, out = list(lexer), []

    def split(i: int) -> int:  # the simple commands from words[i] to the ")" closing them
        current: list[str] = []
        while i < len(words) and words[i] != ")":
            if words[i] == "$" and words[i + 1:i + 2] == ["("]:
                i = split(i + 2)
                current.append(SUBSTITUTED)
                continue
            if words[i] in OPERATORS:
                out.append(current)
                current = []
            else:
                current.append(words[i])
            i += 1
        out.append(current)
        return i + 1

    split(0)
    return [w for w in out if w]


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


def names_a_subcommand(words: list[str]) -> bool:
    """``dprl X`` alone where X's parser refuses to run without arguments (``dprl claims``,
    ``dprl runtimes``, ``dprl run-job``): prose naming a subcommand that the workflow or a
    command elsewhere gives its arguments, not a command of its own."""
    if words[0] != "dprl" or len(words) != 2:
        return False
    from dprl.cli import build_parser

    try:
        with contextlib.redirect_stderr(io.StringIO()):
            build_parser().parse_args(words[1:])
    except SystemExit:
        return True
    return False


def runs_as_written(command: str) -> list[str] | None:
    """The argv to run from the repository for a cheap command that writes nothing there
    (see the module docstring), or ``None`` for one that is not run there. A compound
    command is only parsed."""
    simple = simple_commands(command)
    if len(simple) != 1:
        return None
    words = simple[0]
    if "--help" in words:
        return words
    if words[:2] in (["dprl", "validate"], ["dprl", "jobs"], ["dprl", "parts"]):
        return words
    if words[0] == "snakemake" and not {"--report", "--workflow-profile", "--unlock"} & set(words):
        return words if "-n" in words else [words[0], "-n", *words[1:]]  # a dry run: the job graph, no job
    return None


def at_smoke_size(words: list[str]) -> list[str]:
    """A ``dprl rehearse`` command with its preset replaced by (or given as) ``smoke``: a
    rehearsal of ``default`` or ``full`` times every kind of job of that preset, minutes to
    hours."""
    if words[:2] != ["dprl", "rehearse"]:
        return words
    if "--preset" in words:
        i = words.index("--preset") + 1
        return [*words[:i], "smoke", *words[i + 1:]]
    return [*words[:2], "--preset", "smoke", *words[2:]]


NEEDS_A_LONG_RUN = ("results/default/", "results/full/")  # a command reading these is only parsed
SMOKE_COPY, REHEARSAL_COPY = "smoke run", "rehearsal"  # tests/workflow/test_documented_commands.py


def runs_in_a_copy(command: str) -> tuple[str, list[str]] | None:
    """``(copy, argv)`` for a command run in a copy of the repository (the module docstring):
    a rehearsal, at smoke size (:func:`at_smoke_size`), in :data:`REHEARSAL_COPY`; every
    other ``dprl`` command not run from the repository, the smoke run's report and
    ``snakemake --unlock`` in :data:`SMOKE_COPY`. ``None``: run from the repository, or only
    parsed."""
    simple = simple_commands(command)
    if len(simple) != 1 or runs_as_written(command) is not None:
        return None
    words = simple[0]
    if any(w.startswith(NEEDS_A_LONG_RUN) for w in words):
        return None  # reads a default or full run's results: that run takes an hour or more
    if words[0] == "dprl" and not names_a_subcommand(words):
        return (REHEARSAL_COPY, at_smoke_size(words)) if words[1] == "rehearse" else (SMOKE_COPY, words)
    if words[0] == "snakemake" and "--workflow-profile" not in words and (
            "--unlock" in words or "--report" in words and "preset=smoke" in words):
        return SMOKE_COPY, words
    return None


def run_documented(argv: list[str], cwd: Path) -> tuple[str | None, float]:
    """Run one documented command in ``cwd`` with the interpreter running the tests
    (``dprl`` and ``snakemake`` as ``python -m``), a word with a glob expanded in ``cwd`` as
    bash expands it (sorted; kept as written when nothing matches). Why it failed (exit
    status and the end of its output), or ``None``; and its seconds."""
    words = [w for word in argv for w in (sorted(glob.glob(word, root_dir=cwd)) or [word] if glob.has_magic(word) else [word])]
    cmd = [sys.executable, "-m", "dprl" if words[0] == "dprl" else words[0], *words[1:]]
    env = {**os.environ, "PATH": str(Path(sys.executable).parent) + os.pathsep + os.environ.get("PATH", "")}
    t0 = time.monotonic()
    done = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=600)
    seconds = time.monotonic() - t0
    if done.returncode:
        return f"{' '.join(argv)} exited {done.returncode}:\n{(done.stdout + done.stderr)[-1500:]}", seconds
    return None, seconds


def _all_commands() -> list[tuple[str, int, str]]:
    return [(doc.relative_to(ROOT).as_posix(), n, c) for doc in DOCUMENTS for n, c in shell_commands(doc.read_text())]


def test_the_extractor_finds_block_lines_and_spans_but_not_names():
    text = ("```bash\nsnakemake --cores 1 --config preset=smoke results/x.csv  # one table\n```\n"
            "and `snakemake --config preset=smoke --report r.html` inline, `dprl` the package,\n"
            "`pip install -r a.lock && pip\ninstall -e .` wrapped\n```\npytest not a shell block\n```\n")
    found = shell_commands(text)
    assert [n for n, _ in found] == [2, 4, 5]
    assert found[2][1] == "pip install -r a.lock && pip install -e ."
    indented = "text\n\n    dprl parts  # by paper\n    snakemake --cores 1 \\\n        $(dprl x) --config a=b\n\n    not a command\n"
    assert shell_commands(indented) == [(3, "dprl parts"), (4, "snakemake --cores 1 $(dprl x) --config a=b")]
    assert simple_commands("snakemake --config a=b $(dprl parts --targets lq) | tail") == [
        ["dprl", "parts", "--targets", "lq"], ["snakemake", "--config", "a=b", SUBSTITUTED], ["tail"]]
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
    assert parse_problems("snakemake --config preset=full $(dprl parts --preset full --targets lq)")
    assert parse_problems("snakemake $(dprl parts --preset full --targets lq) --config preset=full") == []
    assert parse_problems("python .ci/no_such_script.py")
    assert parse_problems('tail -f "unclosed')


def test_each_command_runs_where_it_can_run_as_written():
    assert runs_as_written("snakemake --cores 2 --config preset=smoke") == ["snakemake", "-n", "--cores", "2", "--config", "preset=smoke"]
    assert runs_as_written("snakemake --cores 2") == ["snakemake", "-n", "--cores", "2"]
    assert runs_as_written("pip install -e .") is None and runs_as_written("snakemake --unlock") is None
    assert runs_in_a_copy("dprl rehearse --preset full --collect") == (REHEARSAL_COPY, ["dprl", "rehearse", "--preset", "smoke", "--collect"])
    assert runs_in_a_copy("dprl verify [--preset P]") == (SMOKE_COPY, ["dprl", "verify", "--preset", "smoke"])
    assert runs_in_a_copy("dprl runtimes") is None and runs_in_a_copy("dprl run-job") is None  # names, in prose
    assert runs_in_a_copy("dprl readme-table") == (SMOKE_COPY, ["dprl", "readme-table"])
    assert runs_in_a_copy("snakemake --unlock") == (SMOKE_COPY, ["snakemake", "--unlock"])
    assert runs_in_a_copy("snakemake --workflow-profile workflow/profiles/slurm --config preset=full") is None


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
    """``dprl validate``/``jobs``/``parts``, ``--help`` and Snakemake dry runs, each once,
    from the repository root (the others: tests/workflow/test_documented_commands.py)."""
    runs = {tuple(argv): f"{doc}:{n}" for doc, n, c in _all_commands() if (argv := runs_as_written(c))}
    assert any(a[0] == "snakemake" for a in runs) and any(a[:2] == ("dprl", "validate") for a in runs)
    failed = [f"{where}: {problem}" for argv, where in runs.items() if (problem := run_documented(list(argv), ROOT)[0])]
    assert not failed, "\n\n".join(failed)
    # the runner sees a command fail: a preset that does not exist
    assert run_documented(["dprl", "validate", "--preset", "nosuch"], ROOT)[0]
