"""Preset files: a preset's overrides of ``config.yaml``'s experiments, in a file of its own.

``config.yaml`` names them under ``preset_files`` (``{smoke: workflow/presets/smoke.yaml,
full: workflow/presets/full.yaml}``, relative to its own folder). Each holds
``experiments: {<name>: <overrides>}``, the overrides an experiment could also give inline
as ``presets.<preset>`` (dicts merge, lists replace). They live apart so that
``config.yaml`` shows what the default preset runs and stays short enough to read and edit;
the toy sizes of ``smoke`` and the paper-scale ones of ``full`` are looked up where they
are changed.

Merging: a file's entry for an experiment is the base of that experiment's
``presets.<preset>``, and an inline ``presets.<preset>`` in ``config.yaml`` is merged over
it (inline wins where both give a key). Every problem in a file is reported with the file's
name and the key path inside it, before any job runs: a syntax error or duplicate key
(:mod:`dprl.config.yaml_io`), a value out of bounds, a schema violation, a misspelt
experiment name (an entry for an experiment ``config.yaml`` does not have is ignored with a
warning: a config cut down to a few experiments runs as it is); later problems (registry names, parameter rules, limits) are
pointed back into the file by :func:`origin`.
"""

from __future__ import annotations

import copy
import difflib
import logging
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import jsonschema

from dprl.config.bounds import path_text, value_problems
from dprl.config.yaml_io import ConfigFileError, read_config_yaml

KEY = "preset_files"
log = logging.getLogger(__name__)
_WARNED: set[tuple[str, str]] = set()


@dataclass
class PresetFile:
    """One preset's file: its overrides per experiment, and the inline overrides of
    ``config.yaml`` merged over them (to tell where a value came from)."""

    preset: str
    path: str
    experiments: dict[str, dict[str, Any]]
    inline: dict[str, dict[str, Any]] = field(default_factory=dict)


def resolve_paths(raw: Any, config_path: str) -> Any:
    """``raw`` (a parsed config file) with its relative ``preset_files`` paths made relative
    to the folder of ``config_path``, so the config can be validated from any directory."""
    folder = os.path.dirname(config_path)
    files = raw.get(KEY) if isinstance(raw, dict) else None
    if not folder or not isinstance(files, dict):
        return raw
    out = dict(raw)
    out[KEY] = {p: os.path.join(folder, f) if isinstance(f, str) and not os.path.isabs(f) else f for p, f in files.items()}
    return out


def _file_schema(root: dict[str, Any]) -> dict[str, Any]:
    return {"$defs": root["$defs"], "type": "object", "additionalProperties": False, "required": ["experiments"],
            "properties": {"experiments": {"type": "object", "additionalProperties": {"$ref": "#/$defs/overrides"}}}}


def read_preset_files(raw: dict[str, Any], root_schema: dict[str, Any],
                      schema_message: Callable[[jsonschema.ValidationError], str]) -> tuple[list[PresetFile], list[str]]:
    """The preset files ``raw`` names, read strictly and checked on their own (bounds, the
    schema of an experiment's overrides, experiment names against ``raw``'s), and every
    problem found, each starting with the file's path."""
    names = list((raw.get("experiments") or {}).keys()) if isinstance(raw.get("experiments"), dict) else []
    files, problems = [], []
    validator = jsonschema.Draft202012Validator(_file_schema(root_schema))
    for preset, path in (raw.get(KEY) or {}).items():
        try:
            content = read_config_yaml(path)
        except ConfigFileError as err:
            problems.append(f"{KEY}.{preset}: {err}")
            continue
        found = [f"{path}: {p}" for p in value_problems(content)]
        if not found:
            found = [f"{path}: {m}" for m in dict.fromkeys(schema_message(e) for e in validator.iter_errors(content))]
        if not found:
            found = _unknown_experiments(path, content["experiments"], names)
        problems += found
        if not found:
            files.append(PresetFile(preset, path, {n: o for n, o in content["experiments"].items() if n in names}))
    return files, problems


def _unknown_experiments(path: str, entries: dict[str, Any], names: list[str]) -> list[str]:
    """A file's entry for an experiment ``config.yaml`` does not have is ignored (a config
    cut down to a few experiments keeps working) with a warning, unless its name is close
    to one of ``config.yaml``'s that the file does not name: then it is a typo, refused."""
    unnamed = [n for n in names if n not in entries]
    problems = []
    for name in entries:
        if name in names:
            continue
        close = difflib.get_close_matches(name, unnamed, n=1, cutoff=0.6)
        if close:
            problems.append(f"{path}: experiments.{name}: config.yaml has no experiment {name!r}; did you mean {close[0]!r}?")
        elif (path, name) not in _WARNED:  # once per process (Snakemake and validate load twice)
            _WARNED.add((path, name))
            log.warning("%s: experiments.%s: config.yaml has no experiment %r; its entry is ignored", path, name, name)
    return problems


def merge_overrides(base: Any, over: Any) -> Any:
    """Dicts merge recursively, anything else replaces (as a preset's overrides)."""
    if isinstance(base, dict) and isinstance(over, dict):
        out = dict(base)
        for k, v in over.items():
            out[k] = merge_overrides(base[k], v) if k in base else copy.deepcopy(v)
        return out
    return copy.deepcopy(over)


def inline(raw: dict[str, Any], files: list[PresetFile]) -> dict[str, Any]:
    """A copy of ``raw`` without ``preset_files``, each file's entries merged under the
    experiments' inline ``presets.<preset>`` (recorded in ``files`` for :func:`origin`)."""
    out = copy.deepcopy({k: v for k, v in raw.items() if k != KEY})
    for f in files:
        for name, over in f.experiments.items():
            presets = out["experiments"][name].setdefault("presets", {})
            if f.preset in presets:
                f.inline[name] = copy.deepcopy(presets[f.preset])
            presets[f.preset] = merge_overrides(over, presets.get(f.preset, {}))
    return out


def holds(node: Any, rel: tuple) -> bool:
    """Whether the overrides ``node`` give the value at ``rel`` (a list given replaces the
    base's whole list, so a path into it is given)."""
    for part in rel:
        if not (isinstance(node, dict) and part in node):
            return False
        node = node[part]
        if isinstance(node, list):
            return True
    return True


def origin(files: list[PresetFile], name: str, preset: str, rel: tuple) -> str | None:
    """``<file>: experiments.<name>.<rel>`` when the value at ``rel`` of experiment
    ``name``'s ``presets.<preset>`` comes from a preset file (not from an inline override
    in ``config.yaml``), else ``None``."""
    for f in files:
        if f.preset == preset and name in f.experiments and not holds(f.inline.get(name), rel) and holds(f.experiments[name], rel):
            return f"{f.path}: {path_text(('experiments', name) + tuple(rel))}"
    return None
