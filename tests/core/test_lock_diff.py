""".ci/lock_diff.py, which CI's fresh-environment stage runs: every package installed at a
version other than requirements.lock's, missing, or not in the lock is listed; names are
compared as PEP 503 normalises them (``PyYAML`` is ``pyyaml``, ``a_b`` is ``a-b``)."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("lock_diff", ROOT / ".ci" / "lock_diff.py")
lock_diff = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(lock_diff)


def test_differences_name_each_changed_missing_and_unlocked_package():
    lock = lock_diff.locked("PyYAML==6.0.3\n    # via dprl\npython_dateutil==2.9.0\nsix==1.17.0\nnumpy==2.4.6\n")
    assert lock == {"pyyaml": "6.0.3", "python-dateutil": "2.9.0", "six": "1.17.0", "numpy": "2.4.6"}
    have = {"pyyaml": "6.0.4", "python-dateutil": "4.0.0", "numpy": "2.4.6", "tzdata": "2026.6", "pip": "23.2.1"}
    assert lock_diff.differences(lock, have) == [
        "python-dateutil: 2.9.0 -> 4.0.0",
        "pyyaml: 6.0.3 -> 6.0.4",
        "six: 1.17.0 -> -",
        "tzdata: - -> 2026.6",
    ]
    assert lock_diff.differences(lock, dict(lock)) == []


def test_the_script_prints_what_this_environment_differs_in():
    """Run as CI runs it (this interpreter, the repository's lock): a count, then one line a difference."""
    run = subprocess.run([sys.executable, str(ROOT / ".ci" / "lock_diff.py")], capture_output=True, text=True, check=True)
    expected = lock_diff.differences(lock_diff.locked((ROOT / "requirements.lock").read_text()), lock_diff.installed())
    assert run.stdout.splitlines() == [f"{len(expected)} package(s) differ from requirements.lock (locked -> installed):"] + [f"  {d}" for d in expected]
