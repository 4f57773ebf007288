"""The later papers' regret claims, declared through dprl's entry-point group ``dprl.claims``
(rows in the claims table's section "beyond the four papers", never counted in the four
papers' totals).

Each regret bound is judged by the rule dprl applies to any tabular algorithm on the
Figure 1 family hard at T (claim V9 of Vietri et al. 2020, which every ε-JDP algorithm
meets from below by Theorem 6): a log-log slope of regret at T whose 95% interval lies in
[0.4, 0.6] on the tuned family, measurably below uniform play, only a decade past the
algorithm's measured onset (else "not reached"), a seed that never learns fails the row.
On a family tuned to T, √T from above is what both bounds give: the √(SAH³T) against
√(SAH²T) difference is in H, which the family's fixed H does not resolve, so the claims
read the rate, not the H power. The rows are V9's rows of the algorithm, restated with the
later paper's statement; an algorithm the run did not put in ``tabular_hard`` gets one
inconclusive row saying so.
"""

from __future__ import annotations

import dataclasses

from dprl.analysis.base import Claim, ClaimResult, PlantedBug, Tables
from dprl.analysis.claims.tabular import CLAIMS as TABULAR_CLAIMS
from dprl.analysis.claims.tabular import V9_ROWS

# the paper module's declaration, not the registry's (which loads this module)
_RATE = next(c for c in TABULAR_CLAIMS if c.id == "V9")
# the experiment that runs the later algorithms on the Figure 1 family hard at T (config.yaml); V9's
# family rows (gap scale >= 10, the T inside the regime, below uniform play) read it instead of tabular_hard
BEYOND_HARD = "beyond_hard"
_RATE_HERE = dataclasses.replace(_RATE, reads=(BEYOND_HARD,), optional=(),
                                 rows=dataclasses.replace(V9_ROWS, tables=(BEYOND_HARD,)))


def _rate_rows(algorithm: str, label: str):
    """``compute`` of a later paper's regret claim: V9's rows of ``algorithm``."""

    def compute(tables: Tables) -> list[ClaimResult]:
        rows = [r for r in _RATE_HERE.evaluate(tables) if r.algorithm == algorithm]
        if rows:
            return rows
        return [ClaimResult(verdict="inconclusive", algorithm=algorithm,
                            note=f"{label} is not among {BEYOND_HARD}'s algorithms in this run: add "
                                 f"{{name: {algorithm}}} to its algorithms in config.yaml")]

    return compute


_WHY = "the rows are claim V9's rule applied to this algorithm (tuned family, regime, below uniform play)"
_NON_LEARNER = PlantedBug(
    "V9's rule finds the algorithm's regret growing like T (a non-learner: V9's plug-in rows of a plug-in at uniform "
    "play in real jobs, tests/tabular/test_non_learners.py): the later claim's row is not reproduced",
    "tests/core/test_beyond_claims.py::test_the_later_regret_claims_are_v9s_rule_on_their_algorithm")


def _rate_claim(cid: str, paper: str, statement: str, algorithm: str, label: str) -> Claim:
    """A later paper's regret claim about ``algorithm``, judged by V9's rule (module docstring)."""
    return Claim(id=cid, paper=paper, beyond=True, statement=statement, reads=_RATE_HERE.reads, optional=(),
                 metric=_RATE.metric, expected=_RATE.expected, compute=_rate_rows(algorithm, label), why_code=_WHY,
                 figure=_RATE.figure, kind=_RATE.kind, planted_bugs=(_NON_LEARNER,))


CLAIMS = (
    _rate_claim("L1", "Chowdhury & Zhou 2022 (AAAI), Private-UCB-VI",
                "Private-UCB-VI's regret is Õ(√(SAH³T) + S²AH³/ε) under ε-JDP: on the Figure 1 family hard at T it "
                "grows like √T", "private_ucb_vi", "Private-UCB-VI"),
    _rate_claim("L2", "Qiao & Wang 2023 (AISTATS), DP-UCBVI",
                "DP-UCBVI's regret is Õ(√(SAH²T) + S²AH³/ε) under ε-JDP: on the Figure 1 family hard at T it grows "
                "like √T", "dp_ucbvi", "DP-UCBVI"),
)
