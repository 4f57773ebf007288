"""Validate ``config.yaml`` and expand it into jobs.

One validation pass, before any job runs, covers every preset at once: no NaN or
infinity anywhere; the JSON schema (structure, ranges of ε, δ, seeds, safe names, no
unknown keys); then, for each preset of each experiment, the registry (experiment kinds,
algorithm and environment names and their parameters, items of list settings, with "did
you mean" suggestions), the constraints between parameters (:mod:`dprl.config.rules`),
and each job's estimated memory and time against the ``limits`` (:mod:`dprl.config.estimate`).
Every problem found is reported, each with the key path the user wrote (inside
``presets.<preset>`` when the value comes from there). Files are read strictly
(:mod:`dprl.config.yaml_io`: duplicate keys and tags refused, errors with line and column).

Expansion: experiment × algorithm × environment × privacy × seed, one :class:`JobSpec`
each. Non-private algorithms get one privacy setting (``nonprivate``); pure-DP ones expand
over ε and calibration; approximate-DP ones over ε, δ and calibration. A list given for a
scalar parameter of an algorithm or environment sweeps it. A job's path is built only
from its own parameters, so adding a value to a sweep leaves every other path unchanged.
"""

from __future__ import annotations

import copy
import dataclasses
import difflib
import itertools
import logging
import math
import re
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from typing import Any

import jsonschema
import yaml

from dprl.config import rules
from dprl.config.bounds import output_dir_problems, path_text, value_problems
from dprl.config.estimate import estimate, plugin_slowdown
from dprl.config.preset_files import KEY as PRESET_FILES
from dprl.config.preset_files import PresetFile, holds, inline, merge_overrides, origin, read_preset_files, resolve_paths
from dprl.config.yaml_io import ConfigFileError, read_config_yaml
from dprl.experiments.base import Algorithm, ExperimentKind, Param
from dprl.experiments.registry import ENTRY_POINT_GROUP, kinds, plugin_problems, plugins
from dprl.privacy.setting import PrivacySetting
from dprl.runner.job import JobSpec, job_path, short_hash

log = logging.getLogger(__name__)
_WARNED: set[tuple[str, str, str]] = set()  # the other presets' over-limit warnings already logged

PRESETS = ("smoke", "default", "full")
# A component of a job path (labels, string parameters): matched in full (fullmatch: a
# bare "$" would also match before a final newline).
SAFE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.=-]*")


Where = tuple  # a key path: ("experiments", "audit", "algorithms", 0, "name")


class ConfigError(ValueError):
    """``config.yaml`` is invalid; the message names the key path and what is allowed.

    ``problems`` lists every problem found (one line each); ``where`` is the key path of
    a single problem raised during resolution (re-pointed into ``presets.<preset>``)."""

    def __init__(self, problems: str | list[str], where: Where | None = None, what: str = "") -> None:
        self.problems = [problems] if isinstance(problems, str) else list(problems)
        self.where, self.what = where, what
        if len(self.problems) == 1:
            super().__init__(self.problems[0])
        else:
            super().__init__(f"{len(self.problems)} problems:\n  " + "\n  ".join(self.problems))


class LimitError(ConfigError):
    """A job over the config's ``limits`` (time, memory, job count). Only in the preset
    being run is it an error; in any other preset it is a warning (:func:`resolve_all_presets`):
    a preset the user did not ask for must not block the one they did."""


def _fail(where: Where, what: str, cls: type[ConfigError] = ConfigError) -> ConfigError:
    """A single problem at key path ``where``."""
    return cls(f"{path_text(where)}: {what}", where, what)


@cache
def schema() -> dict[str, Any]:
    text = resources.files("dprl.config").joinpath("config.schema.yaml").read_text()
    return yaml.safe_load(text)


def _suggest(word: str, options: Any) -> str:
    options = sorted(options)
    close = difflib.get_close_matches(str(word), options, n=1, cutoff=0.5)
    hint = f"; did you mean {close[0]!r}?" if close else ""
    return f"{hint} Allowed: {', '.join(options) if options else '(none)'}"


def _schema_message(err: jsonschema.ValidationError) -> str:
    where = path_text(err.absolute_path)
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
        return f"{path_text(best.absolute_path) if best.absolute_path else where}: {best.message}"
    return f"{where}: {err.message}"


