"""The README: its verdict table agrees with the committed claims, it names every
registered claim, the documentation (README.md and docs/*.md) names every figure, its quick
start begins with the smoke preset, it stays short, and the links of every page resolve."""

import json
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from dprl.analysis.base import findings, paper_claims
from dprl.analysis.claims import all_claims
from dprl.analysis.figures import all_figures
from dprl.analysis.readme_table import END, PAPER_NAMES, START, current_block, read_claims, replace_block, verdict_table

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text()
PAGES = sorted((ROOT / "docs").glob("*.md"))
DOCUMENTATION = README + "".join(page.read_text() for page in PAGES)  # what a reader can look things up in
README_LIMIT = 15_000  # characters: what a newcomer reads in five minutes; the rest lives in docs/
CLAIMS = ROOT / "paper_figures" / "claims.csv"
MANIFEST = json.loads((ROOT / "paper_figures" / "manifest.json").read_text())


def test_verdict_table_matches_the_committed_claims():
    expected = verdict_table(read_claims(CLAIMS), MANIFEST)
    assert current_block(README) == expected, (
        "README.md's verdict table disagrees with paper_figures/claims.csv: run `dprl readme-table`"
    )


def test_committed_claims_are_computed_from_the_committed_tables(tmp_path):
    """The claims table a reader checks must come from the tables committed beside it: a
    stale published table (once pe_lambda's, after a run directory was reset) breaks this."""
    import shutil

    from dprl.cli import main

    tables = tmp_path / "tables"
    shutil.copytree(ROOT / "paper_figures" / "tables", tables)  # the integrity check may move a bad table aside
    assert main(["claims", "--out-dir", str(tmp_path / "out"), *map(str, sorted(tables.glob("*.csv")))]) == 0
    problems = claims_differences(pd.read_csv(tmp_path / "out" / "claims.csv"), pd.read_csv(CLAIMS))
    assert not problems, "paper_figures/claims.csv is not what `dprl claims paper_figures/tables/*.csv` computes: " + "; ".join(problems[:5])


def test_committed_tables_are_the_default_presets_experiments():
    """Publishing never deletes: a table of an experiment the default preset no longer runs
    (tabular_scaling, moved to `full`) would stay beside the figures, and the claims
    computed from the committed tables would gain rows the run did not produce."""
    from dprl.config.load import load_config_file

    committed = {p.stem for p in (ROOT / "paper_figures" / "tables").glob("*.csv")}
    runs = {name for name, e in load_config_file(str(ROOT / "config.yaml"), "default").experiments.items() if e.jobs}
    assert committed == runs, f"stale: {sorted(committed - runs)}; missing: {sorted(runs - committed)}"


_NUMBER = re.compile(r"-?\d+(?:\.(\d+))?(?:e[+-]?\d+)?")


def _same_text(a: str, b: str) -> bool:
    """Two notes alike but for their numbers' last printed digit: the same words, and every
    number within one unit of its last printed decimal (or 1e-6 relative)."""
    if _NUMBER.sub("#", a).replace("-#", "#") != _NUMBER.sub("#", b).replace("-#", "#"):
        return False
    for x, y in zip(_NUMBER.finditer(a), _NUMBER.finditer(b)):
        u, v = float(x.group()), float(y.group())
        unit = 10.0 ** -len(x.group(1)) if x.group(1) and "e" not in x.group() else 0.0  # integers: exactly
        if not (abs(u - v) <= 1.01 * unit or abs(u - v) <= 1e-6 * max(abs(u), abs(v))):
            return False
    return True


