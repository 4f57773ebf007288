"""Figures of Balle, Gomrokchi, Precup (2016): RMSE vs m, noise scale vs m, the λ grid,
audits, and the regimes against ε·m. Every function takes the tables and returns the
figure; the catalog renders it."""

from __future__ import annotations

import numpy as np
import pandas as pd

from dprl.analysis import plotting as P
from dprl.analysis.base import Tables
from dprl.analysis.stats import loglog_slope

ORDER = ("lsw", "lsl", "dp_lsw", "dp_lsl", "gs_dp_lsl")
NOISE_EXPONENT = -1.0  # B2: σ_X(DP-LSW) ∝ 1/m once the smooth bound's maximiser is k = 0
# λ of every other DP-LSL run (experiment pe_batch, and the defaults of the algorithm's
# declaration in experiments/pe/spec.py): λ = ||ρ||_∞||Φ||_F² + 1·m^{1/2}
DEFAULT_C, DEFAULT_P = 1.0, 0.5
# The authors' λ. The paper's experiments section does not survive in our copy of the text; the
# authors' public code (M. Gomrokchi, github.com/maziarg/Private-Policy-Learning, expParams.py,
# dated 3 March 2016, four days before the arXiv submission) sweeps c over the decades 10^-2 …
# 10^4 at the fixed exponent p = 0.4 (ε = 0.1, δ = 0.05, m ≤ 5000).
AUTHORS_P, AUTHORS_LOG10_C = 0.4, (-2.0, 4.0)
_SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


def _mark_m_star(ax, sub: pd.DataFrame, scale: float = 1.0) -> None:
    """DP-LSW's m* (agents/pe/regime.py: beyond it σ_X falls like 1/m), in DP-LSW's colour."""
    if "m_star" in sub and np.isfinite(sub["m_star"]).any():
        P.mark_burn_in(ax, scale * float(sub["m_star"].max()), P.algorithm_color("dp_lsw"),
                       within=(scale * sub["m"].min(), scale * sub["m"].max()))


def _calibration_lines(sub: pd.DataFrame) -> list[tuple[str, pd.DataFrame, str]]:
    """One algorithm's rows per calibration, with a label suffix and a line style (``paper``
    solid, ``tight`` dashed); one line for a non-private algorithm or a table without tight."""
    if "calibration" not in sub or not (sub["calibration"] == "tight").any():
        return [("", sub, "-")]
    return [(f" ({cal})", sub[sub["calibration"] == cal], ls) for cal, ls in (("paper", "-"), ("tight", "--"))
            if (sub["calibration"] == cal).any()]


# with both calibrations a panel has up to ten series: its legend goes under it (it hid the curves)
BELOW = {"loc": "upper center", "bbox_to_anchor": (0.5, -0.2), "ncol": 2}


def _grid(df: pd.DataFrame, eps: list[float]):
    feats = sorted(df["features"].unique())
    fig, axes = P.subplots(len(feats), len(eps), panel=(4.6, 3.6), sharex=True)
    return feats, fig, axes


def rmse_loglog(tables: Tables):
    df = tables["pe_batch"]
    eps = sorted(df.loc[np.isfinite(df["epsilon"]), "epsilon"].unique())
    feats, fig, axes = _grid(df, eps)
    delta = df["delta"].dropna().iloc[0] if df["delta"].notna().any() else float("nan")
    for i, feat in enumerate(feats):
        for j, e in enumerate(eps):
            ax = axes[i, j]
            g = df[(df["features"] == feat) & ((df["epsilon"] == e) | ~np.isfinite(df["epsilon"]))]
            for alg in ORDER:
                for suffix, sub, ls in _calibration_lines(g[g["algorithm"] == alg]):
                    if not sub.empty:
                        P.mean_band(ax, sub, "m", "rmse", label=P.algorithm_name(alg) + suffix,
                                    color=P.algorithm_color(alg), marker="o", positive=True, ls=ls)
            _mark_m_star(ax, g[g["algorithm"] == "dp_lsw"])
            P.finish_axes(ax, extra=[P.burn_in_legend_entry("m*")], legend_kw=BELOW,
                          title=f"{feat} features, {P.epsilon_text(e)}, δ={delta:g}",
                          xlabel="batch size m (trajectories)", ylabel="RMSE ||V − Φθ||_ρ")
    fig.suptitle(f"Policy evaluation error on the chain (seed mean, 95% bootstrap band over {df['seed'].nunique()} seeds)")
    return fig


