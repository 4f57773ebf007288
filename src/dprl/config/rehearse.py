"""Rehearsal of a preset: time and measure a bounded slice of every distinct kind of job,
project it to the job's full horizon and compare with what the workflow requests.

``dprl validate`` estimates a preset's CPU-hours from the default run's measurements
scaled by each kind's work model (:mod:`dprl.config.estimate`); at ``full``'s points those
models were never checked. A rehearsal runs, for every group of jobs sharing (experiment,
algorithm, environment, privacy kind), its representative (the job of largest modelled
work: the largest horizon, and the largest instance at it) through the one job runner
(:func:`dprl.experiments.run.execute`, what ``dprl run-job`` calls), truncated to a slice
of its horizon:

1. a warm-up run of ``n1`` horizon units (Numba compilation, the first checkpoints);
2. timed runs of ``n1 = n2 / 4`` and ``n2`` units, in the same process (compiled); ``n2``
   starts at the slice and grows 4x until ``t(n2) - t(n1)`` lasts ``min_seconds`` (:func:`measure`).

Projection (linear in the horizon, as the loops are: one episode, run or trajectory
costs the same at every point of a job):
``per_unit = (t(n2) - t(n1)) / (n2 - n1)`` (the fixed cost of building the instance and
the agent cancels), ``seconds(N) = STARTUP + t(n2) + per_unit · (N - n2)``. A job whose
horizon is at most ``n2`` runs whole (measured, not projected); a job with no horizon its
work model is linear in (``pe_exact``: replacement pairs grow geometrically) runs whole.
Memory: the peak RSS of the process (it ran nothing else), plus the work model's extra
bytes of the full horizon over the slice's (tree counters grow with ``log T``).

The other jobs of a group are projected from their representative by the work model's
ratio (their horizons and sizes are smaller): the measured compute time times
``work(job) / work(representative)``. The horizon is found, not declared: the parameter
(among :data:`HORIZON_KEYS`) of largest value that the kind's work model is linear in.

Two ways to run the slices:

- Here (``dprl rehearse``): one fresh local process per representative (:func:`rehearse`),
  compared with what the simulate rule requests for that job alone
  (:func:`requested_resources`). Quick, but it tests no scheduler.
- Through the workflow (``snakemake --workflow-profile workflow/profiles/slurm --config
  preset=full rehearse=True``, then ``dprl rehearse --preset full --collect``). The
  workflow's targets become the slices: rule ``rehearse_slice``
  (workflow/rules/rehearse.smk) runs each representative's slice (``dprl rehearse-slice``:
  :func:`run_slice`) with the ``resources:`` of the real Snakemake job that would run that
  representative, computed by the same code the real rules use (workflow/rules/common.smk:
  ``bundle_resources`` under the profile's ``bundle_seconds``, else the simulate rule's
  ``job_resources``; both from :mod:`dprl.config.estimate`), and whatever executor the run
  uses submits it: under the SLURM profile, sbatch with that partition, ``mem_mb``,
  ``runtime`` and one CPU, the profile's defaults included. A request too small for the
  slice itself therefore shows as SLURM killing the slice job (its slice missing: named by
  :func:`collect`); each slice records what SLURM granted (``scontrol show job``:
  :func:`granted_resources`) beside the request. The workflow also writes
  ``results/<preset>/rehearsal/requests.json``: every real Snakemake job (bundle or single
  simulation) with its request and members. :func:`collect` projects every member from its
  group's slice and compares each real job's projection (its members' seconds summed: a
  bundle runs them one after another in one process; the largest member's memory) with its
  request and the ``limits``, naming the real job and its slowest member. This design (a
  config key, not ``sbatch`` from this module) was chosen because the slice then passes
  through the profile's own machinery: Snakemake's resource evaluation, the SLURM plugin's
  sbatch line, the jobstep and its nested ``srun``, exactly as the real job will.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from multiprocessing import get_context
from pathlib import Path
from typing import Any

import pandas as pd

from dprl.config.resources import job_request, preset_resources
from dprl.config.projection import (horizon_value, groups, horizon_key, job_seconds,
                                    project, spec_hash, with_horizon)
from dprl.runner.io import atomic_write_text
from dprl.runner.job import JobSpec

log = logging.getLogger("dprl.rehearse")



class RehearsalFailed(Exception):
    """Projections above the workflow's requests or the per-job limits (one line each)."""

    def __init__(self, problems: Sequence[str]) -> None:
        self.problems = list(problems)
        super().__init__("rehearsal: " + "; ".join(self.problems))


