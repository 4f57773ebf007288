"""Strict reading of ``config.yaml``: errors name the file, line and column.

PyYAML's ``safe_load`` silently keeps the last of two equal keys (a duplicated experiment
name replaces the whole first experiment), turns unquoted dates into ``datetime`` objects
and reports syntax errors as tracebacks. :func:`read_config_yaml` refuses duplicate keys
and every tag other than the plain JSON-like ones (mapping, sequence, string, number,
boolean, null), and turns every YAML problem into a :class:`ConfigFileError` whose message
is ``file:line:column: what``.

It also refuses what would make reading unbounded: a file above
:data:`~dprl.config.bounds.MAX_FILE_BYTES` (checked before parsing), aliases (``*a``
repeating an ``&a`` anchor) that expand it past :data:`~dprl.config.bounds.MAX_VALUES`
values (nine levels of nine aliases make a 701-byte file whose tree has 9^9 leaves) or
into a cycle, and nesting deeper than :data:`~dprl.config.bounds.MAX_DEPTH`. Aliases that
expand to a configuration of ordinary size stay allowed: they are how YAML shares a block.

None of these defences leans on what a PyYAML release does inside: the depth is counted
from the token stream, which both of PyYAML's scanners produce in a loop, before any
composer (the part that recurses once per level) runs, and a ``RecursionError`` or
``MemoryError`` that still escapes the parser becomes a :class:`ConfigFileError` naming
the file. (PyYAML 6.0.4's libyaml refuses more than 1,000 levels with a scanner error of
its own, which sent such a file on to the pure-Python composer and its recursion limit.)
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, NoReturn

import yaml

from dprl.config.bounds import MAX_DEPTH, MAX_FILE_BYTES, MAX_VALUES

# Tags a configuration may use (implicit or explicit); anything else (``!!python/...``,
# ``!!binary``, ``!!set``, timestamps, custom ``!tags``) is refused.
_PLAIN_TAGS = {
    "tag:yaml.org,2002:map", "tag:yaml.org,2002:seq", "tag:yaml.org,2002:str",
    "tag:yaml.org,2002:int", "tag:yaml.org,2002:float", "tag:yaml.org,2002:bool",
    "tag:yaml.org,2002:null",
}


class ConfigFileError(ValueError):
    """The YAML file itself is unreadable: syntax, duplicate key, or disallowed tag."""


def _where(path: str, mark: yaml.Mark | None) -> str:
    # marks are 0-based; editors count from 1
    return f"{path}:{mark.line + 1}:{mark.column + 1}" if mark is not None else path


class _Strict:
    """SafeLoader without duplicate keys or non-plain tags, and with aliases bounded (mixed into a loader)."""

    def construct_document(self, node: yaml.Node) -> Any:
        _check_expansion(node)
        return super().construct_document(node)

    def construct_object(self, node: yaml.Node, deep: bool = False) -> Any:
        if node.tag not in _PLAIN_TAGS:
            hint = " (a date or time? quote it)" if node.tag.endswith(":timestamp") else ""
            raise yaml.constructor.ConstructorError(None, None, f"tag {node.tag!r} is not allowed in a configuration{hint}", node.start_mark)
        return super().construct_object(node, deep)

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict:
        seen: dict[Any, yaml.Node] = {}
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=True)
            if not isinstance(key, (str, int, float, bool)) and key is not None:
                raise yaml.constructor.ConstructorError(None, None, f"a mapping key must be a scalar, got {type(key).__name__}", key_node.start_mark)
            if key in seen:
                first = seen[key].start_mark
                raise yaml.constructor.ConstructorError(
                    None, None, f"duplicate key {key!r} (first given at line {first.line + 1}); each key may appear once", key_node.start_mark
                )
            seen[key] = key_node
        return super().construct_mapping(node, deep)


def _check_expansion(root: yaml.Node) -> None:
    """Bound what aliases expand to. An alias makes the composed node graph reach one node
    again, so the tree the constructor would build (and every later walk of it) can be
    exponentially larger than the file. Count the expanded values on the graph, each node
    once (post-order, memoized: linear in the distinct nodes), and refuse more than
    :data:`MAX_VALUES`, or a recursive alias (an anchor used inside itself)."""
    size: dict[int, int] = {}
    on_path: set[int] = set()
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    while stack:
        node, children_done = stack.pop()
        key = id(node)
        if children_done:
            on_path.discard(key)
            size[key] = 1 + sum(size[id(c)] for c in _children(node))
            if size[key] > MAX_VALUES:
                raise yaml.constructor.ConstructorError(
                    None, None,
                    f"with its aliases (*name) this expands to more than {MAX_VALUES:,} values; write the values out or use fewer aliases",
                    node.start_mark,
                )
            continue
        if key in size:
            continue
        if key in on_path:
            raise yaml.constructor.ConstructorError(None, None, "a recursive alias: this anchor (&name) is used inside itself", node.start_mark)
        on_path.add(key)
        stack.append((node, True))
        stack.extend((c, False) for c in _children(node) if id(c) not in size)


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.MappingNode):
        return [n for pair in node.value for n in pair]
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    return []


class _StrictLoader(_Strict, yaml.SafeLoader):
    pass


# libyaml's parser when PyYAML has it: 0.008 s instead of 0.29 s on config.yaml, which
# every Snakemake start-up reads. Its error messages are terser (no alias name, no
# character), so a file it refuses is parsed again by the pure-Python loader for the message.
_FastStrictLoader = type("_FastStrictLoader", (_Strict, yaml.CSafeLoader), {}) if hasattr(yaml, "CSafeLoader") else _StrictLoader
_FastScanner: type | None = yaml.CSafeLoader if hasattr(yaml, "CSafeLoader") else None  # what _check_depth scans with first


# Tokens that open and close a mapping or a list. Nesting that makes no token of its own
# (an indentless "- " list as a mapping's value, a single "key: value" pair inside a flow
# list) comes with an opening token around it, so the parser's depth is at most twice the
# tokens' (the exact depth is checked on the tree, dprl.config.bounds).
_OPEN = (yaml.BlockMappingStartToken, yaml.BlockSequenceStartToken, yaml.FlowMappingStartToken, yaml.FlowSequenceStartToken)
_CLOSE = (yaml.BlockEndToken, yaml.FlowMappingEndToken, yaml.FlowSequenceEndToken)


def _check_depth(text: str, name: str, loader: type) -> None:
    """Refuse nesting deeper than :data:`MAX_DEPTH`, counted on ``loader``'s token stream
    with a counter, stopping at the first token too deep. Scanning is a loop in both of
    PyYAML's scanners (no recursion, bounded look-ahead); composing recurses once per level
    (libyaml's composer overflows the C stack, a segmentation fault, at about 10^5 levels;
    the pure-Python one reaches the recursion limit at a few hundred), so this runs first.
    A syntax error propagates as the scanner's :class:`yaml.YAMLError`."""
    depth = 0
    for token in yaml.scan(text, Loader=loader):
        if isinstance(token, _OPEN):
            depth += 1
            if depth > MAX_DEPTH:
                raise ConfigFileError(f"{_where(name, token.start_mark)}: nested more than {MAX_DEPTH} levels deep (mappings and lists within each other)")
        elif isinstance(token, _CLOSE):
            depth -= 1


