"""Every report caption renders, with the real config of every preset, through Jinja (as
Snakemake renders it) and docutils without a single system message; the landing page too."""

import io
import re
from pathlib import Path
from types import SimpleNamespace

import pandas as pd
import pytest
from docutils.core import publish_parts
from jinja2 import Environment, StrictUndefined

from dprl.analysis.figures import all_figures
from dprl.analysis.report_captions import figure_caption
from dprl.analysis.report_pages import landing_page
from dprl.config.load import PRESETS, load_config, read_config

ROOT = Path(__file__).resolve().parents[2]
REPORT = ROOT / "workflow" / "report"
RAW = read_config(str(ROOT / "config.yaml"))


def rst_messages(text: str) -> list[str]:
    """docutils' warnings and errors (levels 2-4) for ``text``; rendering as Snakemake does
    (``publish_parts(..., writer_name="html")``) but reporting instead of embedding them."""
    stream = io.StringIO()
    publish_parts(text, writer_name="html",
                  settings_overrides={"report_level": 2, "halt_level": 5, "warning_stream": stream})
    return [m for m in stream.getvalue().splitlines() if m.strip()]


def render_caption(path: Path, params: dict, config: dict) -> str:
    """Snakemake's caption rendering (``snakemake.report``: trim/lstrip blocks), but with
    StrictUndefined so that a misspelt config value fails instead of rendering empty."""
    env = Environment(trim_blocks=True, lstrip_blocks=True, undefined=StrictUndefined)
    snakemake = SimpleNamespace(params=SimpleNamespace(**params), config=config)
    return env.from_string(path.read_text()).render(snakemake=snakemake, categories={}, files=[])


def _captions():
    """(preset, figure id, caption params) of every figure the workflow draws in each preset."""
    out = []
    for preset in PRESETS:
        cfg = load_config(RAW, preset)
        for fid, fig in all_figures().items():
            if all(e in cfg.experiments for e in fig.experiments):
                out.append(pytest.param(preset, fid, figure_caption(fig, preset, cfg.experiments), id=f"{preset}-{fid}"))
    return out


@pytest.mark.parametrize(("preset", "fid", "caption"), _captions())
def test_figure_caption_renders_without_docutils_messages(preset, fid, caption):
    text = render_caption(REPORT / all_figures()[fid].caption, {"caption": caption}, {**RAW, "preset": preset})
    assert rst_messages(text) == [], text
    # the claims it tests are named, and the seed count is the preset's, not typed in
    for claim in caption["claims"].split(", ") if caption["claims"] else []:
        assert f"**{claim}**" in text
    assert not re.search(r"\b\d+ seeds in (the )?``?default", text), "seed count typed into the caption"


def test_caption_seed_counts_follow_the_preset():
    fig = all_figures()["tabular_regret_loglog"]
    counts = {}
    for preset in ("smoke", "default"):
        cfg = load_config(RAW, preset)
        caption = figure_caption(fig, preset, cfg.experiments)
        counts[preset] = caption["seeds"]["tabular_regret"]
        assert f"over {counts[preset]} seeds ({preset} preset)" in render_caption(
            REPORT / fig.caption, {"caption": caption}, {**RAW, "preset": preset})
    assert counts["smoke"] != counts["default"]


@pytest.mark.parametrize("name", ["claims.rst", "job_runtimes.rst"])
def test_table_captions_render_without_docutils_messages(name):
    assert rst_messages(render_caption(REPORT / name, {}, RAW)) == []


def test_a_substitution_in_a_caption_is_caught(tmp_path):
    """The check has teeth: the old linmix_states text, |S| unquoted, is a reST substitution."""
    assert any("substitution" in m for m in rst_messages("Final regret against the number of states |S|."))
    assert rst_messages("Final regret against the number of states :math:`|S|`.") == []
    bad = tmp_path / "bad.rst"
    bad.write_text("{{ snakemake.params.caption.seed }} seeds")  # misspelt: fails, not empty
    with pytest.raises(Exception, match="seed"):
        render_caption(bad, {"caption": {"seeds": {}}}, RAW)


