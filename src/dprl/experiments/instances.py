"""A job's instance (its MDP or system) built once for every job that shares it.

Instances are drawn from the environment stream, keyed by the environment and the seed only
(``runner/job.py``, "Determinism": every algorithm and privacy level of a seed sees the same
instance), so the jobs of one experiment that differ only in their algorithm or privacy
setting share one. ``dprl validate``'s burn-in predictions (``ExperimentKind.predicted_burn_in``)
build a large instance (``linmix_states``' S = 300 mixtures, 35 ms each) once per seed
instead of once per privacy level through :func:`shared_instance`.
"""

from __future__ import annotations

import json
from functools import lru_cache
from typing import Any

from dprl.experiments.base import load_ref
from dprl.runner.job import JobContext, JobSpec, canonical_json

# the instances of one (environment, seed) in a row of the jobs sorted by them; a few more
# for the last setting's tightest job, solved after the others
CACHED_INSTANCES = 16


def instance_key(spec: JobSpec) -> str:
    """What a job's instance depends on: its experiment, kind, environment, settings and seed
    (not its algorithm or privacy setting)."""
    return canonical_json({"experiment": spec.experiment, "kind": spec.kind, "environment": spec.environment,
                           "settings": spec.settings, "seed": spec.seed})


@lru_cache(maxsize=CACHED_INSTANCES)
def _instance(make: str, key: str) -> Any:
    d = json.loads(key)
    return load_ref(make)(JobContext(JobSpec(algorithm={"name": ""}, privacy=None, **d)))


def shared_instance(make: str, spec: JobSpec) -> Any:
    """The instance ``make`` (``"module:function"`` taking a ``JobContext``, the job function's
    own instance builder) builds for ``spec``, shared with every job of the same
    :func:`instance_key` (treat it as read-only)."""
    return _instance(make, instance_key(spec))