def noise_scale(tables: Tables):
    df = tables["pe_batch"]
    df = df[df["algorithm"].isin(["dp_lsw", "dp_lsl", "gs_dp_lsl"])]
    eps = sorted(df["epsilon"].unique())
    feats, fig, axes = _grid(df, eps)
    m_max = df["m"].max()
    for i, feat in enumerate(feats):
        for j, e in enumerate(eps):
            ax = axes[i, j]
            g = df[(df["features"] == feat) & (df["epsilon"] == e)]
            for alg, (suffix, sub, ls) in ((a, line) for a in ORDER[2:] for line in _calibration_lines(g[g["algorithm"] == a])):
                if sub.empty:
                    continue
                label = P.algorithm_name(alg) + suffix
                if alg == "dp_lsw":
                    top = sub[sub["m"] >= m_max / 10 - 1e-9].groupby("m")["sigma"].mean()
                    label += f" (slope {loglog_slope(top.index.to_numpy(float), top.to_numpy()):.2f} on the top decade)"
                s = P.mean_band(ax, sub, "m", "sigma", label=label, color=P.algorithm_color(alg), marker="o",
                                positive=True, ls=ls)
                if alg == "dp_lsw" and ls == "-":  # B2's 1/m, anchored on DP-LSW's own (paper) curve
                    P.reference_rate(ax, NOISE_EXPONENT, "m", s.index.to_numpy(float), s["mean"].to_numpy())
                    _mark_m_star(ax, sub)
            P.finish_axes(ax, extra=[P.burn_in_legend_entry("m*")], legend_kw=BELOW, title=f"{feat} features, {P.epsilon_text(e)}",
                          xlabel="batch size m (trajectories)", ylabel="noise scale σ_X")
    fig.suptitle(f"Output-perturbation noise scale (seed mean, 95% bootstrap band over {df['seed'].nunique()} seeds)")
    return fig


def lambda_heatmap(tables: Tables):
    import seaborn as sns

    df = tables["pe_lambda"]
    ms = sorted(df["m"].unique())
    decades = [m for m in ms if abs(np.log10(m) - round(np.log10(m))) < 1e-3]
    ms = decades if len(decades) >= 2 else ms  # one panel per decade of m (B5 reads every m)
    eps = sorted(df["epsilon"].unique())
    fig, axes = P.subplots(len(eps), len(ms), panel=(3.9, 3.3))
    tabs = {}
    for e in eps:
        for m in ms:
            g = df[(df["epsilon"] == e) & (df["m"] == m)]
            tabs[e, m] = np.log10(g.groupby(["c", "p"])["rmse"].mean().unstack("p")).sort_index(ascending=False)
    # one colour scale for every panel (the panels are compared across ε and m), one colour bar
    values = np.concatenate([t.to_numpy(float).ravel() for t in tabs.values()])
    values = values[np.isfinite(values)]
    vmin, vmax = (float(values.min()), float(values.max())) if len(values) else (0.0, 1.0)
    # seaborn draws the whole figure once per heatmap (to rotate overlapping tick labels); without
    # the constrained layout each of those draws is cheaper (16 panels: the figure took 16.7 ->
    # 11.7 CPU-s, the same pixels); it is restored before the colour bar and the save
    fig.set_layout_engine("none")
    for i, e in enumerate(eps):
        for j, m in enumerate(ms):
            tab = tabs[e, m]
            cs, ps = tab.index.to_numpy(float), tab.columns.to_numpy(float)
            tab = tab.set_axis([f"{c:.3g}" for c in cs], axis=0).set_axis([f"{p:.3g}" for p in ps], axis=1)
            ax = axes[i, j]
            sns.heatmap(tab, ax=ax, cmap="viridis_r", vmin=vmin, vmax=vmax, cbar=False,
                        annot=tab.shape[0] * tab.shape[1] <= 64, fmt=".2f", annot_kws={"fontsize": 6})
            _mark_default_lambda(ax, cs, ps)
            _mark_authors_lambda(ax, cs, ps)
            ax.set(title=f"{P.algorithm_name('dp_lsl')}, {P.epsilon_text(e)}, m={m:g}", xlabel="exponent p",
                   ylabel="constant c")
    fig.set_layout_engine("constrained")
    fig.colorbar(axes[0, 0].collections[0], ax=axes, label="log10 RMSE (one scale for every panel)", shrink=0.8)
    handles = P.handles_of(axes.ravel())
    if handles:
        P.figure_legend(fig, handles, loc="outside lower center")
    missing = [what for what, label in (("the default λ", "default λ"), ("the authors' λ", "the authors' λ"))
               if not any(lab.startswith(label) for lab in handles)]
    if missing:
        fig.supxlabel(f"{' and '.join(missing)} (default c = {DEFAULT_C:g}, p = {DEFAULT_P:g}; authors' "
                      f"p = {AUTHORS_P:g}) not on this grid", fontsize=8)
    fig.suptitle(f"DP-LSL error over λ = ||ρ||_∞||Φ||_F² + c·m^p (log10 of the seed-mean RMSE, "
                 f"{df['seed'].nunique()} seeds)")
    return fig


