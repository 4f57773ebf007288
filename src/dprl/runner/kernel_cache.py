"""Numba's on-disk cache (``@njit(cache=True)``) for kernels that call kernels of other files.

Numba validates a cached function against its own source file only. A loop that calls a
kernel defined elsewhere embeds that kernel's compiled code, so after an edit of the
callee's file the cached loop would keep running the old callee. :func:`drop_stale_caches`
hashes the loop's file together with the files it calls into and, when the digest differs
from the one stamped beside the cache, flushes every cached kernel of the loop's module
(one recompile follows). The callees' own caches need nothing: their files are their own.
"""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path

from numba.core.registry import CPUDispatcher


def _kernels(module_name: str) -> list[CPUDispatcher]:
    return [obj for obj in vars(sys.modules[module_name]).values()
            if isinstance(obj, CPUDispatcher) and obj.__module__ == module_name]


def drop_stale_caches(module_name: str, called_modules: tuple[str, ...], stamp: Path | None = None) -> bool:
    """Flush the caches of ``module_name``'s kernels if its file or one of
    ``called_modules``' files changed since the last check (content, not time stamps).
    Call at the end of the module. ``stamp``: where the digest is kept (default: beside
    the module's Numba cache). Returns whether the caches were flushed."""
    digest = hashlib.sha256()
    for name in (module_name, *called_modules):
        digest.update(Path(sys.modules[name].__file__).read_bytes())
    kernels = _kernels(module_name)
    if not kernels:
        return False
    if stamp is None:
        stamp = Path(kernels[0]._cache.cache_path) / f"{module_name}.sources.sha256"
    try:
        if stamp.read_text() == digest.hexdigest():
            return False
    except OSError:
        pass
    for kernel in kernels:
        kernel._cache.flush()
    try:
        stamp.parent.mkdir(parents=True, exist_ok=True)
        stamp.write_text(digest.hexdigest())
    except OSError:  # a read-only install: Numba then caches elsewhere or not at all
        pass
    return True
