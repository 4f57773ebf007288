"""Declarations of claims, collected per paper (figures: :mod:`dprl.analysis.figures.catalog`).

``Tables`` maps an experiment name (its key in ``config.yaml``) to its aggregated tidy
table (``results/<preset>/tables/<experiment>.csv``). Aggregated tables carry identity
columns (``experiment, kind, algorithm, alg_label, environment, env_label,
privacy_label, epsilon, delta, calibration, seed``), every algorithm parameter as
``alg.<name>``, every environment parameter as ``env.<name>``, then the job's own columns.
Non-private jobs have ``epsilon = inf``, ``delta`` empty and ``calibration = "none"``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
import pandas as pd

from dprl.analysis.stats import Estimate

Tables = Mapping[str, pd.DataFrame]
Verdict = Literal["reproduced", "not reproduced", "inconclusive"]
VERDICTS = ("reproduced", "not reproduced", "inconclusive")
Regime = Literal["reached", "not reached", "n/a"]
REGIMES = ("reached", "not reached", "n/a")
# The order totals are stated in (README, report, claims.md, figure titles): the good news,
# the open questions, the findings.
TOTALS_ORDER = ("reproduced", "inconclusive", "not reproduced")


# A row is a claim of a paper, or a finding of this package about a paper (e.g. about its
# printed constants): findings are reported apart and never counted against the paper.
# who a row is about: the paper's own claim; a finding of this package about the paper; a
# plug-in algorithm measured against a claim that applies to any algorithm of its setting.
# Only the first is counted as the papers' claims; the others are reported apart.
SOURCES = ("paper claim", "package finding", "plug-in")


# What a row can show (src/dprl/README.md, "Claims"). A rate is reproduced only two-sided on
# a minimax-hard family, whose gap shrinks with the horizon; on a fixed, gapped instance the
# regret saturates after the burn-in, so a one-sided test there shows only that the upper
# bound holds (any sublinear curve passes it). Everything else checks privacy, a scaling in
# ε, δ, S, A, d or m, or a lower bound.
KINDS = ("rate on a hard family", "upper bound on a fixed instance", "privacy, scaling or lower-bound check")


def kind_totals(claims: pd.DataFrame) -> dict[str, dict[str, int]]:
    """Per kind of row (:data:`KINDS`, those present): its verdict totals."""
    if "kind" not in claims:
        return {}
    return {k: verdict_totals(claims[claims["kind"] == k]) for k in KINDS if (claims["kind"] == k).any()}


def row_kinds(rows: pd.DataFrame) -> str:
    """The kinds of a claim's rows, in order of appearance (``""`` for a table without them)."""
    return ", ".join(dict.fromkeys(rows["kind"].dropna().astype(str))) if "kind" in rows else ""


def kinds_sentence(claims: pd.DataFrame) -> str:
    """``By kind of row: rate on a hard family 3 (2 reproduced, 1 inconclusive); ...``."""
    parts = [f"{k} {sum(t.values())} ({', '.join(f'{n} {v}' for v, n in t.items() if n)})"
             for k, t in kind_totals(claims).items()]
    return "By kind of row: " + "; ".join(parts) + "." if parts else ""


def paper_claims(claims: pd.DataFrame) -> pd.DataFrame:
    """The rows of a claims table that are claims of the papers (all rows of a table
    written before findings had their own ``source``)."""
    return claims[~claims["source"].isin(SOURCES[1:])] if "source" in claims else claims


def findings(claims: pd.DataFrame) -> pd.DataFrame:
    """The rows reported apart from the papers' claims: the package's findings, then the
    plug-ins' rows."""
    if "source" not in claims:
        return claims.iloc[0:0]
    return pd.concat([claims[claims["source"] == src] for src in SOURCES[1:]])


def verdict_totals(claims: pd.DataFrame) -> dict[str, int]:
    """Rows of a claims table per verdict, in :data:`TOTALS_ORDER` (zeros included), then
    any other value present (e.g. ``n/a``)."""
    counts = claims["verdict"].value_counts()
    extra = sorted(v for v in counts.index if v not in TOTALS_ORDER)
    return {v: int(counts.get(v, 0)) for v in (*TOTALS_ORDER, *extra)}


CLAIM_RULE = ("a claim is not reproduced when any of its rows is not reproduced, reproduced when all its rows "
              "are reproduced, inconclusive otherwise (rows outside their regime are inconclusive)")