def _parse(text: str, name: str) -> Any:
    counted = False
    if _FastScanner is not None:
        try:
            _check_depth(text, name, _FastScanner)
            counted = True  # the whole token stream: the pure-Python scanner reads the same tokens
            return yaml.load(text, Loader=_FastStrictLoader)  # noqa: S506 (a SafeLoader subclass)
        except yaml.YAMLError:
            pass  # a syntax error, or libyaml's own nesting limit: reported below
    if not counted:  # 6 s on a 1 MB file, where libyaml scans it in 0.6 s
        try:
            _check_depth(text, name, yaml.SafeLoader)
        except yaml.YAMLError:
            pass  # a syntax error: the loader reports it with its position, having composed only what precedes it
    try:
        return yaml.load(text, Loader=_StrictLoader)  # noqa: S506
    except yaml.MarkedYAMLError as err:
        mark = err.problem_mark or err.context_mark
        what = err.problem or err.context or "invalid YAML"
        if err.context and err.problem:
            what = f"{err.problem} ({err.context})"
        raise ConfigFileError(f"{_where(name, mark)}: {what}") from None
    except yaml.reader.ReaderError as err:  # a character YAML refuses (NUL, most control characters)
        line, column = text.count("\n", 0, err.position), err.position - (text.rfind("\n", 0, err.position) + 1)
        char = err.character if isinstance(err.character, str) else chr(err.character)
        raise ConfigFileError(f"{name}:{line + 1}:{column + 1}: character {char!r} is not allowed in YAML (control characters other than tab and newline)") from None
    except yaml.YAMLError as err:  # its message may span lines; the error is one
        raise ConfigFileError(f"{name}: {' '.join(str(err).split())}") from None


def parse_config_yaml(text: str, name: str = "<config>") -> Any:
    """Parse ``text`` strictly; ``name`` is used in error messages. Whatever the input,
    the only exception is :class:`ConfigFileError` (a parser that still recursed too deep
    or ran out of memory included)."""
    try:
        return _parse(text, name)
    except RecursionError:
        raise ConfigFileError(f"{name}: nested too deeply for the YAML parser (at most {MAX_DEPTH} levels of mappings and lists)") from None
    except MemoryError:
        raise ConfigFileError(f"{name}: out of memory while reading it (a configuration has at most {MAX_VALUES:,} values)") from None


def read_config_yaml(path: str | Path) -> Any:
    """Read and parse a configuration file strictly (see the module docstring)."""
    try:
        size = Path(path).stat().st_size
        if size > MAX_FILE_BYTES:
            raise ConfigFileError(f"{path}: {size:,} bytes, above the limit of {MAX_FILE_BYTES:,} bytes for a configuration file")
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigFileError(f"{path}: no such file") from None
    except UnicodeDecodeError as err:
        raise ConfigFileError(f"{path}: not UTF-8 text (byte {err.start})") from None
    return parse_config_yaml(text, str(path))


def check_config_files_or_exit(paths: list[str | Path]) -> None:
    """For the Snakefile, before Snakemake's own (lenient) loading of the same files:
    print the first problem and exit with status 2, without a traceback."""
    for path in paths:
        try:
            read_config_yaml(path)
        except ConfigFileError as err:
            fail(f"config file is invalid:\n  {err}")


def fail(message: str) -> NoReturn:
    """Print ``message`` on stderr and exit with status 2 (a usage error)."""
    print(f"\n{message}\n", file=sys.stderr)
    raise SystemExit(2)
