"""Figures of the Zhou (2022) experiments: regret vs T, privacy cost vs ε, |S| and |A|
dependence, LDP vs JDP, audits, and the burn-in regime. Every function takes the tables and
returns the figure; the catalog renders it."""

from __future__ import annotations

import numpy as np
import pandas as pd

from dprl.analysis import plotting as P
from dprl.analysis.base import Tables
from dprl.analysis.regime import median_onset
from dprl.analysis.printed import as_run, draw_printed, printed_rows
from dprl.analysis.claims.linmix import COST_TABLES, GAPS_TABLES, HARD_TABLES, gap_rows, worst_case
from dprl.analysis.selection import final_rows, present_tables, privacy_cost, stacked_final_rows
from dprl.experiments.registry import declared, plugins

REGRET_EXPONENT = 0.5  # Z2: regret ∝ √T
LDP_EXPONENT = 0.75  # Z6: the local model's regret grows like T^{3/4}
COST_EPS_EXPONENT = -0.5  # Z3 (the paper's route)
ACTIONS_EXPONENT = 0.5  # Z5: at most √(log|A|)
FAMILIES = (("VI", ("ucrl_vtr", "private_linopt_vi")), ("PO", ("oppo", "private_linopt_po")))


def _groups(df: pd.DataFrame, markers: bool = False, by: str = "epsilon"):
    """(style with label, rows) per algorithm × ε × calibration; ``markers``: a marker per
    calibration too (points at every x hide the line style that tells them apart).
    ``by="algorithm"``: coloured by algorithm (two private algorithms at one ε differ), with a
    marker per (ε, calibration) instead (one algorithm at several ε differs too)."""
    privacies = sorted(set(zip(df["epsilon"], df["calibration"])), key=lambda p: (p[0], str(p[1])))
    for (alg, eps, cal), g in df.groupby(["algorithm", "epsilon", "calibration"], sort=True):
        if by == "algorithm":
            marker = {"marker": P.COINCIDE_MARKERS[privacies.index((eps, cal)) % len(P.COINCIDE_MARKERS)]}
        else:
            marker = {"marker": P.CALIBRATION_MARKERS.get(cal, "o")} if markers else {}
        yield {**P.series_style(alg, eps, cal, by=by), **marker, "label": P.series_label(alg, eps, cal)}, g


def at_main_delta(df: pd.DataFrame) -> tuple[pd.DataFrame, float]:
    """The non-private rows and the private rows at the most common δ (the one the ε grid is
    run at; the claims fit their ε exponents there too): series of other δ at the same ε
    would otherwise be averaged into one curve. Returns the rows and that δ (NaN if none)."""
    private = df["calibration"] != "none"
    if not private.any():
        return df, float("nan")
    delta0 = float(df.loc[private, "delta"].mode().iloc[0])
    return df[~private | np.isclose(df["delta"], delta0, rtol=1e-9, atol=0.0)], delta0


def _mark_t_star(ax, g: pd.DataFrame, color: str) -> str | None:
    """A private curve's predicted burn-in T* (agents/linmix/regime.py), seed median, in steps
    T = T*·H. Returns the series' label when its burn-in lies outside the data (not drawn),
    for :func:`_note_unmarked`."""
    if g["calibration"].iloc[0] != "none" and "burn_in_episodes" in g:
        t_star = g.groupby("seed")["burn_in_episodes"].first().median() * g["H"].max()
        if not P.mark_burn_in(ax, float(t_star), color, within=(g["T"].min(), g["T"].max())):
            return P.series_label(*g[["algorithm", "epsilon", "calibration"]].iloc[0])
    return None


def _note_unmarked(ax, unmarked: list[str | None], private: int) -> None:
    """One note for the burn-ins beyond the data (one line per series swamped the axis)."""
    names = [u for u in unmarked if u]
    if names and len(names) == private:
        P.note(ax, "every private burn-in T*·H lies beyond the data (not drawn)")
    elif names:
        P.note(ax, "burn-in T*·H beyond the data (not drawn): " + ", ".join(names))


def panels(df: pd.DataFrame) -> list[tuple[str, tuple[str, ...]]]:
    """The regret figure's panels: each LinOpt family, joined by the plug-ins that declare its
    non-private algorithm their baseline; the other plug-ins in a panel of their own."""
    baseline = declared("algorithms", "baseline")
    mine = [a for a in sorted(df["algorithm"].unique()) if a in plugins()]
    out = [(f"LinOpt-{fam}", (*algs, *(a for a in mine if baseline[a] == algs[0]))) for fam, algs in FAMILIES]
    rest = tuple(a for a in mine if not any(a in algs for _, algs in out))
    return out + ([("Plug-ins", rest)] if rest else [])


