"""Validate ``config.yaml`` and expand it into jobs.

Two stages, both before any job runs: the JSON schema (structure, ranges of ε, δ, seeds,
safe names, no unknown keys), then the registry (experiment kinds, algorithm and
environment names and their parameters, with "did you mean" suggestions). Errors name the
offending key path.

Expansion: experiment × algorithm × environment × privacy × seed, one :class:`JobSpec`
each. Non-private algorithms get one privacy setting (``nonprivate``); pure-DP ones expand
over ε and calibration; approximate-DP ones over ε, δ and calibration. A list given for a
scalar parameter of an algorithm or environment sweeps it. A job's path is built only
from its own parameters, so adding a value to a sweep leaves every other path unchanged.
"""

from __future__ import annotations

import copy
import difflib
import itertools
import math
import re
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from typing import Any

import jsonschema
import yaml

from dprl.experiments.base import Algorithm, ExperimentKind, Param
from dprl.experiments.registry import kinds
from dprl.runner.job import JobSpec, short_hash

PRESETS = ("smoke", "default", "full")
SAFE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.=-]*$")


class ConfigError(ValueError):
    """``config.yaml`` is invalid; the message names the key path and what is allowed."""


@cache
def schema() -> dict[str, Any]:
    text = resources.files("dprl.config").joinpath("config.schema.yaml").read_text()
    return yaml.safe_load(text)


def _path(parts: Any) -> str:
    out = ""
    for p in parts:
        out += f"[{p}]" if isinstance(p, int) else (f".{p}" if out else str(p))
    return out or "<top level>"


def _suggest(word: str, options: Any) -> str:
    options = sorted(options)
    close = difflib.get_close_matches(str(word), options, n=1, cutoff=0.5)
    hint = f"; did you mean {close[0]!r}?" if close else ""
    return f"{hint} Allowed: {', '.join(options) if options else '(none)'}"


def _schema_message(err: jsonschema.ValidationError) -> str:
    where = _path(err.absolute_path)
    if err.validator == "additionalProperties" and isinstance(err.instance, dict):
        allowed = set((err.schema.get("properties") or {}).keys())
        extra = [k for k in err.instance if k not in allowed]
        if extra and allowed:
            return f"{where}: unknown key {extra[0]!r}{_suggest(extra[0], allowed)}"
    if err.validator == "propertyNames":
        return f"{where}: name {err.instance!r} is not a safe path component (letters, digits, '_', '.', '-'; starting with a letter)"
    if err.validator == "pattern":
        return f"{where}: {err.instance!r} is not a safe path component (must match {err.validator_value})"
    if err.validator == "oneOf" and err.context:
        best = min(err.context, key=lambda e: len(list(e.absolute_path)) * -1)
        return f"{_path(best.absolute_path) if best.absolute_path else where}: {best.message}"
    return f"{where}: {err.message}"


def _fill_defaults(instance: Any, sch: dict[str, Any], root: dict[str, Any]) -> None:
    """Fill ``default`` values of object properties (recursively, following $ref)."""
    if "$ref" in sch:
        name = sch["$ref"].split("/")[-1]
        sch = root["$defs"][name]
    if isinstance(instance, dict):
        for key, sub in (sch.get("properties") or {}).items():
            if key not in instance and isinstance(sub, dict) and "default" in sub:
                instance[key] = copy.deepcopy(sub["default"])
            if key in instance and isinstance(sub, dict):
                _fill_defaults(instance[key], sub, root)
        extra = sch.get("additionalProperties")
        if isinstance(extra, dict):
            for key, val in instance.items():
                if key not in (sch.get("properties") or {}):
                    _fill_defaults(val, extra, root)


def validate_schema(raw: dict[str, Any]) -> dict[str, Any]:
    """Stage 1: JSON schema. Returns a copy with defaults filled."""
    if not isinstance(raw, dict):
        raise ConfigError(f"<top level>: the configuration must be a mapping, got {type(raw).__name__}")
    sch = schema()
    validator = jsonschema.Draft202012Validator(sch)
    errors = sorted(validator.iter_errors(raw), key=lambda e: (len(list(e.absolute_path)), str(list(e.absolute_path))), reverse=True)
    if errors:
        raise ConfigError("invalid config: " + _schema_message(errors[0]))
    cfg = copy.deepcopy(raw)
    _fill_defaults(cfg, sch, sch)
    return cfg


def _merge(base: Any, over: Any) -> Any:
    """Dicts merge recursively, anything else replaces."""
    if isinstance(base, dict) and isinstance(over, dict):
        out = dict(base)
        for k, v in over.items():
            out[k] = _merge(base.get(k), v) if k in base else copy.deepcopy(v)
        return out
    return copy.deepcopy(over)


# ----------------------------------------------------------------------- parameter checks


