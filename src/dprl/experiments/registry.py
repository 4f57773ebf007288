"""All experiment kinds: the per-paper declaration modules, joined by the plug-in algorithms
that installed packages declare.

A plug-in is an installed package with an entry point in the group ``dprl.algorithms``
(:data:`ENTRY_POINT_GROUP`) whose object is an :class:`~dprl.experiments.base.Algorithm`
with a ``setting`` and a ``factory``; the entry point's name is the algorithm's name. It
joins every kind that runs plug-ins of its setting (``ExperimentKind.plugins``), so that
``dprl validate``, the Snakemake DAG, the jobs, the accounting and the figures all read one
registry. A plug-in that fails to load, or declares itself wrongly, is kept as a problem
(:func:`plugin_problems`) that refuses any config naming it, with the entry point and its
package; configs that do not name it run as before.
"""

from __future__ import annotations

import dataclasses
import importlib
from collections.abc import Callable
from functools import cache
from importlib.metadata import EntryPoint, entry_points

from dprl.experiments.base import SETTINGS, Algorithm, ExperimentKind, load_ref

# One declaration module per paper (plus the shared mechanisms). Each defines ``KINDS``.
DECLARATION_MODULES = (
    "dprl.experiments.mechanisms.spec",
    "dprl.experiments.tabular.spec",
    "dprl.experiments.lq.spec",
    "dprl.experiments.linmix.spec",
    "dprl.experiments.pe.spec",
)
ENTRY_POINT_GROUP = "dprl.algorithms"


def _builtin_kinds() -> dict[str, ExperimentKind]:
    out: dict[str, ExperimentKind] = {}
    for mod_name in DECLARATION_MODULES:
        mod = importlib.import_module(mod_name)
        for kind in mod.KINDS:
            if kind.name in out:
                raise RuntimeError(f"experiment kind {kind.name!r} declared twice")
            out[kind.name] = kind
    return out


def _where(ep: EntryPoint) -> str:
    dist = getattr(ep, "dist", None)
    package = f"package {dist.name} {dist.version}" if dist is not None else "an unknown package"
    return f"plug-in entry point {ep.name} = {ep.value} (group {ENTRY_POINT_GROUP}, {package})"


def _load_plugin(ep: EntryPoint, builtin_names: set[str]) -> Algorithm:
    """The plug-in's declaration, checked; ``ValueError`` saying what is wrong with it."""
    try:
        alg = ep.load()
    except Exception as err:  # a broken plug-in must not stop configs that do not name it
        raise ValueError(f"failed to load: {type(err).__name__}: {err}") from err
    if not isinstance(alg, Algorithm):
        raise ValueError(f"is a {type(alg).__name__}, not a dprl.experiments.base.Algorithm")
    if alg.name != ep.name:
        raise ValueError(f"declares the algorithm {alg.name!r} under the entry-point name {ep.name!r}; they must agree")
    if alg.name in builtin_names:
        raise ValueError(f"reuses the name of the built-in algorithm {alg.name!r}")
    if alg.setting not in SETTINGS:
        raise ValueError(f"declares setting {alg.setting!r}; plug-ins can join {list(SETTINGS)}")
    if not alg.factory:
        raise ValueError("declares no factory ('module:function' building its agent)")
    try:
        load_ref(alg.factory)
    except Exception as err:
        raise ValueError(f"factory {alg.factory!r} does not load: {type(err).__name__}: {err}") from err
    if alg.accounting is None:
        # a private plug-in is accounted from the noise its built agent holds; a non-private
        # one is built the same way (and found to hold no noise), so that validation tries
        # every plug-in's factory before any job (dprl.experiments.accounting)
        alg = dataclasses.replace(alg, accounting=f"dprl.experiments.{alg.setting}.accounting:held")
    return alg


