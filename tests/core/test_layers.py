"""Layers that point one way: no import cycle between ``dprl`` subpackages,
and every import goes down the declared layer order. Imports are read from the sources
(``ast``), including those inside functions, so a lazy import cannot hide a back-edge.

Within a tier, each paper's packages (``agents/<paper>``, ``experiments/<paper>``) import no
other paper's, and no package imports an underscore (private) name of another package:
code two papers share lives in a lower layer (``privacy/``, ``envs/``, ``runner/``) under a
public name."""

from __future__ import annotations

import ast
import graphlib
import shutil
from collections import defaultdict
from functools import cache
from pathlib import Path

import pytest

import dprl

ROOT = Path(dprl.__file__).parent

# Bottom to top. A package may import only packages of lower tiers (not its own tier's
# siblings): argument checks shared by every layer; mechanisms and environments; the core (job spec and context, random
# streams, result I/O, bundles, lock, online sums); algorithms; job functions and how a
# job runs; config expansion; analysis; the command line.
LAYERS: tuple[tuple[str, ...], ...] = (
    ("checks",),
    ("privacy", "envs"),
    ("runner",),
    ("agents",),
    ("experiments",),
    ("config",),
    ("analysis",),
    ("cli",),
    ("__main__",),
)
TIER = {name: i for i, names in enumerate(LAYERS) for name in names}

Edges = dict[str, dict[str, list[str]]]  # source package -> target package -> ["file:line", ...]


def _unit(root: Path, path: Path) -> str:
    """The subpackage (or top-level module) a source file belongs to."""
    first = path.relative_to(root).parts[0]
    return first.removesuffix(".py")


def _imported(node: ast.Import | ast.ImportFrom, module: tuple[str, ...], is_package: bool) -> list[str]:
    """Absolute dotted names an import node refers to (modules, and ``from`` names that
    may be modules)."""
    if isinstance(node, ast.Import):
        return [a.name for a in node.names]
    if node.level:
        base = module if is_package else module[:-1]
        base = base[: len(base) - (node.level - 1)]
        mod = ".".join(base + ((node.module,) if node.module else ()))
    else:
        mod = node.module or ""
    return [mod] + [f"{mod}.{a.name}" for a in node.names]


@cache
def _import_nodes(source: str) -> tuple[ast.Import | ast.ImportFrom, ...]:
    return tuple(n for n in ast.walk(ast.parse(source)) if isinstance(n, (ast.Import, ast.ImportFrom)))


def package_graph(root: Path) -> Edges:
    """Edges between the units (subpackages and top-level modules) of the package at
    ``root``, from every import statement anywhere in its sources."""
    units = {_unit(root, p) for p in root.rglob("*.py")} - {"__init__"}
    edges: Edges = defaultdict(lambda: defaultdict(list))
    for path in sorted(root.rglob("*.py")):
        src = _unit(root, path)
        rel = path.relative_to(root.parent).with_suffix("")
        module = rel.parts[:-1] if path.name == "__init__.py" else rel.parts
        for node in _import_nodes(path.read_text()):
            for name in _imported(node, tuple(module), path.name == "__init__.py"):
                parts = name.split(".")
                if parts[0] == root.name and len(parts) > 1 and parts[1] in units and parts[1] != src:
                    where = f"{path.relative_to(root)}:{node.lineno}"
                    if where not in edges[src][parts[1]]:
                        edges[src][parts[1]].append(where)
    return edges


def cycle(edges: Edges) -> list[str] | None:
    try:
        graphlib.TopologicalSorter({s: set(t) for s, t in edges.items()}).prepare()
    except graphlib.CycleError as err:
        return list(err.args[1])
    return None


def layer_violations(edges: Edges) -> list[str]:
    """Imports of a package from a package not strictly below it, and packages missing
    from ``LAYERS``."""
    out = [f"{u}: not in LAYERS (declare its tier)" for u in sorted(set(edges) | {t for ts in edges.values() for t in ts})
           if u not in TIER]
    for src, targets in sorted(edges.items()):
        for dst, where in sorted(targets.items()):
            if src in TIER and dst in TIER and TIER[dst] >= TIER[src]:
                out.append(f"{src} -> {dst} points up or sideways ({', '.join(where)})")
    return out


PAPER_UNITS = ("agents", "experiments")  # units whose subpackages are one paper's each


