"""claims.md: totals first, one summary row per claim, then the rows."""

import dataclasses

import numpy as np
import pytest
import pandas as pd

from dprl.analysis.claims import COLUMNS, to_markdown


def _row(claim, verdict, regime="n/a", need=np.nan, calibration="tight", source="paper claim"):
    base = dict.fromkeys(COLUMNS, "")
    return {**base, "claim": claim, "paper": "lq", "source": source, "epsilon": 1.0, "statement": f"statement of {claim}", "expected": "<= 0.6",
            "calibration": calibration, "measured": 0.5, "ci_low": 0.4, "ci_high": 0.6, "verdict": verdict,
            "regime": regime, "horizon_needed": need, "note": "a note"}


def test_totals_then_one_summary_row_per_claim_then_the_rows():
    df = pd.DataFrame([_row("C2", "reproduced", "reached"), _row("C2", "inconclusive", "not reached", 2.25e7, "paper"),
                       _row("M1", "reproduced")], columns=COLUMNS)
    lines = to_markdown(df).splitlines()
    assert lines[0].startswith("Verdicts of 3 rows (2 claims of the papers): **2 reproduced**")
    assert "1 of the inconclusive rows were measured outside their regime" in lines[0]
    start = lines.index("## One row per claim")
    end = next(i for i in range(start + 1, len(lines)) if lines[i].startswith("## "))
    summary = [ln for ln in lines[start:end] if ln.startswith("| **")]
    assert [ln.split(" | ")[0] for ln in summary] == ["| **C2**", "| **M1**"]
    assert "1 reproduced, 1 inconclusive" in summary[0] and "2.25e+07" in summary[0]
    rows = lines[lines.index("## Rows"):]
    assert sum(ln.startswith("| C2 |") for ln in rows) == 2 and sum(ln.startswith("| M1 |") for ln in rows) == 1
    assert lines.index("## One row per claim") < lines.index("## Rows")
    assert all("statement of" not in ln for ln in rows)  # the statement is in the summary only
    assert all(ln.split(" | ")[2] == "1" for ln in rows if ln.startswith("| C2 |"))  # the ε column


def _sections(text: str) -> tuple[str, str]:
    """``claims.md`` before the package's findings, and the findings section alone (the
    planted bugs after it may name plug-ins)."""
    claims_part, rest = text.split("## Package findings (not claims of the papers; not counted above)")
    return claims_part, rest.split("## What would flip each verdict")[0]


def test_findings_are_reported_apart_and_never_counted():
    df = pd.DataFrame([_row("C2", "reproduced", "reached"), _row("F1", "not reproduced", "reached", source="package finding"),
                       _row("F1", "reproduced", "reached", source="package finding")], columns=COLUMNS)
    text = to_markdown(df)
    head = text.splitlines()[0]
    assert head.startswith("Verdicts of 1 rows (1 claims of the papers): **1 reproduced**, **0 inconclusive**, **0 not reproduced**")
    assert "2 rows of this package's own findings follow" in head
    claims_part, findings_part = _sections(text)
    assert "F1" not in claims_part and "| **F1** |" in findings_part and findings_part.count("| F1 |") == 2


def test_claim_level_verdicts_follow_the_stated_rule():
    from dprl.analysis.base import claim_verdict

    def rows(*verdicts):
        return pd.DataFrame([_row("X", v) for v in verdicts], columns=COLUMNS)

    assert claim_verdict(rows("reproduced", "reproduced")) == "reproduced"
    assert claim_verdict(rows("reproduced", "inconclusive")) == "inconclusive"
    assert claim_verdict(rows("reproduced", "inconclusive", "not reproduced")) == "not reproduced"
    text = to_markdown(pd.DataFrame([_row("C2", "reproduced"), _row("C2", "not reproduced"), _row("M1", "reproduced")],
                                    columns=COLUMNS))
    assert "Claims: **1 reproduced**, **0 inconclusive**, **1 not reproduced**" in text
    assert "Student's t interval over the per-seed slopes" in text


