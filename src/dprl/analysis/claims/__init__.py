"""The claims registry and the claims table (``paper_figures/claims.{csv,md,tex}``).

Each paper's module defines ``CLAIMS``; :func:`claims_table` evaluates all of them on the
aggregated tables. Verdicts are computed by the claims' code, never written by hand.

Claims of later papers join through the entry-point group ``dprl.claims``
(:data:`CLAIMS_ENTRY_POINT_GROUP`), as plug-in algorithms join through ``dprl.algorithms``:
each entry point names a :class:`~dprl.analysis.base.Claim` or a tuple of them, declared
with ``beyond=True``. Their rows have a section of their own ("beyond the four papers") and
are never counted in the four papers' totals.
"""

from __future__ import annotations

import importlib
import logging
import traceback
from functools import cache
from importlib.metadata import entry_points

import numpy as np
import pandas as pd

from dprl.analysis.base import (
    CLAIM_RULE, KINDS, REGIMES, SOURCES, VERDICTS, Claim, PlantedBug, Tables, by_claim, claim_verdict, claim_verdicts,
    beyond_papers, kinds_sentence, outside_regime, package_findings, paper_claims, plugin_groups, row_kinds,
    verdict_totals, UndeclaredTableError,
)

from dprl.analysis.privacy_levels import privacy_levels
from dprl.analysis.privacy_levels import to_markdown as privacy_levels_markdown
from dprl.experiments.registry import declared, kinds, plugins

log = logging.getLogger(__name__)

MODULES = ("mechanisms", "tabular", "lq", "linmix", "pe", "accounting")  # accounting: one check per paper
CLAIMS_ENTRY_POINT_GROUP = "dprl.claims"
COLUMNS = [
    "claim", "paper", "source", "kind", "statement", "experiment", "metric", "expected", "calibration", "epsilon",
    "measured", "ci_low", "ci_high", "verdict", "regime", "horizon_needed", "note", "figure",
]


@cache
def all_claims() -> tuple[Claim, ...]:
    out: list[Claim] = []
    for name in MODULES:
        mod = importlib.import_module(f"dprl.analysis.claims.{name}")
        out.extend(mod.CLAIMS)
    out.extend(installed_claims())
    ids = [c.id for c in out]
    if len(ids) != len(set(ids)):
        raise RuntimeError(f"duplicate claim ids: {sorted(i for i in ids if ids.count(i) > 1)}")
    return tuple(out)


def installed_claims() -> list[Claim]:
    """The later papers' claims that installed packages declare (:data:`CLAIMS_ENTRY_POINT_GROUP`),
    in entry-point order. A broken declaration is an error naming its entry point and package:
    a claims table that silently dropped a declared claim would misreport it."""
    out: list[Claim] = []
    for ep in sorted(entry_points(group=CLAIMS_ENTRY_POINT_GROUP), key=lambda e: e.name):
        dist = getattr(ep, "dist", None)
        where = (f"claims entry point {ep.name} = {ep.value} (group {CLAIMS_ENTRY_POINT_GROUP}, "
                 f"{f'package {dist.name} {dist.version}' if dist is not None else 'an unknown package'})")
        try:
            obj = ep.load()
        except Exception as err:
            raise RuntimeError(f"{where} failed to load: {type(err).__name__}: {err}") from err
        declared_claims = obj if isinstance(obj, tuple) else (obj,)
        for c in declared_claims:
            if not isinstance(c, Claim):
                raise RuntimeError(f"{where} holds a {type(c).__name__}, not a dprl.analysis.base.Claim")
            if not c.beyond:
                raise RuntimeError(f"{where}: claim {c.id} must be declared with beyond=True (only the four papers' "
                                   "modules declare their claims)")
        out.extend(declared_claims)
    return out


def claim(cid: str) -> Claim:
    """The declared claim with id ``cid`` (its rows: ``claim(cid).evaluate(tables)``)."""
    for c in all_claims():
        if c.id == cid:
            return c
    raise KeyError(f"no claim {cid!r}; declared: {', '.join(c.id for c in all_claims())}")


@cache
def planted_bugs() -> dict[str, tuple[PlantedBug, ...]]:
    """Each claim's planted bugs (:attr:`Claim.planted_bugs`), by claim id: what would flip
    its verdict, and the test that shows it."""
    return {c.id: c.planted_bugs for c in all_claims() if c.planted_bugs}


def _present(tables: Tables, name: str) -> bool:
    return name in tables and not tables[name].empty


