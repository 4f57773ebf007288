"""Configuration: validate config.yaml before any job runs, expand it into jobs."""

import json
import sys
from pathlib import Path as _Path

from snakemake.utils import min_version, validate

from dprl.config.load import ConfigError, load_config
from dprl.config.yaml_io import fail
from dprl.analysis.figures import all_figures

min_version("9.0")

# Friendly validation first (key paths, suggestions, registry names, defaults filled by
# dprl.config), then Snakemake's own schema validation of the same schema as a second check.
# (set_default=False: Snakemake's default-filling does not handle oneOf lists of blocks.)
try:
    CFG = load_config(config)
except ConfigError as err:
    fail(f"config.yaml is invalid:\n  {err}")
validate(config, schema="../schemas/config.schema.yaml", set_default=False)

# Private jobs whose accounted ε under replacement exceeds the nominal ε are refused before
# any job (dprl.config.privacy_check; `dprl validate` checks every preset). Only the main
# Snakemake process checks, and only the preset it runs: it builds calibrations (SciPy),
# and job processes re-parse this file.
if workflow.is_main_process:
    from dprl.config.privacy_check import check_experiments

    try:
        check_experiments([(CFG.preset, CFG.experiments)])
    except ConfigError as err:
        fail(f"config.yaml is invalid:\n  {err}")

from dprl.runner.job import short_hash

import shlex

# Every rule runs the package with the interpreter running Snakemake (not a `dprl` found
# on PATH), so a virtual environment works without being activated.
DPRL = f"{shlex.quote(sys.executable)} -m dprl"

# of the config as given and of the contents of the preset files it names
CONFIG_HASH = short_hash({**config, "preset_files": {f.preset: f.experiments for f in CFG.preset_files}}, 16)
PRESET = CFG.preset
RES = CFG.preset_dir  # results/<preset>
FIG = CFG.figures_dir if PRESET == "default" else f"{RES}/figures"
JOBS = CFG.jobs  # relative path -> Job
EXPERIMENTS = CFG.experiments


# Version of the code each experiment's jobs run (the dprl modules its job function
# imports, transitively): a `params:` entry of the simulation rules, so that editing that
# code reruns exactly those experiments' jobs (Snakemake's params rerun trigger).
from dprl.runner.code_version import code_versions

CODE_VERSIONS = code_versions([e.kind.run for e in EXPERIMENTS.values()], ".snakemake/dprl_code_versions.json")


def code_version_of(experiment):
    return CODE_VERSIONS[EXPERIMENTS[experiment].kind.run]


def job_of(wildcards):
    return JOBS[f"jobs/{wildcards.experiment}/{wildcards.job}.csv"]


def job_member(job, **extra):
    """What `dprl run-job` / `run-bundle` needs of a job: its spec and labels."""
    return {"spec": job.spec.to_dict(), "labels": job.labels, **extra}


def job_payload(wildcards):
    return json.dumps(job_member(job_of(wildcards)), sort_keys=True, default=float)


def experiment_specs(experiment):
    """{path relative to RES: {spec, labels}} of an experiment's jobs (what each file holds)."""
    return {j.path: job_member(j) for j in EXPERIMENTS[experiment].jobs}


def specs_file(experiment):
    return f"{RES}/specs/{experiment}.json"


# What each job file of an experiment must hold, for aggregation to check every header
# against the current config: written by the main process as it parses this file, and only
# where it changed, so that only the tables of changed experiments are re-made (their
# aggregation reruns on the file's modification time). Not a rule: a `run:` job is a
# Snakemake subprocess that parses this file again (3 s each, 26 per preset).
if workflow.is_main_process:
    from dprl.runner.io import atomic_write_text

    for _e in EXPERIMENTS:
        _text = json.dumps(experiment_specs(_e), sort_keys=True, default=float) + "\n"
        _file = _Path(specs_file(_e))
        if not (_file.is_file() and _file.read_text() == _text):
            atomic_write_text(_file, _text)


def job_files(experiment):
    return [f"{RES}/{j.path}" for j in EXPERIMENTS[experiment].jobs]