def _resolve(sch: dict[str, Any], root: dict[str, Any]) -> dict[str, Any]:
    return root["$defs"][sch["$ref"].split("/")[-1]] if "$ref" in sch else sch


def _fill_defaults(instance: Any, sch: dict[str, Any], root: dict[str, Any]) -> None:
    """Fill ``default`` values of object properties (recursively, following $ref, array
    items and the ``oneOf`` branch of the instance's JSON type: the instance is valid, so
    the branch is the one it matched)."""
    sch = _resolve(sch, root)
    for branch in sch.get("oneOf", ()):
        branch = _resolve(branch, root)
        if branch.get("type") == ("object" if isinstance(instance, dict) else "array" if isinstance(instance, list) else None):
            _fill_defaults(instance, branch, root)
    if isinstance(instance, list) and isinstance(sch.get("items"), dict):
        for item in instance:
            _fill_defaults(item, sch["items"], root)
    if isinstance(instance, dict):
        for key, sub in (sch.get("properties") or {}).items():
            if key == "presets":  # partial overrides: filled after merging (_resolve_experiment)
                continue
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
    """Stage 1: bounded, finite, printable values (:mod:`dprl.config.bounds`), then the
    JSON schema (every violation reported), then the preset files ``raw`` names
    (:mod:`dprl.config.preset_files`), checked alike and merged into the experiments'
    ``presets``. Returns a copy with defaults filled."""
    if not isinstance(raw, dict):
        raise ConfigError(f"<top level>: the configuration must be a mapping, got {type(raw).__name__}")
    problems = value_problems(raw)
    if problems:
        raise ConfigError(problems)
    sch = schema()
    validator = jsonschema.Draft202012Validator(sch)
    errors = sorted(validator.iter_errors(raw), key=lambda e: (len(list(e.absolute_path)), str(list(e.absolute_path))), reverse=True)
    if errors:
        messages = list(dict.fromkeys(_schema_message(e) for e in errors))
        raise ConfigError(["invalid config: " + m for m in messages])
    files, problems = read_preset_files(raw, sch, _schema_message)
    if problems:
        raise ConfigError(["invalid config: " + m for m in problems])
    cfg = inline(raw, files)
    _fill_defaults(cfg, sch, sch)
    cfg[PRESET_FILES] = files  # where each preset override came from (resolve_experiment)
    problems = output_dir_problems({k: cfg[k] for k in ("results_dir", "figures_dir")})
    if problems:
        raise ConfigError(problems)
    return cfg


# ----------------------------------------------------------------------- parameter checks


def _check_value(where: Where, value: Any, spec: Param, items: Param | None = None) -> None:
    """``value`` against its declaration; ``items`` declares the items of a list value
    (default: the type of the declared default's items, no range)."""
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
        raise _fail(where, f"must be {name}, got {value!r}")
    if kind in (int, float):
        if isinstance(value, float) and not math.isfinite(value):
            raise _fail(where, f"must be finite, got {value!r}")
        if spec.minimum is not None and value < spec.minimum:
            raise _fail(where, f"must be >= {spec.minimum}, got {value!r}")
        if spec.exclusive_minimum is not None and value <= spec.exclusive_minimum:
            raise _fail(where, f"must be > {spec.exclusive_minimum}, got {value!r}")
        if spec.maximum is not None and value > spec.maximum:
            raise _fail(where, f"must be <= {spec.maximum}, got {value!r}")
    if kind is str and not SAFE.fullmatch(value):
        raise _fail(where, f"{value!r} is not a safe path component")
    if kind is list:
        _check_items(where, value, spec, items)
    if spec.choices is not None and value not in spec.choices:
        raise _fail(where, f"{value!r} is not allowed{_suggest(value, [str(c) for c in spec.choices])}")


def _check_items(where: Where, value: list[Any], spec: Param, items: Param | None) -> None:
    """A list setting item by item: non-empty when its default is, items of the default's
    type (and ``items``' range), no repeats (a repeat would duplicate rows)."""
    if items is None and spec.default:
        items = Param(spec.default[0])
    if spec.default and not value:
        raise _fail(where, f"must be a non-empty list (default {spec.default!r})")
    seen = []
    for i, item in enumerate(value):
        if items is not None:
            _check_value(where + (i,), item, items)
        if item in seen:
            raise _fail(where + (i,), f"{item!r} is repeated")
        seen.append(item)


