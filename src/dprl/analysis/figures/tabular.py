"""Figures of Vietri et al. (2020): regret, privacy cost, PAC counts, S-scaling, private BAI."""

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
from dprl.agents.tabular.regime import RATE_FACTOR  # noqa: E402
from dprl.analysis.claims.tabular import privacy_cost  # noqa: E402
from dprl.analysis.selection import final_rows  # noqa: E402



def _band(ax: plt.Axes, g: pd.DataFrame, x: str, y: str, label: str, color, **kw) -> None:
    """Mean over seeds with a 95% normal band (mean ± 1.96 s.e.)."""
    s = g.groupby(x)[y].agg(["mean", "std", "count"])
    se = (s["std"] / np.sqrt(s["count"])).fillna(0.0)
    ax.plot(s.index, s["mean"], color=color, label=label, **kw)
    ax.fill_between(s.index, s["mean"] - 1.96 * se, s["mean"] + 1.96 * se, color=color, alpha=0.2, lw=0)


def _run_label(r) -> str:
    return "UBEV" if r.algorithm == "ubev" else f"PUCB ε={r.epsilon:g} ({r.calibration})"


def regret_loglog(tables: Tables, stem: Path) -> None:
    df = tables["tabular_regret"].copy()
    df["run"] = [_run_label(r) for r in df.itertuples()]
    envs = sorted(df["env_label"].unique())
    runs = sorted(df["run"].unique())
    pal = dict(zip(runs, sns.color_palette("tab10", len(runs))))
    fig, axes = plt.subplots(1, len(envs), figsize=(5.2 * len(envs), 4), squeeze=False)
    for ax, env in zip(axes[0], envs):
        g = df[df["env_label"] == env]
        for run, gr in g.groupby("run"):
            _band(ax, gr, "episode", "regret", run, pal[run], ls="--" if "paper" in run else "-")
            # the predicted burn-in T* (agents/tabular/regime.py), where it lies inside the run
            if "burn_in_episodes" in gr and gr["algorithm"].iloc[0] == "pucb":
                t_star = float(gr["burn_in_episodes"].median())
                if gr["episode"].min() <= t_star <= gr["episode"].max():
                    ax.axvline(t_star, color=pal[run], lw=0.8, ls=(0, (2, 2)))
        T = np.array([g["episode"].min(), g["episode"].max()], float)
        ub = g[g["algorithm"] == "ubev"]
        ref = ub[ub["episode"] == ub["episode"].max()]["regret"].mean() if len(ub) else g["regret"].max()
        ax.plot(T, ref * np.sqrt(T / T[1]), color="k", lw=0.8, ls=":", label="∝ √T")
        ax.set(xscale="log", yscale="log", xlabel="episodes T", ylabel="cumulative regret", title=env)
        ax.legend(fontsize=7)
    fig.suptitle("Cumulative exact regret (mean over seeds, 95% band; thin dashed: PUCB's predicted burn-in T*)")
    fig.tight_layout()
    save(fig, stem)


def privacy_cost_eps(tables: Tables, stem: Path) -> None:
    cost = final_rows(privacy_cost(tables["tabular_regret"]))
    envs = sorted(cost["env_label"].unique())
    fig, axes = plt.subplots(1, len(envs), figsize=(5 * len(envs), 3.8), squeeze=False)
    for ax, env in zip(axes[0], envs):
        g = cost[cost["env_label"] == env]
        for (calib, color) in zip(("tight", "paper"), ("C0", "C3")):
            gc = g[g["calibration"] == calib]
            if len(gc):
                _band(ax, gc, "epsilon", "cost", f"{calib} calibration", color, marker="o")
        eps = np.array(sorted(g["epsilon"].unique()), float)
        if len(eps):
            top = g[g["calibration"] == "tight"]
            if len(top):
                c0 = top[top["epsilon"] == eps[0]]["cost"].mean()
                ax.plot(eps, abs(c0) * eps[0] / eps, "k:", lw=0.8, label="∝ 1/ε")
        ax.axhline(0, color="grey", lw=0.5)
        ax.set(xscale="log", xlabel="ε", ylabel="Regret_PUCB − Regret_UBEV at final T", title=env)
        ax.legend(fontsize=7)
    fig.suptitle("Privacy cost at the final T vs ε (paired by seed; mean, 95% band)")
    fig.tight_layout()
    save(fig, stem)


