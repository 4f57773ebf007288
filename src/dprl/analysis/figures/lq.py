"""Figures of Chowdhury, Zhou, Shroff (2021): regret vs K, privacy cost vs ε and ln(1/δ),
regret vs oracle size, audited ε of the counters, and the k/Λ regime. Every function takes
the tables and returns the figure; the catalog renders it."""

from __future__ import annotations

import numpy as np
import pandas as pd

from dprl.analysis import plotting as P
from dprl.analysis.base import Tables
from dprl.analysis.printed import as_run, draw_printed, printed_rows
from dprl.analysis.claims import lq as lq_claims
from dprl.analysis.claims.lq import CENTRE_DELTA, CENTRE_EPS
from dprl.analysis import selection
from dprl.analysis.selection import final_rows
from dprl.analysis.stats import loglog_slope
from dprl.experiments.registry import plugins

REGRET_EXPONENT = 0.5  # C2: regret ∝ √K
COST_EPS_EXPONENT, COST_DELTA_EXPONENT = -0.5, 0.25  # C3 (the paper's zCDP route)
# The audit table's counter ids (B1, B2 in the paper's notation) would read as the claim ids
# B1-B5 of the policy-evaluation paper: the figure names the counters by what they count.
COUNTER_NAMES = {"B1": "Gram counter", "B2": "target counter", "joint": "both counters"}
COUNTER_MARKERS = {"B1": "o", "B2": "s", "joint": "^"}


def _style(alg: str, eps: float, cal: str, delta: float | None = None) -> dict:
    d = delta if cal != "none" else None
    if alg in plugins():  # a plug-in in its own colour, with a marker (private built-ins are coloured by ε)
        return {**P.series_style(alg, eps, cal, by="algorithm"), "marker": "D", "label": P.series_label(alg, eps, cal, d)}
    return {**P.series_style(alg, eps, cal), "label": P.series_label(alg, eps, cal, d)}


def _seed_regimes(gs: pd.DataFrame) -> dict[str, list]:
    """The seeds of one private series whose own regime is not the others'
    (:func:`dprl.analysis.claims.lq.c2_seed_states`, the regimes C2's per-seed rule judges
    in): ``"did not learn"``, those past the horizon the theory gives without an end of their
    burn-in; ``"in their own burn-in"``, those still in it when some (not all) are."""
    states = lq_claims.c2_seed_states(gs)
    learning = sorted(states[states == "learning"].index)
    out = {"did not learn": sorted(states[states == "not learned"].index)}
    out["in their own burn-in"] = learning if 0 < len(learning) < len(states) else []
    return {k: v for k, v in out.items() if v}


def _note_seed_regimes(ax, per_series: dict[str, dict[str, list]]) -> None:
    """One note on ``ax`` naming, per kind, the series and seeds of :func:`_seed_regimes`
    (:func:`dprl.analysis.learning.seed_note`'s words, compact: one line per kind)."""
    for kind in ("did not learn", "in their own burn-in"):
        hits = [f"{label} {seeds[kind]}" for label, seeds in per_series.items() if kind in seeds]
        if hits:
            P.note(ax, f"seeds {kind} (C2's per-seed rule: {'fail' if kind == 'did not learn' else 'outside it'}): "
                       + "; ".join(hits))


