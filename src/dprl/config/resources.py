"""What the workflow requests for every simulation job (``mem_mb``, ``runtime`` in minutes) and
the seconds its bundles are packed by: one source for the rules (``workflow/rules/common.smk``),
``dprl validate``'s CPU-hours, ``dprl parts`` and the rehearsal's comparison.

Three sources, the first that applies:

1. **Measured**: the default run's own jobs, measured to the end (``workflow/resources.yaml``,
   written by ``dprl runtimes --resources-out``), for the default preset.
2. **Rehearsed**: a committed rehearsal of the preset (``<figures_dir>/rehearsal/<preset>.csv``,
   ``dprl rehearse --collect --out ...``: a slice of every group's representative run through
   the SLURM profile, :mod:`dprl.config.rehearse`). Each job gets its own projection
   (:mod:`dprl.config.projection`): ``runtime`` = :data:`RUNTIME_MARGIN` × its projected
   seconds, ``mem_mb`` = :data:`MEM_MARGIN` × its group's projected peak. A group whose
   representative changed since (another spec: the config was edited) is not rehearsed: its
   experiment falls back to 3.
3. **Scaled**: the default run's measurement of the experiment (or of the closest experiment
   of its kind) scaled by the kind's work model (:func:`dprl.config.estimate.scaled_resources`),
   or the work model alone (:func:`~dprl.config.estimate.model_resources`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from dprl.config.estimate import job_resources, measured_reference, model_resources, runtime_factor, scaled_resources
from dprl.config.projection import groups, job_seconds, measurement_of_row, project, spec_hash
from dprl.runner.job import JobSpec

# The same margins as the default run's requests over what it measured (workflow/resources.yaml:
# slowest job x 3, peak RSS x 1.5): a projection from one machine, for nodes of unknown speed.
RUNTIME_MARGIN = 3.0
MEM_MARGIN = 1.5
REHEARSAL_DIR = "rehearsal"  # under the config's figures_dir (paper_figures/)


def rehearsal_file(figures_dir: str | Path, preset: str) -> Path:
    """Where the committed rehearsal of ``preset`` lives."""
    return Path(figures_dir) / REHEARSAL_DIR / f"{preset}.csv"


def read_rehearsal(figures_dir: str | Path, preset: str) -> pd.DataFrame | None:
    """The committed rehearsal table of ``preset``, or ``None`` when there is none."""
    f = rehearsal_file(figures_dir, preset)
    return pd.read_csv(f, keep_default_na=False, na_values=[""]) if f.is_file() else None


def _minutes(seconds: float) -> int:
    return max(1, math.ceil(RUNTIME_MARGIN * seconds / 60.0))


def _mb(mb: float) -> int:
    return math.ceil(MEM_MARGIN * mb / 100.0) * 100


def rehearsed_resources(name: str, exp: Any, table: pd.DataFrame | None) -> dict[str, Any] | None:
    """``exp``'s resources from the rehearsal ``table`` (module docstring, 2), every job's own
    in ``per_job`` ({path: {seconds, runtime, mem_mb}}); ``None`` unless every group of the
    experiment has a row measured on its current representative."""
    if table is None or "spec_hash" not in table:
        return None
    rows = table[table["experiment"] == name].set_index("job")
    seconds: dict[str, float] = {}
    mb: dict[str, float] = {}
    for g in groups({name: exp}):
        if g.label not in rows.index or rows.loc[g.label, "spec_hash"] != spec_hash(g.representative):
            return None
        m = measurement_of_row(rows.loc[g.label])
        seconds.update(job_seconds(g, m))
        peak = project(g, m)["projected_mb"]
        mb.update({p: peak for p in g.paths})
    if not seconds:
        return None
    per_job = {p: {"seconds": s, "runtime": _minutes(s), "mem_mb": _mb(mb[p])} for p, s in seconds.items()}
    return {"mem_mb": max(r["mem_mb"] for r in per_job.values()), "runtime": max(r["runtime"] for r in per_job.values()),
            "seconds": round(sum(seconds.values()) / len(seconds), 2), "per_job": per_job, "source": "rehearsed"}


def experiment_resources(name: str, exp: Any, measured: Mapping[str, Any], reference: Mapping[str, Any],
                         rehearsal: pd.DataFrame | None = None, same_preset: bool = False) -> dict[str, Any]:
    """``mem_mb``, ``runtime`` (min) and mean ``seconds`` of one simulation of experiment
    ``name`` (``exp``: its :class:`~dprl.config.load.Experiment`), and the ``source`` they come
    from (module docstring). ``measured``: ``workflow/resources.yaml``; ``reference``: the
    default preset's experiments, which were measured; ``same_preset``: this is that preset."""
    kind = exp.kind
    specs = [j.spec for j in exp.jobs]
    got = measured.get(name, {})
    base = {
        "mem_mb": int(got.get("mem_mb", kind.mem_mb)),
        "runtime": int(got.get("runtime", kind.runtime_min)),
        # unmeasured: the declared runtime is a generous bound, take a third of it
        "seconds": float(got.get("seconds", 20.0 * kind.runtime_min)),
    }
    if same_preset and got:
        return {**base, "source": "measured"}
    rehearsed = rehearsed_resources(name, exp, rehearsal)
    if rehearsed is not None:
        return rehearsed
    # an experiment the default run does not have (lq_regime_long) is scaled from the
    # measured one of its kind closest in work per job
    src = measured_reference(name, kind.name, measured, reference, specs)
    if src is None:
        # nothing in the default run to scale from (tabular_scaling: full and smoke only): a
        # stale or declared value could give a 4e8-episode job the 2 minutes measured at 2e7
        return {**model_resources(specs, base), "source": "model"}
    scaled = scaled_resources(measured[src] if src != name else base, specs, [j.spec for j in reference[src].jobs])
    return {**scaled, "source": "scaled"}


