"""Bundles: several simulations run by one Snakemake job.

Every simulation keeps its own result file (written atomically, as alone), so tables,
determinism and fault handling do not change; only the number of Snakemake jobs does.
On a cluster each Snakemake job costs a scheduler round-trip and two Snakemake start-ups
(the submitting instance's job script and the job-step inside the allocation), several
seconds against simulations of a few seconds; bundling amortises that.

Packing (``make_bundles``): within each experiment, jobs in path order are cut greedily
into consecutive runs whose estimated compute (measured mean seconds per simulation of
the experiment, ``workflow/resources.yaml``) reaches ``target_s``; a short remainder joins
the previous bundle. Membership depends only on the experiment's job list, so editing
one experiment never re-bundles another. Adding a value to a sweep may move bundle
boundaries inside that experiment; Snakemake then reruns the changed bundles, which
rewrite bit-identical files for the simulations that already existed.
"""

from __future__ import annotations

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


def pack(n: int, seconds_each: float, target_s: float) -> list[range]:
    """Cut ``range(n)`` into consecutive runs of about ``target_s`` seconds each."""
    if n <= 0:
        return []
    if target_s <= 0 or seconds_each <= 0:
        return [range(i, i + 1) for i in range(n)]
    size = max(1, math.ceil(target_s / seconds_each))
    n_bundles = max(1, round(n / size))  # a short remainder joins the previous bundle
    bounds = [round(i * n / n_bundles) for i in range(n_bundles + 1)]
    return [range(a, b) for a, b in zip(bounds[:-1], bounds[1:])]


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
        runs = [(tuple(ordered[r.start : r.stop]), secs * len(r)) for r in pack(len(ordered), secs, target_s)]
        runs += [((p,), secs * float(slowdown[p])) for p in slow]
        for k, (members, seconds) in enumerate(runs):
            b = Bundle(exp, k, members, seconds)
            if names.setdefault(b.rule_name, exp) != exp:
                raise ValueError(f"experiments {names[b.rule_name]!r} and {exp!r} map to the same rule name {b.rule_name}")
            out.append(b)
    return out
