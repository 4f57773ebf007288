"""The claims table as one HTML page for the Snakemake report (``claims.html``).

Snakemake's report viewer shows images, HTML and PDF inline and every other file as a
download link, so the claims table (``claims.csv``) is rendered here as a self-contained
HTML page: one summary row per claim (its verdicts counted and coloured) above its detail
rows (one per calibration or setting, as in ``claims.csv``), with the ``regime`` and
``horizon_needed`` columns of "Regimes" in src/dprl/README.md.
"""

from __future__ import annotations

from html import escape

import numpy as np
import pandas as pd

from dprl.analysis.base import SOURCES, beyond_papers, by_claim, package_findings, paper_claims, plugin_groups, row_kinds, verdict_totals
from dprl.analysis.claims import _fmt, planted_bugs

# Background colours of the verdicts (and of a verdict that is not one of VERDICTS, e.g.
# "n/a"): green, red, amber, grey; colour-blind readers also get the word in the cell.
VERDICT_COLOURS = {
    "reproduced": "#c8e6c9",
    "not reproduced": "#ffcdd2",
    "inconclusive": "#ffe0b2",
}
OTHER_COLOUR = "#e0e0e0"

HEADER = ("claim", "paper / calibration", "statement / note", "expected", "measured [95% CI]",
          "verdict", "regime", "horizon needed", "figure")

STYLE = """
body { font-family: sans-serif; font-size: 13px; }
table { border-collapse: collapse; width: 100%; }
th, td { border: 1px solid #bbb; padding: 3px 6px; vertical-align: top; text-align: left; }
th { background: #eee; position: sticky; top: 0; }
tr.claim td { border-top: 2px solid #444; font-weight: bold; }
tr.detail td { font-weight: normal; font-size: 12px; }
tr.detail td.note { color: #333; }
tr.bugs td { font-size: 12px; color: #555; }
span.verdict { padding: 0 4px; border-radius: 3px; white-space: nowrap; }
"""


def verdict_colour(verdict: str) -> str:
    return VERDICT_COLOURS.get(verdict, OTHER_COLOUR)


def _chip(verdict: str, count: int | None = None) -> str:
    text = escape(verdict if count is None else f"{count} {verdict}")
    return f'<span class="verdict" style="background:{verdict_colour(verdict)}">{text}</span>'


def _measured(row: pd.Series) -> str:
    ci = ""
    if np.isfinite(row["ci_low"]) or np.isfinite(row["ci_high"]):
        ci = f" [{_fmt(row['ci_low'])}, {_fmt(row['ci_high'])}]"
    return _fmt(row["measured"]) + ci


def _cells(cells: list[str], cls: str, colour: str | None = None) -> str:
    """One table row; ``cells`` are HTML already, the verdict cell (index 5) is coloured."""
    tds = []
    for i, c in enumerate(cells):
        style = f' style="background:{colour}"' if i == 5 and colour else ""
        klass = ' class="note"' if i == 2 and cls == "detail" else ""
        tds.append(f"<td{klass}{style}>{c}</td>")
    return f'<tr class="{cls}">' + "".join(tds) + "</tr>"


def summary_row(claim: str, rows: pd.DataFrame) -> str:
    """The claim's row (or one plug-in's rows of it, ``claim`` saying so): statement, expected
    value, its verdicts counted (coloured), its regimes counted and the largest horizon a row
    outside its regime needs."""
    first = rows.iloc[0]
    totals = {v: n for v, n in verdict_totals(rows).items() if n}
    # one verdict for all rows colours the whole cell; mixed verdicts colour each count
    colour = verdict_colour(next(iter(totals))) if len(totals) == 1 else None
    verdicts = " ".join(_chip(v, n) for v, n in totals.items())
    regimes = ", ".join(f"{n} {escape(r)}" for r, n in rows["regime"].value_counts(sort=False).items())
    horizon = rows.loc[rows["regime"] == "not reached", "horizon_needed"].max()
    return _cells([
        escape(claim), escape(str(first["paper"])),
        escape(str(first["statement"])) + (f" <em>({escape(row_kinds(rows))})</em>" if row_kinds(rows) else ""),
        escape(str(first["expected"])),
        f"{len(rows)} row{'s' if len(rows) != 1 else ''}", verdicts, regimes, _fmt(horizon),
        escape(str(first["figure"] or "")),
    ], "claim", colour)