def _mark_default_lambda(ax, cs: np.ndarray, ps: np.ndarray) -> None:
    """Outline the heatmap cell of the default λ (c = 1, p = 1/2) when the grid holds it
    (rows: c, descending; columns: p)."""
    from matplotlib.patches import Rectangle

    row = np.flatnonzero(np.isclose(cs, DEFAULT_C, rtol=1e-6))
    col = np.flatnonzero(np.isclose(ps, DEFAULT_P, rtol=1e-6))
    if len(row) and len(col):
        ax.add_patch(Rectangle((col[0], row[0]), 1, 1, fill=False, edgecolor="#D55E00", lw=2.0, zorder=3,
                               label=f"default λ (c = {DEFAULT_C:g}, p = {DEFAULT_P:g}, as in pe_batch)"))


def _mark_authors_lambda(ax, cs: np.ndarray, ps: np.ndarray) -> None:
    """Outline the cells of the authors' own λ sweep (:data:`AUTHORS_P`, c over
    :data:`AUTHORS_LOG10_C`) when the grid holds p = 0.4: one dashed box over those rows of its
    column (rows: c, descending)."""
    from matplotlib.patches import Rectangle

    col = np.flatnonzero(np.isclose(ps, AUTHORS_P, rtol=1e-6))
    lc = np.log10(cs)
    rows = np.flatnonzero((lc >= AUTHORS_LOG10_C[0] - 1e-9) & (lc <= AUTHORS_LOG10_C[1] + 1e-9))
    if len(col) and len(rows):
        lo, hi = ("10" + f"{v:g}".translate(_SUPERSCRIPT) for v in AUTHORS_LOG10_C)
        # reddish purple (Okabe-Ito): seen on both ends of viridis and on the legend's white
        ax.add_patch(Rectangle((col[0], rows.min()), 1, rows.max() - rows.min() + 1, fill=False, edgecolor="#CC79A7",
                               lw=2.0, ls="--", zorder=3,
                               label=f"the authors' λ (p = {AUTHORS_P:g}, c = {lo} … {hi}; their public code)"))


def audit(tables: Tables):
    """Largest ε_lb over the replacement pairs, per mechanism variant and (ε, δ), one panel per
    audited DP-LSL λ and for DP-LSW; the claimed ε as a bar."""
    df = tables["pe_audit"].copy()
    df["setting"] = [f"ε={e:g}, δ={d:g}" for e, d in zip(df["epsilon"], df["delta"])]
    df["panel"] = [P.algorithm_name(a) + (f", c={c:g}" if a == "dp_lsl" else "")
                   for a, c in zip(df["algorithm"], df.get("alg.c", pd.Series(np.nan, index=df.index)))]
    settings = sorted(df["setting"].unique(), key=lambda s: (float(s.split(",")[0][2:]), s))
    variants = ["correct"] + sorted(set(df["variant"]) - {"correct"})
    colors = P.categorical_colors(variants)
    panels = sorted(df["panel"].unique())
    fig, axes = P.subplots(1, len(panels), panel=(0.8 * len(settings) + 1.0, 3.6), sharey=True)
    width = 0.8 / len(variants)
    top = 0.0
    for ax, panel in zip(axes[0], panels):
        g = df[df["panel"] == panel]
        best = g.groupby(["setting", "variant"])["eps_lb"].max()
        for i, s in enumerate(settings):
            claimed = df.loc[df["setting"] == s, "epsilon"].iloc[0]
            ax.hlines(claimed, i - 0.45, i + 0.45, color="k", lw=1.5, label="claimed ε" if i == 0 else None)
            for j, v in enumerate(variants):
                if (s, v) in best.index:
                    top = max(top, float(best[s, v]), float(claimed))
                    ax.scatter(i - 0.4 + width * (j + 0.5), max(best[s, v], 0.0), color=colors[v], s=26, zorder=3,
                               marker="o" if v == "correct" else "X", label=v if i == 0 else None)
        ax.set_xticks(range(len(settings)), settings, fontsize=7, rotation=30)
        ax.set_yscale("symlog", linthresh=0.1)
        ax.set_title(panel, fontsize=9)
    # set once every panel is drawn: the panels share y, and a limit set after the first
    # panel alone froze its top there and hid the larger ε_lb of the later panels
    axes[0, 0].set_ylim(0.0, top * 1.3 if top > 0 else 1.0)
    axes[0, 0].set_ylabel("max audited ε_lb over pairs (clipped at 0)")
    handles = {lab: h for ax in axes[0] for h, lab in zip(*ax.get_legend_handles_labels())}  # union over panels
    fig.legend(handles.values(), handles.keys(), fontsize=7, loc="outside right center")
    fig.suptitle("Audits on replacement pairs (return change, visit counts 2→1 and 1→0): correct mechanisms "
                 "and negative controls")
    return fig