def _check_value(where: str, value: Any, spec: Param) -> None:
    kind = spec.kind
    ok = {
        bool: isinstance(value, bool),
        int: isinstance(value, int) and not isinstance(value, bool),
        float: isinstance(value, (int, float)) and not isinstance(value, bool),
        str: isinstance(value, str),
        list: isinstance(value, list),
    }.get(kind, True)
    if not ok:
        name = {int: "an integer", float: "a number", bool: "true or false", str: "a string", list: "a list"}[kind]
        raise ConfigError(f"{where}: must be {name}, got {value!r}")
    if kind in (int, float):
        if isinstance(value, float) and not math.isfinite(value):
            raise ConfigError(f"{where}: must be finite, got {value!r}")
        if spec.minimum is not None and value < spec.minimum:
            raise ConfigError(f"{where}: must be >= {spec.minimum}, got {value!r}")
        if spec.exclusive_minimum is not None and value <= spec.exclusive_minimum:
            raise ConfigError(f"{where}: must be > {spec.exclusive_minimum}, got {value!r}")
        if spec.maximum is not None and value > spec.maximum:
            raise ConfigError(f"{where}: must be <= {spec.maximum}, got {value!r}")
    if kind is str and not SAFE.match(value):
        raise ConfigError(f"{where}: {value!r} is not a safe path component")
    if spec.choices is not None and value not in spec.choices:
        raise ConfigError(f"{where}: {value!r} is not allowed{_suggest(value, [str(c) for c in spec.choices])}")


def _resolve_params(where: str, given: dict[str, Any], declared: dict[str, Param], what: str) -> list[dict[str, Any]]:
    """Check ``given`` against ``declared``; return the list of parameter dicts (sweeps expanded)."""
    axes: list[list[tuple[str, Any]]] = []
    for key, value in given.items():
        if key in ("name", "label"):
            continue
        if key not in declared:
            raise ConfigError(f"{where}.{key}: unknown parameter of {what}{_suggest(key, declared)}")
        spec = declared[key]
        values = value if isinstance(value, list) and spec.kind is not list else [value]
        if not values:
            raise ConfigError(f"{where}.{key}: an empty sweep")
        for i, v in enumerate(values):
            _check_value(f"{where}.{key}" + (f"[{i}]" if values is value else ""), v, spec)
        axes.append([(key, v) for v in values])
    out = []
    for combo in itertools.product(*axes):
        params = {k: copy.deepcopy(p.default) for k, p in declared.items()}
        params.update(dict(combo))
        out.append(params)
    return out


def _fmt(v: Any) -> str:
    if isinstance(v, bool):
        return str(int(v))
    if isinstance(v, float):
        return f"{v:g}" if float(f"{v:g}") == v else repr(v)
    if isinstance(v, (int, str)):
        return str(v)
    return short_hash(v, 6)


def component_label(name: str, params: dict[str, Any], declared: dict[str, Param]) -> str:
    """``name`` plus its non-default parameters, e.g. ``garnet_S20_A4``."""
    parts = [name] + [f"{k}{_fmt(v)}" for k, v in sorted(params.items()) if v != declared[k].default]
    label = "_".join(parts)
    if len(label) > 80 or not SAFE.match(label):
        label = f"{name}_{short_hash(params, 8)}"
    return label


def privacy_label(privacy: dict[str, Any] | None) -> str:
    if privacy is None:
        return "nonprivate"
    delta = privacy.get("delta")
    d = f"_delta{_fmt(float(delta))}" if delta is not None else ""
    return f"eps{_fmt(float(privacy['epsilon']))}{d}_{privacy['calibration']}"


# ----------------------------------------------------------------------- expansion


@dataclass
class Job:
    path: str  # relative to the preset's results directory
    spec: JobSpec
    labels: dict[str, str]


@dataclass
class Experiment:
    name: str
    kind: ExperimentKind
    jobs: list[Job] = field(default_factory=list)


@dataclass
class Config:
    preset: str
    results_dir: str
    figures_dir: str
    experiments: dict[str, Experiment]
    bundle_seconds: float = 0.0

    @property
    def jobs(self) -> dict[str, Job]:
        return {j.path: j for e in self.experiments.values() for j in e.jobs}

    @property
    def preset_dir(self) -> str:
        return f"{self.results_dir}/{self.preset}"


