"""A job whose Numba kernels are not cached yet logs the compilation as it happens
(dprl.runner.kernel_cache.log_compilation): a line before it, lines while it lasts, the
elapsed time after, so a job's log has a line at most every progress interval from the start."""

from __future__ import annotations

import logging
import re

import numpy as np
from numba import njit

from dprl.runner.kernel_cache import log_compilation


def _fresh_kernels():
    """Two kernels never compiled before (defined here, not cached on disk), one calling the other."""

    @njit(cache=False)
    def inner(x):
        s = 0.0
        for i in range(x.shape[0]):
            s += np.sin(x[i]) * np.cos(x[i]) + np.sqrt(abs(x[i]))
        return s

    @njit(cache=False)
    def outer(x):
        return inner(x) + inner(2.0 * x)

    return outer


def test_a_cold_compilation_is_announced_timed_and_kept_alive(caplog):
    outer = _fresh_kernels()
    log = logging.getLogger("dprl.test.compile")
    with caplog.at_level(logging.INFO, logger="dprl.test.compile"):
        with log_compilation(log, interval_s=0.02) as listener:
            outer(np.arange(5.0))
    lines = [r.getMessage() for r in caplog.records]
    assert lines[0].startswith("compiling kernels (first run only"), lines
    assert "outer" in lines[0]  # the outermost kernel names the compilation; inner is part of it
    done = [ln for ln in lines if ln.startswith("compiled kernels:")]
    assert len(done) == 1 and re.search(r"outer in \d+\.\d s$", done[0]), lines
    # at least one line while it compiled (a compilation takes well over 20 ms)
    assert any(re.match(r"compiling kernels: .*outer, \d+ s so far", ln) for ln in lines), lines
    assert listener.total_s > 0

    # compiled: the same call inside the block logs nothing
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="dprl.test.compile"):
        with log_compilation(log, interval_s=0.02):
            outer(np.arange(5.0))
    assert caplog.records == []