def _timed(spec: JobSpec) -> float:
    from dprl.experiments.run import execute

    t0 = time.perf_counter()
    execute(spec, progress_interval_s=3600.0)  # no progress lines inside a slice
    return time.perf_counter() - t0


def own_peak_rss_mb() -> float:
    """This process's own peak resident memory in MB: ``VmHWM`` of its address space (reset by
    ``exec``), where Linux has it. ``ru_maxrss`` survives ``exec``, so a child spawned by a
    large parent (a test worker of 670 MB) would report the parent's size as its own."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return float(line.split()[1]) / 1024.0
    except OSError:
        pass
    from dprl.experiments.run import peak_rss_mb

    return peak_rss_mb()


def measure(spec_dict: dict[str, Any], slice_units: int, min_seconds: float = 2.0) -> dict[str, Any]:
    """Run one representative's slice (module docstring) in this process; its times and
    peak RSS. Called in a fresh process per representative, so that the RSS is its own.

    The slice starts at ``slice_units`` and grows 4x until ``t(n2) - t(n1)`` lasts
    ``min_seconds`` (so that timer noise and the fixed cost do not decide the per-unit
    time: an audit's fixed cost is seconds, and 200-run slices projected 214 s for a
    2-s job), or the whole horizon. A slice the job refuses (a hard family's instance is tuned
    to its horizon: ``lowerbound_horizon`` needs ``T >= 4·gap_scale²·n·m``) grows the same way.
    """
    logging.getLogger("dprl.job").setLevel(logging.WARNING)
    spec = JobSpec.from_dict(spec_dict)
    key = horizon_key(spec)
    full = None if key is None else int(horizon_value(spec, key))

    def whole() -> dict[str, Any]:
        _timed(spec)  # compilation
        t = _timed(spec)
        return {"horizon_key": "" if key is None else ".".join(key), "horizon": full or 0, "n1": 0, "n2": full or 0,
                "t1": 0.0, "t2": t, "per_unit": 0.0, "whole": True, "rss_mb": own_peak_rss_mb()}

    if key is None or full <= slice_units:
        return whole()
    n2, warm = int(slice_units), False
    while True:
        n1 = max(1, n2 // 4)
        try:
            if not warm:
                _timed(with_horizon(spec, key, n1))  # compilation and the first checkpoints
                warm = True
            t1 = _timed(with_horizon(spec, key, n1))
            t2 = _timed(with_horizon(spec, key, n2))
        except ValueError:
            if 4 * n2 >= full:
                return whole()  # no slice pair the job accepts below its horizon
            n2 *= 4
            continue
        if min_seconds <= 0 or t2 - t1 >= min_seconds:  # the part that grows with the horizon, not the fixed cost
            break
        if 4 * n2 >= full:
            return whole()
        n2 *= 4
    return {"horizon_key": ".".join(key), "horizon": full, "n1": n1, "n2": n2, "t1": t1, "t2": t2,
            "per_unit": max(t2 - t1, 0.0) / (n2 - n1), "whole": False, "rss_mb": own_peak_rss_mb()}


def requested_resources(preset: str, config_path: str, resources_path: str) -> Callable[[str, JobSpec], Mapping[str, float]]:
    """What the workflow's simulate rule requests for a job (``mem_mb``, ``runtime`` in
    minutes), given its path and spec: :func:`dprl.config.resources.job_request` of its
    experiment's resources, as ``workflow/rules/common.smk`` computes them."""
    per_exp = preset_resources(preset, config_path, resources_path)

    def request(path: str, spec: JobSpec) -> Mapping[str, float]:
        return job_request(per_exp[spec.experiment], path, spec)

    return request


def _limits(config_path: str) -> tuple[float, float]:
    from dprl.config.load import read_config, schema

    limits = {**schema()["properties"]["limits"]["default"], **(read_config(config_path).get("limits") or {})}
    return float(limits["job_hours"]), float(limits["job_memory_gb"])


