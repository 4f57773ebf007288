"""The comparison figure of every private tabular algorithm (PUCB of Vietri et al. 2020 and
the plug-ins beyond the four papers, e.g. Private-UCB-VI and DP-UCBVI of ``dprl_beyond``)
against the non-private baselines they declare, on garnet (``beyond_regret``) and on the
Figure 1 family hard at T (``beyond_hard``).

Which algorithms are private, and which baseline each is measured against, is read off the
registry's :class:`~dprl.experiments.base.Algorithm` declarations (``privacy``,
``baseline``), never from their names; colours and labels come from
:mod:`dprl.analysis.plotting`."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.colors import to_hex, to_rgb
from matplotlib.figure import Figure

from dprl.analysis import plotting as P
from dprl.analysis.base import Tables
from dprl.analysis.claims.tabular import HARD_FAMILY
from dprl.analysis.selection import final_rows
from dprl.experiments.registry import kinds

# the figure's columns: the privacy levels it compares (config.yaml runs both experiments at them)
COMPARISON_EPSILONS = (1.0, 10.0)
REGRET_TABLE = "beyond_regret"  # checkpoints of R(T) on tabular_regret's instances
HARD_TABLE = "beyond_hard"  # one run per T on the Figure 1 family hard at T
# further algorithms on the same family, stacked with HARD_TABLE (config.yaml: DP-UCBVI's, at its own T)
HARD_EXTRA = ("beyond_hard_dp",)
GARNET = "garnet"  # the environment of the regret row
REGRET_EXPONENT = 0.5  # the √T envelope of every bound compared here
# a baseline is drawn dashed in a darker shade of its private algorithm's colour
BASELINE_SHADE = 0.65


@dataclass(frozen=True)
class Row:
    """One row of panels: its title, its rows (``None``: nothing to draw, ``absent`` says
    why), the x column and whether x is a grid of runs (error bars) or checkpoints (band)."""

    title: str
    df: pd.DataFrame | None
    x: str
    runs: bool
    absent: str = ""


def baseline_shade(colour: str) -> str:
    """A darker shade of ``colour`` (its RGB times :data:`BASELINE_SHADE`): the colour of a
    private algorithm's non-private baseline."""
    return to_hex(np.asarray(to_rgb(colour)) * BASELINE_SHADE)


def _private_pairs(df: pd.DataFrame) -> dict[str, str]:
    """``private algorithm -> its baseline`` over the :class:`~dprl.experiments.base.Algorithm`
    declarations of the table's kinds (``kind`` column; without one, the kinds that declare
    the table's algorithms): ``privacy != "none"`` and a declared ``baseline``, in name order."""
    registered = kinds()
    if "kind" in df.columns:
        names = [k for k in df["kind"].dropna().unique() if k in registered]
    else:
        present = set(df["algorithm"].unique())
        names = [k for k in sorted(registered) if present & set(registered[k].algorithms)]
    algs = {a.name: a for k in names for a in registered[k].algorithms.values()}
    return {n: a.baseline for n, a in sorted(algs.items()) if a.privacy != "none" and a.baseline}


def _rows(tables: Tables) -> list[Row]:
    """Garnet of ``beyond_regret`` (one row per garnet instance), then the hard family of
    ``beyond_hard`` (one row per family: everything but T); a missing table or instance is
    one row saying so."""
    out: list[Row] = []
    reg = tables.get(REGRET_TABLE)
    if reg is None or reg.empty:
        out.append(Row("Garnet", None, "episode", False, f"no {REGRET_TABLE} table in this run"))
    else:
        garnet = reg[reg["environment"] == GARNET] if "environment" in reg else reg.iloc[:0]
        for env in sorted(garnet["env_label"].unique()):
            out.append(Row(P.environment_name(env), garnet[garnet["env_label"] == env], "episode", False))
        if garnet.empty:
            out.append(Row("Garnet", None, "episode", False, f"no garnet instance in {REGRET_TABLE}"))
    parts = [tables[n] for n in (HARD_TABLE, *HARD_EXTRA) if tables.get(n) is not None]
    hard = pd.concat(parts, ignore_index=True) if parts else None
    if hard is None or hard.empty:
        out.append(Row("Figure 1 family hard at T", None, "T", True, f"no {HARD_TABLE} table in this run"))
        return out
    lacking = [c for c in HARD_FAMILY if c not in hard.columns]
    if lacking:
        out.append(Row("Figure 1 family hard at T", None, "T", True, f"{HARD_TABLE} has no column(s) {', '.join(lacking)}"))
        return out
    hard = final_rows(hard)
    for fam, g in hard.groupby(HARD_FAMILY, sort=True):
        n, m, H, scale = fam
        title = f"Figure 1 family hard at T\n(S={int(n) + 2}, A={int(m) + 1}, H={int(H)}, gap scale {scale:g})"
        out.append(Row(title, g, "T", True))
    return out