def test_rows_are_told_apart_by_kind():
    """One-sided rate rows on fixed instances are upper-bound rows, never counted as a rate
    reproduced; the headline counts each kind apart; a claim cannot return an unknown kind."""
    from dprl.analysis.base import KINDS, ClaimResult, kinds_sentence
    from dprl.analysis.claims import all_claims, evaluate

    by_id = {c.id: c for c in all_claims()}
    assert {by_id[i].kind for i in ("V2", "Z2")} == {KINDS[1]}
    assert {by_id[i].kind for i in ("V9", "C2")} == {KINDS[0]}  # two-sided: family hard at T; LQ local minimax
    assert all(c.kind in KINDS for c in all_claims())
    df = pd.DataFrame({"claim": ["V2", "V6", "V6"], "kind": [KINDS[1], KINDS[2], KINDS[2]],
                       "verdict": ["reproduced", "reproduced", "inconclusive"]})
    text = kinds_sentence(df)
    assert "upper bound on a fixed instance 1 (1 reproduced)" in text
    assert "privacy, scaling or lower-bound check 2 (1 reproduced, 1 inconclusive)" in text
    assert "rate on a hard family" not in text  # no such rows: not claimed
    bad = dataclasses.replace(by_id["V1"], compute=lambda t: [ClaimResult.point(0.0, verdict="reproduced", kind="rate")],
                              reads=())
    with pytest.raises(ValueError, match="returned kind 'rate'"):
        evaluate(bad, {})
    row = dataclasses.replace(by_id["V1"], compute=lambda t: [ClaimResult.point(0.0, verdict="reproduced", kind=KINDS[0])],
                              reads=())
    assert evaluate(row, {})[0]["kind"] == KINDS[0]


def test_plugin_rows_sit_under_the_claim_they_test_not_under_the_findings():
    """A plug-in's rows follow the paper's rows of the claim they test, under their own
    statement (which names the plug-in), in claims.md, the HTML report and the README table;
    never in the package's findings, never counted."""
    from dprl.analysis.readme_table import verdict_table
    from dprl.analysis.report_table import claims_html

    mine = "the privacy cost Regret_Mine − Regret_UBEV scales like 1/ε"
    df = pd.DataFrame([_row("V3", "reproduced", "reached"), _row("V3", "inconclusive", "not reached", 3e6, source="plug-in"),
                       _row("V9", "reproduced", "reached"), _row("F1", "not reproduced", "reached", source="package finding")],
                      columns=COLUMNS).assign(paper="tabular")
    df.loc[1, ["statement", "note"]] = [mine, "Mine: exponent in ε"]
    text = to_markdown(df)
    head = text.splitlines()[0]
    assert head.startswith("Verdicts of 2 rows (2 claims of the papers): **2 reproduced**, **0 inconclusive**")
    assert "1 rows measure installed plug-in algorithms: each sits under the claim it tests" in head
    claims_part, findings_part = _sections(text)
    assert mine not in findings_part and "plug-in" not in findings_part and findings_part.count("| F1 |") == 1
    lines = claims_part.splitlines()
    table = lines[lines.index("## One row per claim") + 2:]
    summary = [ln.split(" | ")[0] for ln in table[:next(i for i, ln in enumerate(table) if not ln.startswith("|"))]][2:]
    assert summary == ["| **V3**", "| **V3** (plug-in, not counted)", "| **V9**"]
    plugin_summary = next(ln for ln in lines if ln.startswith("| **V3** (plug-in"))
    assert mine in plugin_summary and "statement of V3" not in plugin_summary and "| 1 inconclusive | inconclusive |" in plugin_summary
    rows = [ln.split(" | ")[0] for ln in lines[lines.index("## Rows"):] if ln.startswith("| ") and not ln.startswith("| claim")]
    assert rows == ["| V3", "| V3 (plug-in)", "| V9"]
    assert "Claims: **2 reproduced**, **0 inconclusive**" in text  # the plug-in's inconclusive row is not counted

    html = claims_html(df)
    apart = html.index("Package findings: measured by this package")
    assert html.index(mine) < html.index("statement of V9") < apart and "V3 (plug-in, not counted)" in html[:apart]
    assert "2 claims, 2 rows" in html

    readme = verdict_table(df, {"preset": "default", "git_commit": "abcdef0", "date_utc": "2026-11-25"})
    plugged, found = readme.split("Found by this package, not claimed by the papers (not counted above):")
    assert f"- **V3** (Vietri et al. 2020, tabular RL (PUCB, ε-JDP), plug-in): {mine}: 1 inconclusive." in plugged
    assert "2 claims of the papers in 2 rows" in plugged and mine not in found and "- **F1** (" in found