def regime(tables: Tables):
    """The regimes of ``agents/pe/regime.py`` against ``ε·m``, one column per feature map.

    Top: DP-LSW's ``sqrt(Ψ_X)`` (σ_X without its ``1/a ∝ 1/ε`` factor). Its flat and ``−1/2``
    regimes depend on ``b·m ∝ ε·m`` only, so the curves of every ε collapse onto one until
    their own ``ε·m*`` (dotted burn-in mark, ε's colour), where the maximiser becomes ``k = 0``
    and each curve leaves on its own ``1/m`` line. Grey span: ``ε/b`` to ``ε/(b q_min)`` (the
    same for every ε). Bottom: RMSE of DP-LSW (solid) and DP-LSL (dashed) against ``ε·m``;
    the noise floor of DP-LSL (B5's regime starts at twice it) dash-dotted."""
    df = tables["pe_batch"]
    df = df[df["algorithm"].isin(["dp_lsw", "dp_lsl"]) & np.isfinite(df["epsilon"])].copy()
    if "calibration" in df:  # the paper's calibration (tight's curves are the same shapes, lower)
        df = df[df["calibration"] == "paper"]
    df["eps_m"] = df["epsilon"] * df["m"]
    df["sqrt_psi"] = np.sqrt(df["psi"])
    feats = sorted(df["features"].unique())
    eps = sorted(df["epsilon"].unique())
    fig, axes = P.subplots(2, len(feats), panel=(5.4, 3.7), sharex=True)
    for j, feat in enumerate(feats):
        g = df[df["features"] == feat]
        lsw = g[g["algorithm"] == "dp_lsw"]
        top, bottom = axes[0, j], axes[1, j]
        for e in eps:
            color = P.epsilon_color(e)
            sub = lsw[lsw["epsilon"] == e]
            P.mean_band(top, sub, "eps_m", "sqrt_psi", label=P.epsilon_text(e), color=color, marker="o",
                        positive=True)
            P.mean_band(bottom, sub, "eps_m", "rmse", label=f"DP-LSW {P.epsilon_text(e)}", color=color, marker="o",
                        positive=True)
            lsl = g[(g["algorithm"] == "dp_lsl") & (g["epsilon"] == e)]
            P.mean_band(bottom, lsl, "eps_m", "rmse", label=f"DP-LSL {P.epsilon_text(e)}", color=color, ls="--",
                        marker="s", positive=True, lw=0.9)
            if "m_star" in sub and np.isfinite(sub["m_star"]).any():
                for ax in (top, bottom):
                    P.mark_burn_in(ax, e * float(sub["m_star"].max()), color)
        if "m_flat" in lsw and len(lsw):
            row = lsw.iloc[0]
            span = (row["epsilon"] * row["m_flat"], row["epsilon"] * row["m_half"])
            data = (float(g["eps_m"].min()), float(g["eps_m"].max()))
            lo, hi = max(span[0], data[0]), min(span[1], data[1])  # only where there are data
            for ax in (top, bottom):
                if lo < hi:
                    ax.axvspan(lo, hi, color="0.9", zorder=0)
                else:
                    P.note(ax, f"the −1/2 regime (ε·m from {span[0]:.3g} to {span[1]:.3g}) lies outside the data")
        if "eps_m_floor" in g and len(g):
            P.mark_x(bottom, float(g["eps_m_floor"].max()), label="DP-LSL noise floor", beyond="DP-LSL noise floor",
                     within=(float(g["eps_m"].min()), float(g["eps_m"].max())), color="0.2", ls="-.", lw=0.8)
        top.set(title=f"{feat} features: DP-LSW sqrt(Ψ_X) (grey: −1/2 regime)",
                ylabel="sqrt(Ψ_X) = a·σ_X / (F_max ||(Γ^½Φ)^+||_F)")
        bottom.set(title=f"{feat} features: RMSE ||V − Φθ̃||_ρ", ylabel="RMSE",
                   xlabel="ε·m (privacy budget × trajectories)")
        for ax in (top, bottom):
            P.log_axes(ax)
        P.legend(top, [P.burn_in_legend_entry("ε·m*")])
        P.legend(bottom, fontsize=6, ncol=2)
    delta = df["delta"].dropna().iloc[0] if df["delta"].notna().any() else float("nan")
    fig.suptitle(f"Policy evaluation regimes against ε·m (seed mean, 95% bootstrap band over "
                 f"{df['seed'].nunique()} seeds, δ = {delta:g})")
    return fig
