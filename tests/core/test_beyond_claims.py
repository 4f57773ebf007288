"""Claims of later papers join through the entry-point group ``dprl.claims``: their rows keep
their own source, have a section of their own in claims.md, the HTML report and the README
list, and are never counted in the four papers' totals."""

from __future__ import annotations

import sys
import types
from importlib.metadata import EntryPoint

import numpy as np
import pandas as pd
import pytest

import dprl.analysis.claims as claims_registry
from dprl.analysis.base import SOURCES, Claim, ClaimResult, beyond_papers, by_claim, paper_claims
from dprl.analysis.claims import COLUMNS, claims_table, to_markdown
from dprl.analysis.readme_table import verdict_table
from dprl.analysis.report_table import claims_html

PAPER = "Later et al. 2031 (a test paper)"


def _later_claim(beyond: bool = True) -> Claim:
    def compute(tables):
        slope = float(tables["later_regret"]["slope"].iloc[0])
        verdict = "reproduced" if slope <= 0.6 else "not reproduced"
        return [ClaimResult(verdict=verdict, measured=slope, ci_low=slope - 0.05, ci_high=slope + 0.05,
                            regime="reached", algorithm="later_alg")]

    return Claim(id="L9", paper=PAPER, statement="regret grows like sqrt(T)", metric="slope", expected="<= 0.6",
                 reads=("later_regret",), compute=compute, why_code="a test claim", beyond=beyond)


@pytest.fixture
def installed(monkeypatch):
    """One installed package declaring one later claim (restores the registry after)."""
    def install(obj):
        mod = types.ModuleType("later_claims_pkg")
        mod.CLAIMS = obj
        monkeypatch.setitem(sys.modules, "later_claims_pkg", mod)
        ep = EntryPoint("later", "later_claims_pkg:CLAIMS", claims_registry.CLAIMS_ENTRY_POINT_GROUP)
        real = claims_registry.entry_points

        def fake(group=None, **kw):
            return [ep] if group == claims_registry.CLAIMS_ENTRY_POINT_GROUP else real(group=group, **kw)

        monkeypatch.setattr(claims_registry, "entry_points", fake)
        claims_registry.all_claims.cache_clear()
        claims_registry.planted_bugs.cache_clear()

    yield install
    monkeypatch.undo()
    claims_registry.all_claims.cache_clear()
    claims_registry.planted_bugs.cache_clear()


def test_a_later_claim_is_evaluated_apart_and_never_counted(installed):
    installed((_later_claim(),))
    table = claims_table({"later_regret": pd.DataFrame({"slope": [0.9]})}, papers=(PAPER,))
    assert list(table["source"]) == [SOURCES[3]] and table["verdict"].iloc[0] == "not reproduced"
    assert table["statement"].iloc[0] == "regret grows like sqrt(T)"  # not rewritten as a plug-in row
    assert paper_claims(table).empty and by_claim(table).empty and len(beyond_papers(table)) == 1


def _with_a_paper_row(later: pd.DataFrame) -> pd.DataFrame:
    paper = {**dict.fromkeys(COLUMNS, ""), "claim": "C2", "paper": "lq", "source": SOURCES[0], "epsilon": 1.0,
             "measured": 0.5, "ci_low": 0.4, "ci_high": 0.6, "verdict": "reproduced", "regime": "reached",
             "horizon_needed": np.nan, "statement": "paper statement", "expected": "<= 0.6"}
    return pd.concat([pd.DataFrame([paper], columns=COLUMNS), later], ignore_index=True)


def test_the_reports_give_later_claims_a_section_of_their_own(installed):
    installed(_later_claim())
    table = _with_a_paper_row(claims_table({"later_regret": pd.DataFrame({"slope": [0.5]})}, papers=(PAPER,)))
    md = to_markdown(table)
    assert md.splitlines()[0].startswith("Verdicts of 1 rows (1 claims of the papers)")
    head, section = md.split("## Beyond the four papers (claims of later papers; not counted above)")
    assert "| **L9** |" not in head and "| **L9** |" in section and "| L9 |" in section
    assert "Beyond the four papers" in claims_html(table)
    readme = verdict_table(table, {"preset": "default", "git_commit": "0" * 40, "date_utc": "2026-12-02"})
    assert f"- **L9** ({PAPER}): regret grows like sqrt(T): 1 reproduced; claim reproduced." in readme
    assert "1 claims of the papers in 1 rows" in readme


def test_a_package_may_not_declare_a_papers_claim(installed):
    installed(_later_claim(beyond=False))
    with pytest.raises(RuntimeError, match="must be declared with beyond=True"):
        claims_registry.all_claims()


def test_a_broken_declaration_names_its_entry_point(installed):
    installed("not a claim")
    with pytest.raises(RuntimeError, match=r"claims entry point later = later_claims_pkg:CLAIMS .* holds a str"):
        claims_registry.all_claims()


def test_the_later_regret_claims_are_v9s_rule_on_their_algorithm(monkeypatch):
    """L1 and L2 (declared by this repository's dprl_beyond package) are V9's rows of
    Private-UCB-VI and DP-UCBVI on beyond_hard (not on the papers' tabular_hard); an algorithm
    the run did not put there gets one inconclusive row saying how to add it."""
    import dprl_beyond.claims as later

    ids = [c.id for c in claims_registry.all_claims()]
    assert {"L1", "L2", "L3"} <= set(ids)
    assert all(c.beyond for c in claims_registry.all_claims() if c.id in ("L1", "L2", "L3"))

    class FakeV9:
        def evaluate(self, tables):
            return [ClaimResult(verdict="not reproduced", measured=1.0, algorithm=self.algorithm, regime="reached"),
                    ClaimResult(verdict="reproduced", measured=0.5, algorithm="pucb", regime="reached")]

    l1, l2 = (c for c in later.CLAIMS if c.id in ("L1", "L2"))
    assert l1.reads == l2.reads == ("beyond_hard",) and later._RATE_HERE.rows.tables == ("beyond_hard", "beyond_hard_dp")
    for claim_, algorithm, other in ((l1, "private_ucb_vi", "dp_ucbvi"), (l2, "dp_ucbvi", "private_ucb_vi")):
        fake = FakeV9()
        fake.algorithm = algorithm  # V9's rule gives this algorithm a not-reproduced row: so does L1 / L2
        monkeypatch.setattr(later, "_RATE_HERE", fake)
        assert [(r.algorithm, r.verdict) for r in claim_.compute({})] == [(algorithm, "not reproduced")]
        fake.algorithm = other  # the run has no row of the claim's algorithm
        (missing,) = claim_.compute({})
        assert missing.verdict == "inconclusive" and f"{{name: {algorithm}}}" in missing.note