def regret_loglog(tables: Tables):
    """Cumulative regret vs K (log-log) at δ = CENTRE_DELTA, seed mean with 95% bootstrap band,
    √K reference; each private series' predicted burn-in T* (agents/lq/regime.py) marked."""
    df = tables["lq_regret"]
    keep = (df["calibration"] == "none") | np.isclose(df["delta"].fillna(-1), CENTRE_DELTA)
    df = df[keep]
    envs = sorted(df["env_label"].unique())
    # panels stacked: each panel's notes (coinciding curves, burn-ins beyond K) run the width
    # of the figure under it instead of into its neighbour
    fig, axes = P.subplots(len(envs), 1, panel=(6.4, 4.0))
    for ax, env in zip(axes[:, 0], envs):
        g = df[df["env_label"] == env]
        groups = list(g.groupby(["algorithm", "epsilon", "calibration"], sort=True))
        # private settings whose seed means coincide exactly (before its burn-in every ε plays
        # the same actions) would hide one another: each gets its own marker, and the note says so
        means = {key: P.seed_means(gs, "episode", "regret")["mean"] for key, gs in groups if key[2] != "none"}
        same = P.distinguish_coinciding(ax, means, lambda key: P.series_label(*key))
        marks, per_series = [], {}
        for (alg, eps, cal), gs in groups:
            style = _style(alg, eps, cal, CENTRE_DELTA)
            extra = same.get((alg, eps, cal), {})
            P.mean_band(ax, gs, "episode", "regret", positive=True, **style, **extra)
            if cal != "none" and "burn_in_episodes" in gs:
                marks.append(P.mark_burn_in(ax, float(gs["burn_in_episodes"].median()), style["color"],
                                            within=(gs["episode"].min(), gs["episode"].max())))
                per_series[f"ε={eps:g} ({cal})"] = _seed_regimes(gs)
        if marks and not any(marks):
            P.note(ax, "every private burn-in T* lies beyond the horizon (not drawn)")
        _note_seed_regimes(ax, per_series)
        P.reference_rate(ax, REGRET_EXPONENT, "K")
        # the legend beside its panel: inside, the default grid's eight settings hid 9-16% of
        # the curves (figure check)
        P.finish_axes(ax, extra=[P.burn_in_legend_entry("T*")], xlabel="episodes K", ylabel="cumulative exact regret",
                      title=P.environment_name(env), legend_kw={"loc": "upper left", "bbox_to_anchor": (1.1, 1.0)})
    n_seeds = df.groupby(["env_label", "privacy_label"])["seed"].nunique().min()
    fig.suptitle(f"LQ regret (seed mean, 95% bootstrap band over {n_seeds} seeds)")
    return fig


def _cost_panel(ax, g: pd.DataFrame, x: str, cal: str, alg: str = "private_ofu_rl") -> int:
    """Draw one series' privacy cost against ``x``; the number of (positive) means drawn."""
    style = P.series_style(alg, None, cal, by="algorithm")
    s = P.mean_band(ax, g, x, "cost", label=None, errorbars=True, marker=P.CALIBRATION_MARKERS[cal], positive=True,
                    **style)
    if len(s) >= 2:
        slope = loglog_slope(s.index.to_numpy(float), s["mean"].to_numpy())
        c = np.polyfit(np.log(s.index.to_numpy(float)), np.log(s["mean"].to_numpy()), 1)
        xs = np.geomspace(s.index.min(), s.index.max(), 20)
        ax.plot(xs, np.exp(np.polyval(c, np.log(xs))), color=style["color"], ls=style["ls"], lw=1,
                label=f"{'' if alg == 'private_ofu_rl' else P.algorithm_name(alg) + ' '}{cal}: fitted exponent {slope:.2f}")
    else:
        P.note(ax, f"{'' if alg == 'private_ofu_rl' else P.algorithm_name(alg) + ' '}{cal}: no fit (fewer than 2 positive means)")
    return len(s)


