"""Every generated block of the documentation (README.md and docs/*.md) is what its committed
source generates now (:mod:`dprl.analysis.doc_blocks`), every block marker on a page is a
registered block, and a changed source changes its block; the page of why each experiment is
sized as it is (docs/experiments.md) carries no dated measurement outside its blocks."""

import dataclasses
import json
import re
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from dprl.analysis.doc_blocks import (
    BLOCKS, DEFAULT_TIME, EXPERIMENTS_PAGE, Block, FULL_COST, FULL_PARTS, PROVENANCE, Sources, all_blocks, cost_source,
    experiment_block, experiment_blocks, hours, minutes_seconds, powers, provenance, recorded_burn_ins, regime_cell,
    rehearsal_line, rehearsal_provenance, stale_blocks, update_docs,
)
from dprl.analysis.predicted_regime import short
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


def test_every_block_marker_on_a_page_is_a_registered_block(sources):
    """A block copied to a page by hand (or a registered one deleted) would never be rewritten."""
    found = {(str(page.relative_to(ROOT)), name) for page in PAGES
             for name in re.findall(r"<!-- ([\w-]+):start", page.read_text())}
    assert found == {(b.page, b.name) for b in all_blocks(sources)}


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


# ----------------------------------------------------------------------------- experiment blocks

def _experiment_block(sources, name: str):
    return next(b for b in experiment_blocks(sources.experiment_names) if b.name == f"regime-{name}")


def test_every_experiment_ends_its_own_section_with_its_block(sources):
    """One block per experiment of config.yaml, inside that experiment's section of
    docs/experiments.md (between its heading and the next), so a section's numbers are its own."""
    text = (ROOT / EXPERIMENTS_PAGE).read_text()
    for name in sources.experiment_names:
        b = _experiment_block(sources, name)
        section = re.search(rf"^### {re.escape(name)}$(.*?)(?=^##)|^### {re.escape(name)}$(.*)\Z", text, flags=re.M | re.S)
        assert section and b.start in section.group(0) and b.end in section.group(0), name


def test_a_planted_experiment_block_is_stale_until_rewritten(tmp_path, sources):
    """A hand-written number in an experiment's block (the kind this page used to carry) is
    reported by the check and replaced by what the config and the committed table give."""
    for page in PAGES:
        dest = tmp_path / page.relative_to(ROOT)
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(page, dest)
    b = _experiment_block(sources, "tabular_regret")
    page = tmp_path / b.page
    original = page.read_text()
    page.write_text(replace_block(original, "- measured end 5.6e5 on seed 0 (2026-11-28); about 9 s per job\n", b.start, b.end))
    assert b in stale_blocks(tmp_path, sources)
    assert update_docs(tmp_path, sources, check=True) == [b.page]
    assert update_docs(tmp_path, sources) == [b.page]
    assert page.read_text() == original
    assert b not in stale_blocks(tmp_path, sources)


def test_an_experiment_block_follows_the_config_and_the_committed_table(tmp_path, sources):
    """Its predicted cells are the config's (a longer horizon that reaches the regime changes
    them), its recorded rows the committed table's (medians over seeds at each job's last
    checkpoint; no median end of the burn-in when most seeds measured none)."""
    name = "tabular_regret"
    planted = Sources(ROOT)
    planted.configs, planted.resources, planted.manifest = sources.configs, sources.resources, sources.manifest
    planted.regimes = {p: dict(rs) for p, rs in sources.regimes.items()}
    before = sources.regimes["default"][name]
    assert before, "tabular_regret has private settings with a predicted burn-in"
    r = before[0]
    longer = dataclasses.replace(r, horizon=int(10 * r.needed), missed=0)
    planted.regimes["default"][name] = [longer, *before[1:]]
    assert experiment_block(planted, name) != experiment_block(sources, name)
    assert regime_cell(longer).startswith(f"{r.symbol} {short(longer.horizon)}, ") and ": reached (needs" in regime_cell(longer)
    missed = dataclasses.replace(r, instances=2, missed=1, where="riverswim")
    assert "not reached on 1 of 2 instances" in regime_cell(missed) and "on riverswim" in regime_cell(missed)

    rows = pd.DataFrame({
        "algorithm": "pucb", "env_label": "garnet", "epsilon": 10.0, "delta": float("nan"), "calibration": "tight",
        "seed": [0, 0, 1, 1, 2, 2], "episode": [10, 100] * 3, "burn_in_episodes": [1.0, 5.0, 1.0, 7.0, 1.0, 9.0],
        "horizon_needed": [1.0, 50.0, 1.0, 70.0, 1.0, 90.0], "onset_episode": [np.nan, 20.0, np.nan, 40.0, np.nan, np.nan]})
    table = tmp_path / "t.csv"
    rows.to_csv(table, index=False)
    (got,) = recorded_burn_ins(table)
    assert (got["seeds"], got["horizon"], got["t_star"], got["needed"], got["measured"], got["end"]) == (3, 100, 7, 70, 2, 30)
    rows.loc[rows["seed"] == 1, "onset_episode"] = np.nan
    rows.to_csv(table, index=False)
    (got,) = recorded_burn_ins(table)
    assert got["measured"] == 1 and np.isnan(got["end"])  # one seed of three: no median
    assert recorded_burn_ins(tmp_path / "missing.csv") == []


DATE = re.compile(r"\b\d{4}-\d{2}-\d{2}\b")
ONE_SEED = re.compile(r"\bseeds? \d")  # "on seed 0", "(seeds 0, 1 at T = 6e7)", "seeds 0-3"


def hand_written_measurements(text: str) -> list[str]:
    """The dates and the named seeds of a page outside its generated blocks: a measurement
    written by hand ("measured 2026-11-28 at T = 3e6, seed 0") goes stale without anything
    failing; a generated block (which may name its commit and date) does not."""
    outside = re.sub(r"<!-- ([\w-]+):start.*?<!-- \1:end -->", "", text, flags=re.S)
    return DATE.findall(outside) + ONE_SEED.findall(outside)


def test_the_experiments_page_has_no_hand_written_dated_measurement():
    found = hand_written_measurements((ROOT / EXPERIMENTS_PAGE).read_text())
    assert not found, (f"{EXPERIMENTS_PAGE}: dated or single-seed measurements outside generated blocks: {found}; "
                       "generate them (dprl.analysis.doc_blocks) or state them once with the command that reproduces them")


def test_the_measurement_finder_sees_dates_and_seeds_outside_blocks_only():
    b = Block.named("p.md", "x", "y")
    assert hand_written_measurements("Measured 2026-11-28 at T = 3e6, seed 0, ε = 10.") == ["2026-11-28", "seed 0"]
    assert hand_written_measurements("ends 4.4e6 (seeds 0, 1 at T = 6e7); 4 seeds.") == ["seeds 0"]
    assert hand_written_measurements(f"{b.start}\nrun finished 2026-12-02 on seed 0\n{b.end}\nnothing dated here") == []