def regret_loglog(tables: Tables):
    df, delta0 = at_main_delta(tables["linmix_regret"])
    families = panels(df)
    fig, axes = P.subplots(1, len(families), panel=(5.6, 4.3), sharey=True)
    for ax, (fam, algs) in zip(axes[0], families):
        sub = df[df["algorithm"].isin(algs)]
        ax.set(title=f"{fam}: {', '.join(P.algorithm_name(a) for a in algs)}", xlabel="T = KH",
               ylabel="cumulative regret")
        if sub.empty:
            P.empty_panel(ax)
            continue
        unmarked = []
        for style, g in _groups(sub, by="algorithm" if any(a in plugins() for a in algs) else "epsilon"):
            P.mean_band(ax, g, "T", "regret", positive=True, **style)
            unmarked.append(_mark_t_star(ax, g, style["color"]))
        _note_unmarked(ax, unmarked, int((sub.groupby(["algorithm", "epsilon", "calibration"])["calibration"].first()
                                          != "none").sum()))
        P.reference_rate(ax, REGRET_EXPONENT, "T")
        P.finish_axes(ax, extra=[P.burn_in_legend_entry("T*·H")])
    fig.suptitle(f"Linear mixture: cumulative regret (private runs at δ = {delta0:g}; seed mean, 95% bootstrap band)")
    return fig


def regime(tables: Tables):
    """Mean per-episode regret ``R(k)/k`` (relative to its initial level) against ``k/T*``
    for every private setting of ``linmix_regret``: if the burn-in is set by ``β²`` against
    the ceiling gaps (``agents/linmix/regime.py``), the curves of all ε collapse onto one,
    falling near ``k/T* ≈ 1``. ``T*`` is each setting's own (seed median). Circles: the
    measured onsets (one per seed), whose distance from ``k/T* = 1`` is the prediction's
    error (its median in each label)."""
    df, delta0 = at_main_delta(tables["linmix_regret"])
    df = df[df["calibration"] != "none"].dropna(subset=["burn_in_episodes"]).copy() if "burn_in_episodes" in df else df.iloc[:0]
    fig, axes = P.subplots(1, 2, panel=(5.6, 4.3), sharey=True)
    for ax, (_, algs) in zip(axes[0], FAMILIES):
        alg = algs[1]  # the private algorithm of the family
        ax.set(title=P.algorithm_name(alg), xlabel="k / T* (episodes over the predicted burn-in)")
        g = df[df["algorithm"] == alg].sort_values("episode")
        if g.empty:
            P.empty_panel(ax)
            continue
        keys = ["privacy_label", "seed"]
        # per-episode regret between checkpoints, over the job's initial level (first checkpoint >= 10 episodes)
        g = g.assign(per_episode=g.groupby(keys)["regret"].diff() / g.groupby(keys)["episode"].diff())
        first = g[g["episode"] >= 10].groupby(keys).first()
        g = g.join((first["regret"] / first["episode"]).rename("level"), on=keys)
        g["relative"] = g["per_episode"] / g["level"]
        for style, gs in _groups(g.dropna(subset=["relative"])):
            t_star = float(gs.groupby("seed")["burn_in_episodes"].first().median())
            onsets = gs.groupby("seed")["onset_episode"].first() if "onset_episode" in gs else pd.Series(dtype=float)
            style["label"] += P.prediction_ratio(t_star, median_onset(gs))
            s = P.mean_band(ax, gs, "episode", "relative", x_scale=t_star, positive=True, **style)
            P.mark_onsets(ax, s, onsets, t_star, style["color"], "measured onset (one per seed)")
        P.mark_burn_in(ax, 1.0, label="k = T* (predicted burn-in)", beyond="k = T*")
        ax.axhline(0.5, color="0.2", ls="-.", lw=0.8, label="half the initial level (measured onset)")
        P.finish_axes(ax)
    axes[0, 0].set_ylabel("per-episode regret / its initial level")
    # a collapse across ε is claimed only where several ε are drawn (the smoke preset runs one)
    point = ("regret is a function of k/T* across ε" if df["epsilon"].nunique() > 1
             else f"per-episode regret against k/T* (one ε, {P.epsilon_text(df['epsilon'].iloc[0])}: no collapse "
             "across ε to see)" if len(df) else "per-episode regret against k/T*")
    fig.suptitle(f"Linear mixture: {point} (δ = {delta0:g}; T* = C·Σ w b²/g²; seed mean, 95% bootstrap band)")
    return fig