def pac_counts(tables: Tables, stem: Path) -> None:
    df = final_rows(tables["tabular_pac"]).copy()
    pu = df[df["algorithm"] == "pucb"].copy()
    ub = df[df["algorithm"] == "ubev"]
    fig, ax = plt.subplots(figsize=(5.6, 4.2))
    if len(pu):
        pu["x"] = 1.0 / (pu["alpha"] * pu["epsilon"])
        for (calib, color) in zip(("tight", "paper"), ("C0", "C3")):
            g = pu[pu["calibration"] == calib]
            if len(g):
                s = g.groupby("x")["n_subopt"].agg(["mean", "std", "count"]).sort_index()
                ax.errorbar(s.index, s["mean"], yerr=1.96 * (s["std"] / np.sqrt(s["count"])).fillna(0), fmt="o",
                            color=color, label=f"PUCB ({calib})")
        r = pu.iloc[0]
        S, A, H = r["S"], r["A"], r["H"]
        g = pu[pu["calibration"] == "tight"] if (pu["calibration"] == "tight").any() else pu
        means = g.groupby(["alpha", "epsilon"])["n_subopt"].mean()
        a = np.array([k[0] for k in means.index])
        e = np.array([k[1] for k in means.index])
        lower = S * A * H**2 / a**2 + S * A * H * np.log(1 / 0.05) / (a * e)
        upper = S * A * H**4 / a**2 + S**2 * A * H**4 / (e * a)
        order = np.argsort(1 / (a * e))
        for shape, name, ls in ((lower, "lower-bound shape", "--"), (upper, "upper-bound shape", "-.")):
            c = np.exp(np.mean(np.log(means.to_numpy() / shape)))  # least-squares constant in log space
            ax.plot((1 / (a * e))[order], (c * shape)[order], "k", ls=ls, lw=0.9, label=f"{name} × {c:.2g} (fitted)")
    for alpha, g in ub.groupby("alpha"):
        ax.axhline(g["n_subopt"].mean(), color="grey", lw=0.6, ls=":")
    ax.set(xscale="log", yscale="log", xlabel="1/(αε)", ylabel="α-suboptimal episodes up to T")
    ax.legend(fontsize=7)
    ax.set_title("Figure 1 instances (grey: UBEV per α)", fontsize=9)
    fig.tight_layout()
    save(fig, stem)


def scaling_S(tables: Tables, stem: Path) -> None:
    cost = final_rows(privacy_cost(tables["tabular_scaling"]))
    fig, ax = plt.subplots(figsize=(5.2, 4))
    for i, ((eps, calib), g) in enumerate(cost.groupby(["epsilon", "calibration"])):
        _band(ax, g, "S", "cost", f"ε={eps:g} ({calib})", f"C{i}", marker="o")
        Ss = np.array(sorted(g["S"].unique()), float)
        c0 = abs(g[g["S"] == Ss[0]]["cost"].mean())
        ax.plot(Ss, c0 * Ss / Ss[0], "k:", lw=0.8, label="∝ S" if i == 0 else None)
        ax.plot(Ss, c0 * (Ss / Ss[0]) ** 2, "k--", lw=0.8, label="∝ S²" if i == 0 else None)
    ax.set(xscale="log", yscale="log", xlabel="S (garnet states)", ylabel="privacy cost at final T")
    ax.legend(fontsize=7)
    fig.tight_layout()
    save(fig, stem)


def mab_pulls(tables: Tables, stem: Path) -> None:
    df = tables["private_mab"]
    fig, ax = plt.subplots(figsize=(5.2, 4))
    for i, (alpha, g) in enumerate(df.groupby("alpha")):
        _band(ax, g, "epsilon", "mean_pulls_subopt", f"α={alpha:g}: measured", f"C{i}", marker="o")
        b = g.groupby("epsilon")["lemma8_bound"].mean()
        ax.plot(b.index, b.to_numpy(), color=f"C{i}", ls="--", label=f"α={alpha:g}: Lemma 8 bound")
    ax.set(xscale="log", yscale="log", xlabel="ε", ylabel="pulls of an α-suboptimal arm")
    ax.legend(fontsize=7)
    fig.tight_layout()
    save(fig, stem)


def regime(tables: Tables, stem: Path) -> None:
    """Per-episode regret ``R(T)/T`` (seed mean) of every PUCB setting against ``T/T*``,
    ``T*`` the job's predicted burn-in (``agents/tabular/regime.py``, median over seeds): if
    the all-tied burn-in is the mechanism, the curves of every ε and calibration collapse,
    flat up to ``T/T* ≈ 1`` and falling after. Markers: the measured onsets (first episode not
    all-tied) on the same axis; dotted: ``T = RATE_FACTOR·T*``, where V2/V3 are judged."""
    df = tables["tabular_regret"]
    df = df[df["algorithm"] == "pucb"].copy()
    envs = sorted(df["env_label"].unique()) or ["(none)"]
    fig, axes = plt.subplots(1, len(envs), figsize=(5.2 * len(envs), 4.0), squeeze=False)
    for ax, env in zip(axes[0], envs):
        g = df[df["env_label"] == env]
        for i, ((calib, eps), gs) in enumerate(g.groupby(["calibration", "epsilon"])):
            t_star = float(gs["burn_in_episodes"].median())
            m = gs.assign(rate=gs["regret"] / gs["episode"]).groupby("episode")["rate"].mean()
            color = f"C{i}"
            ax.plot(m.index / t_star, m.to_numpy(), color=color, ls="--" if calib == "paper" else "-",
                    label=f"ε={eps:g} ({calib}), T* = {t_star:.2g}")
            onsets = gs.groupby("seed")["onset_episode"].first().dropna() / t_star
            if len(onsets):
                y = np.interp(onsets.to_numpy(), m.index / t_star, m.to_numpy())
                ax.plot(onsets, y, "o", color=color, ms=4, mfc="none")
        ax.axvline(1.0, color="k", lw=0.8)
        ax.axvline(RATE_FACTOR, color="k", lw=0.8, ls=":")
        ax.set(xscale="log", yscale="log", xlabel="T / T*", ylabel="regret per episode R(T)/T", title=env)
        ax.legend(fontsize=7)
    fig.suptitle("PUCB's burn-in: per-episode regret against T/T* (circles: measured onsets)")
    fig.tight_layout()
    save(fig, stem)