def claims_differences(computed: pd.DataFrame, committed: pd.DataFrame) -> list[str]:
    """Where two claims tables differ beyond the last bits of floating point, which differ
    from one CPU to another (BLAS kernels, fused multiply-add): the same rows, claims,
    verdicts and regimes exactly; numbers to 1e-9 relative; notes by :func:`_same_text`."""
    if list(computed.columns) != list(committed.columns) or len(computed) != len(committed):
        return [f"shape {computed.shape} vs {committed.shape}"]
    out = []
    for col in committed.columns:
        a, b = computed[col], committed[col]
        if pd.api.types.is_numeric_dtype(b) and pd.api.types.is_numeric_dtype(a):
            bad = ~np.isclose(a.to_numpy(float), b.to_numpy(float), rtol=1e-9, atol=1e-12, equal_nan=True)
        else:
            bad = np.array([not (x == y or (isinstance(x, str) and isinstance(y, str) and col == "note" and _same_text(x, y)))
                            and not (pd.isna(x) and pd.isna(y)) for x, y in zip(a, b)])
        out += [f"row {i} ({committed['claim'].iloc[i]}) {col}: {a.iloc[i]!r} vs {b.iloc[i]!r}" for i in np.flatnonzero(bad)]
    return out


def test_claims_comparison_ignores_last_bits_and_flags_a_changed_verdict():
    claims = pd.read_csv(CLAIMS)
    jitter = claims.copy()
    jitter["measured"] = jitter["measured"] * (1 + 1e-14)
    jitter["note"] = jitter["note"].str.replace("0.00]", "-0.00]", regex=False)
    assert claims_differences(jitter, claims) == []
    flipped = claims.copy()
    flipped.loc[0, "verdict"] = "not reproduced" if flipped.loc[0, "verdict"] != "not reproduced" else "reproduced"
    assert len(claims_differences(flipped, claims)) == 1
    moved = claims.copy()
    moved.loc[0, "note"] = moved.loc[0, "note"] + " 4 seeds"
    moved.loc[1, "note"] = moved.loc[1, "note"] + " 5 seeds"
    claims.loc[0, "note"] = claims.loc[0, "note"] + " 4 seeds"
    claims.loc[1, "note"] = claims.loc[1, "note"] + " 4 seeds"
    assert len(claims_differences(moved, claims)) == 1


def test_verdict_table_changes_with_a_verdict():
    claims = read_claims(CLAIMS)
    before = verdict_table(claims, MANIFEST)
    row = claims.index[claims["verdict"] == "reproduced"][0]
    claims.loc[row, "verdict"] = "not reproduced"
    after = verdict_table(claims, MANIFEST)
    assert after != before
    claim, paper = claims.loc[row, "claim"], claims.loc[row, "paper"]
    paper_row = next(line for line in after.splitlines() if line.startswith(f"| {PAPER_NAMES[paper]} |"))
    assert claim in paper_row.rsplit(" | ", 1)[1], paper_row  # the "not reproduced" column names it


def test_verdict_table_counts_every_row_once():
    claims = read_claims(CLAIMS)
    table = verdict_table(claims, MANIFEST)
    rows = [line for line in table.splitlines() if line.startswith("| ") and not line.startswith("| paper")]
    counted = sum(int(m) for line in rows for m in re.findall(r"\| (\d+)(?::| \|)", line + " |"))
    papers = paper_claims(claims)  # the package's findings are listed apart, never counted
    assert counted == len(papers)
    assert len(rows) == papers["paper"].nunique()
    assert all(f"- **{f}** (" in table for f in findings(claims)["claim"].unique())


def test_markers_are_required():
    with pytest.raises(ValueError, match="markers"):
        replace_block("# no markers\n", "x\n")
    with pytest.raises(ValueError, match="markers"):
        replace_block(f"{END}\n{START}\n", "x\n")
    assert current_block(replace_block(f"a\n{START}\nold\n{END}\nb\n", "new\n")) == "new\n"


def test_documentation_lists_every_figure():
    missing = [f for f in all_figures() if f"`{f}`" not in DOCUMENTATION]
    assert not missing, f"neither README.md nor docs/*.md mentions figures {missing}"