def privacy_cost_fig(tables: Tables):
    delta0 = at_main_delta(tables["linmix_regret"])[1]
    fig, axes = P.subplots(1, 1, panel=(6.0, 4.4))
    ax = axes[0, 0]
    drawn = 0
    # each table's costs at its own K (linmix_regime_eps10: the paper calibration's ε grid down
    # to 10, at a longer K): one series per table, labelled with its K
    for name, table in present_tables(tables, COST_TABLES):
        sub = at_main_delta(table)[0]
        k_max = int(sub["episode"].max())
        for (alg, cal), g in privacy_cost(sub, final=True).groupby(["algorithm", "calibration"], sort=True):
            style = P.series_style(alg, None, cal, by="algorithm")
            marker = P.CALIBRATION_MARKERS.get(cal) if name == COST_TABLES[0] else "D"
            drawn += len(P.mean_band(ax, g, "epsilon", "cost", label=f"{P.algorithm_name(alg)} ({cal}, K = {k_max:.2g})",
                                     marker=marker, positive=True, **style))
    if drawn:
        P.reference_rate(ax, COST_EPS_EXPONENT, "ε")
        P.finish_axes(ax, xlabel="ε", ylabel="private − non-private final regret")
    else:  # nothing positive to draw on a log scale
        P.empty_panel(ax, "no positive mean privacy cost")
        ax.set(xlabel="ε", ylabel="private − non-private final regret")
    fig.suptitle(f"Linear mixture: privacy cost against ε at δ = {delta0:g} (paired by seed; seed mean, 95% bootstrap "
                 "band; non-positive means not shown)")
    return fig


def _final_against(tables: Tables, name: str, x: str, xlabel: str, exponent: float | None = None,
                   var: str = ""):
    fin = final_rows(tables[name])
    fig, axes = P.subplots(1, 1, panel=(6.0, 4.4))
    ax = axes[0, 0]
    for style, g in _groups(fin, markers=True):
        P.mean_band(ax, g, x, "regret", **style)
    if exponent is not None:
        P.reference_rate(ax, exponent, var)
    P.finish_axes(ax, log="x", xlabel=xlabel, ylabel=f"regret at T={int(fin['T'].max())}", ylim=(0, None))
    return fig


def states_fig(tables: Tables):
    fig = _final_against(tables, "linmix_states", "S", "|S| (d1, d2 fixed)")
    fig.suptitle("Final regret against |S| (seed mean, 95% bootstrap band)")
    return fig


def actions_fig(tables: Tables):
    df = tables["linmix_actions"].assign(log_A=lambda d: np.log(d["A"]))
    fig = _final_against({"linmix_actions": df}, "linmix_actions", "log_A", "ln|A| (nested action sets)",
                         ACTIONS_EXPONENT, "ln|A|")
    fig.suptitle("Final regret against ln|A| (seed mean, 95% bootstrap band)")
    return fig


def ldp_fig(tables: Tables):
    df = tables["linmix_ldp"]
    hard = present_tables(tables, ("linmix_hard_ldp",))
    fig, axes = P.subplots(1, 2 if hard else 1, panel=(6.0, 4.4))
    if hard:
        _ldp_hard_panel(axes[0, 1], final_rows(hard[0][1]))
    ax = axes[0, 0]
    eps_marker = {e: P.COINCIDE_MARKERS[i % len(P.COINCIDE_MARKERS)] for i, e in enumerate(sorted(df["epsilon"].unique()))}
    several = len(eps_marker) > 1  # coloured by algorithm: several ε need a marker each
    unmarked = []
    for alg, ga in df.groupby("algorithm", sort=True):
        frames = []
        for (eps, cal), g in ga.groupby(["epsilon", "calibration"], sort=True):
            style = P.series_style(alg, eps, cal, by="algorithm")
            marker = {"marker": eps_marker[eps], "mfc": P.CALIBRATION_FACES.get(cal)} if several else {}
            frames.append(P.mean_band(ax, g, "T", "regret", positive=True, label=P.series_label(alg, eps, cal),
                                      **style, **marker))
            unmarked.append(_mark_t_star(ax, g, style["color"]))
        # each model against its own rate, anchored on its own curves
        P.reference_rate(ax, LDP_EXPONENT if alg.startswith("ldp_") else REGRET_EXPONENT, "T",
                         np.concatenate([f.index.to_numpy(float) for f in frames]),
                         np.concatenate([f["mean"].to_numpy() for f in frames]))
    _note_unmarked(ax, unmarked, len(unmarked))
    P.log_axes(ax)
    ax.set(xlabel="T = KH", ylabel="cumulative regret", title="mixture instance")
    P.flush_notes(ax)
    # beside the panel: a legend of several ε × calibrations inside covered the curves
    burn_in = P.burn_in_legend_entry("T*·H")
    extra = {burn_in.get_label(): burn_in} if P.proxy_drawn(burn_in, [ax]) else {}
    P.figure_legend(fig, {**P.handles_of(list(axes[0])), **extra})
    fig.suptitle("Local (LDP) against joint (JDP) privacy (seed mean, 95% bootstrap band)")
    return fig


