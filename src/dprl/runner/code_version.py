"""A version of the code a job runs, so that editing it reruns exactly the jobs it affects.

A job's output path and spec do not change when the code under ``src/`` changes, so
Snakemake would keep every finished result. The workflow passes, as a rule ``params:``
entry, the version of the code of each experiment: a hash over the modules of ``dprl``
its job function's module imports, transitively (found statically, by parsing the
sources: nothing is imported). Snakemake's ``params`` rerun trigger then reruns the jobs of
exactly the experiments whose code changed.

The hash is over each module's syntax tree without docstrings, so comments, docstrings
and formatting do not rerun anything; any change to code does. Parsing the package takes
~0.3 s, so :func:`code_versions` keeps the versions in a cache file keyed by the bytes of
every source file of the package (1 ms to hash): Snakemake parses the workflow in every
cluster job.
"""

from __future__ import annotations

import ast
import hashlib
import json
from collections.abc import Iterable
from functools import cache
from pathlib import Path

import dprl

ROOT = Path(dprl.__file__).resolve().parent  # the dprl package directory


def module_file(name: str) -> Path | None:
    """The source file of module ``name`` (``dprl.x.y``), or ``None`` if it is not one."""
    if name != "dprl" and not name.startswith("dprl."):
        return None
    base = ROOT.joinpath(*name.split(".")[1:])
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def _strip_docstrings(tree: ast.AST) -> ast.AST:
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) and isinstance(body[0].value.value, str):
                node.body = body[1:] or [ast.Pass()]
    return tree


@cache
def module_syntax(name: str) -> ast.Module:
    """The parsed source of module ``name`` (shared; do not modify it)."""
    path = module_file(name)
    assert path is not None, name
    return ast.parse(path.read_text(encoding="utf-8"), str(path))


@cache
def module_imports(name: str) -> tuple[str, ...]:
    """The dprl modules module ``name`` imports (sorted), its imports read statically."""
    path = module_file(name)
    assert path is not None, name
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    imported: set[str] = set()
    for node in ast.walk(module_syntax(name)):  # imports anywhere, including inside functions
        if isinstance(node, ast.Import):
            imported.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                parts = package.split(".")
                base = ".".join(parts[: len(parts) - node.level + 1])
                mod = f"{base}.{node.module}" if node.module else base
            else:
                mod = node.module or ""
            imported.add(mod)
            # `from pkg import submodule` imports a module too
            imported.update(f"{mod}.{a.name}" for a in node.names)
    deps = set()
    for mod in imported:
        # a module's parent packages run too (their __init__)
        parts = mod.split(".")
        for i in range(1, len(parts) + 1):
            if module_file(".".join(parts[:i])) is not None:
                deps.add(".".join(parts[:i]))
    return tuple(sorted(deps - {name}))


@cache
def _parsed(name: str) -> tuple[str, tuple[str, ...]]:
    """(hash of the module's code, the dprl modules it imports)."""
    path = module_file(name)
    assert path is not None, name
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))  # a copy: stripped below
    digest = hashlib.sha256(ast.dump(_strip_docstrings(tree)).encode()).hexdigest()
    return digest, module_imports(name)


def module_closure(name: str) -> list[str]:
    """``name`` and every dprl module it imports, transitively (sorted)."""
    parts = name.split(".")
    seen, todo = set(), [".".join(parts[:i]) for i in range(1, len(parts) + 1)]
    while todo:
        mod = todo.pop()
        if mod in seen or module_file(mod) is None:
            continue
        seen.add(mod)
        todo.extend(module_imports(mod))
    return sorted(seen)


@cache
def code_version(run: str) -> str:
    """Version of the code behind a job function ``"module:function"`` (16 hex digits)."""
    module = run.partition(":")[0]
    h = hashlib.sha256()
    for mod in module_closure(module):
        h.update(f"{mod}\0{_parsed(mod)[0]}\n".encode())
    return h.hexdigest()[:16]


def package_fingerprint() -> str:
    """SHA-256 over the path and bytes of every source file of the package."""
    h = hashlib.sha256()
    for path in sorted(ROOT.rglob("*.py")):
        h.update(str(path.relative_to(ROOT)).encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()


def code_versions(runs: Iterable[str], cache_file: str | Path | None = None) -> dict[str, str]:
    """:func:`code_version` of each job function, through ``cache_file`` (JSON; reused
    only while no source file of the package changed)."""
    from dprl.runner.io import atomic_write_text

    runs = sorted(set(runs))
    key = package_fingerprint()
    if cache_file is not None:
        try:
            cached = json.loads(Path(cache_file).read_text())
            if cached.get("fingerprint") == key and set(runs) <= set(cached["versions"]):
                return {r: cached["versions"][r] for r in runs}
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            pass
    versions = {r: code_version(r) for r in runs}
    if cache_file is not None:
        try:
            atomic_write_text(cache_file, json.dumps({"fingerprint": key, "versions": versions}, sort_keys=True) + "\n")
        except OSError:
            pass  # a read-only workdir: recompute next time
    return versions


# What produces numbers (not docs or generated files): a change here makes a measurement dirty.
NUMBER_PATHS = ("src", "workflow", "Snakefile", "config.yaml", "pyproject.toml")


def git(*args: str) -> str:
    """``git args`` in the working directory, its output stripped; ``unknown`` when git cannot answer."""
    import subprocess

    try:
        return subprocess.run(["git", *args], capture_output=True, text=True, check=True, timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def git_state() -> tuple[str, bool | None]:
    """The checked-out commit and whether :data:`NUMBER_PATHS` have uncommitted changes
    (``None``: unknown), for provenance records (manifest, rehearsal)."""
    status = git("status", "--porcelain", "--untracked-files=no", "--", *NUMBER_PATHS)
    return git("rev-parse", "HEAD"), (bool(status) if status != "unknown" else None)