def _resolve_params(where: Where, given: dict[str, Any], declared: dict[str, Param], what: str, item_params: dict[str, Param] | None = None) -> list[dict[str, Any]]:
    """Check ``given`` against ``declared``; return the list of parameter dicts (sweeps expanded)."""
    axes: list[list[tuple[str, Any]]] = []
    for key, value in given.items():
        if key in ("name", "label"):
            continue
        if key not in declared:
            raise _fail(where + (key,), f"unknown parameter of {what}{_suggest(key, declared)}")
        spec = declared[key]
        values = value if isinstance(value, list) and spec.kind is not list else [value]
        if not values:
            raise _fail(where + (key,), "an empty sweep")
        for i, v in enumerate(values):
            _check_value(where + (key,) + ((i,) if values is value else ()), v, spec, (item_params or {}).get(key))
        axes.append([(key, v) for v in values])
    out = []
    for combo in itertools.product(*axes):
        params = {k: copy.deepcopy(p.default) for k, p in declared.items()}
        params.update(dict(combo))
        out.append(params)
    return out


def _apply_rule(where: Where, given: dict[str, Any], rule: rules.Rule | None, params: dict[str, Any]) -> None:
    """A cross-parameter rule on resolved ``params``; the key path names the parameter
    (and the sweep value) the user gave."""
    if rule is None:
        return
    for key, what in rule(params):
        value = given.get(key)
        index = (value.index(params[key]),) if isinstance(value, list) and params[key] in value else ()
        raise _fail(where + (key,) + index, what)


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
    if len(label) > 80 or not SAFE.fullmatch(label):
        label = f"{name}_{short_hash(params, 8)}"
    return label


def privacy_label(privacy: PrivacySetting | None) -> str:
    if privacy is None:
        return "nonprivate"
    d = f"_delta{_fmt(privacy.delta)}" if privacy.delta is not None else ""
    return f"eps{_fmt(privacy.epsilon)}{d}_{privacy.calibration}"


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
    rehearse: bool = False  # targets: rehearsal slices (dprl.config.rehearse), not results
    rehearse_slice: int = 20_000
    rehearse_min_seconds: float = 2.0
    preset_files: list[PresetFile] = field(default_factory=list)  # read, with their overrides

    @property
    def jobs(self) -> dict[str, Job]:
        return {j.path: j for e in self.experiments.values() for j in e.jobs}

    @property
    def preset_dir(self) -> str:
        return f"{self.results_dir}/{self.preset}"


def _privacy_settings(where: Where, block: Any, alg: Algorithm) -> list[PrivacySetting | None]:
    if alg.privacy == "none":
        return [None]
    if block is None:
        raise _fail(where, f"algorithm {alg.name!r} is private; the experiment needs a 'privacy' block with epsilon (and delta)")
    blocks = block if isinstance(block, list) else [block]
    out: list[PrivacySetting | None] = []
    for i, b in enumerate(blocks):
        calibrations = b["calibration"]  # the schema's default fills it in
        if alg.privacy == "approx":
            if "delta" not in b:
                raise _fail(where + ((i,) if isinstance(block, list) else ()), f"algorithm {alg.name!r} is (epsilon, delta)-DP; give 'delta' (values in (0, 1))")
            grid = itertools.product(b["epsilon"], b["delta"], calibrations)
            settings = [PrivacySetting(epsilon=e, delta=d, calibration=c) for e, d, c in grid]
        else:
            settings = [PrivacySetting(epsilon=e, calibration=c) for e, c in itertools.product(b["epsilon"], calibrations)]
        for s in settings:
            if s not in out:
                out.append(s)
    return out


def _seeds(spec: Any) -> range | list[int]:
    """The seeds (a lazy ``range`` for ``{start, count}``: counted before expanding)."""
    if isinstance(spec, list):
        return [int(s) for s in spec]
    start = int(spec["start"])  # the schema's default fills it in
    return range(start, start + int(spec["count"]))


