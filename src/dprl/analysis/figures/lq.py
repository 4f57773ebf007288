"""Figures of Chowdhury, Zhou, Shroff (2021): regret vs K, privacy cost vs ε and ln(1/δ),
regret vs oracle size, audited ε of the counters."""

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
from dprl.analysis.claims import lq as lq_claims  # noqa: E402
from dprl.analysis.claims.lq import CENTRE_DELTA, CENTRE_EPS  # noqa: E402
from dprl.analysis.selection import final_rows  # noqa: E402
from dprl.analysis.stats import BOOT_SEED, bootstrap_ci, loglog_slope  # noqa: E402

BAND = dict(errorbar=("ci", 95), n_boot=500, seed=BOOT_SEED)


def _series_label(row: pd.Series) -> str:
    if row["calibration"] == "none":
        return "OFU-RL"
    return f"private {row['calibration']} ε={row['epsilon']:g} δ={row['delta']:g}"


def regret_loglog(tables: Tables, stem: Path) -> None:
    """Cumulative regret vs K (log-log), seed mean with 95% bootstrap band, √K reference."""
    df = tables["lq_regret"].copy()
    keep = (df["calibration"] == "none") | np.isclose(df["delta"].fillna(-1), CENTRE_DELTA)
    df = df[keep]
    df["series"] = df.apply(_series_label, axis=1)
    envs = sorted(df["env_label"].unique())
    fig, axes = plt.subplots(1, len(envs), figsize=(5.2 * len(envs), 4.0), squeeze=False)
    order = sorted(df["series"].unique(), key=lambda s: (s != "OFU-RL", s))
    palette = dict(zip(order, sns.color_palette("tab10", len(order))))
    for ax, env in zip(axes[0], envs):
        g = df[df["env_label"] == env]
        sns.lineplot(data=g, x="episode", y="regret", hue="series", hue_order=order, palette=palette, ax=ax, **BAND)
        ofu = g[g["series"] == "OFU-RL"].groupby("episode")["regret"].mean()
        if not ofu.empty:
            k = ofu.index.to_numpy(dtype=float)
            ax.plot(k, ofu.iloc[-1] * np.sqrt(k / k[-1]), "k:", lw=1.2, label="∝ √K (through OFU-RL at K)")
        if "burn_in_episodes" in g:  # predicted burn-in T* of each private series (agents/lq/regime.py)
            t_star = g.dropna(subset=["burn_in_episodes"]).groupby("series")["burn_in_episodes"].max()
            kmax = float(g["episode"].max())
            for series, t in t_star.items():
                if t <= kmax:
                    ax.axvline(t, color=palette[series], ls="--", lw=0.8)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("episodes K (dashed: predicted burn-in T* of a private series, where within K)")
        ax.set_ylabel("cumulative exact regret")
        ax.set_title(env, fontsize=9)
        ax.legend(fontsize=6.5)
    n_seeds = df.groupby(["env_label", "privacy_label"])["seed"].nunique().min()
    fig.suptitle(f"LQ regret (seed mean, 95% bootstrap band over {n_seeds} seeds)", fontsize=10)
    fig.tight_layout()
    save(fig, stem)


def _fit_panel(ax: plt.Axes, g: pd.DataFrame, x: str, xlabel: str, color, label: str) -> None:
    stats = []
    for xv, gx in g.groupby(x):
        e = bootstrap_ci(gx["cost"].to_numpy())
        stats.append((xv, e.value, e.low, e.high))
    if not stats:
        return
    s = np.array(stats)
    pos = s[:, 1] > 0
    slope = loglog_slope(s[:, 0], s[:, 1]) if pos.sum() >= 2 else np.nan
    lo = np.clip(s[:, 2], 1e-12, None)
    ax.errorbar(s[pos, 0], s[pos, 1], yerr=[s[pos, 1] - lo[pos], s[pos, 3] - s[pos, 1]], fmt="o", color=color,
                capsize=3, label=f"{label}: fitted exponent {slope:.2f}" if np.isfinite(slope) else f"{label} (no fit: < 2 positive points)")
    if np.isfinite(slope):
        c = np.polyfit(np.log(s[pos, 0]), np.log(s[pos, 1]), 1)
        xs = np.geomspace(s[pos, 0].min(), s[pos, 0].max(), 20)
        ax.plot(xs, np.exp(np.polyval(c, np.log(xs))), color=color, lw=1)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel(xlabel)


def privacy_cost(tables: Tables, stem: Path) -> None:
    """Privacy cost at the final K vs ε (δ fixed) and vs ln(1/δ) (ε fixed), fitted exponents."""
    cost = lq_claims.privacy_cost(tables["lq_regret"])
    envs = sorted(cost["env_label"].unique()) or ["(none)"]
    fig, axes = plt.subplots(len(envs), 2, figsize=(10, 3.6 * len(envs)), squeeze=False)
    colors = {"paper": "tab:red", "tight": "tab:blue"}
    for i, env in enumerate(envs):
        g = cost[cost["env_label"] == env]
        for calib, gc in g.groupby("calibration"):
            ge = gc[np.isclose(gc["delta"], CENTRE_DELTA)]
            gd = gc[np.isclose(gc["epsilon"], CENTRE_EPS)]
            _fit_panel(axes[i, 0], ge, "epsilon", "ε", colors.get(calib, "k"), calib)
            _fit_panel(axes[i, 1], gd, "log_inv_delta", "ln(1/δ)", colors.get(calib, "k"), calib)
        axes[i, 0].set_title(f"{env}: cost vs ε (δ={CENTRE_DELTA:g}); paper predicts exponent −1/2", fontsize=8)
        axes[i, 1].set_title(f"{env}: cost vs ln(1/δ) (ε={CENTRE_EPS:g}); paper predicts +1/4", fontsize=8)
        for ax in axes[i]:
            ax.set_ylabel("Regret_private − Regret_OFU at K")
            ax.legend(fontsize=7)
    n_seeds = int(cost.groupby(["env_label", "privacy_label"])["seed"].nunique().min()) if not cost.empty else 0
    fig.suptitle(f"Privacy cost (seed mean, 95% bootstrap CI over {n_seeds} seeds; non-positive means not shown)", fontsize=10)
    fig.tight_layout()
    save(fig, stem)


