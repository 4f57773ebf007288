"""Check one job's ``{spec, labels}`` payload (``dprl run-job --spec``, ``dprl run-bundle``)
exactly as :mod:`dprl.config.load` checks the jobs it expands from ``config.yaml``.

A payload normally comes from the workflow (the spec of a job the config produced), but
the command line accepts any JSON, and JSON allows ``NaN`` and ``Infinity``: without this
check a hand-written ``"beta": NaN`` ran, reported a regret far too good and wrote a
checksummed result. The same functions as the config path do the work (no copy):
:func:`~dprl.config.bounds.value_problems` (finite, printable, bounded values), the
registry's declarations checked by ``_resolve_params`` (names, types, declared ranges,
items of list settings), the rules between parameters (:mod:`dprl.config.rules`) and the
privacy setting against the algorithm's privacy kind. What a payload holds is a resolved
job, so it must also give every declared parameter (the workflow always does) and no sweep.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from dprl.config import rules
from dprl.config.bounds import value_problems
from dprl.config.load import SAFE, ConfigError, Where, _apply_rule, _fail, _resolve_params
from dprl.experiments.base import Param
from dprl.experiments.registry import kinds
from dprl.privacy.setting import PrivacySetting
from dprl.runner.job import JobSpec

_FIELDS = tuple(f.name for f in dataclasses.fields(JobSpec))


def _mapping(where: Where, value: Any) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise _fail(where, f"must be a mapping, got {type(value).__name__}")
    return value


def _resolved(where: Where, given: Any, declared: dict[str, Param], what: str,
              items: dict[str, Param] | None = None) -> dict[str, Any]:
    """``given`` (a resolved parameter block) checked as the config path checks it: every
    declared parameter present, nothing unknown, one value each (no sweep)."""
    given = _mapping(where, given)
    missing = [k for k in declared if k not in given]
    if missing:
        raise _fail(where + (missing[0],), f"missing parameter of {what} (a job spec gives every declared parameter)")
    if "label" in given:
        raise _fail(where + ("label",), f"unknown parameter of {what} (labels go in the payload's 'labels')")
    swept = _resolve_params(where, given, declared, what, items)
    if len(swept) != 1:
        key = next(k for k, v in given.items() if k in declared and isinstance(v, list) and declared[k].kind is not list)
        raise _fail(where + (key,), "a job spec takes one value, not a sweep")
    return swept[0]


def _privacy(where: Where, value: Any, privacy_kind: str, algorithm: str) -> PrivacySetting | None:
    if privacy_kind == "none":
        if value is not None:
            raise _fail(where, f"algorithm {algorithm!r} is not private; its privacy must be null")
        return None
    try:
        setting = PrivacySetting.from_mapping(_mapping(where, value))
    except (TypeError, ValueError) as err:
        raise _fail(where, str(err)) from None
    if (privacy_kind == "approx") == setting.pure:
        need = "a delta in (0, 1)" if privacy_kind == "approx" else "no delta (pure epsilon-DP)"
        raise _fail(where + ("delta",), f"algorithm {algorithm!r} is {privacy_kind} DP and needs {need}, got {setting.delta!r}")
    return setting


def check_job_spec(payload: Any) -> tuple[JobSpec, dict[str, str]]:
    """The job of a ``{spec, labels}`` payload, checked as config validation checks a job
    (module docstring). Raises :class:`ConfigError` with a one-line message naming the key
    (``spec.algorithm.beta: must be a finite number, got nan``) before anything runs."""
    problems = value_problems(payload)
    if problems:
        raise ConfigError(problems[0])
    payload = _mapping((), payload)
    unknown = sorted(set(payload) - {"spec", "labels", "out"})
    if unknown:
        raise _fail((unknown[0],), "unknown key of a job payload (allowed: spec, labels, out)")
    where: Where = ("spec",)
    spec = _mapping(where, payload.get("spec"))
    for key in _FIELDS:
        if key not in spec:
            raise _fail(where + (key,), "missing key of a job spec")
    for key in spec:
        if key not in _FIELDS:
            raise _fail(where + (key,), f"unknown key of a job spec (allowed: {', '.join(_FIELDS)})")
    registry = kinds()
    kind = registry.get(spec["kind"]) if isinstance(spec["kind"], str) else None
    if kind is None:
        raise _fail(where + ("kind",), f"unknown experiment kind {spec['kind']!r}")
    if not (isinstance(spec["experiment"], str) and SAFE.fullmatch(spec["experiment"])):
        raise _fail(where + ("experiment",), f"{spec['experiment']!r} is not a safe path component")
    seed = spec["seed"]
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise _fail(where + ("seed",), f"must be an integer >= 0, got {seed!r}")
    parts: dict[str, dict[str, Any]] = {}
    for part, declared in (("algorithm", kind.algorithms), ("environment", kind.environments)):
        name = _mapping(where + (part,), spec[part]).get("name")
        if name not in declared:
            raise _fail(where + (part, "name"), f"unknown {part} {name!r} for experiment kind {kind.name!r}; allowed: {', '.join(sorted(declared))}")
        params = _resolved(where + (part,), spec[part], declared[name].params, f"{part} {name!r}")
        if part == "environment":
            _apply_rule(where + (part,), spec[part], rules.environment_rule(declared[name]), params)
        parts[part] = {"name": name, **params}
    settings = _resolved(where + ("settings",), spec["settings"], kind.settings, f"experiment kind {kind.name!r} settings", kind.item_params)
    _apply_rule(where + ("settings",), spec["settings"], rules.settings_rule(kind), settings)
    algorithm = kind.algorithms[parts["algorithm"]["name"]]
    privacy = _privacy(where + ("privacy",), spec["privacy"], algorithm.privacy, algorithm.name)
    for rel, what in rules.job_problems(kind, parts["environment"], settings, privacy):
        raise _fail(where + rel, what)
    labels = _mapping(("labels",), payload.get("labels", {}))
    for key, label in labels.items():
        if not (isinstance(label, str) and SAFE.fullmatch(label)):
            raise _fail(("labels", key), f"{label!r} is not a safe path component")
    # the spec as given (checked above, nothing filled in or reordered): its JSON, hence
    # its random streams and result header, are those of the job the config expanded
    return JobSpec.from_dict(spec), labels
