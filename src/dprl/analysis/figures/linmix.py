"""Figures of the Zhou (2022) experiments. Bands: 95% bootstrap CIs over seeds."""

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
from dprl.analysis.claims.linmix import privacy_cost  # noqa: E402
from dprl.analysis.selection import final_rows  # noqa: E402

_CI = ("ci", 95)


def _save(fig: plt.Figure, stem: Path) -> None:
    fig.tight_layout()
    save(fig, stem)


def _label(df: pd.DataFrame) -> pd.Series:
    return df["algorithm"] + np.where(df["calibration"] == "none", "", " ε=" + df["epsilon"].map("{:g}".format) + " (" + df["calibration"] + ")")


def regret_loglog(tables: Tables, stem: Path) -> None:
    df = tables["linmix_regret"].copy()
    df["curve"] = _label(df)
    fams = [("VI", ["ucrl_vtr", "private_linopt_vi"]), ("PO", ["oppo", "private_linopt_po"])]
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2), sharey=True)
    for ax, (fam, algs) in zip(axes, fams):
        sub = df[df["algorithm"].isin(algs)]
        if not sub.empty:
            sns.lineplot(sub, x="T", y="regret", hue="curve", errorbar=_CI, n_boot=500, seed=0, ax=ax)
            ts = np.geomspace(sub["T"].min(), sub["T"].max(), 20)
            ref = sub[sub["T"] == sub["T"].max()]["regret"].median()
            ax.plot(ts, ref * np.sqrt(ts / ts[-1]), "k:", lw=1, label="∝ √T")
            ax.legend(fontsize=7)
        else:
            ax.text(0.5, 0.5, "not run in this preset", transform=ax.transAxes, ha="center")
        if "burn_in_episodes" in sub:  # predicted burn-in T* of each private curve (agents/linmix/regime.py), seed median
            priv = sub[sub["calibration"] != "none"].dropna(subset=["burn_in_episodes"])
            t_star = priv.groupby(["curve", "seed"])["burn_in_episodes"].first().groupby("curve").median() * priv["H"].max()
            colors = {line.get_label(): line.get_color() for line in ax.get_lines()}
            for curve, t in t_star.items():
                if sub["T"].min() <= t <= sub["T"].max():
                    ax.axvline(t, color=colors.get(curve, "0.5"), ls="--", lw=0.8)
        ax.set(xscale="log", yscale="log", title=f"LinOpt-{fam}", ylabel="cumulative regret",
               xlabel="T = KH (dashed: predicted burn-in T*·H of a private curve, seed median)")
    _save(fig, stem)


def regime(tables: Tables, stem: Path) -> None:
    """Mean per-episode regret ``R(k)/k`` (relative to its initial level) against ``k/T*``
    for every private setting of ``linmix_regret``: if the burn-in is set by ``β²`` against
    the ceiling gaps (``agents/linmix/regime.py``), the curves of all ε collapse onto one,
    falling near ``k/T* ≈ 1``. ``T*`` is each job's own (its instance and calibration)."""
    df = tables["linmix_regret"]
    df = df[df["calibration"] != "none"].dropna(subset=["burn_in_episodes"]).copy() if "burn_in_episodes" in df else df.iloc[:0]
    fams = [("VI", "private_linopt_vi"), ("PO", "private_linopt_po")]
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2), sharey=True)
    for ax, (fam, alg) in zip(axes, fams):
        g = df[df["algorithm"] == alg].copy()
        if g.empty:
            ax.text(0.5, 0.5, "not run in this preset", transform=ax.transAxes, ha="center")
            continue
        g = g.sort_values("episode")
        g["k_over_t"] = g["episode"] / g["burn_in_episodes"]
        keys = ["privacy_label", "seed"]
        # per-episode regret between checkpoints, over the job's initial level (first checkpoint >= 10 episodes)
        g["per_episode"] = g.groupby(keys)["regret"].diff() / g.groupby(keys)["episode"].diff()
        first = g[g["episode"] >= 10].groupby(keys).first()
        level = (first["regret"] / first["episode"]).rename("level")
        g = g.join(level, on=keys)
        g["relative"] = g["per_episode"] / g["level"]
        g["curve"] = _label(g)
        # seed means at each checkpoint (every seed of a setting shares the checkpoints)
        mean = g.dropna(subset=["relative"]).groupby(["curve", "episode"], as_index=False)[["k_over_t", "relative"]].mean()
        palette = dict(zip(sorted(mean["curve"].unique()), sns.color_palette("viridis", mean["curve"].nunique())))
        for curve, gc in mean.groupby("curve"):
            ax.plot(gc["k_over_t"], gc["relative"].clip(lower=1e-4), color=palette[curve], lw=1.2, label=curve)
        ax.axvline(1.0, color="k", ls="--", lw=0.9, label="k = T* (predicted onset)")
        ax.axhline(0.5, color="k", ls=":", lw=0.8, label="half the initial level (measured onset)")
        ax.set(xscale="log", yscale="log", title=f"Private-LinOpt-{fam}", xlabel="k / T* (episodes over the job's predicted burn-in)")
        ax.legend(fontsize=6.5)
    axes[0].set_ylabel("per-episode regret / its initial level (seed mean)")
    fig.suptitle("Linear mixture: regret is a function of k/T* across ε (T* = C·Σ w b²/g²)", fontsize=10)
    _save(fig, stem)


