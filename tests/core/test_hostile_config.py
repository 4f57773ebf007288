"""Hostile and oversized configurations are refused by validation, quickly, with the key
path, before anything runs (the path `dprl validate` and every Snakemake start take).

Every string a config gives that becomes part of a path or a command line (experiment
names, kinds, algorithm and environment names and labels, string parameters, privacy
calibrations, ``results_dir``, ``figures_dir``, the preset) is tried with shell
metacharacters, control characters (a trailing newline passes a regular expression ending
in a bare ``$``), ``..`` and leading dashes; the rules' shell commands quote every
placeholder (checked on the rule files themselves).
"""

from __future__ import annotations

import copy
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from dprl.config.bounds import MAX_DEPTH, MAX_FILE_BYTES, MAX_LIST, MAX_VALUES, value_problems
from dprl.config.load import ConfigError, load_config

ROOT = Path(__file__).resolve().parents[2]

PAYLOADS = [
    "audit\n",
    "audit\r\n",
    "audit\n\n",
    "x\ntouch pwned",
    "a;touch pwned",
    "$(touch pwned)",
    "`touch pwned`",
    "a|touch pwned",
    "a&&touch pwned",
    "a b",
    "a'b",
    "../../tmp/pwned",
    "-rf",
    "a\x00b",
    "a\u2028b",
]


def base() -> dict:
    return {
        "experiments": {
            "counter_error": {
                "algorithms": [{"name": "laplace_tree", "label": "lt"}],
                "environments": [{"name": "stream", "T": 64, "label": "s64"}],
                "privacy": {"epsilon": [1.0], "delta": [1e-5], "calibration": ["tight"]},
                "seeds": {"count": 1},
            },
            "pe_batch": {
                "algorithms": [{"name": "dp_lsw"}],
                "environments": [{"name": "chain", "n_states": 10}],
                "privacy": {"epsilon": [1.0], "delta": [0.1], "calibration": ["paper"]},
                "settings": {"m_min": 10, "m_max": 100, "features": "identity"},
                "seeds": {"count": 1},
            },
        }
    }


def _rename_experiment(cfg: dict, value: str) -> None:
    cfg["experiments"][value] = {"kind": "counter_error", **cfg["experiments"].pop("counter_error")}


def _set(path: tuple) -> callable:
    def put(cfg: dict, value: str) -> None:
        node = cfg
        for key in path[:-1]:
            node = node[key]
        node[path[-1]] = value

    return put


CE = ("experiments", "counter_error")
KEYS = {
    "experiment name": _rename_experiment,
    "kind": _set(CE + ("kind",)),
    "algorithm name": _set(CE + ("algorithms", 0, "name")),
    "algorithm label": _set(CE + ("algorithms", 0, "label")),
    "environment name": _set(CE + ("environments", 0, "name")),
    "environment label": _set(CE + ("environments", 0, "label")),
    "string parameter": _set(("experiments", "pe_batch", "settings", "features")),
    "calibration": _set(CE + ("privacy", "calibration", 0)),
    "results_dir": _set(("results_dir",)),
    "figures_dir": _set(("figures_dir",)),
    "preset": _set(("preset",)),
}


def test_the_base_config_is_valid():
    cfg = load_config(base(), "smoke")
    assert len(cfg.jobs) == 2