def plugin_statement(claim: Claim, algorithm: str) -> dict[str, str]:
    """The columns of a plug-in's row of ``claim``: ``source`` ``plug-in`` and the claim's
    statement about any algorithm of its setting naming the plug-in and its baseline
    (:meth:`Claim.statement_for`), not the paper's algorithm."""
    alg, names = plugins()[algorithm], declared("algorithms", "display")
    baseline = names.get(alg.baseline, alg.baseline) if alg.baseline else "its baseline"
    return {"source": SOURCES[2], "statement": claim.statement_for(alg.display, baseline)}


NOT_AUDITED = "privacy self-declared: not audited"


def self_declared(tables: Tables, algorithm: str) -> bool:
    """A private plug-in with no row in any audit's table (an experiment of an audit kind,
    ``ExperimentKind.audit``): its privacy rests on the calibration it states, nothing in
    this run examined its noise."""
    if algorithm not in plugins() or plugins()[algorithm].privacy == "none":
        return False
    audits = {k.name for k in kinds().values() if k.audit}
    return not any(name in audits and "algorithm" in t.columns and (t["algorithm"] == algorithm).any()
                   for name, t in tables.items())


def _with_note(note: str, extra: str) -> str:
    return extra if not note else f"{note}; {extra}"


def evaluate(claim: Claim, tables: Tables) -> list[dict]:
    """The claims-table rows of one claim: one inconclusive row when a table it ``reads`` is
    missing; otherwise its rows, each outside its regime made inconclusive, the paper's rows
    first, then the plug-ins' (:func:`plugin_statement`), each plug-in's in the order the
    claim gave them. The ``experiment`` column names the tables it needs and the optional
    ones the run produced."""
    read = [e for e in claim.experiments if e in claim.reads or _present(tables, e)]
    base = {
        "claim": claim.id, "paper": claim.paper, "source": claim.source, "kind": claim.kind, "statement": claim.statement,
        "experiment": ", ".join(read), "metric": claim.metric,
        "expected": claim.expected, "figure": claim.figure or "",
    }
    missing = [e for e in claim.reads if not _present(tables, e)]
    if missing:
        return [{**base, "calibration": "n/a", "epsilon": np.nan, "measured": np.nan, "ci_low": np.nan, "ci_high": np.nan,
                 "verdict": "inconclusive", "regime": "n/a", "horizon_needed": np.nan,
                 "note": f"experiment(s) not run in this preset: {', '.join(missing)}"}]
    try:
        results = claim.evaluate(tables)
    except UndeclaredTableError:  # a declaration error, not a measurement: fail loudly
        raise
    except Exception as err:  # recorded, and a test asserts no claim fails this way
        log.error("claim %s failed to evaluate:\n%s", claim.id, traceback.format_exc())
        return [{**base, "calibration": "n/a", "epsilon": np.nan, "measured": np.nan, "ci_low": np.nan, "ci_high": np.nan,
                 "verdict": "inconclusive", "regime": "n/a", "horizon_needed": np.nan,
                 "note": f"evaluation failed: {type(err).__name__}: {err}"}]
    rows, mine = [], []
    for r in results:
        if r.verdict not in VERDICTS:
            raise ValueError(f"claim {claim.id} returned verdict {r.verdict!r}")
        if r.regime not in REGIMES:
            raise ValueError(f"claim {claim.id} returned regime {r.regime!r}")
        if r.kind is not None and r.kind not in KINDS:
            raise ValueError(f"claim {claim.id} returned kind {r.kind!r}")
        r = r.outside_regime_is_inconclusive()
        # a later paper's claim is about its own (plug-in) algorithm: its rows keep their source
        plugin = r.algorithm in plugins() and claim.source != SOURCES[3]
        note = _with_note(r.note, NOT_AUDITED) if plugin and self_declared(tables, r.algorithm) else r.note
        (mine if plugin else rows).append({
            **base, **(plugin_statement(claim, r.algorithm) if plugin else {}), **({"kind": r.kind} if r.kind else {}),
            "calibration": r.calibration, "epsilon": r.epsilon, "measured": r.measured, "ci_low": r.ci_low,
            "ci_high": r.ci_high, "verdict": r.verdict, "regime": r.regime, "horizon_needed": r.horizon_needed,
            "note": note})
    first = {st: i for i, st in enumerate(dict.fromkeys(row["statement"] for row in mine))}
    return rows + sorted(mine, key=lambda row: first[row["statement"]])  # each plug-in's rows together


