"""Figures of the shared mechanisms: counter error vs bounds, audited ε vs claimed ε."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import seaborn as sns  # noqa: E402

from dprl.analysis.base import Tables  # noqa: E402
from dprl.analysis.plotting import save  # noqa: E402


def counter_error(tables: Tables, stem: Path) -> None:
    df = tables["counter_error"].copy()
    df["ε"] = df["epsilon"].map(lambda e: f"{e:g}")
    algs = sorted(df["algorithm"].unique())
    cals = sorted(df["calibration"].unique())
    fig, axes = plt.subplots(len(cals), len(algs), figsize=(4.2 * len(algs), 3.4 * len(cals)), squeeze=False, sharex=True)
    palette = dict(zip(sorted(df["ε"].unique(), key=float), sns.color_palette("viridis", df["ε"].nunique())))
    for i, cal in enumerate(cals):
        for j, alg in enumerate(algs):
            ax = axes[i, j]
            g = df[(df["calibration"] == cal) & (df["algorithm"] == alg)]
            for eps, ge in g.groupby("ε"):
                c = palette[eps]
                stats = ge.groupby("t")["err_q"].agg(["mean", "min", "max"])
                ax.plot(stats.index, stats["mean"], color=c, label=f"ε={eps}")
                ax.fill_between(stats.index, stats["min"], stats["max"], color=c, alpha=0.25, lw=0)
                bounds = ge.groupby("t")[["bound_paper", "bound_tight"]].mean()
                ax.plot(bounds.index, bounds["bound_paper"], color=c, ls="--", lw=1)
                ax.plot(bounds.index, bounds["bound_tight"], color=c, ls=":", lw=1)
            ax.set_xscale("log")
            ax.set_yscale("log")
            ax.set_title(f"{alg} — {cal} calibration", fontsize=9)
            ax.set_xlabel("t (stream elements)")
            ax.set_ylabel("error (1-β quantile)")
            if i == 0 and j == 0:
                handles, labels = ax.get_legend_handles_labels()
                handles += [plt.Line2D([], [], color="k", ls="--"), plt.Line2D([], [], color="k", ls=":")]
                labels += ["paper bound", "tight bound"]
                ax.legend(handles, labels, fontsize=7)
    fig.suptitle("Tree-counter error (solid: (1-β)-quantile over counters, band: range over seeds) vs bounds")
    fig.tight_layout()
    save(fig, stem)


def audit(tables: Tables, stem: Path) -> None:
    frames = [tables["audit"]]
    if "audit_broken" in tables:
        frames.append(tables["audit_broken"])
    df = pd.concat(frames, ignore_index=True)
    df["variant"] = np.where(df["broken"] == "none", "correct", "broken: " + df["broken"].astype(str))
    df["audited ε_lb"] = df["eps_lb"].clip(lower=-0.5)
    fig, axes = plt.subplots(1, df["mechanism"].nunique(), figsize=(4.3 * df["mechanism"].nunique(), 3.8), squeeze=False, sharey=True)
    top = max(float(df["claimed_epsilon"].max()) * 1.2, 1.0)
    variants = sorted(df["variant"].unique(), key=lambda v: (v != "correct", v))
    colors = dict(zip(variants, sns.color_palette("tab10", len(variants))))
    ymax = min(max(float(df["eps_lb"].max()) * 1.08, top), 11.0)
    for ax, (mech, g) in zip(axes[0], df.groupby("mechanism")):
        for var, gv in g.groupby("variant"):
            shift = 1.0 + 0.04 * (variants.index(var) - (len(variants) - 1) / 2)
            ax.scatter(gv["claimed_epsilon"] * shift, gv["audited ε_lb"], s=22, color=colors[var], label=var,
                       marker="o" if var == "correct" else "X", edgecolor="k", linewidth=0.3)
        ax.plot([0, top], [0, top], color="k", lw=1, ls="--", label="ε_lb = ε")
        ax.set_xlim(0, top)
        ax.set_ylim(-0.6, ymax)
        ax.set_title(mech, fontsize=9)
        ax.set_xlabel("claimed ε")
        ax.legend(fontsize=6, loc="upper left")
    axes[0, 0].set_ylabel("audited lower bound ε_lb")
    fig.suptitle("Privacy audits: correct mechanisms stay below the diagonal, broken ones do not")
    fig.tight_layout()
    save(fig, stem)