@dataclass(frozen=True)
class Component:
    """An algorithm or environment of an experiment, one sweep value of a config entry."""

    params: dict[str, Any]  # {"name": ..., **params (defaults filled)}
    label: str
    index: int  # of its entry in the config list


def _unknown(what: str, name: str, declared: dict[str, Any], kind_name: str) -> str:
    """Why ``name`` is not an algorithm/environment of the kind: a broken plug-in (its entry
    point and package), a plug-in of a setting this kind does not run, or a typo."""
    if what == "algorithm" and name in plugin_problems():
        return f"algorithm {name!r} cannot run: {plugin_problems()[name]}"
    plugin = plugins().get(name) if what == "algorithm" else None
    if plugin is not None:
        open_kinds = sorted(k.name for k in kinds().values() if name in k.algorithms)
        return (f"plug-in algorithm {name!r} (setting {plugin.setting!r}) does not run in experiment kind {kind_name!r}; "
                f"it runs in {open_kinds}")
    hint = f"; installed plug-ins register with the entry-point group {ENTRY_POINT_GROUP!r}" if what == "algorithm" else ""
    return f"unknown {what} {name!r} for experiment kind {kind_name!r}{_suggest(name, declared)}{hint}"


def _components(where: Where, entries: list[dict[str, Any]], declared: dict[str, Any], what: str, kind_name: str) -> list[Component]:
    out: list[Component] = []
    seen: dict[str, dict[str, Any]] = {}
    for i, entry in enumerate(entries):
        w = where + (i,)
        name = entry["name"]
        if name not in declared:
            raise _fail(w + ("name",), _unknown(what, name, declared, kind_name))
        comp = declared[name]
        swept = _resolve_params(w, entry, comp.params, f"{what} {name!r}")
        for params in swept:
            _apply_rule(w, entry, rules.environment_rule(comp) if what == "environment" else None, params)
            label = entry.get("label") if "label" in entry and len(swept) == 1 else None
            label = label or component_label(name, params, comp.params)
            full = {"name": name, **params}
            if label in seen and seen[label] != full:
                raise _fail(w, f"two {what}s share the label {label!r} with different parameters; give one a distinct 'label'")
            if label not in seen:
                seen[label] = full
                out.append(Component(full, label, i))
    return out


def _override_path(body: dict[str, Any], preset: str, rel: Where) -> Where | None:
    """``presets.<preset>`` + ``rel`` if the value at ``rel`` (relative to the experiment)
    comes from the preset's overrides (dicts merge, lists replace), else ``None``."""
    node: Any = (body.get("presets") or {}).get(preset)
    return ("presets", preset) + tuple(rel) if node and rel and holds(node, rel) else None


@dataclass
class Limits:
    """Ceilings of one job's estimated memory and time, and of an experiment's job count
    (config ``limits``)."""

    job_memory_gb: float
    job_hours: float
    max_jobs: int


def _exclude_hint(name: str, preset: str, kind: ExperimentKind, alg: Component, entries: list[dict[str, Any]]) -> str:
    """For a plug-in's job over the limits: the override that leaves it out of ``preset``
    (its budget, ``dprl.config.estimate.plugin_slowdown``× the compiled loop's, holds in every preset)."""
    alg_name = alg.params["name"]
    if not kind.algorithms[alg_name].factory:
        return ""
    others = [e for e in entries if e.get("name") != alg_name]
    flow = yaml.safe_dump(others, default_flow_style=True, sort_keys=False, width=10**6).strip()
    factor = plugin_slowdown(kind.algorithms[alg_name])
    return (f"; plug-in {alg_name!r} is budgeted at {factor:g}× the compiled loop's time "
            f"(dprl.config.estimate.plugin_slowdown): to leave it out of preset {preset!r}, set "
            f"experiments.{name}.presets.{preset}.algorithms: {flow}")