def bugs_row(claim: str) -> str:
    """What would flip the claim's verdict: its planted bugs and the tests that plant them
    (``PLANTED_BUGS``); empty for a claim the registry does not know."""
    bugs = planted_bugs().get(claim, ())
    if not bugs:
        return ""
    items = "; ".join(f"{escape(b.bug)} (<code>{escape(b.test)}</code>)" for b in bugs)
    return f'<tr class="bugs"><td></td><td colspan="{len(HEADER) - 1}">Would flip on: {items}</td></tr>'


def detail_row(row: pd.Series) -> str:
    return _cells([
        "", escape(str(row["calibration"]) + (f", ε = {_fmt(row['epsilon'])}" if np.isfinite(row.get("epsilon", np.nan)) else "")),
        escape(str(row["note"])), escape(str(row["metric"])),
        escape(_measured(row)), escape(str(row["verdict"])), escape(str(row["regime"])),
        _fmt(row["horizon_needed"]), "",
    ], "detail", verdict_colour(str(row["verdict"])))


def claims_html(df: pd.DataFrame, title: str = "Claims") -> str:
    """A self-contained HTML page of the claims table ``df`` (the columns of
    :data:`dprl.analysis.claims.COLUMNS`), claims in registry order."""
    df = df.fillna({"note": "", "figure": "", "regime": "n/a"})
    shown, found, later, df = by_claim(df), package_findings(df), beyond_papers(df), paper_claims(df)
    totals = ", ".join(_chip(v, n) for v, n in verdict_totals(df).items())
    header = "<tr>" + "".join(f"<th>{escape(h)}</th>" for h in HEADER) + "</tr>"
    body = [header]
    for part in (shown, found, later):
        if part is found and len(found):
            body.append(f'<tr><th colspan="{len(HEADER)}">Package findings: measured by this package about the papers '
                        "(e.g. under their printed constants); not claims of the papers, not counted above</th></tr>")
        if part is later and len(later):
            body.append(f'<tr><th colspan="{len(HEADER)}">Beyond the four papers: claims of later papers, declared with '
                        "their algorithms by installed packages; judged by the same rules, not counted above</th></tr>")
        for claim, rows in part.groupby("claim", sort=False):
            # the paper's rows, then each plug-in's under the claim it tests (its own statement, not counted)
            paper = rows[rows["source"] != SOURCES[2]] if "source" in rows else rows
            groups = [(str(claim), paper)] if len(paper) else []
            groups += [(f"{claim} ({SOURCES[2]}, not counted)", mine) for _, mine in plugin_groups(rows)]
            for label, g in groups:
                body.append(summary_row(label, g))
                body.extend(detail_row(r) for _, r in g.iterrows())
            if bugs := bugs_row(str(claim)):
                body.append(bugs)
    return (
        f'<!DOCTYPE html>\n<html><head><meta charset="utf-8"><title>{escape(title)}</title>'
        f"<style>{STYLE}</style></head><body>\n"
        f"<p>{df['claim'].nunique()} claims, {len(df)} rows: {totals}. Each claim's row (bold) counts the verdicts "
        "of the rows below it (one per calibration or setting). A rate measured outside its regime "
        "(<i>not reached</i>) is inconclusive, with the horizon it needs. "
        + ("An installed plug-in algorithm's rows follow the paper's rows of the claim they test, under the claim's "
           "statement naming the plug-in, judged by the same rule and regime and not counted. "
           if len(shown) > len(df) else "")
        + "Under each claim, the planted bugs that would flip its verdict, each with the test that plants it.</p>\n"
        "<table>\n" + "\n".join(body) + "\n</table>\n</body></html>\n"
    )
