"""A Numba kernel cache written under other versions of Numba, llvmlite or NumPy is never
loaded (``dprl.use_versioned_numba_cache``: one cache folder per set of versions; Numba's
own index checks only the source and Numba's version), and each first compilation under a
new set of versions is announced as it happens (``dprl.runner.kernel_cache.log_compilation``).

The versions are faked in child processes (``importlib.metadata.version`` patched before
``dprl`` is imported): the real Numba compiles and loads, only the key differs, so what
keeps the caches apart is dprl's key and not Numba's own check."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import dprl

CHILD = textwrap.dedent(
    """
    import logging, sys
    from importlib import metadata

    fake = dict(arg.split("=") for arg in sys.argv[2:])  # e.g. numpy=9.0.0
    real = metadata.version
    metadata.version = lambda name: fake.get(name) or real(name)
    import dprl  # keys the cache by the (faked) versions
    from dprl.runner.kernel_cache import log_compilation

    sys.path.insert(0, sys.argv[1])
    import keyed_kernel

    logging.basicConfig(level=logging.INFO, stream=sys.stdout, format="%(message)s")
    with log_compilation(logging.getLogger("child"), interval_s=60):
        assert keyed_kernel.twice_plus_one(3.0) == 7.0
    import numba
    print("CACHE_DIR", numba.config.CACHE_DIR)
    """
)


def _run(tmp_path: Path, *fake: str) -> tuple[bool, str]:
    """Call a ``cache=True`` kernel in a fresh process under the faked versions: whether it
    was compiled (announced) rather than loaded from the disk cache, and the cache folder."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("NUMBA_CACHE_DIR", "_DPRL_NUMBA"))}
    env["NUMBA_CACHE_DIR"] = str(tmp_path / "cache")
    run = subprocess.run([sys.executable, "-c", CHILD, str(tmp_path / "src"), *fake], capture_output=True, text=True, env=env, timeout=300)
    assert run.returncode == 0, run.stderr[-3000:]
    lines = run.stdout.splitlines()
    (cache_dir,) = [ln.split(" ", 1)[1] for ln in lines if ln.startswith("CACHE_DIR ")]
    compiled = any(ln.startswith("compiling kernels (first run only") for ln in lines)
    assert compiled == any(ln.startswith("compiled kernels: keyed_kernel.twice_plus_one in") for ln in lines), lines
    return compiled, cache_dir


def test_a_cache_of_other_versions_is_never_loaded(tmp_path):
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "keyed_kernel.py").write_text("from numba import njit\n\n\n@njit(cache=True)\ndef twice_plus_one(x):\n    return 2.0 * x + 1.0\n")
    real = dprl.numba_cache_key()

    compiled, here = _run(tmp_path)
    assert compiled and here == str(tmp_path / "cache" / real)  # the user's folder, keyed
    assert _run(tmp_path) == (False, here)  # same versions: loaded, no compilation
    for fake in ("numpy=9.0.0", "numba=0.1.0", "llvmlite=0.1.0"):
        compiled, there = _run(tmp_path, fake)
        assert compiled and there != here, fake  # another version: compiled afresh, elsewhere
        assert _run(tmp_path, fake) == (False, there)  # and then cached under its own key
    assert _run(tmp_path) == (False, here)  # the first one's cache was left as it was
    assert len(list((tmp_path / "cache").iterdir())) == 4  # one folder per set of versions


@pytest.mark.parametrize(
    "environ, base",
    [
        ({}, None),  # the package's own folder
        ({"NUMBA_CACHE_DIR": "/x/cache"}, "/x/cache"),  # the user's, keyed beneath it
    ],
)
def test_a_child_process_keys_from_the_users_base_not_its_parents_folder(environ, base, monkeypatch):
    """What a parent dprl set (Snakemake's process, inherited by its jobs) is re-keyed from
    the user's base in the child: a child of other versions gets its own folder."""
    parent = dict(environ)
    path = dprl.use_versioned_numba_cache(parent)
    expected_base = Path(base) if base else dprl._default_cache_base()
    assert path == str(expected_base / dprl.numba_cache_key()) == parent["NUMBA_CACHE_DIR"]

    child = dict(parent)
    monkeypatch.setattr(dprl, "numba_cache_key", lambda: "numba0.1.0-llvmlite0.1.0-numpy9.0.0")
    assert dprl.use_versioned_numba_cache(child) == str(expected_base / "numba0.1.0-llvmlite0.1.0-numpy9.0.0")
    assert dprl.use_versioned_numba_cache(dict(child)) == child["NUMBA_CACHE_DIR"]  # idempotent


def test_this_process_caches_under_its_own_versions():
    import numba

    assert Path(numba.config.CACHE_DIR).name == dprl.numba_cache_key()
    assert os.environ["NUMBA_CACHE_DIR"] == numba.config.CACHE_DIR