def _check_size(where: Where, name: str, kind: ExperimentKind, algs: list[Component], envs: list[Component], settings: dict[str, Any], n_privacy: dict[str, int], seeds: range | list[int], limits: Limits,
                preset: str = "default", entries: list[dict[str, Any]] | None = None) -> None:
    """Refuse (:class:`LimitError`) an experiment that expands to too many jobs, or a job
    whose estimated memory or time exceeds the limits, before creating any job."""
    n_jobs = sum(n_privacy[a.params["name"]] for a in algs) * len(envs) * len(seeds)
    if n_jobs > limits.max_jobs:
        raise _fail(where + ("seeds",), f"the experiment expands to {n_jobs:.4g} jobs ({n_jobs // (len(envs) * len(seeds))} algorithm and privacy settings × {len(envs)} environments × {len(seeds):.4g} seeds), above limits.max_jobs = {limits.max_jobs}", LimitError)
    for alg, env in itertools.product(algs, envs):
        spec = JobSpec(name, kind.name, alg.params, env.params, None, settings, 0)
        est = estimate(spec)
        if est is None:
            continue
        over = []
        if est.mem_gib > limits.job_memory_gb:
            over.append(f"memory {est.mem_gib:.4g} GiB > limits.job_memory_gb = {limits.job_memory_gb:g}")
        if est.hours > limits.job_hours:
            over.append(f"time {est.hours:.4g} h > limits.job_hours = {limits.job_hours:g}")
        if not over:
            continue
        # blame the part that, at its declared defaults, would bring the job within limits
        blame: Where = where
        for rel, trial in (
            (("environments", env.index), dataclasses.replace(spec, environment={"name": env.params["name"], **kind.environments[env.params["name"]].defaults()})),
            (("settings",), dataclasses.replace(spec, settings={k: p.default for k, p in kind.settings.items()})),
            (("algorithms", alg.index), dataclasses.replace(spec, algorithm={"name": alg.params["name"], **kind.algorithms[alg.params["name"]].defaults()})),
        ):
            t = estimate(trial)
            if t is not None and t.mem_gib <= limits.job_memory_gb and t.hours <= limits.job_hours:
                blame = where + rel
                break
        hint = _exclude_hint(name, preset, kind, alg, entries or [])
        raise _fail(blame, f"job {alg.label}/{env.label} is estimated to need {' and '.join(over)} ({est.model}); reduce it or raise the limit{hint}", LimitError)


def resolve_experiment(name: str, body: dict[str, Any], preset: str, limits: Limits | None = None,
                       files: list[PresetFile] | None = None) -> Experiment:
    """One experiment in one preset: registry, rules, size estimates, then its jobs. A
    problem's key path points into ``presets.<preset>`` when the value comes from there,
    or into the preset file of ``files`` it came from."""
    try:
        return _resolve_experiment(name, body, preset, limits or Limits(**schema()["properties"]["limits"]["default"]))
    except ConfigError as err:
        if err.where is None or err.where[:2] != ("experiments", name):
            raise
        moved = _override_path(body, preset, err.where[2:])
        if moved is None:
            raise
        in_file = origin(files or [], name, preset, err.where[2:])
        if in_file is not None:
            raise type(err)(f"{in_file}: {err.what}", err.where[:2] + moved, err.what) from None
        raise _fail(err.where[:2] + moved, err.what, type(err)) from None