@pytest.mark.parametrize("payload", PAYLOADS, ids=[repr(p) for p in PAYLOADS])
@pytest.mark.parametrize("key", list(KEYS))
def test_every_hostile_string_is_refused_with_its_key(key, payload, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    cfg = base()
    KEYS[key](cfg, payload)
    with pytest.raises(ConfigError) as err:
        load_config(cfg, "smoke")
    message = str(err.value)
    expected = {"experiment name": "experiments", "string parameter": "features"}.get(key, key.split()[-1])
    assert expected in message, message
    assert list(tmp_path.iterdir()) == []  # validation writes nothing


@pytest.mark.parametrize("value", ["results\n", "results\r", "paper_figures\n"])
def test_trailing_newline_is_named_as_such(value):
    cfg = base()
    cfg["results_dir"] = value
    with pytest.raises(ConfigError, match=r"results_dir: .*control character"):
        load_config(cfg, "smoke")


@pytest.mark.parametrize("where", ["src/out", "workflow", "tests/tmp", ".git/x", ".ci"])
@pytest.mark.parametrize("key", ["results_dir", "figures_dir"])
def test_output_folders_inside_the_sources_are_refused(key, where, monkeypatch):
    monkeypatch.chdir(ROOT)
    cfg = base()
    cfg[key] = where
    with pytest.raises(ConfigError, match=rf"{key}: '{re.escape(where)}' is inside the package's own sources"):
        load_config(cfg, "smoke")


def test_ordinary_output_folders_are_accepted(tmp_path, monkeypatch):
    monkeypatch.chdir(ROOT)
    cfg = base()
    cfg["results_dir"], cfg["figures_dir"] = str(tmp_path / "results"), "my_figures/v1"
    assert load_config(cfg, "smoke").results_dir == str(tmp_path / "results")


def test_rules_quote_every_placeholder_they_give_the_shell():
    """Each `shell:` string of the workflow: every {input}, {output}, {log}, {params} and
    {wildcards} placeholder is quoted with `:q` (Snakemake's shell quoting)."""
    placeholder = re.compile(r"\{((?:input|output|log|params|wildcards|resources)[^{}]*)\}")
    found = 0
    for rules in sorted((ROOT / "workflow" / "rules").glob("*.smk")):
        text = rules.read_text()
        for block in re.findall(r"shell:\n((?:\s+\".*\"\n)+)", text):
            for field in placeholder.findall(block):
                found += 1
                assert field.endswith(":q"), f"{rules.name}: unquoted {{{field}}} in a shell command"
    assert found >= 20  # the parser sees the rules' commands


def test_the_quoting_check_fails_on_an_unquoted_placeholder(tmp_path):
    rule = 'rule x:\n    shell:\n        "{DPRL} run-job --out {output} 2> {log:q}"\n'
    placeholder = re.compile(r"\{((?:input|output|log|params|wildcards|resources)[^{}]*)\}")
    blocks = re.findall(r"shell:\n((?:\s+\".*\"\n)+)", rule)
    assert [f for b in blocks for f in placeholder.findall(b) if not f.endswith(":q")] == ["output"]


# ------------------------------------------------------------------ bounded input


def _validate_file(path: Path, timeout: float = 60) -> tuple[subprocess.CompletedProcess, int]:
    """`dprl validate --config path` in a child process: its result and peak memory (MiB)."""
    code = textwrap.dedent(
        f"""
        import re, sys
        from dprl.cli import main
        rc = main(["validate", "--config", {str(path)!r}])
        # VmHWM: this process image's peak (ru_maxrss would carry the forking parent's over exec)
        hwm = re.search(r"VmHWM:\\s+(\\d+) kB", open("/proc/self/status").read()).group(1)
        print("MAXRSS", int(hwm) // 1024, file=sys.stderr)
        sys.exit(rc)
        """
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=timeout, cwd=ROOT)
    rss = int(re.search(r"MAXRSS (\d+)", run.stderr).group(1))
    return run, rss


def _alias_bomb(levels: int = 9) -> str:
    lines = ['a0: &a0 ["x", "x", "x", "x", "x", "x", "x", "x", "x"]']
    for i in range(1, levels):
        lines.append(f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 9) + "]")
    return "\n".join(lines) + "\nexperiments: {}\n"


def test_yaml_alias_bomb_is_refused_at_once(tmp_path):
    bomb = tmp_path / "bomb.yaml"
    bomb.write_text(_alias_bomb())
    assert bomb.stat().st_size < 1000  # 9^9 leaves once expanded
    run, rss = _validate_file(bomb)
    assert run.returncode == 2, run.stderr
    assert re.search(rf"bomb\.yaml:\d+:\d+: with its aliases \(\*name\) this expands to more than {MAX_VALUES:,} values", run.stderr), run.stderr
    assert rss < 500


def test_aliases_of_ordinary_size_are_allowed_and_recursive_ones_refused():
    from dprl.config.yaml_io import ConfigFileError, parse_config_yaml

    shared = parse_config_yaml("a: &block {epsilon: [1.0], delta: [0.1]}\nb: *block\n")
    assert shared == {"a": {"epsilon": [1.0], "delta": [0.1]}, "b": {"epsilon": [1.0], "delta": [0.1]}}
    with pytest.raises(ConfigFileError, match=r"c\.yaml:1:4: a recursive alias"):
        parse_config_yaml("a: &x [1, *x]\n", "c.yaml")


