"""Figures of Balle, Gomrokchi, Precup (2016): RMSE vs m, noise scale vs m, the λ grid, the
regimes against ε·m."""

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
from dprl.analysis.stats import BOOT_SEED, loglog_slope  # noqa: E402

LABELS = {"lsw": "LSW", "lsl": "LSL", "dp_lsw": "DP-LSW", "dp_lsl": "DP-LSL", "gs_dp_lsl": "GS-DP-LSL"}
ORDER = ["LSW", "LSL", "DP-LSW", "DP-LSL", "GS-DP-LSL"]
STYLE = dict(zip(ORDER, sns.color_palette("colorblind", len(ORDER))))


def _band(ax: plt.Axes, df: pd.DataFrame, y: str, label: str) -> None:
    """Seed mean and 95% bootstrap CI of the mean (seaborn, fixed seed) on log-log axes."""
    sns.lineplot(data=df, x="m", y=y, ax=ax, label=label, color=STYLE[label], marker="o", markersize=3,
                 errorbar=("ci", 95), n_boot=1000, seed=BOOT_SEED, estimator="mean")


def rmse_loglog(tables: Tables, stem: Path) -> None:
    df = tables["pe_batch"].copy()
    df["alg"] = df["algorithm"].map(LABELS)
    feats = sorted(df["features"].unique())
    eps = sorted(df.loc[np.isfinite(df["epsilon"]), "epsilon"].unique())
    fig, axes = plt.subplots(len(feats), len(eps), figsize=(4.6 * len(eps), 3.6 * len(feats)), squeeze=False, sharex=True)
    for i, feat in enumerate(feats):
        for j, e in enumerate(eps):
            ax = axes[i, j]
            g = df[(df["features"] == feat) & ((df["epsilon"] == e) | ~np.isfinite(df["epsilon"]))]
            for label in ORDER:
                sub = g[g["alg"] == label]
                if not sub.empty:
                    _band(ax, sub, "rmse", label)
            ax.set_xscale("log")
            ax.set_yscale("log")
            ax.set_title(f"{feat} features, ε={e:g}, δ={df['delta'].dropna().iloc[0]:g}", fontsize=9)
            ax.set_xlabel("batch size m (trajectories)")
            ax.set_ylabel("RMSE ||V − Φθ||_ρ")
            ax.legend(fontsize=7)
    fig.suptitle(f"Policy evaluation error on the chain (mean and 95% CI over {df['seed'].nunique()} seeds)")
    fig.tight_layout()
    save(fig, stem)


def noise_scale(tables: Tables, stem: Path) -> None:
    df = tables["pe_batch"]
    df = df[df["algorithm"].isin(["dp_lsw", "dp_lsl", "gs_dp_lsl"])].copy()
    df["alg"] = df["algorithm"].map(LABELS)
    feats = sorted(df["features"].unique())
    eps = sorted(df["epsilon"].unique())
    fig, axes = plt.subplots(len(feats), len(eps), figsize=(4.6 * len(eps), 3.6 * len(feats)), squeeze=False, sharex=True)
    m_max = df["m"].max()
    for i, feat in enumerate(feats):
        for j, e in enumerate(eps):
            ax = axes[i, j]
            g = df[(df["features"] == feat) & (df["epsilon"] == e)]
            for label in ORDER[2:]:
                sub = g[g["alg"] == label]
                if sub.empty:
                    continue
                if label == "DP-LSW":
                    top = sub[sub["m"] >= m_max / 10 - 1e-9].groupby("m")["sigma"].mean()
                    slope = loglog_slope(top.index.to_numpy(float), top.to_numpy())
                    label_txt = f"DP-LSW (slope {slope:.2f} on top decade)"
                    # fitted line over the top decade, drawn through the last point
                    xs = top.index.to_numpy(float)
                    ax.plot(xs, top.iloc[-1] * (xs / xs[-1]) ** slope, color="k", ls="--", lw=1)
                    ax.plot(xs, top.iloc[-1] * (xs / xs[-1]) ** -1.0, color="grey", ls=":", lw=1)
                    sns.lineplot(data=sub, x="m", y="sigma", ax=ax, label=label_txt, color=STYLE[label], marker="o",
                                 markersize=3, errorbar=("ci", 95), n_boot=1000, seed=BOOT_SEED)
                else:
                    _band(ax, sub, "sigma", label)
            ax.set_xscale("log")
            ax.set_yscale("log")
            ax.set_title(f"{feat} features, ε={e:g} (dashed: fit, dotted: slope −1)", fontsize=9)
            ax.set_xlabel("batch size m (trajectories)")
            ax.set_ylabel("noise scale σ_X")
            ax.legend(fontsize=7)
    fig.suptitle(f"Output-perturbation noise scale (mean and 95% CI over {df['seed'].nunique()} seeds)")
    fig.tight_layout()
    save(fig, stem)