def privacy_cost(tables: Tables):
    """Privacy cost at the final K vs ε (δ fixed) and vs ln(1/δ) (ε fixed), fitted exponents,
    the paper's rates (−1/2 in ε, +1/4 in ln(1/δ)) as references."""
    cost = lq_claims.with_log_inv_delta(selection.privacy_cost(tables["lq_regret"], final=True))
    envs = sorted(cost["env_label"].unique()) or ["(none)"]
    fig, axes = P.subplots(len(envs), 2, panel=(5.2, 3.8))
    for i, env in enumerate(envs):
        g = cost[cost["env_label"] == env]
        drawn = [0, 0]
        for (alg, cal), gc in g.groupby(["algorithm", "calibration"], sort=True):  # a plug-in: against its baseline
            drawn[0] += _cost_panel(axes[i, 0], gc[np.isclose(gc["delta"], CENTRE_DELTA)], "epsilon", cal, alg)
            drawn[1] += _cost_panel(axes[i, 1], gc[np.isclose(gc["epsilon"], CENTRE_EPS)], "log_inv_delta", cal, alg)
        name = P.environment_name(env) if env != "(none)" else env
        for ax, n, exp, var, fixed in ((axes[i, 0], drawn[0], COST_EPS_EXPONENT, "ε", f"δ={CENTRE_DELTA:g}"),
                                       (axes[i, 1], drawn[1], COST_DELTA_EXPONENT, "ln(1/δ)", f"ε={CENTRE_EPS:g}")):
            if n == 0:  # nothing positive to draw on a log scale
                P.empty_panel(ax, "no positive mean privacy cost")
                ax.set(xlabel=var, title=f"{name}: against {var} ({fixed})")
                continue
            P.reference_rate(ax, exp, var)
            P.finish_axes(ax, xlabel=var, ylabel="Regret(private) − Regret(its baseline, OFU-RL) at K",
                          title=f"{name}: against {var} ({fixed})")
    n_seeds = int(cost.groupby(["env_label", "privacy_label"])["seed"].nunique().min()) if not cost.empty else 0
    fig.suptitle(f"Privacy cost of Private-OFU-RL (seed mean, 95% bootstrap interval over {n_seeds} seeds; "
                 "non-positive means not shown)")
    return fig


def oracle_size(tables: Tables):
    """Final regret vs the number N of oracle candidates, and regret curves per N."""
    df = tables["lq_oracle"]
    last = final_rows(df)
    fig, axes = P.subplots(1, 2, panel=(5.2, 4.0))
    for (alg, eps, cal), g in last.groupby(["algorithm", "epsilon", "calibration"], sort=True):
        # a marker per calibration: points at every N hide the dashes that tell them apart
        P.mean_band(axes[0, 0], g, "alg.n_candidates", "regret", marker=P.CALIBRATION_MARKERS.get(cal, "o"),
                    positive=True, **_style(alg, eps, cal, g["delta"].iloc[0]))
    P.finish_axes(axes[0, 0], xlabel="oracle candidates N", ylabel=f"cumulative regret at K={int(last['episode'].max())}")
    ofu = df[df["calibration"] == "none"]
    colors = P.categorical_colors(ofu["alg.n_candidates"].astype(int).unique())
    for n, g in ofu.groupby(ofu["alg.n_candidates"].astype(int), sort=True):
        P.mean_band(axes[0, 1], g, "episode", "regret", label=f"N={n}", color=colors[n], positive=True)
    P.finish_axes(axes[0, 1], xlabel="episodes K", ylabel="cumulative exact regret (OFU-RL)")
    fig.suptitle(f"Regret against oracle size (seed mean, 95% bootstrap band over {df['seed'].nunique()} seeds)")
    return fig


def audit(tables: Tables):
    """Audited ε lower bound vs claimed ε for B1, B2 and the pair, both calibrations."""
    full = tables["lq_audit"]
    df = as_run(full)  # the printed constants: their own panel (C1's printed row, analysis/printed.py)
    printed = printed_rows(full)
    fig, axes = P.subplots(1, 2 if len(printed) else 1, panel=(5.4, 4.2))
    if len(printed):
        draw_printed(axes[0, 1], printed, "C1")
    ax = axes[0, 0]
    for (mech, cal), g in df.groupby(["mechanism", "calibration"], sort=True):
        color = P.CALIBRATION_COLORS.get(cal, "k")
        ax.scatter(g["claimed_epsilon"], g["eps_lb"].clip(lower=0), marker=COUNTER_MARKERS.get(mech, "x"), color=color,
                   label=f"{COUNTER_NAMES.get(mech, mech)}, {cal}")
        ax.scatter(g["claimed_epsilon"], g["eps_exact"], marker=COUNTER_MARKERS.get(mech, "x"), facecolors="none",
                   edgecolors=color, s=60)
    hi = float(df["claimed_epsilon"].max()) * 1.1
    ax.plot([0, hi], [0, hi], color="0.2", ls="--", lw=1, label="ε_lb = claimed ε")
    ax.set(xlabel="claimed ε", ylabel="audited ε_lb (filled), exact ε (open)")
    P.legend(ax)
    fig.suptitle(f"{P.algorithm_name('private_ofu_counters')}: privacy audit")
    return fig