def test_an_oversized_config_file_is_refused_before_parsing(tmp_path):
    big = tmp_path / "big.yaml"
    seeds = ", ".join(str(i) for i in range(3_200_000))  # ~22 MB
    big.write_text((ROOT / "config.yaml").read_text() + f"\n# {seeds}\n")
    assert big.stat().st_size > MAX_FILE_BYTES
    run, rss = _validate_file(big)
    assert run.returncode == 2 and f"above the limit of {MAX_FILE_BYTES:,} bytes" in run.stderr, run.stderr
    assert rss < 500


def test_deep_nesting_is_refused_not_a_crash(tmp_path):
    deep = tmp_path / "deep.yaml"
    deep.write_text("experiments: " + "[" * 100_000 + "]" * 100_000 + "\n")  # crashed libyaml's composer
    run, _ = _validate_file(deep)
    assert run.returncode == 2 and f"nested more than {MAX_DEPTH} levels deep" in run.stderr, run.stderr


N_DEEP = 100_000  # past libyaml's own limit (1,000 levels in PyYAML 6.0.4), its composer's C stack and Python's recursion limit

# Every kind of hostile file `dprl validate` may be given: (file name, contents, what the one line says).
HOSTILE_FILES = {
    "flow_lists": ("experiments: " + "[" * N_DEEP + "]" * N_DEEP + "\n", f"nested more than {MAX_DEPTH} levels deep"),
    "flow_maps": ("experiments: " + "{a: " * N_DEEP + "1" + "}" * N_DEEP + "\n", f"nested more than {MAX_DEPTH} levels deep"),
    "unclosed": ("experiments: " + "[" * N_DEEP + "\n", f"nested more than {MAX_DEPTH} levels deep"),
    "block_maps": ("".join(" " * i + "a:\n" for i in range(1_400)), f"nested more than {MAX_DEPTH} levels deep"),
    "block_lists": ("experiments:\n  " + "- " * N_DEEP + "x\n", f"nested more than {MAX_DEPTH} levels deep"),
    "indentless": ("".join("  " * i + "a:\n" + "  " * i + "- " for i in range(600)) + "x\n", f"nested more than {MAX_DEPTH} levels deep"),
    "alias_bomb": (_alias_bomb(), "expands to more than"),
    "recursive_alias": ("a: &x [1, *x]\nexperiments: {}\n", "a recursive alias"),
    "duplicate_key": ("experiments: {}\nexperiments: {}\n", "duplicate key 'experiments'"),
    "python_tag": ("experiments: !!python/object/apply:os.system ['touch pwned']\n", "is not allowed in a configuration"),
    "syntax": ("experiments: [1, 2\n", "expected ',' or ']'"),
    "nul_byte": ("experiments: {}\n\x00\n", ":2:1: character '\\x00' is not allowed in YAML"),
    "not_utf8": (b"experiments: {}\n\xff\xfe\n", "not UTF-8 text"),
}


@pytest.mark.parametrize("kind", list(HOSTILE_FILES))
def test_every_hostile_file_gets_one_line_naming_it(kind, tmp_path):
    """`dprl validate` on each hostile file: exit status 2 and one line, `dprl: error:
    <file>...: what`; never a traceback, a RecursionError or MemoryError, or a signal."""
    text, what = HOSTILE_FILES[kind]
    path = tmp_path / f"{kind}.yaml"
    path.write_bytes(text if isinstance(text, bytes) else text.encode())
    assert path.stat().st_size < MAX_FILE_BYTES
    run, rss = _validate_file(path)
    lines = [ln for ln in run.stderr.splitlines() if ln.strip() and not ln.startswith("MAXRSS")]
    assert run.returncode == 2, run.stderr[-3000:]
    assert len(lines) == 1 and lines[0].startswith(f"dprl: error: {path}"), lines[:20]
    assert what in lines[0], lines[0]
    assert rss < 500


def _refusing_libyaml(monkeypatch) -> None:
    """Make libyaml refuse every file with a scanner error of its own, as PyYAML 6.0.4's does
    past 1,000 levels (the error sent the file on to the pure-Python loader, which recursed)."""
    import yaml

    from dprl.config import yaml_io

    class Refusing(yaml.SafeLoader):
        def check_token(self, *choices):
            raise yaml.scanner.ScannerError("while increasing flow level", None, "exceeded maximum nesting depth", self.get_mark())

        check_event = check_token

    monkeypatch.setattr(yaml_io, "_FastScanner", Refusing)
    monkeypatch.setattr(yaml_io, "_FastStrictLoader", type("Refusing", (yaml_io._Strict, Refusing), {}))