def privacy_cost_fig(tables: Tables, stem: Path) -> None:
    cost = privacy_cost(tables["linmix_regret"])
    fig, ax = plt.subplots(figsize=(6, 4.2))
    if not cost.empty:
        cost["curve"] = cost["algorithm"] + " (" + cost["calibration"] + ")"
        cost["cost_pos"] = cost["cost"].clip(lower=1e-3)
        sns.lineplot(cost, x="epsilon", y="cost_pos", hue="curve", marker="o", errorbar=_CI, n_boot=500, seed=0, ax=ax)
        es = np.geomspace(cost["epsilon"].min(), cost["epsilon"].max(), 20)
        top = cost[cost["epsilon"] == cost["epsilon"].min()]["cost_pos"].median()
        ax.plot(es, top * (es / es[0]) ** -0.5, "k:", lw=1, label="∝ ε^(-1/2)")
        ax.legend(fontsize=7)
    ax.set(xscale="log", yscale="log", xlabel="ε", ylabel="private − non-private final regret")
    _save(fig, stem)


def states_fig(tables: Tables, stem: Path) -> None:
    fin = final_rows(tables["linmix_states"]).copy()
    fin["curve"] = _label(fin)
    fig, ax = plt.subplots(figsize=(6, 4.2))
    sns.lineplot(fin, x="S", y="regret", hue="curve", marker="o", errorbar=_CI, n_boot=500, seed=0, ax=ax)
    ax.set(xscale="log", xlabel="|S| (d1, d2 fixed)", ylabel=f"regret at T={int(fin['T'].max())}", ylim=(0, None))
    _save(fig, stem)


def actions_fig(tables: Tables, stem: Path) -> None:
    fin = final_rows(tables["linmix_actions"]).copy()
    fin["curve"] = _label(fin)
    fig, ax = plt.subplots(figsize=(6, 4.2))
    sns.lineplot(fin, x="A", y="regret", hue="curve", marker="o", errorbar=_CI, n_boot=500, seed=0, ax=ax)
    ax.set(xscale="log", xlabel="|A|", ylabel=f"regret at T={int(fin['T'].max())}", ylim=(0, None))
    _save(fig, stem)


def ldp_fig(tables: Tables, stem: Path) -> None:
    df = tables["linmix_ldp"].copy()
    df["curve"] = _label(df)
    fig, ax = plt.subplots(figsize=(6, 4.2))
    sns.lineplot(df, x="T", y="regret", hue="curve", errorbar=_CI, n_boot=500, seed=0, ax=ax)
    ax.set(xscale="log", yscale="log", xlabel="T = KH", ylabel="cumulative regret")
    _save(fig, stem)


def audit_fig(tables: Tables, stem: Path) -> None:
    df = tables["linmix_audit"].copy()
    df["setting"] = df["mechanism"] + "\n" + df["calibration"]
    fig, ax = plt.subplots(figsize=(6, 4.2))
    ax.bar(np.arange(len(df)), df["eps_lb"].clip(lower=0), label="audited ε_lb")
    ax.scatter(np.arange(len(df)), df["eps_accounted"], color="k", marker="x", zorder=3, label="accounted ε (replacement Δ)")
    ax.scatter(np.arange(len(df)), df["epsilon"], color="r", marker="_", s=400, zorder=3, label="claimed ε")
    ax.set_xticks(np.arange(len(df)), df["setting"], fontsize=7)
    ax.set(ylabel="ε")
    ax.legend(fontsize=7)
    _save(fig, stem)