def _owner(root: Path, parts: tuple[str, ...]) -> tuple[str, ...]:
    """The package a module (dotted parts below the root package) belongs to for the
    sibling and private-name rules: ``agents/<paper>``, ``experiments/<paper>``, else its unit."""
    if parts[0] in PAPER_UNITS and len(parts) > 1 and (root / parts[0] / parts[1]).is_dir():
        return parts[:2]
    return parts[:1]


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def boundary_violations(root: Path) -> list[str]:
    """Imports of another paper's package (``agents/lq`` importing ``agents/tabular``, or
    ``experiments/pe`` importing ``agents/lq``), and imports of an underscore name (a
    module or a name in one) that another package owns."""
    out = []
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root.parent).with_suffix("")
        module = rel.parts[:-1] if path.name == "__init__.py" else rel.parts
        if len(module) < 2:
            continue
        src = _owner(root, module[1:])
        for node in _import_nodes(path.read_text()):
            where = f"{path.relative_to(root)}:{node.lineno}"
            for name in _imported(node, tuple(module), path.name == "__init__.py"):
                parts = name.split(".")
                if parts[0] != root.name or len(parts) < 2:
                    continue
                dst = _owner(root, tuple(parts[1:]))
                if len(src) == len(dst) == 2 and src[1] != dst[1]:
                    out.append(f"{'/'.join(src)} imports another paper's package: {name} ({where})")
                if dst != src and any(_private(p) for p in parts[1:]):
                    out.append(f"{'/'.join(src)} imports a private name of {'/'.join(dst)}: {name} ({where})")
    return sorted(set(out))


def test_every_unit_is_declared():
    units = {_unit(ROOT, p) for p in ROOT.rglob("*.py")} - {"__init__"}
    assert units == set(TIER), f"undeclared: {sorted(units - set(TIER))}, stale: {sorted(set(TIER) - units)}"


def test_no_import_cycle_between_subpackages():
    found = cycle(package_graph(ROOT))
    assert found is None, f"import cycle between dprl subpackages: {' -> '.join(found)}"


def test_imports_point_down_the_layers():
    bad = layer_violations(package_graph(ROOT))
    assert not bad, "imports against the layer order:\n" + "\n".join(bad)


@pytest.mark.parametrize("where, line", [
    ("runner/io.py", "\n\ndef _late():\n    from dprl.experiments.registry import kinds\n    return kinds\n"),
    ("privacy/setting.py", "\nfrom ..agents import regime as _r\n"),
])
def test_checks_catch_a_back_edge(tmp_path, where, line):
    """The checks fail on a copy of the package with one back-edge added, even one
    hidden inside a function or written as a relative import."""
    copy = tmp_path / "dprl"
    shutil.copytree(ROOT, copy, ignore=shutil.ignore_patterns("__pycache__", "*.nbi", "*.nbc"))
    assert cycle(package_graph(copy)) is None and not layer_violations(package_graph(copy))
    with open(copy / where, "a") as f:
        f.write(line)
    edges = package_graph(copy)
    assert cycle(edges) is not None
    assert any("points up" in v for v in layer_violations(edges))


def test_no_paper_imports_another_paper_or_a_private_name():
    bad = boundary_violations(ROOT)
    assert not bad, "imports across paper packages or of private names:\n" + "\n".join(bad)


@pytest.mark.parametrize("where, line, kind", [
    # the imports the episodic loops had before the shared kernels moved to privacy/
    ("agents/lq/loop.py", "\nfrom dprl.agents.tabular.statistics import _ctz, feed_tree\n", "another paper"),
    ("agents/linmix/loop.py", "\nfrom dprl.envs.tabular import _inverse_cdf\n", "private name of envs"),
    ("agents/linmix/loop.py", "\ndef _late():\n    from ..tabular import planner\n    return planner\n", "another paper"),
    ("experiments/pe/jobs.py", "\nfrom dprl.agents.lq.build import build_agent\n", "another paper"),
    ("experiments/mechanisms/jobs.py", "\nimport dprl.agents.tabular.statistics\n", "another paper"),
    ("runner/io.py", "\nfrom dprl.privacy.audit import _eps_lb\n", "private name of privacy"),
])
def test_boundary_check_catches_a_sibling_or_private_import(tmp_path, where, line, kind):
    """The check fails on a copy of the package with one such import added (also a lazy or
    relative one), and passes on the unchanged copy."""
    copy = tmp_path / "dprl"
    shutil.copytree(ROOT, copy, ignore=shutil.ignore_patterns("__pycache__", "*.nbi", "*.nbc"))
    assert not boundary_violations(copy)
    with open(copy / where, "a") as f:
        f.write(line)
    assert any(kind in v for v in boundary_violations(copy)), boundary_violations(copy)
