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
from collections.abc import Callable, Iterable, Mapping, Sequence
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
# A claim of one of the four papers; a finding of this package; a plug-in algorithm's row of a
# paper's claim; a claim of a later paper, declared by an installed package through the
# entry-point group ``dprl.claims`` (``dprl.analysis.claims.CLAIMS_ENTRY_POINT_GROUP``).
SOURCES = ("paper claim", "package finding", "plug-in", "beyond the four papers")


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
    """The rows never counted as the papers' claims: the package's findings, then the
    plug-ins' rows."""
    if "source" not in claims:
        return claims.iloc[0:0]
    return pd.concat([claims[claims["source"] == src] for src in SOURCES[1:]])


def package_findings(claims: pd.DataFrame) -> pd.DataFrame:
    """The package's own findings, reported in a section of their own (not claims of the papers)."""
    return claims[claims["source"] == SOURCES[1]] if "source" in claims else claims.iloc[0:0]


def beyond_papers(claims: pd.DataFrame) -> pd.DataFrame:
    """The rows of later papers' claims (declared by installed packages), reported in a
    section of their own and never counted in the four papers' headline."""
    return claims[claims["source"] == SOURCES[3]] if "source" in claims else claims.iloc[0:0]


def by_claim(claims: pd.DataFrame) -> pd.DataFrame:
    """The rows shown under the claims they test, in claim order: each claim's paper rows,
    then its plug-in rows (each plug-in under its own statement, which names it), never
    counted in the papers' totals (:func:`paper_claims` counts); the package's findings
    (:func:`package_findings`) and later papers' claims (:func:`beyond_papers`) are left out."""
    if "source" not in claims:
        return claims
    shown = claims[~claims["source"].isin((SOURCES[1], SOURCES[3]))]
    order = {c: i for i, c in enumerate(dict.fromkeys(shown["claim"]))}
    key = shown["claim"].map(order) * 2 + (shown["source"] == SOURCES[2]).astype(int)
    return shown.iloc[np.argsort(key.to_numpy(), kind="stable")]


def plugin_groups(rows: pd.DataFrame) -> list[tuple[str, pd.DataFrame]]:
    """A claim's plug-in rows of :func:`by_claim`, one group per plug-in (its statement, in
    order of appearance)."""
    mine = rows[rows["source"] == SOURCES[2]] if "source" in rows else rows.iloc[0:0]
    return list(mine.groupby("statement", sort=False))


def verdict_totals(claims: pd.DataFrame) -> dict[str, int]:
    """Rows of a claims table per verdict, in :data:`TOTALS_ORDER` (zeros included), then
    any other value present (e.g. ``n/a``)."""
    counts = claims["verdict"].value_counts()
    extra = sorted(v for v in counts.index if v not in TOTALS_ORDER)
    return {v: int(counts.get(v, 0)) for v in (*TOTALS_ORDER, *extra)}


CLAIM_RULE = ("a claim is not reproduced when any of its rows is not reproduced, reproduced when all its rows "
              "are reproduced, inconclusive otherwise (rows outside their regime are inconclusive)")


def combine_verdicts(verdicts: Iterable[str]) -> Verdict:
    """One verdict of several parts (a claim's rows, a row's halves; :data:`CLAIM_RULE`): one
    part not reproduced refutes the whole; it is reproduced only when every part is (and
    there is at least one); inconclusive otherwise."""
    verdicts = set(verdicts)
    if "not reproduced" in verdicts:
        return "not reproduced"
    return "reproduced" if verdicts == {"reproduced"} else "inconclusive"


def claim_verdict(rows: pd.DataFrame) -> str:
    """One verdict for a claim from its rows (:func:`combine_verdicts`): one row that
    refutes it inside its regime refutes the claim; it is reproduced only when every row is."""
    return combine_verdicts(rows["verdict"])


def claim_verdicts(claims: pd.DataFrame) -> dict[str, int]:
    """Claims (not rows) per :func:`claim_verdict`, in :data:`TOTALS_ORDER`."""
    per = [claim_verdict(g) for _, g in claims.groupby("claim", sort=False)]
    return {v: per.count(v) for v in TOTALS_ORDER}


def outside_regime(claims: pd.DataFrame) -> int:
    """Inconclusive rows measured outside their regime (src/dprl/README.md, "Regimes")."""
    if "regime" not in claims:
        return 0
    return int(((claims["verdict"] == "inconclusive") & (claims["regime"] == "not reached")).sum())


