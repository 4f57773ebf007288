"""Bounds on a configuration's values, checked before anything else reads them.

A configuration is small: the committed ``config.yaml`` is 31 KB, 2,349 values, nested 8
deep, its longest string has 20 characters and its longest list 8 items. The limits below
leave a wide margin for real sweeps while refusing, within a second and with bounded
memory, inputs that would otherwise keep validation busy for minutes (a 3.2-million-item
seed list, a mapping reached through shared references many times over) or carry
characters that have no business in a name or a path (a trailing newline, which a
regular expression's ``$`` lets through and a shell reads as the end of a command).

:func:`value_problems` walks the tree once, iteratively, counting every value it visits,
so its time is bounded by :data:`MAX_VALUES` whatever the input (YAML aliases are bounded
when the file is read, :mod:`dprl.config.yaml_io`; a Python dict passed to the API may
still share sub-trees, and the count bounds that too).
"""

from __future__ import annotations

import math
import unicodedata
from collections.abc import Iterator
from pathlib import Path
from typing import Any

MAX_FILE_BYTES = 1 << 20  # 1 MiB, 34x the committed config.yaml
MAX_VALUES = 100_000  # mappings, lists and scalars together
MAX_DEPTH = 32
MAX_STRING = 256  # characters, keys included
MAX_LIST = 10_000  # items of one list (a longer seed list: seeds: {start, count})

# Unicode categories refused in any string: control characters (newline, tab, NUL, ESC),
# format characters (zero-width, bidirectional overrides) and line/paragraph separators.
_REFUSED_CATEGORIES = {"Cc", "Cf", "Zl", "Zp"}


def path_text(parts: Any) -> str:
    """A key path as the user writes it: ``experiments.audit.seeds[0]``."""
    out = ""
    for p in parts:
        out += f"[{p}]" if isinstance(p, int) else (f".{p}" if out else str(p))
    return out or "<top level>"


def refused_character(text: str) -> str | None:
    """The first character of ``text`` a configuration string may not hold, described
    (``'\\n' (a control character)``), or ``None``."""
    for ch in text:
        cat = unicodedata.category(ch)
        if cat in _REFUSED_CATEGORIES:
            kind = {"Cc": "a control character", "Cf": "an invisible format character"}.get(cat, "a line separator")
            return f"{ch!r} ({kind})"
    return None


def _scalar_problem(value: Any) -> str | None:
    if isinstance(value, float) and not math.isfinite(value):
        return f"must be a finite number, got {value!r}"
    if isinstance(value, str):
        if len(value) > MAX_STRING:
            return f"a string of {len(value):,} characters, above the limit of {MAX_STRING}"
        bad = refused_character(value)
        if bad is not None:
            return f"{value[:40]!r} contains {bad}; names, labels and paths may not"
    return None


def _walk(raw: Any) -> Iterator[tuple[tuple, str]]:
    """(key path, problem) pairs, depth-first; stops at the first size limit reached."""
    stack: list[tuple[tuple, Any]] = [((), raw)]
    seen = 0
    while stack:
        where, value = stack.pop()
        seen += 1
        if seen > MAX_VALUES:
            yield (), f"the configuration has more than {MAX_VALUES:,} values (mappings, lists and scalars); the limit keeps validation fast"
            return
        if len(where) > MAX_DEPTH:
            yield where, f"nested more than {MAX_DEPTH} levels deep"
            return
        if isinstance(value, dict):
            children = []
            for key, item in value.items():
                problem = _scalar_problem(key) if isinstance(key, str) else None
                if problem is not None:
                    yield where, f"key {problem}"
                children.append((where + (key,), item))
            stack.extend(reversed(children))
        elif isinstance(value, list):
            if len(value) > MAX_LIST:
                yield where, f"a list of {len(value):,} items, above the limit of {MAX_LIST:,} items of a configuration list"
                continue
            stack.extend(reversed([(where + (i,), item) for i, item in enumerate(value)]))
        else:
            problem = _scalar_problem(value)
            if problem is not None:
                yield where, problem


def value_problems(raw: Any) -> list[str]:
    """Every NaN or infinity (JSON-schema bounds do not catch them: ``nan > 0`` is false,
    so is ``nan <= 0``), refused character and over-long string or list in ``raw``, and
    the first size limit reached, as ``key.path: what`` messages."""
    return [f"{path_text(where)}: {what}" for where, what in _walk(raw)]


# Folders of the package's own sources: results or figures written there would mix with
# (or overwrite) code, tests and version control.
SOURCE_FOLDERS = ("src", "workflow", "tests", ".git", ".ci")


def _source_roots() -> list[Path]:
    """The working directory (Snakemake's, the repository when run from it) and the
    checkout this package runs from (an editable install: ``src/dprl`` -> the root)."""
    here = Path(__file__).resolve().parents[3]
    return list(dict.fromkeys([Path.cwd().resolve(), here]))


def output_dir_problems(dirs: dict[str, str]) -> list[str]:
    """``{key: path}`` of output folders (``results_dir``, ``figures_dir``) that climb out
    of the working directory with ``..`` (a relative path stays inside the run; an
    absolute one says where it goes) or lie inside one of :data:`SOURCE_FOLDERS`, as
    messages."""
    out = []
    for key, value in dirs.items():
        if ".." in Path(value).parts:
            out.append(f"{key}: {value!r} climbs out of the working directory with '..'; give an absolute path to write elsewhere")
            continue
        target = Path(value).resolve()
        for root in _source_roots():
            inside = [s for s in SOURCE_FOLDERS if target == root / s or (root / s) in target.parents]
            if inside:
                out.append(f"{key}: {value!r} is inside the package's own sources ({inside[0]}/ of {root}); write results and figures elsewhere (defaults: results, paper_figures)")
                break
    return out
