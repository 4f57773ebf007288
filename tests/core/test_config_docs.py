"""config.yaml stays short to edit and its reasoning stays findable: every experiment has a
section of its own in docs/experiments.md (and every section names an experiment), each
experiment carries at most three comment lines, and the file's header points to the page."""

from __future__ import annotations

import re
from pathlib import Path

from dprl.config.load import read_config

ROOT = Path(__file__).resolve().parents[2]
CONFIG = ROOT / "config.yaml"
PAGE = ROOT / "docs" / "experiments.md"
MAX_COMMENT_LINES = 3  # per experiment: what it runs, the claims that read it, the number to respect


def _comment_lines_per_experiment(text: str) -> dict[str, int]:
    """Comment lines (whole-line or trailing) from an experiment's key to the next one's;
    a ``# ---`` section rule between experiments belongs to none."""
    counts: dict[str, int] = {}
    current = None
    for line in text.splitlines():
        key = re.match(r"^  ([A-Za-z_][\w-]*):", line)
        if key:
            current = key.group(1)
            counts[current] = int(" #" in line)
            continue
        if current is None or line.lstrip().startswith("# ---"):
            continue
        if line.lstrip().startswith("#") or re.search(r"\s#\s", line):
            counts[current] += 1
    return counts


def test_every_experiment_has_its_section_in_docs_experiments():
    raw = read_config(str(CONFIG))
    names = list(raw["experiments"])
    headings = re.findall(r"^### (\S+)$", PAGE.read_text(), flags=re.M)
    assert [h for h in headings if h in names] == names, "docs/experiments.md: one section per experiment, in config.yaml's order"
    unknown = set(headings) - set(names) - set(raw)  # a top-level key (bundle_seconds) may have one too
    assert not unknown, f"sections for keys config.yaml does not have: {sorted(unknown)}"


def test_config_comments_are_short_and_point_to_the_page():
    text = CONFIG.read_text()
    counts = _comment_lines_per_experiment(text)
    assert set(counts) == set(read_config(str(CONFIG))["experiments"])
    long = {name: n for name, n in counts.items() if n > MAX_COMMENT_LINES}
    assert not long, f"more than {MAX_COMMENT_LINES} comment lines (move the reasoning to docs/experiments.md): {long}"
    header = text.split("\nexperiments:", 1)[0]
    assert "why each horizon: docs/experiments.md" in header


def test_the_comment_counter_sees_whole_line_and_trailing_comments():
    text = "experiments:\n  a:  # one\n    # two\n    seeds: {count: 1}  # three\n  # --- rule\n  b:\n    seeds: [0]\n"
    assert _comment_lines_per_experiment(text) == {"a": 3, "b": 0}


MAX_CONFIG_CHARS = 20_000  # a file a user reads whole before editing it


def test_config_is_short_enough_to_read_and_the_presets_live_in_their_files():
    text = CONFIG.read_text()
    assert len(text) <= MAX_CONFIG_CHARS, f"config.yaml: {len(text):,} characters"
    raw = read_config(str(CONFIG))
    assert not any("presets" in body for body in raw["experiments"].values()), "preset sizes go to the preset files"
    assert set(raw["preset_files"]) == {"smoke", "full"}
