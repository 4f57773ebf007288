"""`snakemake --report` on the smoke run (conftest.smoke_run, shared with test_smoke_dag):
the landing page states the run's preset, commit and verdict totals, the claims table is
inside as HTML, and no caption renders with a docutils message."""

import json
import re
import zipfile

import pytest
from conftest import snakemake

from dprl.analysis.figures import all_figures
from dprl.analysis.base import paper_claims
from dprl.analysis.readme_table import read_claims
from dprl.analysis.report_table import VERDICT_COLOURS
from dprl.config.load import load_config_file


@pytest.mark.slow
def test_report_has_landing_page_claims_table_and_captions(smoke_run):
    wd = smoke_run
    snakemake(wd, "--config", "preset=smoke", "--report", "report.zip")
    figs = wd / "results" / "smoke" / "figures"
    claims = read_claims(figs / "claims.csv")
    manifest = json.loads((figs / "manifest.json").read_text())
    with zipfile.ZipFile(wd / "report.zip") as z:
        names = z.namelist()
        html = z.read("report/report.html").decode()
        claims_page = z.read(next(n for n in names if n.endswith("/claims.html"))).decode()

    # landing page (the `report:` description): preset, commit, totals from the run's files
    desc = re.search(r"var workflow_desc = (\".*?\");\n", html, flags=re.S)
    assert desc, "no workflow description in the report"
    desc = json.loads(desc.group(1))
    assert "preset: <strong>smoke</strong>" in desc
    assert manifest["git_commit"] in desc
    papers = paper_claims(claims)  # the landing page counts the papers' claims, not the package's findings
    counts = papers["verdict"].value_counts()
    for verdict in ("reproduced", "inconclusive", "not reproduced"):
        assert f"<strong>{verdict}</strong>: {counts.get(verdict, 0)}</li>" in desc
    assert f"{papers['claim'].nunique()} claims, {len(papers)} rows" in desc
    # cores: those used (at most the CPUs there are) and those requested (conftest: --cores 2)
    assert manifest["cores_requested"] == 2 and manifest["cores"] == min(2, manifest["cpus_available"])
    assert f"on {manifest['cores']} cores" in desc and "2 requested with" in desc

    # the claims table, inline as HTML: a summary row per claim, a detail row per row
    # (a plug-in's rows of a claim get their own summary row under it: one per plug-in statement)
    plugin_rows = claims[claims["source"] == "plug-in"]
    groups = claims["claim"].nunique() + len(plugin_rows.groupby(["claim", "statement"]))
    assert claims_page.count('<tr class="claim">') == groups
    assert claims_page.count('<tr class="detail">') == len(claims)
    for verdict in set(claims["verdict"]):
        assert f'background:{VERDICT_COLOURS[verdict]}">{verdict}</td>' in claims_page
    # "n/a" (the calibration of a non-private row, a regime) shows as written, never as nan
    assert "nan" not in re.findall(r"<td[^>]*>([^<]*)</td>", claims_page)
    assert "<td>n/a</td>" in claims_page

    # each figure's information pane lists its rule's params as name=str(value): the
    # caption context reads as text, not as a dict repr with Markdown asterisks
    assert "caption=preset smoke; claims " in html
    assert "caption={" not in html and "'tests': " not in html

    # captions: no docutils message anywhere; seed counts of the smoke preset; claim ids
    assert "system-message" not in html and "System Message" not in html
    seeds = len({j.spec.seed for j in load_config_file(str(wd / "config.yaml"), "smoke").experiments["tabular_regret"].jobs})
    assert f"over {seeds} seeds (smoke preset)" in html
    for fig in all_figures().values():
        for claim in fig.claims:
            assert f"<strong>{claim}</strong>" in html, (fig.id, claim)
