"""Run one job: check its accounting, call its job function, log, time, measure and
write its result atomically. The one way a job runs (``dprl run-job`` and ``dprl
run-bundle``, hence every Snakemake simulation rule); above the registry of job
functions, below the CLI."""

from __future__ import annotations

import logging
import platform
import resource
import time
from pathlib import Path

import pandas as pd

from dprl.experiments.accounting import TOLERANCE as ACCOUNTING_TOLERANCE
from dprl.experiments.accounting import accounted_epsilon
from dprl.experiments.registry import get_kind, job_function
from dprl.runner.io import write_result
from dprl.runner.job import JobContext, JobSpec, canonical_json
from dprl.runner.kernel_cache import log_compilation

log = logging.getLogger("dprl.job")


def peak_rss_mb() -> float:
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return rss / 1024.0 if platform.system() != "Darwin" else rss / 2**20


def execute(spec: JobSpec, progress_interval_s: float = 5.0) -> pd.DataFrame:
    """Run the job function of ``spec`` and return its table (no file I/O)."""
    kind = get_kind(spec.kind)
    func = job_function(kind)
    # a private job runs only if its noise is private at the nominal ε under the paper's
    # relation (validation refuses such configs already; this guards direct `run-job`)
    acc = accounted_epsilon(spec)
    if acc is not None and acc > spec.epsilon * (1.0 + ACCOUNTING_TOLERANCE):
        raise ValueError(f"accounted epsilon under replacement {acc:.6g} exceeds the nominal epsilon {spec.epsilon:g}: "
                         f"not private at the nominal epsilon ({spec.algorithm}, {spec.privacy})")
    ctx = JobContext(spec, log=log, progress_interval_s=progress_interval_s)
    # a cold Numba cache compiles the job's loop first (tens of seconds): logged as it
    # happens, so the log has a line at most every progress_interval_s from the start
    with log_compilation(log, progress_interval_s):
        df = func(ctx)
    if not isinstance(df, pd.DataFrame):
        raise TypeError(f"job function {kind.run} returned {type(df).__name__}, expected a DataFrame")
    if acc is not None:
        # what the job's own agents held (JobContext.record_accounting), not the check above
        ran = ctx.accounted_epsilon
        if ran is None:
            raise RuntimeError(f"job function {kind.run} ran a private agent but recorded no accounting")
        if ran > spec.epsilon * (1.0 + ACCOUNTING_TOLERANCE):
            raise ValueError(f"the agent the job ran has accounted epsilon under replacement {ran:.6g} > the nominal "
                             f"epsilon {spec.epsilon:g}: result not written ({spec.algorithm}, {spec.privacy})")
        df["accounted_epsilon"] = ran
        log.info("accounted epsilon under replacement: %.6g (nominal %g)", ran, spec.epsilon)
    return df


def run_job(spec: JobSpec, out: str | Path, labels: dict[str, str] | None = None) -> pd.DataFrame:
    """Run a job, log parameters, progress, wall time and peak memory, and write its
    result file atomically (a killed job leaves no result file behind)."""
    t0 = time.perf_counter()
    log.info("job %s", out)
    log.info("spec %s", canonical_json(spec.to_dict()))
    df = execute(spec)
    write_result(out, df, {"spec": spec.to_dict(), "labels": labels or {}})
    wall = time.perf_counter() - t0
    log.info("done: %d rows, wall %.2f s, peak memory %.0f MB", len(df), wall, peak_rss_mb())
    return df