def sidecar_of(table):
    """The checksums file written next to an aggregate table (dprl.analysis.integrity)."""
    return table[: -len(".csv")] + ".inputs.json"


def figure_tables(fig):
    used = list(fig.experiments) + [e for e in fig.optional if e in EXPERIMENTS]
    return [f"{RES}/tables/{e}.csv" for e in used]


# A figure is drawn when all the experiments it needs are in the config.
FIGURES = {fid: fig for fid, fig in all_figures().items() if all(e in EXPERIMENTS for e in fig.experiments)}

ALL_TARGETS = (
    [f"{FIG}/{fid}.{ext}" for fid in FIGURES for ext in ("pdf", "png")]
    + [f"{FIG}/claims.{ext}" for ext in ("csv", "md", "tex")]
    + [f"{RES}/tables/{e}.csv" for e in EXPERIMENTS]
    + [f"{RES}/tables/job_runtimes.csv", f"{FIG}/manifest.json"]
)

import re as _re


wildcard_constraints:
    experiment="|".join(_re.escape(e) for e in EXPERIMENTS) or "(?!)",


# Measured per-job resources (written by `dprl runtimes --resources-out` from a default
# run): {experiment: {mem_mb, runtime, seconds}} per simulation. Experiments not measured
# yet use their kind's declared values.
import math
import yaml as _yaml

_RES_FILE = _Path(workflow.basedir) / "workflow" / "resources.yaml"
MEASURED = _yaml.safe_load(_RES_FILE.read_text()) if _RES_FILE.exists() else {}


# What each simulation job requests (dprl.config.resources, one source with `dprl validate`):
# the default run's measurements for the default preset; for another preset its committed
# rehearsal (paper_figures/rehearsal/<preset>.csv: every job's projection from a slice run
# through the SLURM profile), else the measurements scaled by the kinds' work models.
from dprl.config import resources as _resources

REFERENCE = EXPERIMENTS if PRESET == "default" else load_config(config, "default").experiments
REHEARSAL = _resources.read_rehearsal(CFG.figures_dir, PRESET)
RESOURCES = {
    e: _resources.experiment_resources(e, x, MEASURED, REFERENCE, REHEARSAL, same_preset=PRESET == "default")
    for e, x in EXPERIMENTS.items()
}


def experiment_resources(experiment):
    """mem_mb, runtime (min) and mean seconds of one simulation of ``experiment``."""
    return RESOURCES[experiment]


def job_resources(wildcards):
    """One simulation's request (dprl.config.resources.job_request): its own projection when
    rehearsed, else its experiment's, a plug-in's runtime times its measured slowdown."""
    job = job_of(wildcards)
    return _resources.job_request(experiment_resources(wildcards.experiment), job.path, job.spec)


# Bundles (config `bundle_seconds` > 0, set by the SLURM profile): several simulations per
# Snakemake job, each still writing its own result file (dprl.runner.bundle).
from dprl.runner.bundle import make_bundles

BUNDLES = (
    make_bundles(
        {e: [j.path for j in x.jobs] for e, x in EXPERIMENTS.items()},
        {e: experiment_resources(e)["seconds"] for e in EXPERIMENTS},
        CFG.bundle_seconds,
        {p: _resources.packing_factor(experiment_resources(j.spec.experiment), p, j.spec) for p, j in JOBS.items()},
    )
    if CFG.bundle_seconds > 0
    else []
)


def bundle_resources(bundle):
    """mem_mb and runtime (min) of a bundle's Snakemake job (dprl.config.resources.bundle_request)."""
    return _resources.bundle_request(experiment_resources(bundle.experiment), bundle.paths, bundle.seconds)


def bundle_payload(bundle):
    return json.dumps([job_member(JOBS[p], out=f"{RES}/{p}") for p in bundle.paths], sort_keys=True, default=float)


def bundle_benchmark(bundle):
    return f"{RES}/benchmarks/{bundle.experiment}/bundles/{bundle.tag}.tsv"


# the benchmark file of every Snakemake job that runs simulations (for `dprl runtimes`)
BENCHMARK_FILES = (
    [bundle_benchmark(b) for b in BUNDLES]
    if BUNDLES
    else [f"{RES}/benchmarks/{p[len('jobs/'):-len('.csv')]}.tsv" for p in JOBS]
)