def job_request(res: Mapping[str, Any], path: str, spec: JobSpec) -> dict[str, float]:
    """One simulation's Snakemake resources: its own projection when rehearsed (a plug-in's
    slowness is in it: it was measured), else its experiment's with a plug-in's runtime factor."""
    own = res.get("per_job", {}).get(path)
    if own is not None:
        return {"mem_mb": own["mem_mb"], "runtime": own["runtime"], "seconds": own["seconds"]}
    return job_resources({k: res[k] for k in ("mem_mb", "runtime", "seconds")}, spec)


def packing_factor(res: Mapping[str, Any], path: str, spec: JobSpec) -> float:
    """The ``slowdown`` a simulation is packed into bundles with (:func:`dprl.runner.bundle.make_bundles`:
    not 1 puts it in a bundle of its own): 1 when rehearsed (a plug-in's slowness is in its
    experiment's projected mean seconds, which bundles are packed by; each bundle's runtime
    is its own members' projections, :func:`bundle_request`), else the plug-in factor
    (:func:`dprl.config.estimate.runtime_factor`)."""
    return 1.0 if path in res.get("per_job", {}) else runtime_factor(spec)


def bundle_request(res: Mapping[str, Any], paths: Sequence[str], bundle_seconds: float) -> dict[str, int]:
    """``mem_mb`` and ``runtime`` (min) of a bundle's Snakemake job: one simulation at a time in
    one process, so a simulation's memory (measured bundles peak at <= 72% of it). Time, when
    rehearsed: the margin times its members' projected seconds summed; otherwise 3x the
    bundle's estimated compute (``bundle_seconds``) plus the margin of its slowest simulation."""
    per_job = res.get("per_job")
    if per_job and all(p in per_job for p in paths):
        return {"mem_mb": max(per_job[p]["mem_mb"] for p in paths),
                "runtime": _minutes(sum(per_job[p]["seconds"] for p in paths))}
    return {"mem_mb": int(res["mem_mb"]), "runtime": int(res["runtime"]) + math.ceil(3 * bundle_seconds / 60)}


def preset_resources(preset: str, config_path: str = "config.yaml", resources_path: str = "workflow/resources.yaml",
                     rehearsed: bool = True) -> dict[str, dict[str, Any]]:
    """:func:`experiment_resources` of every experiment of ``preset`` with jobs (what the
    workflow's rules get), with ``jobs`` and ``hours`` (the preset's CPU-hours: the jobs'
    projections summed when rehearsed, else ``jobs × seconds``). ``rehearsed=False``: as if
    there were no committed rehearsal (the work models' estimate, for comparison)."""
    import yaml

    from dprl.config.load import load_config_file

    measured = yaml.safe_load(Path(resources_path).read_text()) if Path(resources_path).exists() else {}
    cfg = load_config_file(config_path, preset)
    reference = cfg.experiments if preset == "default" else load_config_file(config_path, "default").experiments
    rehearsal = read_rehearsal(cfg.figures_dir, preset) if rehearsed else None  # relative to the run directory, as results_dir
    out = {}
    for name, exp in cfg.experiments.items():
        if not exp.jobs:
            continue
        r = experiment_resources(name, exp, measured, reference, rehearsal, same_preset=preset == "default")
        per_job = r.get("per_job")
        seconds = sum(v["seconds"] for v in per_job.values()) if per_job else r["seconds"] * len(exp.jobs)
        out[name] = {**r, "jobs": len(exp.jobs), "hours": seconds / 3600}
        if r["source"] == "model":
            out[name]["model_only"] = True  # nothing of this kind measured (`dprl validate` says so)
    return out