def lambda_heatmap(tables: Tables, stem: Path) -> None:
    df = tables["pe_lambda"]
    ms = sorted(df["m"].unique())
    decades = [m for m in ms if abs(np.log10(m) - round(np.log10(m))) < 1e-3]
    ms = decades if len(decades) >= 2 else ms  # one panel per decade of m (B5 reads every m)
    eps = sorted(df["epsilon"].unique())
    fig, axes = plt.subplots(len(eps), len(ms), figsize=(3.9 * len(ms), 3.3 * len(eps)), squeeze=False)
    for i, e in enumerate(eps):
        for j, m in enumerate(ms):
            g = df[(df["epsilon"] == e) & (df["m"] == m)]
            tab = np.log10(g.groupby(["c", "p"])["rmse"].mean().unstack("p")).sort_index(ascending=False)
            tab.index = [f"{c:.3g}" for c in tab.index]
            tab.columns = [f"{p:.3g}" for p in tab.columns]
            ax = axes[i, j]
            sns.heatmap(tab, ax=ax, cmap="viridis_r", annot=tab.shape[0] * tab.shape[1] <= 64, fmt=".2f",
                        annot_kws={"fontsize": 6}, cbar_kws={"label": "log10 RMSE"})
            ax.set_title(f"DP-LSL, ε={e:g}, m={m:g}", fontsize=9)
            ax.set_xlabel("exponent p")
            ax.set_ylabel("constant c")
    fig.suptitle(f"DP-LSL error over λ = ||ρ||_∞||Φ||_F² + c·m^p (log10 of the seed-mean RMSE, {df['seed'].nunique()} seeds)")
    fig.tight_layout()
    save(fig, stem)


def audit(tables: Tables, stem: Path) -> None:
    """Largest ε_lb over the replacement pairs, per mechanism variant and (ε, δ), one panel per
    audited DP-LSL λ and for DP-LSW; the claimed ε as a bar."""
    df = tables["pe_audit"].copy()
    df["setting"] = df.apply(lambda r: f"ε={r['epsilon']:g}, δ={r['delta']:g}", axis=1)
    df["panel"] = df.apply(lambda r: LABELS[r["algorithm"]] + (f", c={r['alg.c']:g}" if r["algorithm"] == "dp_lsl" else ""), axis=1)
    settings = sorted(df["setting"].unique(), key=lambda s: (float(s.split(",")[0][2:]), s))
    variants = ["correct"] + sorted(set(df["variant"]) - {"correct"})
    colors = dict(zip(variants, sns.color_palette("colorblind", len(variants))))
    panels = sorted(df["panel"].unique())
    fig, axes = plt.subplots(1, len(panels), figsize=(2.2 + 0.8 * len(settings) * len(panels), 3.6), sharey=True, squeeze=False)
    width = 0.8 / len(variants)
    for ax, panel in zip(axes[0], panels):
        g = df[df["panel"] == panel]
        best = g.groupby(["setting", "variant"])["eps_lb"].max()
        for i, s in enumerate(settings):
            claimed = df.loc[df["setting"] == s, "epsilon"].iloc[0]
            ax.hlines(claimed, i - 0.45, i + 0.45, color="k", lw=1.5, label="claimed ε" if i == 0 else None)
            for j, v in enumerate(variants):
                if (s, v) in best.index:
                    ax.scatter(i - 0.4 + width * (j + 0.5), max(best[s, v], 0.0), color=colors[v], s=26, zorder=3,
                               marker="o" if v == "correct" else "X", label=v if i == 0 else None)
        ax.set_xticks(range(len(settings)), settings, fontsize=7, rotation=30)
        ax.set_yscale("symlog", linthresh=0.1)
        ax.set_ylim(bottom=0.0)
        ax.set_title(panel, fontsize=9)
    axes[0, 0].set_ylabel("max audited ε_lb over pairs (clipped at 0)")
    handles = {lab: h for ax in axes[0] for h, lab in zip(*ax.get_legend_handles_labels())}  # union over panels
    fig.legend(handles.values(), handles.keys(), fontsize=7, loc="center right")
    fig.suptitle("Audits on replacement pairs (return change, visit counts 2→1 and 1→0): correct mechanisms "
                 "and negative controls", fontsize=9)
    fig.tight_layout(rect=(0, 0, 0.86, 1))
    save(fig, stem)