# One workflow at a time writes a results directory (dprl.runner.lock): taken when jobs
# are about to run (not for dry runs, not in cluster jobs, which run without hooks),
# released at the end; a lock of a dead run on this host is taken over.
from dprl.runner.lock import ResultsLocked, acquire as _acquire_lock, release as _release_lock
from dprl.runner import snakemake_state as _sm_state

LOCK_FILE = f"{RES}/.dprl-lock.json"
SNAKEMAKE_DIR = ".snakemake"  # Snakemake's state dir: in the working directory

# After Snakemake's main process was killed, the same command resumes: its stale locks
# (claimed at onstart by a process now gone) and the incomplete outputs of its jobs are
# cleared here, before Snakemake checks them; a live run's are left, so it still stops
# this one (dprl.runner.snakemake_state).
if workflow.is_main_process:
    for _line in _sm_state.recover(SNAKEMAKE_DIR, clear_incomplete=lambda: _sm_state.runs_jobs(sys.argv)).messages():
        print(_line, file=sys.stderr)


onstart:
    try:
        _acquire_lock(LOCK_FILE, workflow.basedir)
        # which of .snakemake/locks are this run's (Snakemake does not record it)
        _sm_state.claim(
            SNAKEMAKE_DIR, list(getattr(workflow.persistence, "_lockfile", {}).values()), " ".join(sys.argv)
        )
    except ResultsLocked as err:
        fail(f"results directory locked:\n  {err}")
    except OSError as err:  # a full disk or read-only file system: one line, no traceback
        fail(f"cannot write the lock files: {err}")


onsuccess:
    _release_lock(LOCK_FILE)
    _sm_state.release(SNAKEMAKE_DIR)


onerror:
    _release_lock(LOCK_FILE)
    _sm_state.release(SNAKEMAKE_DIR)


def total_cores(wildcards):
    """Cores Snakemake was given (0 where undefined, e.g. while building the report)."""
    try:
        return workflow.cores
    except Exception:
        return 0


# Rehearsal (config `rehearse: true`, dprl.config.rehearse): the targets are one slice of
# every distinct kind of job, each run by rule rehearse_slice with the resources of the real
# Snakemake job that would run its representative (its bundle's under `bundle_seconds`, the
# SLURM profile's, else its own simulate job's), and results/<preset>/rehearsal/requests.json:
# every real job's request and members, for `dprl rehearse --collect`.
if CFG.rehearse:
    from dprl.config import rehearse as _rehearse

    def _real_jobs():
        if BUNDLES:
            return {b.rule_name: {**bundle_resources(b), "members": list(b.paths)} for b in BUNDLES}
        out = {}
        for p, j in JOBS.items():
            r = _resources.job_request(experiment_resources(j.spec.experiment), p, j.spec)
            out[p] = {"mem_mb": r["mem_mb"], "runtime": r["runtime"], "members": [p]}
        return out

    REAL_JOBS = _real_jobs()
    _REAL_JOB_OF = {p: name for name, r in REAL_JOBS.items() for p in r["members"]}
    REHEARSAL_GROUPS = {g.label: g for g in _rehearse.groups(EXPERIMENTS)}

    def rehearsal_request(wildcards):
        """The request of the real Snakemake job that runs this representative, and its name."""
        name = _REAL_JOB_OF[f"jobs/{wildcards.experiment}/{wildcards.job}.csv"]
        return {"name": name, "mem_mb": REAL_JOBS[name]["mem_mb"], "runtime": REAL_JOBS[name]["runtime"]}

    if workflow.is_main_process:
        _text = json.dumps({"preset": PRESET, "jobs": REAL_JOBS}, sort_keys=True, default=float) + "\n"
        _file = _Path(f"{RES}/{_rehearse.REQUESTS_FILE}")
        if not (_file.is_file() and _file.read_text() == _text):
            atomic_write_text(_file, _text)

    REHEARSAL_TARGETS = [f"{RES}/{_rehearse.slice_path(label)}" for label in REHEARSAL_GROUPS]
