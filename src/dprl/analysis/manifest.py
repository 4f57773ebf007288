"""The manifest of a run: what produced the committed figures (commit, config, package
versions), when, on how many cores of which CPU, and how fast that machine runs the
package's dominant loop (:mod:`dprl.analysis.reference_speed`), so that wall times of runs
on different machines can be compared."""

from __future__ import annotations

import datetime as dt
import os
import platform
from pathlib import Path

import pandas as pd

import dprl
from dprl.analysis.reference_speed import cpu_model, reference_speed
from dprl.runner.code_version import git_state


def package_versions() -> dict[str, str | None]:
    """The installed version of each direct dependency of ``dprl`` (runtime and every
    extra, as the installed package's metadata declares them), by canonical name; None
    for one not installed (the test extra in a runtime-only install). Read with
    ``importlib.metadata``, so it is the version in use, not the one a lock file asks for."""
    from importlib import metadata

    from packaging.requirements import Requirement
    from packaging.utils import canonicalize_name

    names = sorted({canonicalize_name(Requirement(r).name) for r in metadata.requires("dprl") or ()})
    versions: dict[str, str | None] = {}
    for name in names:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = None
    return versions


def available_cpus() -> int:
    """CPUs this process may run on (its affinity mask where the OS has one, else the count)."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def cores_used(requested: int, available: int) -> int:
    """Cores a local run actually had: Snakemake runs at most ``--cores`` jobs at once, and
    they share the CPUs there are (``--cores 8`` on 2 CPUs runs on 2). 0 requested (not
    known, e.g. a report build) counts as all."""
    return min(requested, available) if requested > 0 else available


def build_manifest(preset: str, jobs_dir: str, cores: int, runtimes_csv: str, config_hash: str,
                   reference_episodes: int = 500_000) -> dict:
    """``cores``: what ``--cores`` requested; the manifest records it as ``cores_requested``
    and, as ``cores``, the cores used (:func:`cores_used`). ``reference_speed``: the
    machine's speed on the reference workload of ``reference_episodes`` episodes, measured
    now (the manifest is the run's last step, on an otherwise idle machine); 0 skips it.

    ``wall_time_s`` is measured from the start of the earliest job whose result is on
    disk (its result mtime minus its own wall time) to now: the elapsed time of the run
    that produced every result, when that run started from scratch."""
    now = dt.datetime.now(dt.UTC)
    runtimes = pd.read_csv(runtimes_csv)
    results = list(Path(jobs_dir).rglob("*.csv"))
    starts = []
    bench = {}
    from dprl.analysis.runtimes import BadBenchmark, read_benchmark

    for b in sorted((Path(jobs_dir).parent / "benchmarks").rglob("*.tsv")):
        try:  # one bad benchmark (a full disk) costs only its own job's start time
            bench[os.path.relpath(b, Path(jobs_dir).parent / "benchmarks")[:-4]] = float(read_benchmark(b)["s"].iloc[-1])
        except (BadBenchmark, OSError):
            pass
    for r in results:
        key = os.path.relpath(r, jobs_dir)[:-4]
        starts.append(r.stat().st_mtime - bench.get(key, 0.0))
    wall = now.timestamp() - min(starts) if starts else 0.0
    speed = reference_speed(reference_episodes) if reference_episodes > 0 else None
    commit, dirty = git_state()  # dirty: uncommitted changes to what produces numbers
    return {
        "package": "dprl",
        "version": dprl.__version__,
        "git_commit": commit,
        "git_dirty": dirty,
        "config_hash": config_hash,
        "preset": preset,
        "date_utc": now.isoformat(timespec="seconds"),
        "wall_time_s": round(wall, 1),
        "cores": cores_used(int(cores), available_cpus()),
        "cores_requested": int(cores),
        "cpus_available": available_cpus(),
        "jobs": int(runtimes["jobs"].sum()) if "jobs" in runtimes else len(results),
        "job_cpu_s_total": round(float(runtimes["cpu_s_total"].sum()), 1) if "cpu_s_total" in runtimes else None,
        "job_wall_s_total": round(float(runtimes["wall_s_total"].sum()), 1) if "wall_s_total" in runtimes else None,
        "python": platform.python_version(),
        "packages": package_versions(),
        "machine": f"{platform.system()} {platform.machine()}, {os.cpu_count()} CPUs",
        "cpu_model": cpu_model(),
        "reference_speed": speed,
    }