def claim_verdict(rows: pd.DataFrame) -> str:
    """One verdict for a claim from its rows (:data:`CLAIM_RULE`): one row that refutes it
    inside its regime refutes the claim; it is reproduced only when every row is."""
    verdicts = set(rows["verdict"])
    if "not reproduced" in verdicts:
        return "not reproduced"
    return "reproduced" if verdicts == {"reproduced"} else "inconclusive"


def claim_verdicts(claims: pd.DataFrame) -> dict[str, int]:
    """Claims (not rows) per :func:`claim_verdict`, in :data:`TOTALS_ORDER`."""
    per = [claim_verdict(g) for _, g in claims.groupby("claim", sort=False)]
    return {v: per.count(v) for v in TOTALS_ORDER}


def outside_regime(claims: pd.DataFrame) -> int:
    """Inconclusive rows measured outside their regime (src/dprl/README.md, "Regimes")."""
    if "regime" not in claims:
        return 0
    return int(((claims["verdict"] == "inconclusive") & (claims["regime"] == "not reached")).sum())


def overall_regime(parts: Sequence[tuple[str, float]]) -> tuple[Regime, float]:
    """Regime of a row measured over several curves or grid points, each ``(regime,
    horizon_needed)``: ``n/a`` when none has regime columns, ``reached`` when every one
    that has them is reached, else ``not reached`` with the largest horizon needed among
    the parts not reached (one part still in its burn-in makes a rate unmeasured)."""
    states = {regime for regime, _ in parts}
    if states == {"n/a"}:
        return "n/a", float("nan")
    if states <= {"reached", "n/a"}:
        return "reached", float("nan")
    return "not reached", float(np.nanmax([need for regime, need in parts if regime == "not reached"]))


@dataclass
class ClaimResult:
    """The measured side of one claims-table row (one row per calibration if relevant)."""

    measured: float
    ci_low: float
    ci_high: float
    verdict: Verdict
    calibration: str = "n/a"  # "paper", "tight", "both", "n/a"
    note: str = ""  # what was measured, in words (units, grid, fit)
    # src/dprl/README.md, "Regimes": whether the measurement lies where the theory applies
    regime: Regime = "n/a"
    horizon_needed: float = float("nan")  # episodes (or ε·m) the regime needs, if not reached
    # the privacy level the row is about: its ε, or the smallest ε of a fit over several
    # (the most private point, whose regime decides the row's); NaN for non-private rows
    epsilon: float = float("nan")
    kind: str | None = None  # one of KINDS when this row differs from its claim's kind
    algorithm: str | None = None  # the algorithm the row measures (a plug-in's rows are reported apart)

    @classmethod
    def from_estimate(
        cls, est: Estimate, verdict: Verdict, calibration: str, note: str, regime: Regime = "n/a",
        horizon_needed: float = float("nan"), epsilon: float = float("nan"), kind: str | None = None,
        algorithm: str | None = None,
    ) -> ClaimResult:
        return cls(est.value, est.low, est.high, verdict, calibration, note, regime, horizon_needed, float(epsilon), kind,
                   algorithm)

    def outside_regime_is_inconclusive(self) -> ClaimResult:
        """A rate measured outside its regime (where the theory applies) can neither refute
        nor confirm the claim: either verdict becomes ``inconclusive``, with the verdict it
        would have had and the horizon it needs."""
        if self.regime == "not reached" and self.verdict != "inconclusive":
            need = f"; needs about {self.horizon_needed:.3g}" if self.horizon_needed == self.horizon_needed else ""
            return dataclasses.replace(self, verdict="inconclusive",
                                       note=f"{self.note} [measured outside its regime{need}: would be {self.verdict}]")
        return self


@dataclass(frozen=True)
class PlantedBug:
    """A plausible bug that would flip a claim's verdict, and the test that plants it and
    sees the flip (``test``: a pytest node id, ``tests/<path>.py::<function>``). Each paper's
    claims module lists them in ``PLANTED_BUGS`` by claim id; ``claims.md`` prints them, and
    ``tests/core/test_planted_bugs.py`` checks that every claim has one and every test exists.
    A verdict is worth what it could have been otherwise."""

    bug: str
    test: str


@dataclass(frozen=True)
class Claim:
    id: str
    paper: str
    statement: str
    experiments: tuple[str, ...]  # tables it reads; missing ones make it inconclusive
    metric: str
    expected: str
    evaluate: Callable[[Tables], list[ClaimResult]]
    figure: str | None = None  # figure id that shows it
    finding: bool = False  # a finding of this package, not a claim of the paper (see SOURCES)
    kind: str = KINDS[2]  # what its rows can show (KINDS); a row may override it

    @property
    def source(self) -> str:
        return SOURCES[1] if self.finding else SOURCES[0]