def oracle_size(tables: Tables, stem: Path) -> None:
    """Final regret vs the number N of oracle candidates, and regret curves per N."""
    df = tables["lq_oracle"].copy()
    df["series"] = df.apply(_series_label, axis=1)
    last = final_rows(df)
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.8))
    sns.lineplot(data=last, x="alg.n_candidates", y="regret", hue="series", marker="o", ax=axes[0], **BAND)
    axes[0].set_xscale("log")
    axes[0].set_yscale("log")
    axes[0].set_xlabel("oracle candidates N")
    axes[0].set_ylabel(f"cumulative regret at K={int(last['episode'].max())}")
    ofu = df[df["calibration"] == "none"].copy()
    ofu["N"] = ofu["alg.n_candidates"].astype(int).astype(str)
    sns.lineplot(data=ofu, x="episode", y="regret", hue="N", palette="viridis", ax=axes[1], **BAND)
    axes[1].set_xscale("log")
    axes[1].set_yscale("log")
    axes[1].set_xlabel("episodes K")
    axes[1].set_ylabel("cumulative exact regret (OFU-RL)")
    fig.suptitle(f"Regret vs oracle size (95% bootstrap band over {df['seed'].nunique()} seeds)", fontsize=10)
    fig.tight_layout()
    save(fig, stem)


def audit(tables: Tables, stem: Path) -> None:
    """Audited ε lower bound vs claimed ε for B1, B2 and the pair, both calibrations."""
    df = tables["lq_audit"].copy()
    fig, ax = plt.subplots(figsize=(5.2, 4.0))
    markers = {"B1": "o", "B2": "s", "joint": "^"}
    colors = {"paper": "tab:red", "tight": "tab:blue"}
    for (mech, calib), g in df.groupby(["mechanism", "calibration"]):
        ax.scatter(g["claimed_epsilon"], g["eps_lb"].clip(lower=0), marker=markers.get(mech, "x"),
                   color=colors.get(calib, "k"), label=f"{mech}, {calib}")
        ax.scatter(g["claimed_epsilon"], g["eps_exact"], marker=markers.get(mech, "x"), facecolors="none",
                   edgecolors=colors.get(calib, "k"), s=60)
    hi = float(df["claimed_epsilon"].max()) * 1.1
    ax.plot([0, hi], [0, hi], "k--", lw=1, label="ε_lb = claimed ε")
    ax.set_xlabel("claimed ε")
    ax.set_ylabel("audited ε_lb (filled), exact ε (open)")
    ax.legend(fontsize=7)
    ax.set_title("Private-OFU-RL counters: privacy audit", fontsize=10)
    fig.tight_layout()
    save(fig, stem)


def regime(tables: Tables, stem: Path) -> None:
    """Mean per-episode regret ``R(k)/k`` against ``k/Λ`` for every private setting: if the
    burn-in is set by the regularizer's scale Λ (``agents/lq/regime.py``), the curves of all
    ε and δ collapse onto one; the onset (50Λ) and rate (170Λ) marks are drawn."""
    from dprl.agents.lq.regime import ONSET_K_OVER_LAMBDA, RATE_K_OVER_LAMBDA

    df = pd.concat([tables[name] for name in ("lq_regret", "lq_regime") if name in tables], ignore_index=True)
    df = df[df["calibration"] != "none"].copy()
    envs = sorted(df["env_label"].unique()) or ["(none)"]
    fig, axes = plt.subplots(1, len(envs), figsize=(5.2 * len(envs), 4.0), squeeze=False)
    df["k_over_lambda"] = df["episode"] / df["lam_min"]
    df["per_episode"] = df["regret"] / df["episode"]
    df["series"] = df.apply(_series_label, axis=1)
    order = sorted(df["series"].unique())
    palette = dict(zip(order, sns.color_palette("viridis", len(order))))
    for ax, env in zip(axes[0], envs):
        g = df[df["env_label"] == env]
        mean = g.groupby(["series", "episode"], as_index=False)[["k_over_lambda", "per_episode"]].mean()
        for series, gs in mean.groupby("series"):
            ax.plot(gs["k_over_lambda"], gs["per_episode"], color=palette[series], lw=1.2, label=series)
        for x, name in ((ONSET_K_OVER_LAMBDA, "onset 50Λ"), (RATE_K_OVER_LAMBDA, "√K regime 170Λ")):
            ax.axvline(x, color="k", ls=":" if x == ONSET_K_OVER_LAMBDA else "--", lw=0.9, label=name)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("k / Λ (episodes over the regularizer scale)")
        ax.set_ylabel("mean per-episode regret R(k)/k")
        ax.set_title(env, fontsize=9)
        ax.legend(fontsize=6)
    fig.suptitle("Private-OFU-RL: regret is a function of k/Λ (seed means)", fontsize=10)
    fig.tight_layout()
    save(fig, stem)