def test_readme_claims_table_is_generated_from_the_declarations():
    """The per-paper claims table is the one the declarations generate (tables read, figures),
    and names every claim and finding id: adding a claim needs no README edit by hand."""
    from dprl.analysis.figures.catalog import FIGURES
    from dprl.analysis.readme_table import CLAIMS_END, CLAIMS_START, claims_declared_table

    block = current_block(README, CLAIMS_START, CLAIMS_END)
    assert block == claims_declared_table(all_claims(), list(FIGURES.values())), (
        "README.md's claims table is not what the declarations generate: run `dprl readme-table`")
    missing = [c.id for c in all_claims() if not re.search(rf"\b{c.id}\b", block)]
    assert not missing, f"README does not list claims {missing}"


def test_quick_start_installs_from_the_lock_and_runs_the_smoke_preset_first():
    """The first workflow command a reader meets is the smoke preset (minutes, writes
    results/smoke/), not the default preset (over an hour on 2 cores, overwrites paper_figures/)."""
    first_block = re.search(r"```bash\n(.*?)```", README, re.S).group(1)
    assert "pip install -r requirements.lock && pip install -e . --no-deps" in first_block
    first_snakemake = next(line for line in README.splitlines() if line.lstrip().startswith("snakemake"))
    assert "preset=smoke" in first_snakemake, first_snakemake
    assert "--report" in first_block
    assert 'pip install -e ".[test]" && pytest' in README


def _links(text: str) -> list[str]:
    return re.findall(r"\]\(([^)#:]+)(?:#[^)]*)?\)", text)


def test_relative_links_resolve():
    links = _links(README)
    missing = [link for link in links if not (ROOT / link).exists()]
    assert links and not missing, f"README links to missing files {missing}"
    for page in PAGES:
        missing = [link for link in _links(page.read_text()) if not (page.parent / link).exists()]
        assert not missing, f"{page.relative_to(ROOT)} links to missing files {missing}"


def test_the_link_checker_sees_a_missing_page():
    assert _links("see [a](docs/a.md), [b](docs/b.md#part) and [web](https://x.org)") == ["docs/a.md", "docs/b.md"]


def test_readme_links_to_the_docs_pages_and_every_page_is_reached():
    """The README links to pages under docs/ (checked to exist above), and every page is
    reached from it, directly or through a page it links to."""
    reached, todo = set(), [ROOT / "README.md"]
    while todo:
        doc = todo.pop()
        for link in _links(doc.read_text()):
            target = (doc.parent / link).resolve()
            if target.suffix == ".md" and target.parent == ROOT / "docs" and target.exists() and target not in reached:
                reached.add(target)
                todo.append(target)
    assert any(link.startswith("docs/") for link in _links(README))
    assert not set(PAGES) - reached, f"pages no link from the README reaches: {sorted(p.name for p in set(PAGES) - reached)}"


def test_readme_is_short():
    assert len(README) <= README_LIMIT, (
        f"README.md has {len(README)} characters (limit {README_LIMIT}): move detail to a page under docs/")


def test_findings_are_listed_apart_and_not_counted_in_the_headline():
    import pandas as pd

    from dprl.analysis.readme_table import verdict_table

    rows = [("V2", "paper claim", "reproduced"), ("V3", "paper claim", "inconclusive"),
            ("F1", "package finding", "not reproduced"), ("F1", "package finding", "not reproduced")]
    df = pd.DataFrame([{"claim": c, "paper": "tabular", "source": s, "statement": f"statement {c}", "verdict": v,
                        "regime": "reached"} for c, s, v in rows])
    text = verdict_table(df, {"preset": "default", "git_commit": "abcdef0", "date_utc": "2026-11-25"})
    head, found = text.split("Found by this package, not claimed by the papers (not counted above):")
    assert "2 claims of the papers in 2 rows" in head and "**0 not reproduced**" in head and "F1" not in head
    assert "- **F1** (Vietri et al. 2020, tabular RL (PUCB, ε-JDP)): statement F1: 2 not reproduced." in found