def _privacy_settings(where: str, block: Any, alg: Algorithm) -> list[dict[str, Any] | None]:
    if alg.privacy == "none":
        return [None]
    if block is None:
        raise ConfigError(f"{where}: algorithm {alg.name!r} is private; the experiment needs a 'privacy' block with epsilon (and delta)")
    blocks = block if isinstance(block, list) else [block]
    out: list[dict[str, Any] | None] = []
    for i, b in enumerate(blocks):
        calibrations = b.get("calibration", ["paper", "tight"])
        if alg.privacy == "approx":
            if "delta" not in b:
                raise ConfigError(f"{where}" + (f"[{i}]" if isinstance(block, list) else "") + f": algorithm {alg.name!r} is (epsilon, delta)-DP; give 'delta' (values in (0, 1))")
            grid = itertools.product(b["epsilon"], b["delta"], calibrations)
            settings = [{"epsilon": float(e), "delta": float(d), "calibration": c} for e, d, c in grid]
        else:
            settings = [{"epsilon": float(e), "delta": None, "calibration": c} for e, c in itertools.product(b["epsilon"], calibrations)]
        for s in settings:
            if s not in out:
                out.append(s)
    return out


def _seeds(spec: Any) -> list[int]:
    if isinstance(spec, list):
        return [int(s) for s in spec]
    return list(range(int(spec.get("start", 0)), int(spec.get("start", 0)) + int(spec["count"])))


def _components(where: str, entries: list[dict[str, Any]], declared: dict[str, Any], what: str, kind_name: str) -> list[tuple[dict[str, Any], str]]:
    out: list[tuple[dict[str, Any], str]] = []
    seen: dict[str, dict[str, Any]] = {}
    for i, entry in enumerate(entries):
        w = f"{where}[{i}]"
        name = entry["name"]
        if name not in declared:
            raise ConfigError(f"{w}.name: unknown {what} {name!r} for experiment kind {kind_name!r}{_suggest(name, declared)}")
        comp = declared[name]
        for params in _resolve_params(w, entry, comp.params, f"{what} {name!r}"):
            label = entry.get("label") if "label" in entry and len(_resolve_params(w, entry, comp.params, what)) == 1 else None
            label = label or component_label(name, params, comp.params)
            full = {"name": name, **params}
            if label in seen and seen[label] != full:
                raise ConfigError(f"{w}: two {what}s share the label {label!r} with different parameters; give one a distinct 'label'")
            if label not in seen:
                seen[label] = full
                out.append((full, label))
    return out


def resolve_experiment(name: str, body: dict[str, Any], preset: str) -> Experiment:
    where = f"experiments.{name}"
    over = (body.get("presets") or {}).get(preset)
    merged = _merge({k: v for k, v in body.items() if k != "presets"}, over) if over else dict(body)
    kind_name = merged.get("kind", name)
    registry = kinds()
    if kind_name not in registry:
        key = f"{where}.kind" if "kind" in merged else where
        raise ConfigError(f"{key}: unknown experiment kind {kind_name!r}{_suggest(kind_name, registry)}")
    kind = registry[kind_name]
    settings_list = _resolve_params(f"{where}.settings", merged.get("settings") or {}, kind.settings, f"experiment kind {kind_name!r} settings")
    if len(settings_list) != 1:
        raise ConfigError(f"{where}.settings: settings cannot be swept; declare a second experiment instead")
    settings = settings_list[0]
    algs = _components(f"{where}.algorithms", merged["algorithms"], kind.algorithms, "algorithm", kind_name)
    envs = _components(f"{where}.environments", merged["environments"], kind.environments, "environment", kind_name)
    seeds = _seeds(merged["seeds"])
    exp = Experiment(name, kind)
    for (alg, alg_label), (env, env_label) in itertools.product(algs, envs):
        for priv in _privacy_settings(f"{where}.privacy", merged.get("privacy"), kind.algorithms[alg["name"]]):
            priv_label = privacy_label(priv)
            for seed in seeds:
                spec = JobSpec(name, kind_name, alg, env, priv, settings, seed)
                path = f"jobs/{name}/{alg_label}/{env_label}/{priv_label}/seed{seed}.csv"
                labels = {"alg_label": alg_label, "env_label": env_label, "privacy_label": priv_label}
                exp.jobs.append(Job(path, spec, labels))
    return exp


def load_config(raw: dict[str, Any], preset: str | None = None) -> Config:
    """Validate ``raw`` (the parsed ``config.yaml`` plus ``--config`` overrides) and expand it."""
    cfg = validate_schema(raw)
    preset = preset or cfg["preset"]
    if preset not in PRESETS:
        raise ConfigError(f"preset: unknown preset {preset!r}{_suggest(preset, PRESETS)}")
    experiments = {}
    for name, body in cfg["experiments"].items():
        enabled = body.get("enabled", True)
        over = (body.get("presets") or {}).get(preset) or {}
        if not over.get("enabled", enabled):
            continue
        experiments[name] = resolve_experiment(name, body, preset)
    return Config(preset, cfg["results_dir"], cfg["figures_dir"], experiments, float(cfg["bundle_seconds"]))


def load_config_file(path: str, preset: str | None = None) -> Config:
    with open(path) as fh:
        raw = yaml.safe_load(fh)
    return load_config(raw, preset)
