"""Numba's on-disk cache (``@njit(cache=True)``) for kernels that call kernels of other files.

Numba validates a cached function against its own source file (and Numba's version) only;
the NumPy and llvmlite versions key the cache's folder (:func:`dprl.use_versioned_numba_cache`). A loop that calls a
kernel defined elsewhere embeds that kernel's compiled code, so after an edit of the
callee's file the cached loop would keep running the old callee. :func:`drop_stale_caches`
hashes the loop's file together with the files it may call into and, when the digest
differs from the one stamped beside the cache, flushes every cached kernel of the loop's
module (one recompile follows). The files it may call into are derived, not listed: the
modules of its import closure (:func:`dprl.runner.code_version.module_closure`) that define
compiled kernels (:func:`kernel_closure`). A loop calls :func:`drop_stale_closure` at the end
of its module, which does this for every kernel module of its closure, itself included.

Compiling a loop takes tens of seconds (about 32 s for the LQ loop) before its first
episode, where a job would otherwise log nothing: :func:`log_compilation` announces it
(``compiling kernels (first run only)``), logs a line every few seconds while it lasts and
the elapsed time when it is done, so a job's log keeps its promise of a line at most every
5 s from its first line on.
"""

from __future__ import annotations

import ast
import hashlib
import logging
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from functools import cache
from pathlib import Path

from numba.core import event as numba_event
from numba.core.registry import CPUDispatcher

from dprl.runner.code_version import module_closure, module_file, module_syntax


def _kernels(module_name: str) -> list[CPUDispatcher]:
    return [obj for obj in vars(sys.modules[module_name]).values()
            if isinstance(obj, CPUDispatcher) and obj.__module__ == module_name]


def _is_jit(decorator: ast.expr) -> bool:
    node = decorator.func if isinstance(decorator, ast.Call) else decorator
    name = node.attr if isinstance(node, ast.Attribute) else getattr(node, "id", "")
    return name in ("njit", "jit")


@cache
def defines_kernels(module_name: str) -> bool:
    """Whether the module's source defines a Numba-compiled function (read statically, so
    the answer does not depend on what this process imported)."""
    if module_file(module_name) is None:
        return False
    return any(isinstance(node, ast.FunctionDef) and any(_is_jit(d) for d in node.decorator_list)
               for node in ast.walk(module_syntax(module_name)))


def kernel_closure(module_name: str) -> tuple[str, ...]:
    """The other modules whose kernels ``module_name``'s kernels may call: those of its
    import closure that define kernels (sorted)."""
    return tuple(m for m in module_closure(module_name) if m != module_name and defines_kernels(m))


def drop_stale_caches(module_name: str, called_modules: tuple[str, ...] | None = None, stamp: Path | None = None) -> bool:
    """Flush the caches of ``module_name``'s kernels if its file or one of
    ``called_modules``' files (default: :func:`kernel_closure`) changed since the last check
    (content, not time stamps). ``stamp``: where the digest is kept (default: beside the
    module's Numba cache). Returns whether the caches were flushed."""
    if called_modules is None:
        called_modules = kernel_closure(module_name)
    digest = hashlib.sha256()
    for name in (module_name, *called_modules):
        loaded = sys.modules.get(name)
        digest.update(Path(loaded.__file__ if loaded is not None else module_file(name)).read_bytes())
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


def drop_stale_closure(module_name: str) -> list[str]:
    """:func:`drop_stale_caches` for ``module_name`` and every loaded kernel module of its
    import closure whose kernels may call another file's (Numba checks their own file);
    call it at the end of a loop's module. Returns the modules whose caches were flushed."""
    flushed = []
    for name in (module_name, *kernel_closure(module_name)):
        if name in sys.modules and kernel_closure(name) and drop_stale_caches(name):
            flushed.append(name)
    return flushed


class CompileProgress(numba_event.Listener):
    """Numba's ``numba:compile`` events (fired on a cache miss only, i.e. a real compilation;
    a kernel loaded from the disk cache fires none) as log lines: one when the outermost
    compilation starts, one every ``interval_s`` while it runs (from a thread: LLVM releases
    the GIL), one with its elapsed time when it ends. Nested compilations (the kernels a
    loop calls) belong to the outermost one."""

    def __init__(self, log: logging.Logger, interval_s: float = 5.0) -> None:
        self.log = log
        self.interval_s = interval_s
        self.depth = 0
        self.t0 = 0.0
        self.total_s = 0.0  # compile time over the job (every outermost compilation)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def _name(self, event: numba_event.Event) -> str:
        dispatcher = (event.data or {}).get("dispatcher")
        func = getattr(dispatcher, "py_func", None)
        return f"{func.__module__}.{func.__qualname__}" if func is not None else "a kernel"

    def _heartbeat(self, name: str) -> None:
        while not self._stop.wait(self.interval_s):
            self.log.info("compiling kernels: %s, %.0f s so far", name, time.perf_counter() - self.t0)

    def on_start(self, event: numba_event.Event) -> None:
        self.depth += 1
        if self.depth == 1:
            self.t0 = time.perf_counter()
            name = self._name(event)
            self.log.info("compiling kernels (first run only; cached for later runs): %s", name)
            self._stop.clear()
            self._thread = threading.Thread(target=self._heartbeat, args=(name,), daemon=True)
            self._thread.start()

    def on_end(self, event: numba_event.Event) -> None:
        self.depth -= 1
        if self.depth == 0:
            self.stop()
            elapsed = time.perf_counter() - self.t0
            self.total_s += elapsed
            self.log.info("compiled kernels: %s in %.1f s", self._name(event), elapsed)

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
            self._thread = None


@contextmanager
def log_compilation(log: logging.Logger, interval_s: float = 5.0) -> Iterator[CompileProgress]:
    """Log every Numba compilation that happens inside the block (:class:`CompileProgress`)."""
    listener = CompileProgress(log, interval_s)
    numba_event.register("numba:compile", listener)
    try:
        yield listener
    finally:
        numba_event.unregister("numba:compile", listener)
        listener.stop()