def rehearse(preset: str, config_path: str = "config.yaml", resources_path: str = "workflow/resources.yaml",
             slice_units: int = 20_000, workers: int = 1, only: Sequence[str] = (),
             min_seconds: float = 2.0) -> pd.DataFrame:
    """The rehearsal table of ``preset``: one row per group (:func:`groups`), each with its
    measurement, projection and request; ``only`` restricts it to these experiments."""
    import yaml

    from dprl.config.load import load_config_file

    if slice_units < 8:
        raise ValueError(f"slice of {slice_units} horizon units: need at least 8 (a quarter of it is timed too)")
    cfg = load_config_file(config_path, preset)
    exps = {n: x for n, x in cfg.experiments.items() if x.jobs and (not only or n in only)}
    unknown = sorted(set(only) - set(cfg.experiments))
    if unknown:
        raise ValueError(f"no experiment {', '.join(unknown)} in preset {preset}")
    gs = groups(exps)
    request = requested_resources(preset, config_path, resources_path)
    measured_default = yaml.safe_load(Path(resources_path).read_text()) if Path(resources_path).exists() else {}
    # one fresh process per representative: its own compilation and its own peak RSS
    with ProcessPoolExecutor(max_workers=workers, mp_context=get_context("spawn"), max_tasks_per_child=1) as pool:
        futures = {pool.submit(measure, g.representative.to_dict(), slice_units, min_seconds): g for g in gs}
        for done, f in enumerate(as_completed(futures), 1):
            m = f.result()
            log.info("rehearsed %d/%d %s: %s = %d of %d, %.3g s", done, len(gs), futures[f].label,
                     m["horizon_key"] or "whole job", m["n2"], m["horizon"], m["t2"])
        results = [f.result() for f in futures]
    rows = []
    for g, m in zip(gs, results):
        p = project(g, m)
        req = request(g.label, g.representative)
        rows.append({
            "experiment": g.experiment, "algorithm": g.algorithm, "environment": g.environment, "privacy": g.privacy,
            "job": g.label, "spec_hash": spec_hash(g.representative), "jobs": len(g.specs), "horizon_key": m["horizon_key"], "horizon": m["horizon"],
            "slice_n1": m["n1"], "slice_n2": m["n2"], "t1_s": m["t1"], "t2_s": m["t2"], "per_unit_s": m["per_unit"],
            "whole": m["whole"], "peak_rss_mb": m["rss_mb"], **p,
            "requested_runtime_min": float(req["runtime"]), "requested_mem_mb": float(req["mem_mb"]),
            # the default run's measured mean seconds of this experiment (a check of the
            # projection on `default`, whose jobs ran to the end)
            "measured_default_mean_s": float(measured_default.get(g.experiment, {}).get("seconds", math.nan)),
        })
    return pd.DataFrame(rows)


def problems(table: pd.DataFrame, config_path: str = "config.yaml") -> list[str]:
    """One line per job whose projection exceeds its request or a per-job limit."""
    hours, gib = _limits(config_path)
    out = []
    for r in table.itertuples(index=False):
        over = []
        if r.projected_s > 60.0 * r.requested_runtime_min:
            over.append(f"projected {r.projected_s:.4g} s > requested runtime {r.requested_runtime_min:g} min")
        if r.projected_mb > r.requested_mem_mb:
            over.append(f"projected {r.projected_mb:.0f} MB > requested mem_mb {r.requested_mem_mb:g}")
        if r.projected_s > 3600.0 * hours:
            over.append(f"projected {r.projected_s / 3600:.3g} h > limits.job_hours = {hours:g}")
        if r.projected_mb > 1024.0 * gib:
            over.append(f"projected {r.projected_mb / 1024:.3g} GiB > limits.job_memory_gb = {gib:g}")
        if over:
            out.append(f"{r.job}: " + ", ".join(over))
    return out


