"""A preset cut into parts that run (and resume) on their own: by paper or by experiment.

A part is a set of experiments; running it is building their tables
(``results/<preset>/tables/<experiment>.csv``), which Snakemake does with those files as
targets, and the same command resumes it after an interruption (finished job files are
kept; the SLURM profile has ``rerun-incomplete``). Each part's cost is the estimate
``dprl validate`` prints (:func:`dprl.config.resources.preset_resources`: the default run's
measured job times scaled by each job's work). What a part decides comes from the claims
registry (:func:`dprl.analysis.claims.all_claims`): a claim is decided once every table it
``reads`` is built, and its ``optional`` tables add rows when they are there; so a claim is
*decided by* the part holding all its ``reads``, *needs* the other parts when its reads
span several, and *gains rows* from a part holding one of its optional tables only.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

BY = ("paper", "experiment")


@dataclass
class Part:
    """One part of a preset: its experiments, jobs, estimated CPU-hours and claims."""

    name: str
    experiments: list[str]
    jobs: int = 0
    hours: float = 0.0
    decides: list[str] = field(default_factory=list)  # every table it reads is in this part
    with_others: dict[str, list[str]] = field(default_factory=dict)  # claim -> the other parts its reads need
    adds_rows: list[str] = field(default_factory=list)  # an optional table of the claim is here, no read one


def parts(experiments: Mapping[str, Sequence[str]], jobs: Mapping[str, int], hours: Mapping[str, float],
          claims: Sequence[tuple[str, Sequence[str], Sequence[str]]]) -> list[Part]:
    """The parts ``{part: [experiments]}`` with their ``jobs`` and ``hours`` summed over
    their experiments, and for each the claims ``(id, reads, optional)`` it decides (module
    docstring). A claim reading an experiment the preset has not is left out."""
    where = {e: p for p, es in experiments.items() for e in es}
    out = {p: Part(p, list(es), sum(jobs.get(e, 0) for e in es), sum(hours.get(e, 0.0) for e in es))
           for p, es in experiments.items()}
    for cid, reads, optional in claims:
        if any(e not in where for e in reads):
            continue
        needed = sorted({where[e] for e in reads})
        for p in needed:
            if len(needed) == 1:
                out[p].decides.append(cid)
            else:
                out[p].with_others[cid] = [q for q in needed if q != p]
        for p in sorted({where[e] for e in optional if e in where} - set(needed)):
            out[p].adds_rows.append(cid)
    return list(out.values())


def preset_parts(preset: str, by: str = "paper", config_path: str = "config.yaml",
                 resources_path: str = "workflow/resources.yaml",
                 estimate: Mapping[str, Mapping[str, Any]] | None = None) -> list[Part]:
    """:func:`parts` of ``preset``'s experiments grouped ``by`` paper (the experiment kind's
    paper) or one per experiment, costed by ``dprl validate``'s estimate
    (:func:`~dprl.config.resources.preset_resources`; ``estimate``: that estimate, when the
    caller has it already, as the generated documentation does)."""
    from dprl.analysis.claims import all_claims
    from dprl.config.resources import preset_resources
    from dprl.config.load import load_config_file

    if by not in BY:
        raise ValueError(f"parts by {by!r}: one of {', '.join(BY)}")
    cfg = load_config_file(config_path, preset)
    exps = {n: x for n, x in cfg.experiments.items() if x.jobs}
    groups: dict[str, list[str]] = {}
    for n, x in exps.items():
        groups.setdefault(x.kind.paper if by == "paper" else n, []).append(n)
    est = estimate if estimate is not None else preset_resources(preset, config_path, resources_path)
    return parts(groups, {n: len(x.jobs) for n, x in exps.items()}, {n: r["hours"] for n, r in est.items()},
                 [(c.id, c.reads, c.optional) for c in all_claims()])


def targets(preset_dir: str, part: Part) -> list[str]:
    """The Snakemake targets that run ``part``: its experiments' tables."""
    return [f"{preset_dir}/tables/{e}.csv" for e in part.experiments]