def regime(tables: Tables, stem: Path) -> None:
    """The regimes of ``agents/pe/regime.py`` against ``ε·m``, one column per feature map.

    Top: DP-LSW's ``sqrt(Ψ_X)`` (σ_X without its ``1/a ∝ 1/ε`` factor). Its flat and ``−1/2``
    regimes depend on ``b·m ∝ ε·m`` only, so the curves of every ε collapse onto one until
    their own ``m*`` (dotted, ε's colour), where the maximiser becomes ``k = 0`` and each curve
    leaves on its own ``1/m`` line. Grey: ``ε/b`` and ``ε/(b q_min)`` (the same for every ε).
    Bottom: RMSE of DP-LSW and DP-LSL against ``ε·m``; the noise floor of DP-LSL (B5's
    regime starts at twice it) dashed."""
    df = tables["pe_batch"]
    df = df[df["algorithm"].isin(["dp_lsw", "dp_lsl"]) & np.isfinite(df["epsilon"])].copy()
    df["eps_m"] = df["epsilon"] * df["m"]
    df["sqrt_psi"] = np.sqrt(df["psi"])
    feats = sorted(df["features"].unique())
    eps = sorted(df["epsilon"].unique())
    colors = dict(zip(eps, sns.color_palette("viridis", len(eps))))
    fig, axes = plt.subplots(2, len(feats), figsize=(5.2 * len(feats), 7.4), squeeze=False, sharex=True)
    for j, feat in enumerate(feats):
        g = df[df["features"] == feat]
        lsw = g[g["algorithm"] == "dp_lsw"]
        top, bottom = axes[0, j], axes[1, j]
        for e in eps:
            sub = lsw[lsw["epsilon"] == e]
            mean = sub.groupby("eps_m")[["sqrt_psi", "rmse"]].mean()
            top.plot(mean.index, mean["sqrt_psi"], color=colors[e], marker="o", ms=3, label=f"ε={e:g}")
            bottom.plot(mean.index, mean["rmse"], color=colors[e], marker="o", ms=3, label=f"DP-LSW ε={e:g}")
            lsl = g[(g["algorithm"] == "dp_lsl") & (g["epsilon"] == e)].groupby("eps_m")["rmse"].mean()
            bottom.plot(lsl.index, lsl.to_numpy(), color=colors[e], ls="--", marker="s", ms=2.5, lw=0.9,
                        label=f"DP-LSL ε={e:g}")
            if "m_star" in sub and np.isfinite(sub["m_star"]).any():
                for ax in (top, bottom):
                    ax.axvline(e * float(sub["m_star"].max()), color=colors[e], ls=":", lw=1.2)
        if "m_flat" in lsw and len(lsw):
            row = lsw.iloc[0]
            for ax in (top, bottom):
                ax.axvspan(row["epsilon"] * row["m_flat"], row["epsilon"] * row["m_half"], color="0.9", zorder=0)
        if "eps_m_floor" in g and len(g):
            bottom.axvline(float(g["eps_m_floor"].max()), color="k", ls="--", lw=0.8, label="DP-LSL noise floor")
        top.set_title(f"{feat} features: DP-LSW sqrt(Ψ_X) (grey: −1/2 regime; dotted: ε·m*)", fontsize=8.5)
        top.set_ylabel("sqrt(Ψ_X) = a·σ_X / (F_max ||(Γ^½Φ)^+||_F)")
        bottom.set_title(f"{feat} features: RMSE ||V − Φθ̃||_ρ", fontsize=8.5)
        bottom.set_ylabel("RMSE")
        bottom.set_xlabel("ε·m (privacy budget × trajectories)")
        for ax in (top, bottom):
            ax.set_xscale("log")
            ax.set_yscale("log")
        top.legend(fontsize=7)
        bottom.legend(fontsize=6, ncol=2)
    fig.suptitle(f"Policy evaluation regimes against ε·m (seed means over {df['seed'].nunique()} seeds, δ = "
                 f"{df['delta'].dropna().iloc[0]:g})", fontsize=10)
    fig.tight_layout()
    save(fig, stem)