def claims_table(tables: Tables, papers: tuple[str, ...] | None = None) -> pd.DataFrame:
    rows = [row for c in all_claims() if papers is None or c.paper in papers for row in evaluate(c, tables)]
    return pd.DataFrame(rows, columns=COLUMNS)


def _fmt(x: float) -> str:
    if x is None or (isinstance(x, float) and not np.isfinite(x)):
        return "" if x is None or np.isnan(x) else ("∞" if x > 0 else "-∞")
    return f"{x:.3g}"


def _md_row(cells: list[object]) -> str:
    return "| " + " | ".join(str(c).replace("|", "\\|").replace("\n", " ") for c in cells) + " |"


def to_markdown(table: pd.DataFrame, burn_in: pd.DataFrame | None = None) -> str:
    """``claims.md``: the verdict totals of the papers' claims first, then one summary row
    per claim (its verdicts and regimes counted, the largest horizon a row outside its
    regime needs), each followed by a summary row per plug-in measured against it, and the
    privacy levels at which each regime-gated claim was measured inside its regime
    (:mod:`dprl.analysis.privacy_levels`), then the rows themselves without repeating the
    claim's statement, each claim's plug-in rows right after its paper rows
    (:func:`~dprl.analysis.base.by_claim`; never counted); then, apart and not counted, the
    package's own findings; last, given ``burn_in``
    (:func:`dprl.analysis.burn_in.burn_in_check`), the burn-in predictions against the
    measured onsets."""
    df, shown, found = paper_claims(table), by_claim(table), package_findings(table)
    later = beyond_papers(table)
    n_plugin = len(shown) - len(df)
    lines = [
        f"Verdicts of {len(df)} rows ({df['claim'].nunique()} claims of the papers): "
        + ", ".join(f"**{n} {v}**" for v, n in verdict_totals(df).items())
        + f"; {outside_regime(df)} of the inconclusive rows were measured outside their regime (they state the horizon they need)."
        + " A rate row counts only inside its regime: outside it the row is inconclusive whatever it measured."
        + (f" {n_plugin} rows measure installed plug-in algorithms: each sits under the claim it tests, after the "
           "paper's rows, with the claim's statement about any algorithm of its setting naming the plug-in, judged "
           "by the same rule and regime (a plug-in's burn-in is not predicted: its measured onset decides), and not "
           "counted." if n_plugin else "")
        + (f" {len(found)} rows of this package's own findings follow the claims, apart and not counted." if len(found) else "")
        + (f" {len(later)} rows test {later['claim'].nunique()} claims of later papers (beyond the four papers), in a "
           "section of their own, not counted." if len(later) else ""),
        "",
        kinds_sentence(df) + " A rate is reproduced only by a two-sided test on a minimax-hard family; on a fixed, "
        "gapped instance regret saturates after the burn-in, so a row there shows only that the upper bound holds.",
        "",
        "Claims: " + ", ".join(f"**{n} {v}**" for v, n in claim_verdicts(df).items()) + f" ({CLAIM_RULE}).",
        "",
        "Intervals: a slope of a curve is fitted to each seed's own curve, and its 95% interval is Student's t "
        "interval over the per-seed slopes (simulated coverage >= 0.9 at 3, 4 and 8 seeds, where the percentile "
        "bootstrap it replaced covered 0.76 at 3 seeds); a seed whose own slope is >= 0.9 fails a claim that regret "
        "is sublinear, whatever the others do. A statistic of several groups of seeds (an exponent across ε, S or m) "
        "has a 95% percentile-bootstrap interval over seeds.",
        "",
        "## One row per claim",
        "",
        "| claim | paper | kind | statement | expected | rows | verdicts | claim verdict | regimes | horizon needed |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for claim, g in shown.groupby("claim", sort=False):
        paper = g[g["source"] != SOURCES[2]] if "source" in g else g
        if len(paper):
            lines.append(_summary_md(f"**{claim}**", paper, f"**{claim_verdict(paper)}**"))
        for _, mine in plugin_groups(g):
            lines.append(_summary_md(f"**{claim}** ({SOURCES[2]}, not counted)", mine, claim_verdict(mine)))
    lines += privacy_levels_markdown(privacy_levels(df))
    lines += ["", "## Rows", ""]
    lines += _md_rows(shown)
    if len(found):
        lines += [
            "",
            "## Package findings (not claims of the papers; not counted above)",
            "",
            "What this package measured about the papers on its own, e.g. under their printed constants. "
            "A verdict here says whether the measurement supports the finding's statement.",
            "",
            "| finding | paper | statement | expected |",
            "|---|---|---|---|",
        ]
        for claim, g in found.groupby("claim", sort=False):
            first = g.iloc[0]
            lines.append(_md_row([f"**{claim}**", first.paper, first.statement, first.expected]))
        lines += ["", "| finding | calibration | ε | experiment | metric | measured [95% CI] | verdict | regime | horizon needed | note |",
                  "|---|---|---|---|---|---|---|---|---|---|", *_md_rows(found)[2:]]
    if len(later):
        lines += [
            "",
            "## Beyond the four papers (claims of later papers; not counted above)",
            "",
            "Claims of later private RL papers, declared with their algorithms by installed packages and judged by "
            "the same rules and regimes.",
            "",
            "| claim | paper | kind | statement | expected | rows | verdicts | claim verdict | regimes | horizon needed |",
            "|---|---|---|---|---|---|---|---|---|---|",
            *(_summary_md(f"**{claim}**", g, f"**{claim_verdict(g)}**") for claim, g in later.groupby("claim", sort=False)),
            "",
            *_md_rows(later),
        ]
    lines += _planted_markdown([*shown["claim"].unique(), *found["claim"].unique(), *later["claim"].unique()])
    if burn_in is not None:
        from dprl.analysis.burn_in import to_markdown as burn_in_markdown

        lines += burn_in_markdown(burn_in)
    return "\n".join(lines) + "\n"


def _summary_md(label: str, g: pd.DataFrame, verdict: str) -> str:
    """One summary row of ``claims.md``: a claim's rows (or one plug-in's rows of it) counted."""
    first = g.iloc[0]
    verdicts = ", ".join(f"{n} {v}" for v, n in verdict_totals(g).items() if n)
    regimes = ", ".join(f"{n} {r}" for r, n in g["regime"].value_counts().items())
    need = g.loc[g["regime"] == "not reached", "horizon_needed"].max()
    return _md_row([label, first.paper, row_kinds(g), first.statement, first.expected, len(g), verdicts, verdict, regimes,
                    _fmt(need if pd.notna(need) else float("nan"))])


def _planted_markdown(claims: list[str]) -> list[str]:
    """What would flip each verdict: every claim's planted bugs and the tests that plant them."""
    bugs = planted_bugs()
    lines = ["", "## What would flip each verdict (planted bugs)", "",
             "Each bug below is planted by a test that runs the claim's own rule on it and sees the verdict flip "
             "(`tests/core/test_planted_bugs.py` checks that every claim has one and that each test exists).", "",
             "| claim | planted bug | test |", "|---|---|---|"]
    for claim in dict.fromkeys(claims):
        lines += [_md_row([f"**{claim}**", b.bug, f"`{b.test}`"]) for b in bugs.get(claim, ())]
    return lines


def _md_rows(df: pd.DataFrame) -> list[str]:
    """The detail rows of ``df`` under their header."""
    lines = ["| claim | calibration | ε | experiment | metric | measured [95% CI] | verdict | regime | horizon needed | note |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for r in df.itertuples(index=False):
        ci = f" [{_fmt(r.ci_low)}, {_fmt(r.ci_high)}]" if np.isfinite(r.ci_low) or np.isfinite(r.ci_high) else ""
        claim = f"{r.claim} ({SOURCES[2]})" if getattr(r, "source", None) == SOURCES[2] else r.claim
        lines.append(_md_row([claim, r.calibration, _fmt(r.epsilon), r.experiment, r.metric, _fmt(r.measured) + ci,
                              f"**{r.verdict}**", r.regime, _fmt(r.horizon_needed), r.note]))
    return lines


def _tex_escape(s: str) -> str:
    repl = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_",
            "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}"}
    return "".join(repl.get(ch, ch) for ch in str(s))


def to_latex(df: pd.DataFrame) -> str:
    out = [r"\begin{tabular}{lllp{5cm}llll}", r"\toprule",
           r"claim & paper & calibration & statement & expected & measured & 95\% CI & verdict \\", r"\midrule"]
    for r in df.itertuples(index=False):
        ci = f"[{_fmt(r.ci_low)}, {_fmt(r.ci_high)}]" if np.isfinite(r.ci_low) or np.isfinite(r.ci_high) else ""
        cells = [r.claim, r.paper, r.calibration, r.statement, r.expected, _fmt(r.measured), ci, r.verdict]
        out.append(" & ".join(_tex_escape(c) for c in cells) + r" \\")
    out += [r"\bottomrule", r"\end{tabular}"]
    return "\n".join(out) + "\n"