def test_landing_page_renders_without_docutils_messages():
    claims = pd.DataFrame({
        "claim": ["V2", "V2", "C1"], "verdict": ["reproduced", "inconclusive", "not reproduced"],
        "regime": ["reached", "not reached", "n/a"],
    })
    manifest = {"preset": "smoke", "git_commit": "0123abc", "git_dirty": True, "date_utc": "2026-01-01T00:00:00",
                "jobs": 12, "cores": 2, "wall_time_s": 90.0, "config_hash": "ffff"}
    text = landing_page((REPORT / "workflow.rst").read_text(), claims, manifest)
    assert rst_messages(text) == []
    for expected in ("preset: **smoke**", "``0123abc``", "uncommitted", "**reproduced**: 1", "**inconclusive**: 1",
                     "**not reproduced**: 1", "2 claims, 3 rows", "1 reached, 1 not reached, 1 n/a"):
        assert expected in text, expected
    # Snakemake renders the description with Jinja once more: it must not change
    assert Environment(trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True).from_string(text).render() == text


def test_snakemake_report_needs_only_runtime_dependencies():
    """`snakemake --report` after a plain `pip install -e .`: everything Snakemake's own
    "reports" extra requires is a runtime dependency of the package (not only of a test
    extra), in pyproject.toml; test_packaging checks environment.yml lists the same."""
    import importlib.metadata as md
    import tomllib

    from packaging.requirements import Requirement

    runtime = {Requirement(r).name.lower() for r in tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]}
    extra = [Requirement(r) for r in md.requires("snakemake") or []]
    reports = {r.name.lower() for r in extra if r.marker is not None and r.marker.evaluate({"extra": "reports"})}
    assert reports, "snakemake declares no 'reports' extra any more: check what --report needs"
    assert reports <= runtime, f"missing runtime dependencies for snakemake --report: {sorted(reports - runtime)}"
    assert "jinja2" in runtime  # dprl.analysis.report_pages renders the landing page


def test_landing_page_states_the_cores_used_and_requested():
    from dprl.analysis.manifest import cores_used

    assert cores_used(8, 2) == 2 and cores_used(1, 2) == 1 and cores_used(0, 2) == 2
    claims = pd.DataFrame({"claim": ["V2"], "verdict": ["reproduced"], "regime": ["reached"]})
    manifest = {"preset": "smoke", "git_commit": "0123abc", "date_utc": "2026-01-01T00:00:00", "jobs": 12,
                "cores": 2, "cores_requested": 8, "cpus_available": 2, "wall_time_s": 90.0, "config_hash": "ffff"}
    text = landing_page((REPORT / "workflow.rst").read_text(), claims, manifest)
    assert "on 2 cores\n  (8 requested with ``--cores``, 2 CPUs available)" in text
    assert rst_messages(text) == []


def test_caption_params_read_as_text_in_the_report_pane():
    """Snakemake's report shows each param as ``name=str(value)``: the caption context must
    not print as a dict with Markdown asterisks."""
    cfg = load_config(RAW, "smoke")
    caption = figure_caption(all_figures()["tabular_regret_loglog"], "smoke", cfg.experiments)
    text = str(caption)
    assert "{" not in text and "**" not in text and "'" not in text, text
    seeds = caption["seeds"]["tabular_regret"]
    claims = ", ".join(all_figures()["tabular_regret_loglog"].claims)
    assert text.startswith(f"preset smoke; claims {claims}; tabular_regret: ") and f"{seeds} seeds" in text
    assert caption["seeds"]["tabular_regret"] == seeds  # still the dict the captions read


@pytest.mark.parametrize("fid", ["linmix_regime", "tabular_regime", "pe_regime", "lq_regime"])
def test_regime_captions_claim_a_collapse_across_eps_only_when_the_preset_runs_several(fid):
    fig = all_figures()[fid]
    for preset in ("smoke", "default"):
        cfg = load_config(RAW, preset)
        caption = figure_caption(fig, preset, cfg.experiments)
        text = " ".join(render_caption(REPORT / fig.caption, {"caption": caption}, {**RAW, "preset": preset}).split())
        several = len(caption["epsilons"][fig.experiments[0]]) > 1
        assert ("collapse" in text and "no collapse" not in text) == several, (preset, text)
        assert rst_messages(text) == []
