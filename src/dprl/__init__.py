"""dprl: reproducibility package for differentially private reinforcement learning.

Layout, bottom to top (each imports only the layers below it; tests/core/test_layers.py):
``checks`` (argument checks: NaN, infinity and ranges refused with the parameter named);
``privacy`` (mechanisms shared by all papers, the typed privacy setting) and ``envs``
(environments); ``runner`` (the core: job spec and context, random streams, result I/O,
bundles, lock); ``agents`` (algorithms, one subpackage per paper); ``experiments`` (job
functions, their declarations, and how one job runs); ``config`` (validation and expansion
of config.yaml); ``analysis`` (aggregation, fits, claims, figures); ``cli``.
"""

from __future__ import annotations

import os
import sys
from collections.abc import MutableMapping
from importlib import metadata
from pathlib import Path

__version__ = "0.1.0"

# What a compiled kernel depends on besides its source. Numba's own cache index checks
# the source and Numba's version only, so a kernel compiled against another NumPy (or
# llvmlite) would be loaded; a folder per set of versions means it never is, and two
# environments of different versions (the lock's and a fresh one) keep their caches apart.
COMPILED_AGAINST = ("numba", "llvmlite", "numpy")


def numba_cache_key() -> str:
    """The installed versions a compiled kernel depends on, as a folder name
    (``numba0.68.1-llvmlite0.50.0-numpy2.4.6``); read from the package metadata, without
    importing them."""
    return "-".join(f"{name}{metadata.version(name)}" for name in COMPILED_AGAINST)


def _default_cache_base() -> Path:
    here = Path(__file__).parent
    if os.access(here, os.W_OK):
        return here / "__pycache__" / "numba"
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "dprl" / "numba"


def use_versioned_numba_cache(environ: MutableMapping[str, str] = os.environ) -> str:
    """Point Numba's disk cache (``NUMBA_CACHE_DIR``) at ``<base>/<numba_cache_key()>`` and
    return that folder. ``<base>`` is the ``NUMBA_CACHE_DIR`` the user gave, else the
    package's ``__pycache__/numba`` (``~/.cache/dprl/numba`` on a read-only install). Set in
    the environment, so Snakemake's jobs inherit it; a child process re-keys from the
    user's base (``_DPRL_NUMBA_CACHE_BASE``), not from its parent's keyed folder."""
    given = environ.get("NUMBA_CACHE_DIR", "")
    if given and given == environ.get("_DPRL_NUMBA_CACHE_DIR"):  # set by a parent dprl
        given = environ.get("_DPRL_NUMBA_CACHE_BASE", "")
    path = str((Path(given) if given else _default_cache_base()) / numba_cache_key())
    environ.update(NUMBA_CACHE_DIR=path, _DPRL_NUMBA_CACHE_DIR=path, _DPRL_NUMBA_CACHE_BASE=given)
    return path


def _configure_numba_cache() -> None:
    try:
        path = use_versioned_numba_cache()
    except metadata.PackageNotFoundError:  # no Numba: nothing is compiled
        return
    config = sys.modules.get("numba.core.config")
    if config is not None:  # Numba imported before dprl: it read the environment already
        config.CACHE_DIR = path


_configure_numba_cache()  # before any module of the package decorates a kernel