def _series(row: Row, eps: float, pairs: dict[str, str]) -> tuple[list[tuple[str, pd.DataFrame, dict]], list[str]]:
    """The (label, rows, style) of each series of one panel, every private algorithm at
    ``eps`` followed by its baseline (each baseline once, in the colour family of its first
    private algorithm), and the notes on what the table lacks."""
    df = row.df
    private = df[df["algorithm"].isin(pairs) & (df["calibration"] != "none") & np.isclose(df["epsilon"], eps)]
    several = private["calibration"].nunique() > 1
    out: list[tuple[str, pd.DataFrame, dict]] = []
    missing, no_base, done = [], [], set()
    for alg, base in pairs.items():
        colour = P.series_style(alg, by="algorithm")["color"]
        mine = private[private["algorithm"] == alg]
        if mine.empty:
            missing.append(P.algorithm_name(alg))
        for cal, gc in mine.groupby("calibration", sort=True):
            style = {"color": P.series_style(alg, eps, cal, by="algorithm")["color"], "ls": "-"}
            if several:
                style["marker"] = P.CALIBRATION_MARKERS.get(cal, "o")
            out.append((f"{P.algorithm_name(alg)} ({P.CALIBRATION_NAMES.get(cal, cal)})", gc, style))
        if base in done:
            continue
        done.add(base)
        theirs = df[(df["algorithm"] == base) & (df["calibration"] == "none")]
        if theirs.empty:
            no_base.append(P.algorithm_name(base))
            continue
        of = ", ".join(P.algorithm_name(a) for a, b in pairs.items() if b == base)
        out.append((f"{P.series_label(base)} (non-private, baseline of {of})", theirs,
                    {"color": baseline_shade(colour), "ls": "--"}))
    notes = [f"no run at {P.epsilon_text(eps)}: " + ", ".join(missing)] if missing else []
    notes += ["no baseline run: " + ", ".join(no_base)] if no_base else []
    notes += [] if pairs else ["no private algorithm with a declared baseline in this table"]
    return out, notes


def _panel(ax: Axes, row: Row, eps: float) -> list[str]:
    """One (row, ε) panel: each private algorithm at ``eps`` solid in its colour, each
    baseline (no ε) dashed in a darker shade of its private algorithm's colour, the seed mean
    of the regret against the row's x with its 95% bootstrap band (error bars on a grid of
    runs); what is absent is noted under the x label. Returns the labels drawn, in order."""
    title = f"{P.epsilon_text(eps)}: {row.title}"
    if row.df is None:
        P.empty_panel(ax, row.absent)
        ax.set_title(title)
        return []
    series, notes = _series(row, eps, _private_pairs(row.df))
    for text in notes:
        P.note(ax, text)
    # series whose seed means coincide would hide one another: markers, and a note
    same = P.distinguish_coinciding(ax, {lab: P.seed_means(g, row.x, "regret")["mean"] for lab, g, _ in series}, str)
    drawn = []
    for label, g, style in series:
        style = {"marker": "o" if row.runs else None, **style, **same.get(label, {})}
        if row.runs:
            style.pop("markevery", None)  # error bars mark every point
        s = P.mean_band(ax, g, row.x, "regret", label=label, positive=True, errorbars=row.runs, **style)
        if len(s) and (s["mean"] > 0).any():
            drawn.append(label)
    if not drawn:
        P.empty_panel(ax, "nothing to draw at this ε")
        ax.set_title(title)
        P.flush_notes(ax)
        return []
    P.reference_rate(ax, REGRET_EXPONENT, "T")
    P.log_axes(ax)
    if row.runs:
        P.data_ticks(ax, np.sort(row.df["T"].unique()).astype(float))
    xlabel = "T (each point: its own run on the instance tuned to T)" if row.runs else "episodes T"
    ax.set(xlabel=xlabel, ylabel="cumulative regret" + (" at T" if row.runs else ""), title=title)
    P.flush_notes(ax)
    return drawn


def regret_comparison(tables: Tables) -> Figure:
    """Cumulative exact regret ``R(T) = Σ_t (ρ* − ρ^{π_t})`` (the jobs' ``regret`` column,
    ``experiments/tabular/jobs.py``)
    of every private tabular algorithm against T, beside the non-private baseline it declares
    (PUCB: UBEV; Private-UCB-VI: UCB-VI; DP-UCBVI: UCBVI-Bernstein), log-log. Rows: garnet
    (``beyond_regret``, checkpoints of one run, 95% bootstrap band over seeds) and the Figure 1
    family hard at T (``beyond_hard``, one run per T, 95% bootstrap error bars); columns:
    ε = 1 and ε = 10. The baselines have no ε and are drawn in both columns. The dashed grey
    line is the √T envelope shared by PUCB's Theorem 4, Private-UCB-VI's
    Õ(√(SAH³T) + S²AH³/ε) and DP-UCBVI's Õ(√(SAH²T) + S²AH³/ε)."""
    rows = _rows(tables)
    fig, axes = P.subplots(len(rows), len(COMPARISON_EPSILONS), panel=(6.8, 4.6))
    order: dict[str, None] = {}
    for r, row in enumerate(rows):
        for c, eps in enumerate(COMPARISON_EPSILONS):
            order.update(dict.fromkeys(_panel(axes[r, c], row, eps)))
    # one legend outside the panels: the same series in every panel (the column gives ε),
    # each private algorithm beside its baseline, then the reference
    handles = P.handles_of(axes.ravel())
    P.figure_legend(fig, {**{k: handles[k] for k in order if k in handles}, **handles})
    fig.suptitle("Private tabular algorithms (solid) and their non-private baselines (dashed, darker shade): "
                 "seed mean, 95% bootstrap band / error bars")
    return fig