def _baseline_problem(alg: Algorithm, kinds: dict[str, ExperimentKind], plugins: dict[str, Algorithm]) -> str:
    """Why a plug-in's declared ``baseline`` cannot be its privacy cost's reference ('' if it can):
    it must be a non-private algorithm of the plug-in's setting, built-in or plug-in."""
    if not alg.baseline:
        return ""
    if alg.privacy == "none":
        return f"is non-private but declares a baseline {alg.baseline!r} (a privacy cost needs a private algorithm)"
    pool = {a.name: a for k in kinds.values() if k.plugins == alg.setting for a in k.algorithms.values()}
    pool.update({n: a for n, a in plugins.items() if a.setting == alg.setting})
    if alg.baseline not in pool or pool[alg.baseline].privacy != "none":
        return (f"declares the baseline {alg.baseline!r}, which is not a non-private algorithm of the {alg.setting} "
                f"setting ({sorted(n for n, a in pool.items() if a.privacy == 'none')})")
    return ""


@cache
def _registry() -> tuple[dict[str, ExperimentKind], dict[str, Algorithm], dict[str, str], dict[str, str]]:
    kinds = _builtin_kinds()
    builtin_names = {n for k in kinds.values() for n in k.algorithms}
    plugins: dict[str, Algorithm] = {}
    problems: dict[str, str] = {}
    where: dict[str, EntryPoint] = {}
    for ep in sorted(entry_points(group=ENTRY_POINT_GROUP), key=lambda e: e.name):
        try:
            alg = _load_plugin(ep, builtin_names)
        except ValueError as err:
            problems[ep.name] = f"{_where(ep)} {err}"
            continue
        if alg.name in plugins:
            problems[ep.name] = f"{_where(ep)} is declared by two installed packages"
            continue
        plugins[alg.name] = alg
        where[alg.name] = ep
    for ep in where.values():
        why = _baseline_problem(plugins[ep.name], kinds, plugins)
        if why:
            problems[ep.name] = f"{_where(ep)} {why}"
    plugins = {n: a for n, a in plugins.items() if n not in problems}
    for name, kind in list(kinds.items()):
        # an audit examines a private plug-in's noise (a non-private one has none to audit); its
        # "accounting" is the kind's check that the audit can examine the plug-in's agent
        joined = {n: dataclasses.replace(a, accounting=kind.plugin_check) if kind.audit else a
                  for n, a in plugins.items()
                  if kind.plugins and a.setting == kind.plugins and not (kind.audit and a.privacy == "none")}
        if joined:
            kinds[name] = dataclasses.replace(kind, algorithms={**kind.algorithms, **joined})
    return kinds, plugins, problems, {n: _where(ep) for n, ep in where.items() if n in plugins}


def kinds() -> dict[str, ExperimentKind]:
    """Every experiment kind, with the plug-ins of its setting among its algorithms."""
    return _registry()[0]


def plugins() -> dict[str, Algorithm]:
    """The installed plug-in algorithms that loaded and declare themselves correctly."""
    return _registry()[1]


def plugin_problems() -> dict[str, str]:
    """Per entry-point name, why that installed plug-in cannot run (entry point and package named)."""
    return _registry()[2]


def plugin_origin(name: str) -> str:
    """Where the plug-in ``name`` comes from: its entry point, group and package."""
    return _registry()[3][name]


def refresh() -> None:
    """Read the declaration modules and the installed entry points again (after installing a
    plug-in in a running process, or in tests)."""
    _registry.cache_clear()


def declared(part: str, attribute: str) -> dict[str, str]:
    """``name -> attribute`` over every registered algorithm or environment (``part``), e.g.
    its display name or colour; a name declared by several kinds must say the same everywhere."""
    out: dict[str, str] = {}
    for kind in kinds().values():
        for item in getattr(kind, part).values():
            value = getattr(item, attribute)
            if out.setdefault(item.name, value) != value:
                raise ValueError(f"{part[:-1]} {item.name!r} is declared with two {attribute}s: {out[item.name]!r}, {value!r}")
    return out


def get_kind(name: str) -> ExperimentKind:
    return kinds()[name]


def job_function(kind: ExperimentKind) -> Callable:
    return load_ref(kind.run)
