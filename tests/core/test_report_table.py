"""The claims table as HTML (the report's Claims page): rows, order and colours."""

import re

import numpy as np
import pandas as pd
import pytest

from dprl.analysis.claims import COLUMNS
from dprl.analysis.report_table import VERDICT_COLOURS, claims_html, verdict_totals


def _frame() -> pd.DataFrame:
    rows = [
        # claim, calibration, measured, ci, verdict, regime, horizon
        ("V2", "tight", 0.52, (0.48, 0.56), "reproduced", "reached", np.nan),
        ("V2", "paper", 1.0, (0.99, 1.01), "inconclusive", "not reached", 4.9e7),
        ("C1", "both", 0.7, (0.6, 0.8), "not reproduced", "n/a", np.nan),
    ]
    out = []
    for claim, cal, m, (lo, hi), verdict, regime, horizon in rows:
        out.append({"claim": claim, "paper": "tabular" if claim == "V2" else "lq",
                    "statement": f"statement of {claim} with <markup> & |S|", "experiment": "e", "metric": "slope",
                    "expected": "<= 0.6", "calibration": cal, "measured": m, "ci_low": lo, "ci_high": hi,
                    "verdict": verdict, "regime": regime, "horizon_needed": horizon, "note": f"note {claim} {cal}",
                    "figure": "fig_" + claim})
    return pd.DataFrame(out, columns=COLUMNS)


def _rows(html: str) -> list[str]:
    return re.findall(r'<tr class="(claim|detail)">(.*?)</tr>', html, flags=re.S)


def _cells(row: str) -> list[str]:
    return re.findall(r"<td[^>]*>(.*?)</td>", row, flags=re.S)


def test_one_summary_row_per_claim_above_its_detail_rows():
    rows = _rows(claims_html(_frame()))
    assert [kind for kind, _ in rows] == ["claim", "detail", "detail", "claim", "detail"]
    first = _cells(rows[0][1])
    assert first[0] == "V2" and "statement of V2" in first[2]
    assert "1 reproduced" in first[5] and "1 inconclusive" in first[5]
    assert "1 reached" in first[6] and "1 not reached" in first[6]
    assert first[7] == "4.9e+07"  # the horizon the row outside its regime needs
    detail = _cells(rows[2][1])
    assert detail[1] == "paper" and detail[4] == "1 [0.99, 1.01]"
    assert detail[5:8] == ["inconclusive", "not reached", "4.9e+07"]


def test_verdicts_are_coloured():
    html = claims_html(_frame())
    rows = _rows(html)
    for (_kind, row), verdict in zip([rows[1], rows[2], rows[4]], ["reproduced", "inconclusive", "not reproduced"]):
        assert f'<td style="background:{VERDICT_COLOURS[verdict]}">{verdict}</td>' in row
    # a claim with one verdict colours its whole verdict cell; mixed verdicts colour each count
    assert f'<td style="background:{VERDICT_COLOURS["not reproduced"]}">' in rows[3][1]
    assert 'background:' not in _cells(rows[0][1])[0] and rows[0][1].count("<span") == 2
    assert len(set(VERDICT_COLOURS.values())) == 3


def test_text_is_escaped_and_totals_are_stated():
    html = claims_html(_frame())
    assert "&lt;markup&gt; &amp; |S|" in html and "<markup>" not in html
    assert verdict_totals(_frame()) == {"reproduced": 1, "inconclusive": 1, "not reproduced": 1}
    assert "2 claims, 3 rows" in html


def test_a_verdict_outside_the_three_is_counted_and_grey():
    df = _frame()
    df.loc[2, "verdict"] = "n/a"
    assert verdict_totals(df)["n/a"] == 1 and verdict_totals(df)["not reproduced"] == 0
    assert '<td style="background:#e0e0e0">n/a</td>' in claims_html(df)


@pytest.mark.parametrize("missing", ["regime", "horizon_needed"])
def test_the_regime_columns_are_required(missing):
    with pytest.raises(KeyError):
        claims_html(_frame().drop(columns=missing))


def test_report_pages_keep_n_a_as_text(tmp_path):
    """A non-private row's calibration and a row's regime are "n/a" in claims.csv: the report
    pages show "n/a", never "nan" (a plain read_csv turns "n/a" into NaN)."""
    import json

    from dprl.analysis.report_pages import write_report_pages

    df = _frame()
    df.loc[2, "calibration"] = "n/a"
    df.to_csv(tmp_path / "claims.csv", index=False)
    (tmp_path / "manifest.json").write_text(json.dumps({"preset": "smoke", "git_commit": "abc", "cores": 2}))
    write_report_pages(str(tmp_path / "claims.csv"), str(tmp_path / "manifest.json"), "workflow/report/workflow.rst",
                       str(tmp_path / "claims.html"), str(tmp_path / "landing.rst"))
    html = (tmp_path / "claims.html").read_text()
    assert "nan" not in re.findall(r"<td[^>]*>([^<]*)</td>", html)
    assert ">n/a</td>" in html


def test_each_claim_shows_the_planted_bugs_that_would_flip_it():
    html = claims_html(_frame())
    bugs = re.findall(r'<tr class="bugs">(.*?)</tr>', html, flags=re.S)
    assert len(bugs) == 2  # one under V2's rows, one under C1's
    assert "Would flip on" in bugs[0] and "tests/tabular/test_regime.py::test_v2_inside_the_regime_can_fail" in bugs[0]
    assert "test_noise_cut_10x_in_the_built_agent" in bugs[1]
    unknown = _frame().assign(claim="X9")
    assert '<tr class="bugs">' not in claims_html(unknown)