def _ldp_hard_panel(ax, fin: pd.DataFrame) -> None:
    """Z6 on the family hard at K (``linmix_hard_ldp``): each learner's regret at K over uniform
    play's (1: no learning; every policy's regret there is ``∝ √K``) against ε, seed mean with
    95% bootstrap error bars, one series per algorithm (and K)."""
    fin = fin.assign(share=fin["regret"] / fin["uniform_regret"])
    for (alg, K), g in fin.groupby(["algorithm", "K"], sort=True):
        style = P.series_style(alg, float("nan"), str(g["calibration"].iloc[0]), by="algorithm")
        P.mean_band(ax, g, "epsilon", "share", errorbars=True, marker="o",
                    label=f"{P.algorithm_name(alg)}, K = {int(K):.0e}", **style)
    ax.axhline(1.0, color="0.15", lw=1.0, ls=(0, (5, 2)), label="uniform play (no learning)")
    ax.set_xscale("log")
    P.data_ticks(ax, np.sort(fin["epsilon"].unique()).astype(float))
    d, H, scale = (fin[c].iloc[0] for c in ("d", "H", "gap_scale"))
    ax.set(xlabel="ε", ylabel="regret at K / uniform play's regret", ylim=(0, 1.15),
           title=f"family hard at K (d={int(d)} H={int(H)}, gap ×{scale:g})")
    P.flush_notes(ax)


def audit_fig(tables: Tables):
    full = tables["linmix_audit"]
    df = as_run(full).sort_values(["mechanism", "calibration", "epsilon"], kind="stable")
    printed = printed_rows(full)
    setting = [f"{P.algorithm_name(m)}\n{c}" for m, c in zip(df["mechanism"], df["calibration"])]
    x = np.arange(len(df))
    fig, axes = P.subplots(1, 2 if len(printed) else 1, panel=(6.0, 4.4))
    if len(printed):
        draw_printed(axes[0, 1], printed, "Z1")
    ax = axes[0, 0]
    ax.bar(x, df["eps_lb"].clip(lower=0), color=[P.CALIBRATION_COLORS.get(c, "0.5") for c in df["calibration"]],
           label="audited ε_lb")
    ax.scatter(x, df["eps_exact"], color="k", marker="x", zorder=3, label="accounted ε (replacement Δ)")
    ax.scatter(x, df["epsilon"], color="0.3", marker="_", s=400, zorder=3, label="claimed ε")
    ax.set_xticks(x, setting, fontsize=7)
    P.finish_axes(ax, log="", ylabel="ε")
    fig.suptitle("Linear mixture privatizers: privacy audit")
    return fig


def _finish_panel(ax, **labels) -> None:
    """Log axes, readable ticks and labels; the panel's legend holds its theory rate only
    (the series go in one figure legend)."""
    P.finish_axes(ax, legend_kw={"keep": P.is_reference, "loc": "upper left"}, **labels)


