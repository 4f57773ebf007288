#!/usr/bin/env python3
"""The installed packages whose versions differ from requirements.lock.

CI's second stage installs the package fresh from pyproject.toml's ranges (the newest
releases the registry serves, what ``pip install -e ".[test]"`` gives a user) and runs the
fast tests there; this prints what that environment runs that the lock does not, so a
failure there can be traced to the release that brought it.

Usage: ``python .ci/lock_diff.py [LOCK]`` with the environment's own Python (default lock:
the repository's ``requirements.lock``). Prints one ``name: locked -> installed`` line per
difference (``-`` for a package on one side only) and always exits 0.
"""

from __future__ import annotations

import re
import sys
from importlib import metadata
from pathlib import Path

PIN = re.compile(r"^(?P<name>[A-Za-z0-9][A-Za-z0-9._-]*)==(?P<version>[^\s;#]+)")


def canonical(name: str) -> str:
    """PEP 503 normalised name (``PyYAML`` and ``pyyaml``, ``a_b`` and ``a-b`` agree)."""
    return re.sub(r"[-_.]+", "-", name).lower()


def locked(text: str) -> dict[str, str]:
    """``{name: version}`` of a pip-compile lock's ``name==version`` lines."""
    return {canonical(m["name"]): m["version"] for m in map(PIN.match, text.splitlines()) if m}


def installed() -> dict[str, str]:
    """``{name: version}`` of the distributions this interpreter sees (the project itself excepted)."""
    found = {canonical(d.metadata["Name"]): d.version for d in metadata.distributions() if d.metadata["Name"]}
    found.pop("dprl", None)
    return found


def differences(lock: dict[str, str], have: dict[str, str]) -> list[str]:
    """``name: locked -> installed`` for every locked package installed at another version
    or missing, and every installed one the lock does not pin (pip, setuptools and wheel,
    which a venv brings, excepted)."""
    out = [f"{n}: {v} -> {have.get(n, '-')}" for n, v in sorted(lock.items()) if have.get(n) != v]
    extra = sorted(set(have) - set(lock) - {"pip", "setuptools", "wheel"})
    return out + [f"{n}: - -> {have[n]}" for n in extra]


def main(argv: list[str]) -> int:
    lock_path = Path(argv[0]) if argv else Path(__file__).resolve().parents[1] / "requirements.lock"
    lines = differences(locked(lock_path.read_text()), installed())
    print(f"{len(lines)} package(s) differ from {lock_path.name} (locked -> installed):")
    for line in lines:
        print(f"  {line}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
