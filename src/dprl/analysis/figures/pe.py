"""Figures of Balle, Gomrokchi, Precup (2016): RMSE vs m, noise scale vs m, the λ grid."""

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
    df = tables["pe_audit"].copy()
    df["setting"] = df.apply(lambda r: f"ε={r['epsilon']:g}, δ={r['delta']:g}", axis=1)
    settings = sorted(df["setting"].unique(), key=lambda s: float(s.split(",")[0][2:]))
    mechs = sorted(df["mechanism"].unique())
    fig, ax = plt.subplots(figsize=(1.6 + 1.5 * len(settings), 3.6))
    width = 0.8 / len(mechs)
    colors = dict(zip(mechs, sns.color_palette("Paired", len(mechs))))
    for i, s in enumerate(settings):
        g = df[df["setting"] == s]
        claimed = g.loc[g["target"] == "claimed", "eps_target"].iloc[0]
        sens = g.loc[g["target"] == "sensitivity", "eps_target"].iloc[0]
        ax.hlines(claimed, i - 0.45, i + 0.45, color="k", lw=1.5, label="claimed ε" if i == 0 else None)
        ax.hlines(sens, i - 0.45, i + 0.45, color="k", ls=":", lw=1.5, label="sensitivity target ε_G(a, δ)" if i == 0 else None)
        for j, mech in enumerate(mechs):
            lb = g.loc[(g["mechanism"] == mech) & (g["target"] == "claimed"), "eps_lb"]
            x = i - 0.4 + width * (j + 0.5)
            vals = np.clip(lb.to_numpy(), 0, None)
            ax.scatter(np.full(vals.size, x), vals, color=colors[mech], s=22, zorder=3,
                       label=mech if i == 0 else None, marker="o" if "halved" not in mech else "X")
    ax.set_xticks(range(len(settings)), settings, fontsize=8)
    ax.set_yscale("symlog", linthresh=0.1)
    ax.set_ylim(bottom=0.0)
    ax.set_ylabel("audited ε_lb (clipped at 0)")
    ax.legend(fontsize=7, loc="upper left")
    ax.set_title(f"Audits of DP-LSW / DP-LSL on adversarial neighbouring batches ({int(df['seed'].nunique())} seed(s))", fontsize=9)
    fig.tight_layout()
    save(fig, stem)