def _resolve_experiment(name: str, body: dict[str, Any], preset: str, limits: Limits) -> Experiment:
    where: Where = ("experiments", name)
    over = (body.get("presets") or {}).get(preset)
    merged = merge_overrides({k: v for k, v in body.items() if k != "presets"}, over) if over else copy.deepcopy(body)
    _fill_defaults(merged, schema()["$defs"]["experiment"], schema())
    kind_name = merged.get("kind", name)
    registry = kinds()
    if kind_name not in registry:
        raise _fail(where + ("kind",) if "kind" in merged else where, f"unknown experiment kind {kind_name!r}{_suggest(kind_name, registry)}")
    kind = registry[kind_name]
    given_settings = merged.get("settings") or {}
    settings_list = _resolve_params(where + ("settings",), given_settings, kind.settings, f"experiment kind {kind_name!r} settings", kind.item_params)
    if len(settings_list) != 1:
        raise _fail(where + ("settings",), "settings cannot be swept; declare a second experiment instead")
    settings = settings_list[0]
    _apply_rule(where + ("settings",), given_settings, rules.settings_rule(kind), settings)
    algs = _components(where + ("algorithms",), merged["algorithms"], kind.algorithms, "algorithm", kind_name)
    envs = _components(where + ("environments",), merged["environments"], kind.environments, "environment", kind_name)
    privacy = {a.params["name"]: _privacy_settings(where + ("privacy",), merged.get("privacy"), kind.algorithms[a.params["name"]]) for a in algs}
    for env, priv in itertools.product(envs, [p for ps in privacy.values() for p in ps]):
        for rel, what in rules.job_problems(kind, env.params, settings, priv):
            raise _fail(where + rel, what)
    seeds = _seeds(merged["seeds"])
    _check_size(where, name, kind, algs, envs, settings, {a: len(p) for a, p in privacy.items()}, seeds, limits, preset, merged["algorithms"])
    exp = Experiment(name, kind)
    for alg, env in itertools.product(algs, envs):
        for priv in privacy[alg.params["name"]]:
            priv_label = privacy_label(priv)
            for seed in seeds:
                spec = JobSpec(name, kind_name, alg.params, env.params, priv, settings, seed)
                labels = {"alg_label": alg.label, "env_label": env.label, "privacy_label": priv_label}
                exp.jobs.append(Job(job_path(name, labels, seed), spec, labels))
    return exp


def resolve_all_presets(cfg: dict[str, Any], selected: str | None = None, report: bool = True) -> dict[str, dict[str, Experiment]]:
    """Every experiment in every preset where it is enabled, from a schema-valid ``cfg``.
    Raises one :class:`ConfigError` listing every problem of every preset, except a job
    over the limits (:class:`LimitError`) in a preset other than ``selected`` (the one
    being run): that experiment is left out of its preset and, if ``report``, logged as a
    warning naming the preset and the experiment."""
    limits = Limits(**cfg["limits"])
    out: dict[str, dict[str, Experiment]] = {}
    found: dict[str, list[str]] = {}  # problem -> presets where it occurs
    for preset in PRESETS:
        out[preset] = {}
        for name, body in cfg["experiments"].items():
            over = (body.get("presets") or {}).get(preset) or {}
            if not over.get("enabled", body.get("enabled", True)):
                continue
            try:
                out[preset][name] = resolve_experiment(name, body, preset, limits, cfg.get(PRESET_FILES))
            except LimitError as err:
                if selected is None or preset == selected:
                    found.setdefault(str(err), []).append(preset)
                elif report and (preset, name, str(err)) not in _WARNED:  # once per process (validate loads twice)
                    _WARNED.add((preset, name, str(err)))
                    log.warning("preset %r (not the one run, %r), experiment %r: %s", preset, selected, name, err)
            except ConfigError as err:
                for p in err.problems:
                    found.setdefault(p, []).append(preset)
    if found:
        # a problem of some presets only (e.g. a size set in presets.full) says which
        raise ConfigError([p if len(ps) == len(PRESETS) else f"{p} [preset {', '.join(ps)}]" for p, ps in found.items()])
    return out


def load_config(raw: dict[str, Any], preset: str | None = None) -> Config:
    """Validate ``raw`` (the parsed ``config.yaml`` plus ``--config`` overrides) in every
    preset, and expand the selected one."""
    cfg = validate_schema(raw)
    preset = preset or cfg["preset"]
    if preset not in PRESETS:
        raise ConfigError(f"preset: unknown preset {preset!r}{_suggest(preset, PRESETS)}")
    experiments = resolve_all_presets(cfg, preset)[preset]
    return Config(preset, cfg["results_dir"], cfg["figures_dir"], experiments, float(cfg["bundle_seconds"]),
                  bool(cfg["rehearse"]), int(cfg["rehearse_slice"]), float(cfg["rehearse_min_seconds"]), cfg[PRESET_FILES])


def read_config(path: str) -> dict[str, Any]:
    """Parse a config file strictly (duplicate keys, tags and syntax errors refused with
    file, line and column); its ``preset_files`` are taken relative to its folder."""
    try:
        return resolve_paths(read_config_yaml(path), path)
    except ConfigFileError as err:
        raise ConfigError(str(err)) from None


def load_config_file(path: str, preset: str | None = None) -> Config:
    return load_config(read_config(path), preset)