@pytest.mark.parametrize("libyaml", ["as installed", "absent", "refusing"])
@pytest.mark.parametrize("kind", ["flow_lists", "flow_maps", "unclosed", "block_lists", "indentless"])
def test_depth_is_refused_whatever_libyaml_does(kind, libyaml, monkeypatch):
    """The depth refusal holds with libyaml, without it, and when libyaml refuses the file
    itself: the count runs on the pure-Python scanner's tokens before any composer."""
    from dprl.config import yaml_io

    if libyaml == "absent":
        monkeypatch.setattr(yaml_io, "_FastScanner", None)
        monkeypatch.setattr(yaml_io, "_FastStrictLoader", yaml_io._StrictLoader)
    elif libyaml == "refusing":
        _refusing_libyaml(monkeypatch)
    with pytest.raises(yaml_io.ConfigFileError, match=rf"^{kind}\.yaml:\d+:\d+: nested more than {MAX_DEPTH} levels deep"):
        yaml_io.parse_config_yaml(HOSTILE_FILES[kind][0], f"{kind}.yaml")
    # an ordinary file still reads the same on every path
    assert yaml_io.parse_config_yaml("a: [1, {b: [2]}]\nc:\n- d\n") == {"a": [1, {"b": [2]}], "c": ["d"]}


@pytest.mark.parametrize("error", [RecursionError, MemoryError])
def test_a_parser_that_still_recurses_or_runs_out_of_memory_is_one_error(error, monkeypatch):
    """Should a PyYAML release recurse or allocate where this one does not, the error is a
    ConfigFileError naming the file, which `dprl validate` prints as one line."""
    import yaml

    from dprl.config import yaml_io

    def composing(self):
        raise error()

    _refusing_libyaml(monkeypatch)
    monkeypatch.setattr(yaml.composer.Composer, "compose_document", composing)
    with pytest.raises(yaml_io.ConfigFileError, match=r"^c\.yaml: (nested too deeply|out of memory)"):
        yaml_io.parse_config_yaml("experiments: {}\n", "c.yaml")


def test_validate_turns_a_recursion_past_reading_into_one_line(monkeypatch, capsys):
    """Past reading, validation walks a tree of bounded depth; should a later step still
    recurse or run out of memory, `dprl validate` prints one line naming the file."""
    from dprl import cli
    from dprl.config import load

    def recursing(path, preset=None):
        raise RecursionError("maximum recursion depth exceeded")

    monkeypatch.setattr(load, "load_config_file", recursing)
    assert cli.main(["validate", "--config", "config.yaml"]) == 2
    assert capsys.readouterr().err.strip() == "dprl: error: config.yaml: RecursionError while validating; the file is nested too deeply or too large"


def test_a_long_seed_list_through_the_api_is_refused_quickly():
    cfg = base()
    cfg["experiments"]["counter_error"]["seeds"] = list(range(3_200_000))
    with pytest.raises(ConfigError, match=rf"counter_error\.seeds: a list of 3,200,000 items, above the limit of {MAX_LIST:,}"):
        load_config(cfg, "smoke")


def test_shared_subtrees_through_the_api_are_bounded():
    """A Python config may share sub-trees (what YAML aliases build): the walk counts
    every value it visits and stops at the limit."""
    node: list = ["x"] * 9
    for _ in range(8):
        node = [node] * 9
    cfg = base()
    cfg["experiments"]["counter_error"]["algorithms"][0]["label"] = node
    problems = value_problems(cfg)
    assert problems == [f"<top level>: the configuration has more than {MAX_VALUES:,} values (mappings, lists and scalars); the limit keeps validation fast"]


def test_long_strings_are_refused():
    cfg = base()
    cfg["experiments"]["counter_error"]["algorithms"][0]["label"] = "a" * 10_000
    with pytest.raises(ConfigError, match=r"algorithms\[0\]\.label: a string of 10,000 characters"):
        load_config(cfg, "smoke")


def test_limits_leave_room_for_the_committed_config():
    """The committed config is far inside every limit (so the limits refuse only what no
    real sweep needs)."""
    import yaml

    raw = yaml.safe_load((ROOT / "config.yaml").read_text())
    assert value_problems(raw) == []
    assert (ROOT / "config.yaml").stat().st_size * 10 < MAX_FILE_BYTES
    deep_copy = copy.deepcopy(raw)
    assert load_config(deep_copy, "smoke").preset == "smoke"