# A regime check's state for a run past the horizon the theory gives whose burn-in did not end
# (RegimeCheck.not_learned); the claims table shows it as "reached".
NOT_LEARNED = "not learned"
NOT_LEARNED_WORDS = "not reproduced: did not learn within the horizon the theory gives"


@dataclass(frozen=True)
class RegimeCheck:
    """Whether a measurement lies where the theory applies (src/dprl/README.md, "Regimes"):
    the one shape every paper's regime check returns.

    Attributes:
        state: ``reached`` (a rate measured there counts), ``not reached`` (the row is
            inconclusive, with :attr:`horizon_needed`), or ``n/a`` (no regime: no burn-in
            is predicted or recorded, e.g. a lower bound, or a table without the columns).
        horizon_needed: episodes (or ε·m) the regime needs when not reached; NaN otherwise.
        fit_start: where a rate's fit starts (the last decade, or the measured onset); NaN
            where the row fits nothing.
        note: the row's words on its regime, appended to its note (``"; regime: ..."``).
        not_learned: the run is past the horizon the theory gives (a decade past its
            predicted burn-in times :data:`dprl.analysis.burn_in.BURN_IN_MARGIN`) and its own
            burn-in did not end: evidence against the claim, not an escape. Its state is
            ``reached`` (the horizon was enough), and every row built on it is ``not
            reproduced`` (:meth:`ClaimResult.from_estimate`). Build it with state
            :data:`NOT_LEARNED`.
    """

    state: Regime = "n/a"
    horizon_needed: float = float("nan")
    fit_start: float = float("nan")
    note: str = ""
    not_learned: bool = False

    def __post_init__(self) -> None:
        if self.state == NOT_LEARNED:  # the regime's words for "reached, and did not learn"
            object.__setattr__(self, "state", "reached")
            object.__setattr__(self, "not_learned", True)
        if self.state not in REGIMES:
            raise ValueError(f"regime {self.state!r} is not one of {REGIMES}")

    @property
    def reached(self) -> bool:
        return self.state == "reached"


def overall_regime(parts: Sequence[RegimeCheck]) -> RegimeCheck:
    """Regime of a row measured over several curves or grid points: ``n/a`` when none has
    regime columns, ``reached`` when every one that has them is reached, else ``not
    reached`` with the largest horizon needed among the parts not reached (one part still in
    its burn-in makes a rate unmeasured). One part that did not learn within the horizon the
    theory gives (:attr:`RegimeCheck.not_learned`) makes the whole not learned: it refutes a
    rate whatever the other parts do. The note and fit start are the parts' own business."""
    states = {p.state for p in parts}
    if any(p.not_learned for p in parts):
        return RegimeCheck(NOT_LEARNED, note=next(p.note for p in parts if p.not_learned))
    if states == {"n/a"}:
        return RegimeCheck("n/a")
    if states <= {"reached", "n/a"}:
        return RegimeCheck("reached")
    return RegimeCheck("not reached", float(np.nanmax([p.horizon_needed for p in parts if p.state == "not reached"])))


