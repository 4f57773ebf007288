"""Figures of Vietri et al. (2020): the audit of the counters, regret, privacy cost, PAC counts,
S-scaling, private BAI, and PUCB's burn-in regime. Every function takes the tables and returns the figure; the
catalog renders it (:func:`dprl.analysis.plotting.render`)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from dprl.analysis import plotting as P
from dprl.analysis.base import Tables
from dprl.analysis.audit_power import AUDIT_ALPHA
from dprl.analysis.claims.tabular import (
    HARD_FAMILY, HARD_POINT, hard_family, REGRET_TABLES, V1_LABELS, V3_CAP_SHARE, V6_EPS, V6_REGIME, theorem6_bound,
    uniform_regret, v1_audits, v3_family_costs,
)
from dprl.analysis.regime import ONSET_DECADES, median_onset
from dprl.analysis.selection import privacy_cost
from dprl.analysis.selection import final_rows, present_tables
from dprl.experiments.registry import plugins

REGRET_EXPONENT = 0.5  # V2: regret ∝ √T
COST_EPS_EXPONENT = -1.0  # V3: privacy cost ∝ 1/ε
PAC_EXPONENT = 1.0  # V5: α-suboptimal episodes ∝ 1/(αε)
ONSET_LABEL = "measured end of the clamp (one per seed, series colour)"


def _panels(tables: Tables, frame=lambda df: df) -> list[tuple[str, pd.DataFrame]]:
    """One panel per (regret table, instance), in :data:`REGRET_TABLES` order: its title (the
    instance, and the table's horizon when it is not the first table) and ``frame`` of its rows."""
    out = []
    for name, df in present_tables(tables, REGRET_TABLES):
        df = frame(df)
        for env in sorted(df["env_label"].unique()):
            title = P.environment_name(env)
            if name != REGRET_TABLES[0]:
                title += f" (T = {float(tables[name]['episode'].max()):.2g}, {name})"
            out.append((title, df[df["env_label"] == env]))
    return out


def _series(df: pd.DataFrame) -> list[tuple[dict, pd.DataFrame]]:
    """(style with label, rows) per algorithm × ε × calibration, in a fixed order."""
    out = []
    for (alg, eps, cal), g in df.groupby(["algorithm", "epsilon", "calibration"], sort=True):
        style = P.series_style(alg, eps, cal)
        out.append(({**style, "label": P.series_label(alg, eps, cal)}, g))
    return out


def regret_loglog(tables: Tables):
    panels = _panels(tables)
    fig, axes = P.subplots(1, len(panels), panel=(5.4, 4.2))
    for ax, (title, g) in zip(axes[0], panels):
        marks = []
        for style, gr in _series(g):
            P.mean_band(ax, gr, "episode", "regret", positive=True, **style)
            if "burn_in_episodes" in gr and gr["algorithm"].iloc[0] == "pucb":
                # PUCB's predicted burn-in T* (agents/tabular/regime.py), seed median
                marks.append(P.mark_burn_in(ax, float(gr["burn_in_episodes"].median()), style["color"],
                                            within=(gr["episode"].min(), gr["episode"].max())))
        if marks and not any(marks):
            P.note(ax, "every PUCB burn-in T* lies beyond the horizon (not drawn)")
        P.reference_rate(ax, REGRET_EXPONENT, "T")
        P.finish_axes(ax, extra=[P.burn_in_legend_entry("T*")], xlabel="episodes T", ylabel="cumulative regret",
                      title=title)
    fig.suptitle("Cumulative exact regret (seed mean, 95% bootstrap band)")
    return fig


def privacy_cost_eps(tables: Tables):
    """V3: the privacy cost at the final T against ε per regret instance and, where
    ``tabular_hard_eps`` ran, on the Figure 1 family hard at T (its own panel, with the cap
    the cost cannot pass: uniform play's regret minus UBEV's)."""
    panels = _panels(tables, lambda df: final_rows(privacy_cost(df))) or [("(none)", None)]
    _, family = v3_family_costs(tables)
    family = family.groupby(["calibration", "env_label"]).filter(lambda g: g["epsilon"].nunique() >= 2) if len(family) else family
    fig, axes = P.subplots(1, len(panels) + (len(family) > 0), panel=(5.0, 4.0))
    if len(family):
        _family_cost_eps(axes[0, -1], family)
    for ax, (title, g) in zip(axes[0], panels):
        if g is None:
            P.empty_panel(ax)
            continue
        for (alg, cal), gc in g.groupby(["algorithm", "calibration"], sort=True):
            # PUCB's two calibrations: told apart by colour, marker and line style (the
            # algorithm's colour alone made "paper" and "tight" look identical); another
            # private algorithm (a plug-in, against the baseline it declares) in its own colour
            style = P.calibration_style(cal) if alg == "pucb" else {**P.calibration_style(cal), "color": P.algorithm_color(alg)}
            P.mean_band(ax, gc, "epsilon", "cost", label=P.series_label(alg) + f" ({cal})", **style)
        P.reference_rate(ax, COST_EPS_EXPONENT, "ε")
        ax.axhline(0, color="0.6", lw=0.5)
        P.finish_axes(ax, log="x", xlabel="ε", ylabel="Regret(private) − Regret(its baseline) at the final T",
                      title=title)
    fig.suptitle("Privacy cost at the final T against ε (paired by seed; seed mean, 95% bootstrap band)")
    return fig


def _family_cost_eps(ax, cost: pd.DataFrame) -> None:
    """V3 on the family: the cost against ε per point, its cap, and the ε the claim fits
    (cost at most ``V3_CAP_SHARE`` of the cap) told apart from the capped ones (hollow)."""
    for (cal, _label), g in cost.groupby(["calibration", "env_label"], sort=True):
        r = g.iloc[0]
        style = P.series_style("pucb", None, cal, by="algorithm")
        means = P.mean_band(ax, g, "epsilon", "cost", label=f"PUCB − UBEV ({cal}), S = {int(r['S'])}, T = {int(r['T']):.0e}, "
                            f"gap ×{r['env.gap_scale']:g}", marker="o", positive=True, **style)
        capped = g.groupby("epsilon")["share"].mean() > V3_CAP_SHARE
        hollow = means[capped.reindex(means.index, fill_value=False)]
        ax.plot(hollow.index, hollow["mean"], ls="none", marker="o", ms=7, mfc="white", color=style["color"],
                label=f"cost above {V3_CAP_SHARE:g} of its cap (left out of the fit)")
        cap = g.groupby("epsilon")["cap"].mean()
        ax.plot(cap.index, cap.to_numpy(), color="0.4", ls=":", lw=1.0, label="cap: uniform play's regret − UBEV's")
    P.reference_rate(ax, COST_EPS_EXPONENT, "ε")
    P.finish_axes(ax, xlabel="ε", ylabel="privacy cost at T", title="Figure 1 family hard at T")


def pac_counts(tables: Tables):
    df = final_rows(tables["tabular_pac"]).copy()
    pu = df[df["algorithm"] == "pucb"].copy()
    ub = df[df["algorithm"] == "ubev"]
    fig, axes = P.subplots(1, 1, panel=(6.0, 4.6))
    ax = axes[0, 0]
    if len(pu):
        pu["x"] = 1.0 / (pu["alpha"] * pu["epsilon"])
        for cal, g in pu.groupby("calibration", sort=True):
            style = P.series_style("pucb", None, cal, by="algorithm")
            P.mean_band(ax, g, "x", "n_subopt", label=f"PUCB ({cal})", errorbars=True, marker="o", positive=True,
                        **style)
        P.reference_rate(ax, PAC_EXPONENT, "1/(αε)")
        r = pu.iloc[0]
        S, A, H = r["S"], r["A"], r["H"]
        g = pu[pu["calibration"] == "tight"] if (pu["calibration"] == "tight").any() else pu
        means = g.groupby(["alpha", "epsilon"])["n_subopt"].mean()
        a = np.array([k[0] for k in means.index])
        e = np.array([k[1] for k in means.index])
        # the paper's bound shapes (Theorem 3 lower, Theorem 2 upper), each up to one constant
        lower = S * A * H**2 / a**2 + S * A * H * np.log(1 / 0.05) / (a * e)
        upper = S * A * H**4 / a**2 + S**2 * A * H**4 / (e * a)
        order = np.argsort(1 / (a * e))
        pos = means.to_numpy() > 0
        for shape, name, ls in ((lower, "lower-bound shape", (0, (3, 1, 1, 1))), (upper, "upper-bound shape", "-.")):
            if pos.any():
                c = np.exp(np.mean(np.log(means.to_numpy()[pos] / shape[pos])))  # least squares in log space
                ax.plot((1 / (a * e))[order], (c * shape)[order], color="0.2", ls=ls, lw=0.9,
                        label=f"{name} × {c:.2g} (fitted constant)")
    # a plug-in's counts in its own colour (V5's shapes are PUCB's analysis, fitted to PUCB only)
    mine = df[df["algorithm"].isin(plugins()) & (df["calibration"] != "none")].copy()
    mine["x"] = 1.0 / (mine["alpha"] * mine["epsilon"])
    for (alg, cal), g in mine.groupby(["algorithm", "calibration"], sort=True):
        P.mean_band(ax, g, "x", "n_subopt", label=f"{P.algorithm_name(alg)} ({cal})", errorbars=True, marker="D",
                    positive=True, **P.series_style(alg, None, cal, by="algorithm"))
    for _alpha, g in ub.groupby("alpha"):
        ax.axhline(g["n_subopt"].mean(), color=P.algorithm_color("ubev"), lw=0.6, ls=":",
                   label="UBEV (one line per α)")
    P.finish_axes(ax, xlabel="1/(αε)", ylabel="α-suboptimal episodes up to T")
    fig.suptitle("Lower-bound instances (paper's Figure 1): seed mean, 95% bootstrap interval")
    return fig


def scaling_S(tables: Tables):
    """V7: the privacy cost against S on the Figure 1 family hard at T (``tabular_hard_cost``,
    one T and gap scale per series) and, where ``tabular_scaling`` ran (``full``), on garnet
    in a second panel."""
    fam = final_rows(privacy_cost(tables["tabular_hard_cost"]))
    fam = fam[fam["algorithm"] == "pucb"]
    garnet = present_tables(tables, ("tabular_scaling",))
    fig, axes = P.subplots(1, 2 if garnet else 1, panel=(5.6, 4.3))
    ax = axes[0, 0]
    for (eps, cal, T, scale), g in fam.groupby(["epsilon", "calibration", "T", "env.gap_scale"], sort=True):
        P.mean_band(ax, g, "S", "cost", label=f"{P.series_label('pucb', eps, cal)}, family T = {int(T):.0e}, gap ×{scale:g}",
                    marker="s", positive=True, **P.series_style("pucb", eps, cal, by="epsilon"))
    for exponent in (1.0, 2.0):  # V7: between linear and quadratic in S
        P.reference_rate(ax, exponent, "S")
    P.finish_axes(ax, xlabel="S (Figure 1 family hard at T: n + 2 states)", ylabel="privacy cost at T")
    if garnet:
        cost = final_rows(privacy_cost(garnet[0][1]))
        ax = axes[0, 1]
        for (alg, eps, cal), g in cost.groupby(["algorithm", "epsilon", "calibration"], sort=True):
            by = "epsilon" if alg == "pucb" else "algorithm"  # a plug-in in its own colour
            P.mean_band(ax, g, "S", "cost", label=P.series_label(alg, eps, cal), marker="o", positive=True,
                        **P.series_style(alg, eps, cal, by=by))
        for exponent in (1.0, 2.0):
            P.reference_rate(ax, exponent, "S")
        P.finish_axes(ax, xlabel="S (garnet states)", ylabel="privacy cost at the final T")
    fig.suptitle("Privacy cost against S (seed mean, 95% bootstrap band)")
    return fig


def mab_pulls(tables: Tables):
    """V6: pulls of an α-suboptimal arm (trimmed mean over runs, what V6 fits) against ε,
    per α, with Lemma 8's bound dashed and, dotted, ``ε = α/40``: left of it the Laplace
    radius dominates and the pulls follow the 1/ε reference."""
    df = tables["private_mab"]
    y = "trimmed_mean_pulls_subopt" if "trimmed_mean_pulls_subopt" in df else "mean_pulls_subopt"
    fig, axes = P.subplots(1, 1, panel=(5.6, 4.3))
    ax = axes[0, 0]
    colors = P.categorical_colors(df["alpha"].unique())
    for alpha, g in df.groupby("alpha", sort=True):
        P.mean_band(ax, g, "epsilon", y, label=f"α={alpha:g}: measured", color=colors[alpha],
                    marker="o", positive=True)
        b = g.groupby("epsilon")["lemma8_bound"].mean()
        ax.plot(b.index, b.to_numpy(), color=colors[alpha], ls="--", label=f"α={alpha:g}: Lemma 8 bound")
    for alpha in sorted(df["alpha"].unique()):
        P.mark_burn_in(ax, alpha / V6_REGIME, color=colors[alpha], beyond=f"ε = α/{V6_REGIME:g} (α={alpha:g})")
    # the reference anchored on the largest α's private-regime points (the longest 1/ε stretch)
    private = df[(df["epsilon"] <= df["alpha"] / V6_REGIME) & (df["alpha"] == df["alpha"].max())]
    if private["epsilon"].nunique() >= 2:
        means = P.seed_means(private, "epsilon", y)
        P.reference_rate(ax, V6_EPS, "ε", means.index.to_numpy(float), means["mean"].to_numpy(float))
    extra = [P.line_handle(f"ε = α/{V6_REGIME:g} (α's colour): private regime to its left", match={"gid": "burn-in"},
                           color="0.2", **P.BURN_IN_STYLE)] if any(line.get_gid() == "burn-in" for line in ax.get_lines()) else []
    P.finish_axes(ax, xlabel="ε", ylabel="pulls of an α-suboptimal arm", extra=extra)
    fig.suptitle(f"{P.algorithm_name('dp_se')}: pulls of an α-suboptimal arm vs ε (seed mean, 95% band)")
    return fig


def regime(tables: Tables):
    """Per-episode regret ``R(T)/T`` of every PUCB setting against ``T/T*``, ``T*`` the job's
    predicted burn-in (``agents/tabular/regime.py``, median over seeds): if the clamp of the
    optimistic values is the mechanism, the curves of every ε and calibration collapse, flat
    up to ``T/T* ≈ 1`` and falling after. Circles: the measured ends of the clamp (the same
    event) on the same axis, so their distance from ``T/T* = 1`` is the prediction's error;
    dash-dotted: ``T = 10·T*``, the predicted side of the criterion rates are judged by (a
    decade past the later of ``T*`` and the measured end)."""
    panels = _panels(tables, lambda df: df[df["algorithm"] == "pucb"].assign(rate=df["regret"] / df["episode"]))
    panels = panels or [("(none)", None)]
    fig, axes = P.subplots(1, len(panels), panel=(5.4, 4.2))
    span = 10**ONSET_DECADES
    for ax, (title, g) in zip(axes[0], panels):
        if g is None or g.empty:
            P.empty_panel(ax)
            continue
        no_onset = []
        for style, gs in _series(g):
            t_star = float(gs["burn_in_episodes"].median())
            ends = gs.groupby("seed")["onset_episode"].first()
            label = style["label"]
            style["label"] = f"{label}, T*={t_star:.2g}{P.prediction_ratio(t_star, median_onset(gs))}"
            s = P.mean_band(ax, gs, "episode", "rate", x_scale=t_star, positive=True, **style)
            if not P.mark_onsets(ax, s, ends, t_star, style["color"], ONSET_LABEL):
                no_onset.append(label)
        if no_onset:  # the title promises circles: say whose are missing, and why
            P.note(ax, "no measured end of the clamp within the horizon (no circle): " + ", ".join(no_onset))
        P.mark_burn_in(ax, 1.0, label="T = T* (predicted burn-in)", beyond="T = T*")
        P.mark_x(ax, span, label=f"T = {span:g}·T* (rates judged a decade past max(T*, measured end))",
                 beyond=f"T = {span:g}·T*", color="0.2", lw=0.9, ls="-.")
        P.finish_axes(ax, xlabel="T / T*", ylabel="regret per episode R(T)/T", title=title)
    fig.suptitle("PUCB's burn-in: per-episode regret against T/T* (seed mean, 95% bootstrap band; "
                 "circles: measured ends of the clamp)")
    return fig


def hard_regret(tables: Tables):
    """Regret at T on the Figure 1 instance tuned to T (``tabular_hard`` and
    ``tabular_hard_short``: one run per T, the same ``I`` per seed at every T), one panel per family (n, m, H, gap scale): UBEV and
    PUCB per ε (seed mean, 95% bootstrap error bars), Theorem 6's shape
    ``c·(sqrt(HSAT) + SAH ln(T)/ε)`` per ε with V8's fitted ``c`` (min over all points of
    PUCB's regret / bound), uniform play's regret (the no-information reference, which is
    ``∝ √T`` by construction), the √T reference, and PUCB's predicted burn-in T*."""
    df = final_rows(hard_family(tables)).copy()
    df["uniform"] = uniform_regret(df)
    pu = df[df["algorithm"] == "pucb"]
    c = float("nan")
    if len(pu):
        sq, pr = theorem6_bound(pu["S"], pu["A"], pu["H"], pu["T"], pu["epsilon"])
        ratio = pu.assign(r=pu["regret"].to_numpy(float) / (sq + pr))
        c = float(ratio.groupby(HARD_POINT)["r"].mean().min())
    fams = sorted({tuple(k) for k in df[HARD_FAMILY].itertuples(index=False)}) or [None]
    fig, axes = P.subplots(1, len(fams), panel=(5.6, 4.4))
    for ax, fam in zip(axes[0], fams):
        if fam is None:
            P.empty_panel(ax)
            continue
        g = df[np.logical_and.reduce([df[k] == v for k, v in zip(HARD_FAMILY, fam)])]
        Ts = np.sort(g["T"].unique()).astype(float)
        marks = []
        for style, gs in _series(g):
            P.mean_band(ax, gs, "T", "regret", positive=True, errorbars=True, marker="o", **style)
            if gs["algorithm"].iloc[0] == "pucb":
                eps = float(gs["epsilon"].iloc[0])
                first = gs.iloc[0]
                sq, pr = theorem6_bound(first["S"], first["A"], first["H"], Ts, eps)
                if np.isfinite(c) and len(Ts) > 1:
                    ax.plot(Ts, c * (sq + pr), color=style["color"], ls="-.", lw=0.9,
                            label=f"Theorem 6 shape c·(√HSAT + SAH ln T/ε), {P.epsilon_text(eps)}, c = {c:.3g}")
                t_star = float(gs.loc[gs["T"] == gs["T"].max(), "burn_in_episodes"].median())
                marks.append(P.mark_burn_in(ax, t_star, style["color"], within=(Ts.min(), Ts.max()),
                                            beyond=f"PUCB {P.epsilon_text(eps)} burn-in T*"))
        uni = g.groupby("T")["uniform"].mean()
        if len(uni) > 1:
            # on top and dashed: PUCB's regret is within a few % of it, and a wide grey band
            # drawn under the curves was hidden by them
            ax.plot(uni.index.to_numpy(float), uni.to_numpy(float), color="0.15", lw=1.0, ls=(0, (5, 2)), zorder=5,
                    label="uniform play (no learning)")
        P.reference_rate(ax, REGRET_EXPONENT, "T")
        if any(marks):
            ax.add_artist(P.burn_in_legend_entry("T*"))
        n, m, H, scale = fam
        P.log_axes(ax)
        P.readable_log_ticks(ax)
        P.data_ticks(ax, Ts)  # the T grid is the tick set: the runs' horizons
        ax.set(xlabel="T (each point: its own run on the instance tuned to T)", ylabel="cumulative regret at T",
               title=f"S={int(n) + 2} A={int(m) + 1} H={int(H)}, gap α'(T) = {scale:g}·sqrt({int(n * m)}/T)")
        P.flush_notes(ax)
    # one legend outside the panels: the series coincide (every learner loses what uniform
    # play loses at this gap), so a legend inside would hide them
    P.figure_legend(fig, P.handles_of(axes[0]))
    fig.suptitle("Regret on the Figure 1 family hard at T (seed mean, 95% bootstrap error bars)")
    return fig


# V1's two audited mechanisms (dprl.agents.tabular.privacy.audited_pair): the ``counter`` row,
# every other mechanism id an audit of all counters of an episode (``episode_*``)
AUDIT_PANELS = (("counter", "one counter,\naudited at its level ε'"),
                ("episode", "all counters of an episode,\naudited at ε"))
EXACT_GID = "exact-epsilon"


def audit(tables: Tables):
    """V1: every audit a V1 row reads (:func:`dprl.analysis.claims.tabular.v1_audits`) as its
    audited lower bound over the claimed ε, ``ε_lb/ε``, one panel per audited mechanism (one
    counter at ``ε'``, all counters of an episode at ``ε``: Theorem 1's composition), per V1
    row's calibration (the printed ``ε' = ε/(3H)``, the package's corrected ``ε/(6H)``, tight)
    and per algorithm (PUCB, and each plug-in whose counters are audited), a marker per ε when
    several were audited. ``ε_lb`` is the lower end of the audit's one-sided Clopper–Pearson
    interval ``[ε_lb, ∞)`` at confidence ``1 − α`` (the arrow); V1 holds where every point is
    at or below 1. Open markers (episode panel): the exact ε of the agent's Laplace scale under
    replacement over ε."""
    df = v1_audits(tables["tabular_audit"])
    df["ratio"] = (df["eps_lb"] / df["claimed_epsilon"]).clip(lower=0.0)  # a negative bound says nothing more
    df["exact"] = df["eps_exact"] / df["epsilon"] if "eps_exact" in df else np.nan
    df["panel"] = np.where(df["mechanism"] == "counter", "counter", "episode")
    # V1's row order: the printed constants, then the package's two calibrations
    order = [*V1_LABELS.values(), *sorted(set(df["v1_calibration"]) - set(V1_LABELS.values()))]
    algs = sorted(df["algorithm"].unique(), key=lambda a: (a in plugins(), P.algorithm_name(a)))
    epsilons = sorted(df["epsilon"].unique())
    markers = {e: P.COINCIDE_MARKERS[i % len(P.COINCIDE_MARKERS)] for i, e in enumerate(epsilons)}
    slots = [(a, e) for a in algs for e in epsilons]  # one x offset per (algorithm, ε) in each calibration
    width = 0.7 / len(slots)
    labelled = len(slots) <= 4  # the values beside the points, while there is room for them
    top = max(float(df["ratio"].max()), float(np.nanmax(df["exact"].to_numpy(float), initial=0.0)), 1.0) * 1.3
    arrow = 0.12 * top  # the interval is unbounded above: a lower-limit caret, not a length
    # each panel as wide as its calibrations (the counter panel has no printed row) and slots
    ncats = [max(df.loc[df["panel"] == panel, "v1_calibration"].nunique(), 1) for panel, _ in AUDIT_PANELS]
    per_cat = max(1.9, 0.3 * len(slots))
    panel_width = max(per_cat * sum(ncats) / len(ncats) + 0.8, 3.4)  # the titles' width at one calibration
    fig, axes = P.subplots(1, len(AUDIT_PANELS), panel=(panel_width, 4.4), sharey=True,
                           gridspec_kw={"width_ratios": ncats})
    for ax, (panel, title) in zip(axes[0], AUDIT_PANELS):
        g = df[df["panel"] == panel]
        cats = [c for c in order if c in set(g["v1_calibration"])]
        ax.axhline(1.0, color="0.2", ls="--", lw=1.0, label="ε_lb = claimed ε (V1: every point at or below)")
        for j, (alg, eps) in enumerate(slots):
            ga = g[(g["algorithm"] == alg) & (g["epsilon"] == eps)]
            if ga.empty:
                continue
            x = np.array([cats.index(c) for c in ga["v1_calibration"]], float) - 0.35 + width * (j + 0.5)
            color = P.algorithm_color(alg)
            ax.errorbar(x, ga["ratio"], yerr=[np.zeros(len(x)), np.full(len(x), arrow)], lolims=True, fmt=markers[eps],
                        color=color, ms=6, capsize=0, lw=1.0, label=P.algorithm_name(alg))
            for xi, r in zip(x, ga["ratio"]):
                if labelled or r > 1:
                    ax.annotate(f"{r:.2f}", (xi, r), xytext=(0, -12), textcoords="offset points", ha="center",
                                fontsize=6.5, color=color)
            if panel == "episode" and ga["exact"].notna().any():
                ax.plot(x, ga["exact"], ls="none", marker=markers[eps], ms=8, mfc="none", mec=color, mew=1.2,
                        gid=EXACT_GID)
        if not cats:
            P.empty_panel(ax, "no audit of this mechanism in this preset")
        ax.set_xticks(range(len(cats)), [c.replace(": ", ":\n", 1) for c in cats], fontsize=7.5)
        ax.set(xlim=(-0.6, max(len(cats), 1) - 0.4), ylim=(0.0, top), title=title, xlabel="V1 row (calibration)")
    axes[0, 0].set_ylabel("audited lower bound ε_lb / claimed ε")
    handles = P.handles_of(axes[0])
    proxies = [P.line_handle("exact ε of the agent's Laplace scale under replacement / ε (open)",
                             match={"gid": EXACT_GID}, ls="none", marker="o", mfc="none", ms=8)]
    if len(epsilons) > 1:
        proxies += [P.line_handle(P.epsilon_text(e), match={"marker": m}, ls="none", marker=m, ms=6)
                    for e, m in markers.items()]
    handles.update({h.get_label(): h for h in proxies if P.proxy_drawn(h, axes[0])})
    P.figure_legend(fig, handles)
    runs = sorted(df["runs"].astype(int).unique())
    fig.suptitle(f"Privacy audit of the tabular counters: ε_lb, the lower end of a one-sided Clopper–Pearson "
                 f"interval [ε_lb, ∞) at confidence {1 - AUDIT_ALPHA:g} (arrow), over the claimed ε "
                 f"({', '.join(f'{n:,}' for n in runs)} runs per input"
                 + (f", {P.epsilon_text(epsilons[0])})" if len(epsilons) == 1 else ")"))
    return fig
