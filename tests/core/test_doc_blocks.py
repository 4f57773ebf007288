"""Every generated block of the documentation (README.md and docs/*.md) is what its committed
source generates now (:mod:`dprl.analysis.doc_blocks`), every block marker on a page is a
registered block, and a changed source changes its block."""

import json
import re
import shutil
from pathlib import Path

import pytest

from dprl.analysis.doc_blocks import (
    BLOCKS, DEFAULT_TIME, FULL_COST, FULL_PARTS, PROVENANCE, Sources, cost_source, hours, minutes_seconds, powers,
    provenance, rehearsal_line, rehearsal_provenance, stale_blocks, update_docs,
)
from dprl.analysis.readme_table import current_block, replace_block

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
MANIFEST = json.loads((ROOT / "paper_figures" / "manifest.json").read_text())


@pytest.fixture(scope="module")
def sources() -> Sources:
    """The committed sources, read once (the estimate of `full` loads the config)."""
    return Sources(ROOT)


def test_every_generated_block_is_what_its_source_generates(sources):
    stale = stale_blocks(ROOT, sources)
    assert not stale, (f"generated blocks out of date: {', '.join(f'{b.page} ({b.name})' for b in stale)}: "
                       "run `dprl readme-table`")


def test_every_block_marker_on_a_page_is_a_registered_block():
    """A block copied to a page by hand (or a registered one deleted) would never be rewritten."""
    found = {(str(page.relative_to(ROOT)), name) for page in PAGES
             for name in re.findall(r"<!-- ([\w-]+):start", page.read_text())}
    assert found == {(b.page, b.name) for b in BLOCKS}


def test_a_planted_manifest_changes_the_provenance_and_the_run_time():
    planted = {**MANIFEST, "git_commit": "0123456789abcdef", "wall_time_s": 3725.2, "date_utc": "2030-01-02T03:04:05+00:00"}
    before, after = provenance(MANIFEST), provenance(planted)
    assert after != before
    assert "commit `0123456`" in after and "1 h 2 min 5 s" in after and "2030-01-02 03:04 UTC" in after
    page = (ROOT / PROVENANCE.page).read_text()
    assert current_block(page, PROVENANCE.start, PROVENANCE.end) == before
    assert BLOCKS[DEFAULT_TIME](_planted_sources(planted)) != current_block(page, DEFAULT_TIME.start, DEFAULT_TIME.end)


def _planted_sources(manifest: dict) -> Sources:
    src = Sources(ROOT)
    src.manifest = manifest  # the cached property's value: what the blocks read
    return src


def test_update_docs_rewrites_a_stale_block_and_check_reports_it(tmp_path, sources):
    for page in PAGES:
        dest = tmp_path / page.relative_to(ROOT)
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(page, dest)
    presets = tmp_path / PROVENANCE.page
    original = presets.read_text()
    presets.write_text(replace_block(original, "- run: 57 minutes, written by hand\n", PROVENANCE.start, PROVENANCE.end))
    assert update_docs(tmp_path, sources, check=True) == [PROVENANCE.page]
    assert "written by hand" in presets.read_text()  # check writes nothing
    assert update_docs(tmp_path, sources) == [PROVENANCE.page]
    assert presets.read_text() == original
    assert update_docs(tmp_path, sources, check=True) == []


def test_the_cost_blocks_state_the_estimate_and_its_source(sources):
    """The cost cell and the cluster table give `dprl parts`' numbers: its total CPU-hours and
    jobs, the parts by paper, and where the estimate comes from."""
    table = BLOCKS[FULL_PARTS](sources)
    total = next(line for line in table.splitlines() if line.startswith("| total |"))
    total_h = sum(p.hours for p in sources.parts)
    assert f"| {sum(p.jobs for p in sources.parts):,} | {total_h:.2f} |" in total
    rows = [line for line in table.splitlines() if line.startswith("| ") and not line.startswith(("| part |", "| total |"))]
    assert [row.split(" | ")[0].removeprefix("| ") for row in rows] == [p.name for p in sources.parts]
    cell = BLOCKS[FULL_COST](sources)
    assert "\n" not in cell  # inside a table row
    said = cost_source(sources.estimate, sources.rehearsal, "full")
    assert said in cell and said in table
    assert f"about {hours(total_h)} CPU-hours" in cell


def test_the_source_names_a_committed_rehearsal(tmp_path):
    assert rehearsal_provenance(tmp_path, "full") is None
    (tmp_path / "rehearsal").mkdir()
    (tmp_path / "rehearsal" / "full.csv").write_text("experiment,job\n")
    assert rehearsal_provenance(tmp_path, "full") is None  # a table without its record
    record = {"measured_at_commit": "abcdef0123", "git_dirty": False, "date_utc": "2026-12-03T01:02:03+00:00",
              "how": "slices run by the workflow (`--config rehearse=true`)", "machine": "Linux x86_64, 64 CPUs"}
    (tmp_path / "rehearsal" / "full.json").write_text(json.dumps(record))
    got = rehearsal_provenance(tmp_path, "full")
    assert got == record
    line = rehearsal_line(got, "full")
    assert "`abcdef0`" in line and "2026-12-03" in line and "slices run by the workflow" in line
    estimate = {"a": {"source": "rehearsed"}, "b": {"source": "scaled"}, "c": {"source": "model"}}
    said = cost_source(estimate, got, "full")
    assert said.startswith("projected by the rehearsal at `abcdef0` (`paper_figures/rehearsal/full.json`) for 1 experiment;")
    assert "work models for 1 experiment" in said and "alone for `c`" in said
    assert cost_source({"a": {"source": "rehearsed"}}, got, "full") == (
        "projected by the rehearsal at `abcdef0` (`paper_figures/rehearsal/full.json`)")


def test_numbers_as_the_pages_print_them():
    assert [hours(h) for h in (143.94, 81.62, 0.681)] == ["144", "81.6", "0.68"]
    assert minutes_seconds(3439.8) == "57 min 20 s"
    assert minutes_seconds(42.4) == "42 s"
    assert minutes_seconds(3600) == "1 h 0 min 0 s"
    assert powers(1277539.4) == "1.28·10⁶"
    assert powers(0.00125) == "1.25·10⁻³"


def test_the_newcomer_block_says_what_did_not_finish():
    """A timed quick start whose smoke run failed is reported as such, not as a time."""
    from dprl.analysis.doc_blocks import newcomer

    record = {"commit": "abcdef0123", "date_utc": "2026-12-03T06:00:00+00:00", "machine": "Linux x86_64, 2 CPUs",
              "returncode": 1, "pip_cache": False, "total_s": 60.0, "first_figure": "results/smoke/figures/x.png",
              "first_figure_exists": False,
              "steps": [{"command": "pip install x", "seconds": 60.0}, {"command": "snakemake --cores 2", "seconds": None}]}
    text = newcomer(record)
    assert "`abcdef0`" in text and "exit status 1" in text and "did not finish" in text and ": missing." in text
    assert "pip download cache warm" in newcomer({**record, "pip_cache": True})