def per_experiment(table: pd.DataFrame, estimated_hours: Mapping[str, float],
                   model_hours: Mapping[str, float] | None = None) -> pd.DataFrame:
    """Projected CPU-hours per experiment beside ``dprl validate``'s estimate (``ratio``) and
    the work models' (``model_h``); on ``default``, whose jobs ran to the end, the projected
    mean seconds of a job over the measured ones (``default_ratio``: a check of the
    extrapolation, ``workflow/resources.yaml``)."""
    got = table.groupby("experiment", sort=False).agg(jobs=("jobs", "sum"), projected_h=("group_cpu_s", "sum"),
                                                        measured_default_mean_s=("measured_default_mean_s", "first"))
    got["projected_mean_s"] = got["projected_h"] / got["jobs"]
    got["default_ratio"] = got["projected_mean_s"] / got["measured_default_mean_s"]
    got["projected_h"] /= 3600.0
    got["validate_h"] = [float(estimated_hours.get(e, math.nan)) for e in got.index]
    got["ratio"] = got["projected_h"] / got["validate_h"]
    got["model_h"] = [float((model_hours or estimated_hours).get(e, math.nan)) for e in got.index]
    return got.reset_index()


def write_table(table: pd.DataFrame, path: str | Path) -> None:
    """The rehearsal table as CSV, written atomically."""
    atomic_write_text(path, table.to_csv(index=False, float_format="%.6g"))


def _measured_at(commits: Sequence[tuple[str, bool | None]]) -> tuple[str, bool | None, list[tuple[str, bool | None]]]:
    """The commit (and dirtiness) slices were measured at: the one they recorded, else the
    checkout's now; with the distinct recorded commits."""
    from dprl.runner.code_version import git_state

    seen = sorted({c for c in commits if c[0]}, key=str)
    commit, dirty = seen[0] if len(seen) == 1 else git_state()
    return commit, dirty, seen


def replace_experiments(committed: pd.DataFrame, fresh: pd.DataFrame, order: Sequence[str]) -> pd.DataFrame:
    """``committed`` with the rows of ``fresh``'s experiments replaced by ``fresh`` (a
    rehearsal of a few experiments, e.g. one added to the preset, merged into the committed
    table without re-measuring the rest), rows in ``order`` (the preset's experiments)."""
    redone = set(fresh["experiment"])
    unknown = sorted(redone - set(order))
    if unknown:
        raise ValueError(f"rehearsed experiments not in the preset: {', '.join(unknown)}")
    kept = committed[~committed["experiment"].isin(redone) & committed["experiment"].isin(order)]
    both = pd.concat([kept, fresh[committed.columns.intersection(fresh.columns)]], ignore_index=True)
    rank = {e: i for i, e in enumerate(order)}
    return both.sort_values("experiment", key=lambda c: c.map(rank), kind="stable").reset_index(drop=True)