def _worst_panel(ax, rows: pd.DataFrame) -> None:
    """Z7's worst case over fixed gaps (:func:`dprl.analysis.claims.linmix.worst_case`): per
    algorithm and K_max with three or more gaps, the seed mean of the largest regret over the
    gaps at each K read, and uniform play's regret at the largest gap (dash-dot: ∝ K)."""
    drawn = False
    for style, g in _groups(rows, by="algorithm"):
        for _, gk in g.groupby("K"):
            if gk["gap_scale"].nunique() < 3:
                continue
            w = worst_case(gk)
            if w.empty:
                continue
            P.mean_band(ax, w, "episode", "regret", positive=True, **{k: v for k, v in style.items() if k != "ls"})
            top = gk[gk["gap"] == gk["gap"].max()].groupby("episode")["uniform_at"].mean()
            top = top[top.index >= w["episode"].min()]
            ax.plot(top.index, top.to_numpy(), ls="-.", color=style["color"], lw=1.0)
            drawn = True
    if not drawn:
        P.empty_panel(ax, "fewer than three fixed gaps in this preset")
        return
    P.reference_rate(ax, REGRET_EXPONENT, "K")
    _finish_panel(ax, title="worst case over fixed gaps (dash-dot: uniform play at the largest gap)",
                  xlabel="K (checkpoints of each fixed-gap run)", ylabel="largest regret over the gaps at K")


def hard_regret(tables: Tables):
    """The family hard at K (``linmix_hard`` and ``linmix_hard_long``: one run per K on the Zhou-Gu-Szepesvári
    instance tuned to K). Left: regret at K vs K at the main d, per algorithm and ε (seed
    mean, 95% bootstrap error bars), the √K reference and each private series' regime
    start (10·T*, Z7's criterion). Right: regret vs d − 1 at the K of the d grid, with the
    slope-1 reference of Ω(dH√K) (Z8). Third panel (``linmix_hard_gaps``, when run): at each
    K the worst regret over the fixed gaps (seed mean), against uniform play's at the grid's
    largest gap (∝ K, no information) and the √K reference (Z7's worst case)."""
    df = stacked_final_rows(tables, HARD_TABLES)
    per_d = df.groupby("K")["d"].nunique()
    k_d = float(per_d.idxmax()) if len(per_d) and per_d.max() >= 2 else float("nan")
    main_d = int(df["d"].mode().iloc[0]) if len(df) else 0
    gaps = present_tables(tables, GAPS_TABLES)
    fig, axes = P.subplots(1, 3 if gaps else 2, panel=(5.6, 4.4))
    left, right = axes[0][:2]
    if gaps:
        _worst_panel(axes[0][2], gap_rows(pd.concat([t for _, t in gaps], ignore_index=True)))
    fam = df[df["d"] == main_d]
    for style, g in _groups(fam, by="algorithm"):
        if g["K"].nunique() < 2:
            continue
        P.mean_band(left, g, "K", "regret", positive=True, errorbars=True, **{k: v for k, v in style.items() if k != "ls"})
        if g["calibration"].iloc[0] != "none":
            need = float(g["horizon_needed"].median())
            P.mark_burn_in(left, need, style["color"], within=(g["K"].min(), g["K"].max()),
                           beyond=f"{style['label']} regime start 10·T*")
    P.reference_rate(left, REGRET_EXPONENT, "K")
    _finish_panel(left, title=f"regret at K on the instance hard at K (d = {main_d})",
                  xlabel="K (each point: its own run on the instance tuned to K)", ylabel="cumulative regret at K")
    if np.isfinite(k_d):
        grid = df[df["K"] == k_d].assign(informative=lambda x: x["d"] - 1)
        for style, g in _groups(grid, by="algorithm"):
            P.mean_band(right, g, "informative", "regret", positive=True, errorbars=True,
                        **{k: v for k, v in style.items() if k != "ls"})
        P.reference_rate(right, 1.0, "d")
        _finish_panel(right, title=f"regret vs dimension at K = {k_d:.3g}", xlabel="d − 1 (informative action coordinates)",
                      ylabel="cumulative regret at K")
        P.data_ticks(right, sorted(grid["informative"].unique()))
    else:
        P.empty_panel(right, "one d per K in this preset")
    # one legend outside the panels (they share their series): inside, up to 8 series of the
    # full preset hide the error bars
    burn_in = P.burn_in_legend_entry("10·T*")
    series = {lab: h for lab, h in P.handles_of(list(axes[0])).items() if not P.is_reference(h)}
    P.figure_legend(fig, {**series, **({burn_in.get_label(): burn_in} if P.proxy_drawn(burn_in, [left]) else {})})
    fig.suptitle("Linear mixture: the Zhou, Gu, Szepesvári (2021) instance hard at K (seed mean, 95% bootstrap error bars)")
    return fig