@dataclass(kw_only=True)
class ClaimResult:
    """The measured side of one claims-table row; built by keyword.

    Attributes:
        verdict: ``reproduced``, ``not reproduced`` or ``inconclusive`` (:data:`VERDICTS`),
            from a rule of :mod:`dprl.analysis.stats`.
        measured, ci_low, ci_high: the statistic and its 95% interval (NaN when nothing
            was measured; a point check such as an audit ratio has ``low = high = value``).
        calibration: ``paper``, ``tight``, ``both``, ``n/a``, or a label that says what it is.
        note: what was measured, in words (units, grid, fit, regime).
        regime, horizon_needed: the row's :class:`RegimeCheck` state and the horizon it
            needs (src/dprl/README.md, "Regimes").
        epsilon: the privacy level the row is about: its ε, or the smallest ε of a fit
            over several (the most private point, whose regime decides the row's); NaN for
            non-private rows.
        kind: one of :data:`KINDS` when this row differs from its claim's kind.
        algorithm: the algorithm the row measures (a plug-in's rows are reported apart).
    """

    verdict: Verdict
    measured: float = float("nan")
    ci_low: float = float("nan")
    ci_high: float = float("nan")
    calibration: str = "n/a"
    note: str = ""
    regime: Regime = "n/a"
    horizon_needed: float = float("nan")
    epsilon: float = float("nan")
    kind: str | None = None
    algorithm: str | None = None

    @classmethod
    def from_estimate(cls, est: Estimate, *, verdict: Verdict, check: RegimeCheck | None = None, **fields) -> ClaimResult:
        """A row of an estimate (its value and interval) and, given ``check``, its regime. A
        check that did not learn within the horizon the theory gives makes the row ``not
        reproduced`` whatever ``verdict`` is (:attr:`RegimeCheck.not_learned`)."""
        if check is not None:
            fields |= {"regime": check.state, "horizon_needed": check.horizon_needed}
            if check.not_learned and verdict != "not reproduced":
                fields["note"] = f"{fields.get('note', '')} [{NOT_LEARNED_WORDS}; the rule alone: {verdict}]"
                verdict = "not reproduced"
        if "epsilon" in fields:
            fields["epsilon"] = float(fields["epsilon"])
        return cls(measured=est.value, ci_low=est.low, ci_high=est.high, verdict=verdict, **fields)

    @classmethod
    def point(cls, value: float, *, verdict: Verdict, **fields) -> ClaimResult:
        """A row of one number without an interval (an audit's worst ratio, a count)."""
        return cls(measured=value, ci_low=value, ci_high=value, verdict=verdict, **fields)

    @classmethod
    def inconclusive(cls, reason: str, **fields) -> ClaimResult:
        """A row that measured nothing, and why (a missing grid point, too few values)."""
        return cls(verdict="inconclusive", note=reason, **fields)

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
    sees the flip (``test``: a pytest node id, ``tests/<path>.py::<function>``). Each claim
    declares its own (:attr:`Claim.planted_bugs`); ``claims.md`` prints them, and
    ``tests/core/test_planted_bugs.py`` checks that every claim has one and every test exists.
    A verdict is worth what it could have been otherwise."""

    bug: str
    test: str


class UndeclaredTableError(KeyError):
    """A claim read a table it does not declare (:attr:`Claim.reads` or :attr:`Claim.optional`):
    its missing-table check could not have seen that table go missing."""


class DeclaredTables(Mapping[str, pd.DataFrame]):
    """The tables a claim may read: the run's tables seen through the claim's declaration.
    Reading (or asking for) any other name raises :class:`UndeclaredTableError`; a declared
    table the run did not produce is simply absent."""

    def __init__(self, tables: Tables, declared: Sequence[str], claim: str) -> None:
        self._tables, self._declared, self._claim = tables, tuple(declared), claim

    def _check(self, name: object) -> None:
        if name not in self._declared:
            raise UndeclaredTableError(f"claim {self._claim} read table {name!r}, which it does not declare "
                                       f"(declared: {', '.join(self._declared)})")

    def __getitem__(self, name: str) -> pd.DataFrame:
        self._check(name)
        return self._tables[name]

    def __contains__(self, name: object) -> bool:
        self._check(name)
        return name in self._tables

    def get(self, name: str, default: pd.DataFrame | None = None) -> pd.DataFrame | None:
        # Mapping.get would swallow the KeyError this raises: an undeclared name must not read as absent
        self._check(name)
        return self._tables.get(name, default)

    def __iter__(self):
        return (n for n in self._declared if n in self._tables)

    def __len__(self) -> int:
        return sum(1 for _ in self)


@dataclass(frozen=True)
class Group:
    """One group of a :class:`Rows` declaration, as its note and epsilon see it: the table it
    came from (``table``, and all its rows ``table_rows``, for a note that compares the group
    with rows it did not select), the group's key by column, its rows, its regime and its
    estimate."""

    table: str
    key: dict[str, object]
    rows: pd.DataFrame
    check: RegimeCheck
    est: Estimate
    table_rows: pd.DataFrame


@dataclass(frozen=True, kw_only=True)
class Rows:
    """A claim's rows declared without code of their own: for each declared table present
    (in order; or all of them stacked) and each group of its selected rows, the regime
    check, the statistic, the rule and the note give one row. A statistic may fit across
    the sub-groups of its group (an exponent across ε within an instance): that is still
    one group, one row.

    Attributes:
        select: the rows of one table the claim is about (e.g. tight PUCB runs).
        by: the columns that make a row (one row per group, groups sorted; ``()``: one row
            of all the selected rows of each table).
        regime: the group's :class:`RegimeCheck` (default ``n/a``, no regime).
        statistic: the group's estimate, given its rows and its regime check (which says
            where a rate's fit starts).
        rule: a verdict rule of :mod:`dprl.analysis.stats`, parameterised (``partial``); or,
            when the rule depends on the group (e.g. its calibration), a function of the
            :class:`Group` that returns one (``rule_of_group=True``).
        note: the row's words, from its :class:`Group`.
        tables: which of the claim's tables these rows read (default: all it declares), in order.
        table_select: a selection per table, where one table is read differently (e.g. at
            its centre setting only); the others use ``select``.
        stack: select every table, then group their rows together (one family split over
            several tables); the group's ``table`` names them all.
        stacked: with ``stack``, a selection of the stacked rows (after each table's), for rows
            that pair across the tables (e.g. a privacy cost whose baseline is in another table).
        keep: whether a group makes a row (e.g. it has two or more grid points to fit).
        calibration: a fixed label, ``None`` for the group's ``calibration`` column, or a
            function of the :class:`Group` (e.g. ``n/a`` for its non-private groups).
        epsilon: the privacy level the row is about, from its group (default: the group's
            smallest finite ε, NaN for a non-private group).
        algorithm: the algorithm a row measures, from its group (default: the group's
            ``algorithm`` key, if it groups by algorithm): a plug-in's rows are reported apart.
        kind: the rows' kind (:data:`KINDS`) where it differs from the claim's.
        empty: the reason of the one inconclusive row when no group makes a row; ``None``:
            no such row (rows that complete another declaration's).
        empty_for_claim: ``empty`` stands for the whole claim: its row is made only when the
            claim's Rows declared before these made no row either.
        unmeasured: why a table read measures nothing (e.g. no private run has its baseline),
            or ``None`` when it does: such a table gives one inconclusive row
            (``"<table>: <why>"``) in place of its groups, a row as far as ``empty`` is concerned.
    """

    select: Callable[[pd.DataFrame], pd.DataFrame]
    by: tuple[str, ...]
    statistic: Callable[[pd.DataFrame, RegimeCheck], Estimate]
    rule: Callable[[Estimate], Verdict] | Callable[[Group], Callable[[Estimate], Verdict]]
    note: Callable[[Group], str]
    regime: Callable[[pd.DataFrame], RegimeCheck] = lambda g: RegimeCheck()
    tables: tuple[str, ...] | None = None
    table_select: Mapping[str, Callable[[pd.DataFrame], pd.DataFrame]] = dataclasses.field(default_factory=dict)
    stack: bool = False
    stacked: Callable[[pd.DataFrame], pd.DataFrame] = lambda rows: rows
    keep: Callable[[pd.DataFrame], bool] = lambda g: True
    calibration: str | Callable[[Group], str] | None = None
    epsilon: Callable[[Group], float] | None = None
    algorithm: Callable[[Group], str | None] = lambda grp: grp.key.get("algorithm")
    kind: str | None = None
    empty: str | None = "no rows to measure"
    rule_of_group: bool = False
    empty_for_claim: bool = False
    unmeasured: Callable[[pd.DataFrame], str | None] = lambda df: None

    def _parts(self, tables: Mapping[str, pd.DataFrame], names: Sequence[str]) -> list[tuple[str, pd.DataFrame, pd.DataFrame]]:
        """``(table name, table, selected rows)`` per table read (one stacked part with ``stack``)."""
        parts = []
        for name in self.tables if self.tables is not None else names:
            df = tables[name] if name in tables else None
            if df is not None and not df.empty:
                parts.append((name, df, self.table_select.get(name, self.select)(df)))
        if self.stack and parts:
            return [(", ".join(p[0] for p in parts), pd.concat([p[1] for p in parts], ignore_index=True),
                     self.stacked(pd.concat([p[2] for p in parts], ignore_index=True)))]
        return parts

    def evaluate(self, tables: Mapping[str, pd.DataFrame], names: Sequence[str]) -> list[ClaimResult]:
        out = []
        for name, df, selected in self._parts(tables, names):
            if (why := self.unmeasured(df)) is not None:
                out.append(ClaimResult.inconclusive(f"{name}: {why}", calibration=self._fixed_calibration))
                continue
            groups = selected.groupby(list(self.by), sort=True) if self.by else ([((), selected)] if len(selected) else [])
            for key, g in groups:
                if not self.keep(g):
                    continue
                key = dict(zip(self.by, key if isinstance(key, tuple) else (key,)))
                check = self.regime(g)
                est = self.statistic(g, check)
                grp = Group(name, key, g, check, est, df)
                calib = (self.calibration(grp) if callable(self.calibration) else self.calibration if self.calibration is not None
                         else str(key.get("calibration", g["calibration"].iloc[0])))
                eps = self.epsilon(grp) if self.epsilon is not None else _smallest_epsilon(g)
                rule = self.rule(grp) if self.rule_of_group else self.rule
                out.append(ClaimResult.from_estimate(est, verdict=rule(est), check=check, calibration=calib,
                                                     note=self.note(grp) + check.note, epsilon=eps,
                                                     algorithm=self.algorithm(grp), kind=self.kind))
        if not out and self.empty is not None:
            return [ClaimResult.inconclusive(self.empty, calibration=self._fixed_calibration)]
        return out

    @property
    def _fixed_calibration(self) -> str:
        """The calibration of a row that measured nothing: the fixed label, else ``n/a``."""
        return self.calibration if isinstance(self.calibration, str) and self.calibration else "n/a"


def _smallest_epsilon(g: pd.DataFrame) -> float:
    eps = g["epsilon"].to_numpy(float) if "epsilon" in g else np.array([])
    eps = eps[np.isfinite(eps)]
    return float(eps.min()) if eps.size else float("nan")


@dataclass(frozen=True, kw_only=True)
class Claim:
    """One claim of a paper (or a finding of this package), declared in one place.

    Attributes:
        id, paper, statement: who says what (``paper`` is the module's ``PAPER``).
        metric, expected: what a row measures and what the claim predicts, in words.
        reads: the tables the claim needs; one missing makes the claim one inconclusive row.
        optional: tables it reads when the preset ran them (rows of their own). A claim
            can read no other table (:class:`DeclaredTables`).
        rows: the declared rows (:class:`Rows`, or several, their rows in order), for a
            claim that needs no code of its own;
        compute: otherwise, the claim's own code from tables to rows, with ``why_code``
            saying why a declaration does not serve (an audit, a fit across groups, an ordering).
        figure: the figure id that shows it.
        planted_bugs: the bugs that would flip its verdict, each with the test that plants it.
        finding: a finding of this package, not a claim of the paper (:data:`SOURCES`).
        beyond: a claim of a later paper, declared by an installed package (entry-point
            group ``dprl.claims``): its rows have their own section and are never counted.
        kind: what its rows can show (:data:`KINDS`); a row may override it.
        plugin_statement: what the claim says about any algorithm of its setting, the
            statement of a plug-in's rows (``{algorithm}``: its display name; ``{baseline}``:
            the display name of the non-private baseline it declares); ``None`` for a claim
            whose rows are never a plug-in's (one that gives a plug-in row raises).
    """

    id: str
    paper: str
    statement: str
    metric: str
    expected: str
    reads: tuple[str, ...]
    optional: tuple[str, ...] = ()
    rows: Rows | tuple[Rows, ...] | None = None
    compute: Callable[[Tables], list[ClaimResult]] | None = None
    why_code: str = ""
    figure: str | None = None
    planted_bugs: tuple[PlantedBug, ...] = ()
    finding: bool = False
    kind: str = KINDS[2]
    plugin_statement: str | None = None
    beyond: bool = False

    def __post_init__(self) -> None:
        if (self.rows is None) == (self.compute is None):
            raise ValueError(f"claim {self.id}: declare exactly one of rows and compute")
        if self.compute is not None and not self.why_code:
            raise ValueError(f"claim {self.id}: a claim with code of its own says why (why_code)")
        if self.kind not in KINDS:
            raise ValueError(f"claim {self.id}: kind {self.kind!r} is not one of {KINDS}")
        if self.beyond and self.finding:
            raise ValueError(f"claim {self.id}: a later paper's claim is not a finding of this package")

    @property
    def source(self) -> str:
        return SOURCES[3] if self.beyond else SOURCES[1] if self.finding else SOURCES[0]

    def statement_for(self, algorithm: str, baseline: str = "its baseline") -> str:
        """The statement of a plug-in's rows: :attr:`plugin_statement` naming ``algorithm``
        (and its ``baseline``), not the paper's algorithm."""
        if self.plugin_statement is None:
            raise ValueError(f"claim {self.id} gave a row of plug-in {algorithm!r} but declares no plugin_statement")
        return self.plugin_statement.format(algorithm=algorithm, baseline=baseline)

    @property
    def experiments(self) -> tuple[str, ...]:
        """Every table the claim may read: :attr:`reads`, then :attr:`optional`."""
        return (*self.reads, *self.optional)

    def evaluate(self, tables: Tables) -> list[ClaimResult]:
        """The claim's rows from the run's tables, seen through its declaration."""
        view = DeclaredTables(tables, self.experiments, self.id)
        if self.rows is not None:
            out: list[ClaimResult] = []
            for rows in self.rows if isinstance(self.rows, tuple) else (self.rows,):
                if out and rows.empty_for_claim:  # the claim has rows: nothing to say it measured none
                    rows = dataclasses.replace(rows, empty=None)
                out += rows.evaluate(view, self.experiments)
            return out
        return self.compute(view)
