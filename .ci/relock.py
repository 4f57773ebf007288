#!/usr/bin/env python3
"""Regenerate requirements.lock from pyproject.toml's ranges, at the newest releases they allow.

Run it when CI's second stage (the fast tests in an environment resolved fresh from the
ranges, ``.ci/run``) is green, so that the versions CI tests exactly do not age: it
resolves with pip-tools (``pip-compile --upgrade``, every extra, Python 3.11) in a
throwaway virtual environment, so the interpreter it runs from gains nothing, writes the
lock and prints the pins that changed. Then install and test it as the README says
(``pip install -r requirements.lock && pip install -e . --no-deps && pytest``).

Usage: ``python .ci/relock.py [--output PATH]`` from any directory (default PATH: the
repository's ``requirements.lock``).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import venv
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).parent))
from lock_diff import locked  # noqa: E402 (beside this file)

PIP_TOOLS = "pip-tools>=7.4,<8"  # the lock's format: a plain requirements file with "# via" notes
COMPILE = ["--upgrade", "--all-extras", "--strip-extras", "--no-emit-index-url", "--no-emit-find-links"]


def relock(output: Path) -> dict[str, tuple[str, str]]:
    """Write the lock to ``output``; ``{name: (old, new)}`` of the pins that changed (``-``
    for a package on one side only)."""
    old = locked(output.read_text()) if output.exists() else {}
    with tempfile.TemporaryDirectory(prefix="relock-") as tmp:
        venv.create(tmp, with_pip=True)
        python = str(Path(tmp) / "bin" / "python")
        subprocess.run([python, "-m", "pip", "install", "-q", PIP_TOOLS], check=True)
        env = dict(os.environ, CUSTOM_COMPILE_COMMAND="python .ci/relock.py")  # the header says how to redo it
        subprocess.run([python, "-m", "piptools", "compile", "-q", *COMPILE, "--output-file", str(output), "pyproject.toml"],
                       check=True, cwd=REPO, env=env)
    new = locked(output.read_text())
    return {n: (old.get(n, "-"), new.get(n, "-")) for n in sorted(old.keys() | new.keys()) if old.get(n) != new.get(n)}


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--output", type=Path, default=REPO / "requirements.lock")
    args = parser.parse_args(argv)
    changed = relock(args.output.resolve())
    print(f"{args.output}: {len(changed)} pin(s) changed (old -> new)")
    for name, (old, new) in changed.items():
        print(f"  {name}: {old} -> {new}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
