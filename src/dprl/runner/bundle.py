"""Bundles: several simulations run by one Snakemake job.

Every simulation keeps its own result file (written atomically, as alone), so tables,
determinism and fault handling do not change; only the number of Snakemake jobs does.
On a cluster each Snakemake job costs a scheduler round-trip and two Snakemake start-ups
(the submitting instance's job script and the job-step inside the allocation), several
seconds against simulations of a few seconds; bundling amortises that.

Packing (``make_bundles``): within each experiment, jobs in path order are cut into
consecutive runs at content-defined boundaries: a run ends after a path whose hash is 0
modulo the expected run size, ``ceil(target_s / seconds)`` (``seconds``: the experiment's
measured mean per simulation, ``workflow/resources.yaml``), or when it reaches
:data:`MAX_RUN_FACTOR` times that size. Runs average about ``target_s`` of compute, and a
boundary depends on its own path only, so adding a value to a sweep changes the membership
of only the runs its new jobs fall into (plus the run after a cap); every other bundle
keeps its members and Snakemake reuses it. (Cutting at fixed positions moved every
boundary after the first new job and reran the experiment's later bundles.) Membership
depends only on the experiment's job list and its measured seconds per simulation, so
editing one experiment never re-bundles another; refreshing an experiment's seconds in
``workflow/resources.yaml`` may re-bundle (and rerun) it.
"""

from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Bundle:
    experiment: str
    index: int  # within the experiment
    paths: tuple[str, ...]  # job paths relative to the preset directory
    seconds: float  # estimated compute

    @property
    def tag(self) -> str:
        """``b<index>-<n>sims``: names its log and benchmark file (the count lets the
        runtime summary report seconds per simulation)."""
        return f"b{self.index:03d}-{len(self.paths)}sims"

    @property
    def rule_name(self) -> str:
        return f"simulate_{re.sub(r'[^A-Za-z0-9_]', '_', self.experiment)}_b{self.index:03d}"


MAX_RUN_FACTOR = 3  # a run is cut at 3x its expected size (P(no boundary in 3x) = e^-3)


def _boundary(path: str, size: int) -> bool:
    """Whether a run ends after ``path``: a hash of the path alone, 0 modulo ``size``."""
    h = int.from_bytes(hashlib.blake2b(path.encode(), digest_size=8).digest(), "big")
    return h % size == 0


def chunk(paths: Sequence[str], seconds_each: float, target_s: float) -> list[tuple[str, ...]]:
    """Cut ``paths`` (in order) into consecutive runs of about ``target_s`` seconds each,
    at content-defined boundaries (module docstring); one run per path when
    ``target_s <= 0``."""
    if target_s <= 0 or seconds_each <= 0:
        return [(p,) for p in paths]
    size = max(1, math.ceil(target_s / seconds_each))
    runs: list[tuple[str, ...]] = []
    cur: list[str] = []
    for p in paths:
        cur.append(p)
        if _boundary(p, size) or len(cur) >= MAX_RUN_FACTOR * size:
            runs.append(tuple(cur))
            cur = []
    if cur:
        runs.append(tuple(cur))
    return runs


def make_bundles(
    jobs_by_experiment: Mapping[str, Sequence[str]],
    seconds_per_job: Mapping[str, float],
    target_s: float,
    slowdown: Mapping[str, float] | None = None,
) -> list[Bundle]:
    """Bundles of every experiment's job paths; each path is in exactly one bundle.
    ``slowdown``: paths whose simulation runs that many times the experiment's measured
    seconds (a plug-in through the generic runner); each is a bundle of its own, after the
    experiment's other bundles, so packing the others does not change."""
    out: list[Bundle] = []
    names: dict[str, str] = {}
    slowdown = slowdown or {}
    for exp, paths in jobs_by_experiment.items():
        slow = sorted(p for p in paths if slowdown.get(p, 1.0) != 1.0)
        ordered = sorted(p for p in paths if slowdown.get(p, 1.0) == 1.0)
        secs = float(seconds_per_job[exp])
        runs = [(members, secs * len(members)) for members in chunk(ordered, secs, target_s)]
        runs += [((p,), secs * float(slowdown[p])) for p in slow]
        for k, (members, seconds) in enumerate(runs):
            b = Bundle(exp, k, members, seconds)
            if names.setdefault(b.rule_name, exp) != exp:
                raise ValueError(f"experiments {names[b.rule_name]!r} and {exp!r} map to the same rule name {b.rule_name}")
            out.append(b)
    return out