ONSET_LABEL = "measured onset: per-episode regret halved (one per seed)"


def regime(tables: Tables):
    """Mean per-episode regret ``R(k)/k`` against ``k/Λ`` for every private setting: if the
    burn-in is set by the regularizer's scale Λ (``agents/lq/regime.py``), the curves of all
    ε and δ collapse onto one; the predicted onset (270Λ, the burn-in mark) and the start of
    the rate window a decade later are drawn, with the measured onsets (circles, one per seed:
    their distance from 270Λ is the prediction's error, whose median each label states)."""
    from dprl.agents.lq.regime import ONSET_K_OVER_LAMBDA
    from dprl.analysis.regime import ONSET_DECADES, median_onset

    rate_k = 10**ONSET_DECADES * ONSET_K_OVER_LAMBDA

    # one curve per experiment and setting: `full` runs some settings in several experiments
    # at different K, whose checkpoints must not be averaged together
    df = pd.concat([tables[name].assign(source=name) for name in lq_claims.REGRET_TABLES if name in tables],
                   ignore_index=True)
    df = df[df["calibration"] != "none"].copy()
    df["per_episode"] = df["regret"] / df["episode"]
    envs = sorted(df["env_label"].unique()) or ["(none)"]
    fig, axes = P.subplots(1, len(envs), panel=(5.4, 4.2))
    for ax, env in zip(axes[0], envs):
        g = df[df["env_label"] == env]
        if g.empty:
            P.empty_panel(ax)
            continue
        # in the order of ε, then δ (the legend's order)
        per_series = {}
        for (eps, delta, cal, _), gs in g.groupby(["epsilon", "delta", "calibration", "source"], sort=True):
            style = _style("private_ofu_rl", eps, cal, delta)
            lam = float(gs["lam_min"].median())  # Λ of the setting (the same in every seed)
            marker = P.delta_marker(delta)
            onsets = gs.groupby("seed")["onset_episode"].first() if "onset_episode" in gs else pd.Series(dtype=float)
            style["label"] += P.prediction_ratio(ONSET_K_OVER_LAMBDA * lam, median_onset(gs))
            s = P.mean_band(ax, gs, "episode", "per_episode", x_scale=lam, positive=True, marker=marker,
                            mfc=P.CALIBRATION_FACES.get(cal) if marker else None, **style)
            P.mark_onsets(ax, s, onsets, lam, style["color"], ONSET_LABEL)
            per_series[f"ε={eps:g} δ={delta:g} ({cal})"] = _seed_regimes(gs)
        # marks only where the data reach them (else the axis stretched past the data, which
        # sat left of both lines), the others named under the x label
        P.mark_burn_in(ax, ONSET_K_OVER_LAMBDA, label=f"predicted onset k = {ONSET_K_OVER_LAMBDA:g}Λ",
                       beyond=f"predicted onset k = {ONSET_K_OVER_LAMBDA:g}Λ")
        P.mark_x(ax, rate_k, label=f"rate window from k = {rate_k:g}Λ", beyond=f"rate window from k = {rate_k:g}Λ",
                 color="0.2", ls="-.", lw=0.9)
        _note_seed_regimes(ax, per_series)
        P.log_axes(ax)
        P.readable_log_ticks(ax)
        ax.set(xlabel="k / Λ (episodes over the regularizer scale)", ylabel="per-episode regret R(k)/k",
               title=P.environment_name(env))
        P.flush_notes(ax)
    # one legend for both panels, outside them: a dozen settings inside a panel hid its curves
    P.figure_legend(fig, P.handles_of(axes[0]))
    point = ("regret is a function of k/Λ" if df[["epsilon", "delta"]].drop_duplicates().shape[0] > 1
             else "per-episode regret against k/Λ (one (ε, δ): no collapse to see)")
    fig.suptitle(f"Private-OFU-RL: {point} (seed mean, 95% bootstrap band)")
    return fig
