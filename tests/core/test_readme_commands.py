"""The README's ``snakemake`` commands run as written: Snakemake's ``--config`` takes every
following word up to the next option as a ``key=value`` override, so a target written after
it (``--config preset=smoke results/...csv``) is read as a malformed override and the
command fails. A target goes before ``--config``."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

README = Path(__file__).resolve().parents[2] / "README.md"
KEY_VALUE = re.compile(r"[A-Za-z_][\w.]*=\S*")


def snakemake_commands(text: str) -> list[tuple[int, str]]:
    """``(line number, command)`` of every ``snakemake`` command: lines of fenced code blocks
    (without their ``#`` comment) and inline code spans that start with ``snakemake``."""
    out, fenced = [], False
    for n, line in enumerate(text.splitlines(), 1):
        if line.lstrip().startswith("```"):
            fenced = not fenced
            continue
        spans = [line.split(" #", 1)[0]] if fenced else re.findall(r"`([^`]+)`", line)
        out += [(n, s.strip()) for s in spans if s.strip().startswith("snakemake ")]
    return out


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


def test_the_checker_finds_a_target_swallowed_by_config():
    text = "```bash\nsnakemake --cores 1 --config preset=smoke results/x.csv  # one table\n```\n" \
           "and `snakemake --config preset=smoke --report r.html` inline\n"
    found = snakemake_commands(text)
    assert [n for n, _ in found] == [2, 4]
    assert config_problems(found[0][1]) == ["results/x.csv"] and config_problems(found[1][1]) == []


def test_no_readme_snakemake_command_puts_a_word_that_is_not_key_value_after_config():
    commands = snakemake_commands(README.read_text())
    assert any("--config" in c for _, c in commands)
    bad = [f"README.md:{n}: {c!r} (after --config: {config_problems(c)})" for n, c in commands if config_problems(c)]
    assert not bad, "a target after --config is read as an override; put it before --config:\n" + "\n".join(bad)