def record_update(path: str | Path, experiments: Sequence[str], how: str, commits: Sequence[tuple[str, bool | None]] = ()) -> dict[str, Any]:
    """Add to ``<table>.json`` (:func:`write_provenance`) that ``experiments`` were
    re-measured (:func:`replace_experiments`): at which commit, when and how; the record's
    other fields stay those of the rehearsal the rest of the table comes from."""
    import datetime as dt
    import json

    record_path = Path(path).with_suffix(".json")
    record = json.loads(record_path.read_text())
    commit, dirty, seen = _measured_at(commits)
    record.setdefault("updates", []).append({
        "experiments": sorted(experiments), "measured_at_commit": commit, "git_dirty": dirty,
        "date_utc": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"), "how": how})
    atomic_write_text(record_path, json.dumps(record, indent=1, sort_keys=True) + "\n")
    return record


def write_provenance(path: str | Path, preset: str, how: str, commits: Sequence[tuple[str, bool | None]] = ()) -> dict[str, Any]:
    """``<table>.json`` beside a rehearsal table: the commit its slices were measured at (the
    one the slices recorded; without a record, the checkout's now), whether the code was
    dirty, when, how (``how``: local processes or the workflow's slices, e.g. through the
    SLURM profile) and on what machine. A table committed beside ``paper_figures/`` becomes
    the requests of its preset (:mod:`dprl.config.resources`), so where it came from is kept."""
    import datetime as dt
    import json
    import os
    import platform

    commit, dirty, seen = _measured_at(commits)
    record = {"preset": preset, "measured_at_commit": commit, "git_dirty": dirty,
              "commits_of_slices": [c for c, _ in seen], "date_utc": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
              "how": how, "machine": f"{platform.system()} {platform.machine()}, {os.cpu_count()} CPUs"}
    atomic_write_text(Path(path).with_suffix(".json"), json.dumps(record, indent=1, sort_keys=True) + "\n")
    return record


# ----------------------------------------------------------------------------------------
# Through the workflow (config ``rehearse: true``; module docstring, "Through the workflow")

REQUESTS_FILE = "rehearsal/requests.json"  # under results/<preset>: every real job's request


def slice_path(job_path: str) -> str:
    """Where the slice of the representative ``jobs/<experiment>/<job>.csv`` goes (under
    results/<preset>)."""
    return f"rehearsal/slices/{job_path[len('jobs/'):-len('.csv')]}.json"


def slice_log(job_path: str) -> str:
    return f"logs/rehearsal/{job_path[len('jobs/'):-len('.csv')]}.log"


def _slurm_minutes(text: str) -> float:
    """A SLURM time (``[days-]hh:mm:ss``, ``mm:ss``, ``mm``) in minutes; inf for UNLIMITED."""
    if text.upper() in ("UNLIMITED", "INFINITE"):
        return math.inf
    days, _, rest = text.rpartition("-")
    parts = [float(x) for x in rest.split(":")]
    h, mi, sec = ([0.0] * (3 - len(parts)) + parts) if len(parts) > 1 else (0.0, parts[0], 0.0)
    return (float(days or 0) * 24 + h) * 60 + mi + sec / 60


def _slurm_mb(text: str) -> float:
    """A SLURM memory (``400M``, ``2G``, ``1T``; MB without a unit) in MB."""
    units = {"K": 1 / 1024, "M": 1.0, "G": 1024.0, "T": 1024.0**2}
    return float(text[:-1]) * units[text[-1]] if text and text[-1] in units else float(text)


def granted_resources(env: Mapping[str, str] | None = None) -> dict[str, Any]:
    """What SLURM holds for the job this process runs in (``scontrol show job``: time limit
    in minutes, memory in MB, partition, CPUs); ``{}`` outside SLURM or when scontrol cannot
    answer. The rehearsal records it beside the workflow's request, so that a table shows
    what the cluster was really asked for."""
    import os
    import subprocess

    env = os.environ if env is None else env
    jobid = env.get("SLURM_JOB_ID")
    if not jobid:
        return {}
    try:
        out = subprocess.run(["scontrol", "show", "job", "-o", jobid], capture_output=True, text=True, timeout=30,
                             check=True).stdout
    except (OSError, subprocess.SubprocessError):
        return {"slurm_job_id": jobid}
    fields = dict(f.split("=", 1) for f in out.split() if "=" in f)
    got: dict[str, Any] = {"slurm_job_id": jobid, "partition": fields.get("Partition", "")}
    try:
        got["runtime_min"] = _slurm_minutes(fields["TimeLimit"])
        mem = fields.get("MinMemoryNode") or fields.get("mem") or ""
        got["mem_mb"] = _slurm_mb(mem) if mem else math.nan
        got["cpus"] = int(fields.get("NumCPUs", "0"))
    except (KeyError, ValueError):
        pass
    return got


def run_slice(member: Mapping[str, Any], slice_units: int, min_seconds: float, request: Mapping[str, Any],
              out: str | Path) -> dict[str, Any]:
    """A rehearsal slice job (``dprl rehearse-slice``, run by the workflow's rule
    ``rehearse_slice``): :func:`measure` of the representative ``member`` ({spec, labels}) in
    this process, with the workflow's ``request`` for the real job that runs it and what
    SLURM granted (:func:`granted_resources`); written as JSON to ``out`` atomically."""
    import json

    from dprl.runner.code_version import git_state

    commit, dirty = git_state()  # of the run directory: the code the slice runs (an editable install)
    record = {"spec": member["spec"], "request": dict(request), "granted": granted_resources(),
              "slice": int(slice_units), "min_seconds": float(min_seconds), "commit": commit, "git_dirty": dirty,
              "measurement": measure(dict(member["spec"]), slice_units, min_seconds)}
    atomic_write_text(out, json.dumps(record, sort_keys=True, default=float) + "\n")
    return record


def collect(preset: str, config_path: str = "config.yaml", resources_path: str = "workflow/resources.yaml",
            results_dir: str | None = None, only: Sequence[str] = ()) -> tuple[pd.DataFrame, pd.DataFrame, list[str]]:
    """The rehearsal of ``preset`` from the slices its workflow ran (config ``rehearse:
    true``): the group table (as :func:`rehearse`'s, the request being the real Snakemake
    job's that runs the representative), one row per real Snakemake job (a bundle rule or a
    single simulation: every member projected, their sum against the job's ``runtime``, the
    largest against its ``mem_mb``), and one line per representative whose slice is missing
    (its job failed, e.g. SLURM killed it at the requested runtime or memory)."""
    import json

    import yaml

    from dprl.config.load import load_config_file

    cfg = load_config_file(config_path, preset)
    measured_default = yaml.safe_load(Path(resources_path).read_text()) if Path(resources_path).exists() else {}
    res = Path(results_dir or cfg.preset_dir)
    req_file = res / REQUESTS_FILE
    if not req_file.is_file():
        raise RehearsalFailed([f"{req_file} missing: run the workflow with `--config preset={preset} rehearse=true` first"])
    requests = json.loads(req_file.read_text())
    exps = {n: x for n, x in cfg.experiments.items() if x.jobs and (not only or n in only)}
    rows, seconds, mb, missing = [], {}, {}, []
    commits: set[tuple[str, bool | None]] = set()
    for g in groups(exps):
        f = res / slice_path(g.label)
        if not f.is_file():
            missing.append(f"{g.label}: no rehearsal slice ({f} missing: its job failed or was killed, e.g. by "
                           f"SLURM at the requested runtime or memory; log {res / slice_log(g.label)})")
            continue
        rec = json.loads(f.read_text())
        if rec["spec"] != g.representative.to_dict():
            missing.append(f"{g.label}: {f} was measured for another spec (the config changed): rerun the rehearsal")
            continue
        m, rq, gr = rec["measurement"], rec["request"], rec.get("granted", {})
        commits.add((rec.get("commit", ""), rec.get("git_dirty")))
        p = project(g, m)
        seconds.update(job_seconds(g, m))
        mb.update({path: p["projected_mb"] for path in g.paths})
        rows.append({
            "experiment": g.experiment, "algorithm": g.algorithm, "environment": g.environment, "privacy": g.privacy,
            "job": g.label, "spec_hash": spec_hash(g.representative), "jobs": len(g.specs), "horizon_key": m["horizon_key"], "horizon": m["horizon"],
            "slice_n1": m["n1"], "slice_n2": m["n2"], "t1_s": m["t1"], "t2_s": m["t2"], "per_unit_s": m["per_unit"],
            "whole": m["whole"], "peak_rss_mb": m["rss_mb"], **p, "request_job": rq["name"],
            "requested_runtime_min": float(rq["runtime"]), "requested_mem_mb": float(rq["mem_mb"]),
            "granted_runtime_min": float(gr.get("runtime_min", math.nan)), "granted_mem_mb": float(gr.get("mem_mb", math.nan)),
            "slurm_job_id": str(gr.get("slurm_job_id", "")),
            "measured_default_mean_s": float(measured_default.get(g.experiment, {}).get("seconds", math.nan)),
        })
    jobs = []
    for name, rq in requests["jobs"].items():
        members = [p for p in rq["members"] if p in seconds]
        if not members:
            continue  # its experiment not rehearsed (or its slice missing: named above)
        worst = max(members, key=seconds.__getitem__)
        jobs.append({"job": f"{name} ({worst}{f' and {len(members) - 1} more' if len(members) > 1 else ''})",
                     "name": name, "jobs": len(members), "projected_s": sum(seconds[p] for p in members),
                     "projected_mb": max(mb[p] for p in members),
                     "requested_runtime_min": float(rq["runtime"]), "requested_mem_mb": float(rq["mem_mb"])})
    table = pd.DataFrame(rows)
    table.attrs["commits"] = sorted(commits, key=str)  # what the slices ran (write_provenance)
    return table, pd.DataFrame(jobs), missing
