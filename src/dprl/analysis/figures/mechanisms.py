"""Figures of the shared mechanisms: counter error vs bounds, audited ε vs claimed ε. Every
function takes the tables and returns the figure; the catalog renders it."""

from __future__ import annotations

import numpy as np
import pandas as pd

from dprl.analysis import plotting as P
from dprl.analysis.base import Tables


def counter_error(tables: Tables):
    df = tables["counter_error"]
    df = df if "delta" in df else df.assign(delta=np.nan)  # ε-DP counters only
    algs = sorted(df["algorithm"].unique())
    cals = sorted(df["calibration"].unique())
    fig, axes = P.subplots(len(cals), len(algs), panel=(4.4, 3.5), sharex=True)
    for i, cal in enumerate(cals):
        for j, alg in enumerate(algs):
            ax = axes[i, j]
            g = df[(df["calibration"] == cal) & (df["algorithm"] == alg)]
            # one curve per (ε, δ): the full preset runs two δ per ε (never averaged together),
            # told apart by a marker per δ (the line styles are the bounds')
            several = g["delta"].nunique() > 1
            for (eps, delta), ge in g.groupby(["epsilon", "delta"], sort=True, dropna=False):
                c = P.epsilon_color(eps)
                label = P.epsilon_text(eps) + (f" δ={delta:g}" if several else "")
                P.mean_band(ax, ge, "t", "err_q", label=label, color=c, positive=True,
                            marker=P.delta_marker(delta) if several else None)
                bounds = ge.groupby("t")[["bound_paper", "bound_tight"]].mean()
                ax.plot(bounds.index, bounds["bound_paper"], color=c, ls="--", lw=1)
                ax.plot(bounds.index, bounds["bound_tight"], color=c, ls=":", lw=1)
            P.log_axes(ax)
            ax.set(title=f"{P.algorithm_name(alg)}, {cal} calibration", xlabel="t (stream elements)",
                   ylabel="error (1−β quantile over counters)")
            P.legend(ax, [P.line_handle("paper bound", ls="--"), P.line_handle("tight bound", ls=":")])
    fig.suptitle("Tree-counter error ((1−β)-quantile over counters; seed mean, 95% bootstrap band) against the bounds")
    return fig


CAP_DOTS = (":", (0, (1, 4)), (0, (4, 2, 1, 2)))


def _audit_alpha(df: pd.DataFrame) -> pd.Series:
    """The Clopper–Pearson level of each audit row: its ``alpha`` column, else the audit
    kind's declared default (the config sets none)."""
    if "alpha" in df:
        return df["alpha"].astype(float)
    from dprl.experiments.registry import kinds

    return pd.Series(float(kinds()["audit"].settings["alpha"].default), index=df.index)


def audit(tables: Tables):
    """Audited ε_lb against the claimed ε, correct and broken counters, with the largest
    ε_lb each audit can measure (:func:`dprl.privacy.audit.max_eps_lb`): broken counters
    that leak completely sit at that cap, a property of the run count, not of the mechanism."""
    from dprl.privacy.audit import max_eps_lb

    frames = [tables["audit"]] + ([tables["audit_broken"]] if "audit_broken" in tables else [])
    df = pd.concat(frames, ignore_index=True)
    df["variant"] = np.where(df["broken"] == "none", "correct", "broken: " + df["broken"].astype(str))
    df["audited ε_lb"] = df["eps_lb"].clip(lower=-0.5)
    mechs = sorted(df["mechanism"].unique())
    fig, axes = P.subplots(1, len(mechs), panel=(4.4, 3.8), sharey=True)
    top = max(float(df["claimed_epsilon"].max()) * 1.2, 1.0)
    variants = sorted(df["variant"].unique(), key=lambda v: (v != "correct", v))
    colors = P.categorical_colors(variants)
    df["cap"] = [max_eps_lb(int(n), float(d), float(a)) for n, d, a in
                 zip(df["runs"], df["claimed_delta"].fillna(0.0), _audit_alpha(df))]
    finite = df["eps_lb"][np.isfinite(df["eps_lb"])]
    ymax = max(float(finite.max()) if len(finite) else 0.0, float(df["cap"].max()), top) * 1.08
    # one dotted pattern per run count (correct and broken audits may differ, e.g. in `full`)
    run_counts = sorted(df["runs"].astype(int).unique())
    for ax, mech in zip(axes[0], mechs):
        g = df[df["mechanism"] == mech]
        for (runs, cap), _ in g.groupby(["runs", "cap"], sort=True):
            ls = CAP_DOTS[run_counts.index(int(runs)) % len(CAP_DOTS)]
            ax.axhline(cap, color="0.45", ls=ls, lw=1.0, zorder=1,
                       label=f"largest measurable ε_lb with {int(runs):,} runs: {cap:.1f}")
        for var, gv in g.groupby("variant", sort=True):
            shift = 1.0 + 0.04 * (variants.index(var) - (len(variants) - 1) / 2)
            ax.scatter(gv["claimed_epsilon"] * shift, gv["audited ε_lb"], s=22, color=colors[var], label=var,
                       marker="o" if var == "correct" else "X", edgecolor="k", linewidth=0.3)
        ax.plot([0, top], [0, top], color="0.2", lw=1, ls="--", label="ε_lb = ε")
        ax.set(xlim=(0, top), ylim=(-0.6, ymax), title=P.algorithm_name(mech), xlabel="claimed ε")
    axes[0, 0].set_ylabel("audited lower bound ε_lb")
    # one legend beside the panels: inside, it covered the broken counters sitting at the cap
    P.figure_legend(fig, P.handles_of(axes[0]))
    fig.suptitle("Privacy audits: correct mechanisms stay below the diagonal, broken ones do not (dotted: the "
                 "largest ε_lb the run count can show; a counter that leaks completely sits there)")
    return fig
