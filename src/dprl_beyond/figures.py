"""L3's figure ``beyond_free_threshold`` (Qiao & Wang 2023, DP-UCBVI's "privacy for free",
ε* = S^1.5 A^0.5 H²/√T, so the ε above which privacy costs no more than the non-private
regret falls like T^{-1/2}): what :func:`dprl_beyond.claims.free_rows` measured, drawn from
its own measurement (:func:`~dprl_beyond.claims.fit_free`, :class:`~dprl_beyond.claims.FreeCube`,
:func:`~dprl_beyond.claims.crossover`), never recomputed another way.

Left, per T of ``beyond_free_hard`` (the Figure 1 family hard at T, one job per T): the
seed-paired cost ratio (DP-UCBVI's mean regret minus UCBVI-Bernstein's, over the latter)
against ε, a line at 1 and the crossover ε_c(T) marked. Right: ε_c(T) against T with the
slope the row judges, its 95% bootstrap interval (seeds resampled jointly, as the claim) and
the paper's T^{-1/2} through the same points; garnet's ε_c (``beyond_free``, checkpoints of
one run, outside L3's gate) beside it when run.

It lives here, not under ``dprl.analysis.figures``: the plug-in package that declares the
claim draws it, and dprl's catalog names it by its module path (``dprl_beyond.figures:
free_threshold``), as it names a plug-in's factory; dprl never imports ``dprl_beyond``."""

from __future__ import annotations

import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from dprl.analysis import plotting as P
from dprl.analysis.base import NOT_LEARNED, Tables
from dprl.analysis.figures.beyond import baseline_shade
from dprl.analysis.stats import Estimate, bootstrap_seed_rows
from dprl_beyond.claims import (FREE_ALGORITHM, FREE_HARD_TABLE, FREE_SLOPE, FREE_TABLE, FreeFit, Sweep, fit_free,
                                printed_threshold, sweeps)

CROSSING = {"marker": "X", "ms": 9.0, "mec": "k", "mew": 0.8, "ls": "none", "zorder": 3}  # ε_c(T) on the ratio line
RATIO_ONE = {"color": "k", "lw": 0.9, "ls": "-", "zorder": 1}  # cost = non-private regret
# panels stacked, each legend beside its panel: side by side, the entries' length squeezed
# both panels, and a legend under a panel ran into the notes under its x label
LEGEND_BESIDE = {"loc": "upper left", "bbox_to_anchor": (1.02, 1.0)}
FAMILY_MARKER, GARNET_MARKER = "o", "s"
FIT_LS, GARNET_FIT_LS, INTERVAL_LS = "-", "--", ":"
INSIDE = ("reached", "n/a", NOT_LEARNED)  # the regime states a fitted horizon may have (fit_free)


def _interval(f: FreeFit, statistic) -> Estimate:
    """95% bootstrap interval of ``statistic(seed indices)`` over the cube's seeds resampled
    jointly (:func:`dprl.analysis.stats.bootstrap_seed_rows`, the claim's own resampling)."""
    return bootstrap_seed_rows(np.arange(f.cube.seeds.size), lambda idx: statistic(idx.astype(int)))


def _bars(value: np.ndarray, est: list[Estimate]) -> np.ndarray:
    """Error-bar lengths ``[below, above]`` of ``est`` around ``value`` on a log axis: a lower
    edge at or below zero is cut half a decade under the point (:data:`P.BAND_LOG_CLIP`, the
    bands' rule), an interval that is NaN draws no bar."""
    low = np.array([e.low for e in est], float)
    high = np.array([e.high for e in est], float)
    low = np.where(np.isfinite(low), np.maximum(low, value / P.BAND_LOG_CLIP), value)
    high = np.where(np.isfinite(high), high, value)
    return np.array([np.clip(value - low, 0, None), np.clip(high - value, 0, None)])


def _family_title(sweep: Sweep) -> str:
    scale = float(sweep.costs["env.gap_scale"].iloc[0])
    return f"Figure 1 family hard at T (S={sweep.S}, A={sweep.A}, H={sweep.H}, gap scale {scale:g})"


def _ci(e: Estimate) -> str:
    return f"{e.value:.2f} [{e.low:.2f}, {e.high:.2f}]"


def _ratio_panel(ax: Axes, f: FreeFit, title: str) -> None:
    """Per T of the fit's cube: the claim's cost ratio (:meth:`FreeCube.ratio` of every seed)
    against ε with its bootstrap interval, the line at 1 and ε_c(T) (:attr:`FreeFit.found`)
    on it."""
    cube = f.cube
    ratio = cube.ratio(np.arange(cube.seeds.size))
    colours = P.categorical_colors(cube.episodes)
    skipped = []
    for j, t in enumerate(cube.episodes):
        r = ratio[:, j]
        ok = r > 0  # a paired cost below zero has no place on a log axis
        skipped += [f"{e:g} at T = {t:.3g}" for e in cube.eps[~ok]]
        if not ok.any():
            continue
        est = [_interval(f, lambda idx, i=i, j=j: float(cube.ratio(idx)[i, j])) for i in np.flatnonzero(ok)]
        eps_c = f.found[j]
        label = f"T = {t:.3g}: ε_c = {eps_c:.3g}" if np.isfinite(eps_c) else f"T = {t:.3g}: no crossing in the sweep"
        ax.errorbar(cube.eps[ok], r[ok], yerr=_bars(r[ok], est), fmt="o-", color=colours[t], lw=1.3, ms=4, capsize=3,
                    label=label)
        if np.isfinite(eps_c):
            ax.plot([eps_c], [1.0], color=colours[t], **CROSSING)
    if skipped:
        P.note(ax, "paired cost at or below zero (not drawn): ε = " + ", ".join(skipped))
    drawn = ratio[ratio > 0]
    if drawn.size and drawn.min() / P.BAND_LOG_CLIP <= 1.0 <= drawn.max() * P.BAND_LOG_CLIP:
        ax.axhline(1.0, label="cost = non-private regret (ratio 1)", **RATIO_ONE)
    elif drawn.size:  # a line decades away would squash the curves (figure check)
        P.note(ax, f"the ratio stays {'above' if drawn.min() > 1 else 'below'} 1 at every ε and T "
                   f"({drawn.min():.3g}-{drawn.max():.3g}): no crossing; the line at 1 is not drawn")
    crossing = P.line_handle("ε_c(T): the ratio crosses 1", match={"marker": "X"},
                             marker="X", ls="none", ms=8, mec="k", color="0.6")
    P.log_axes(ax)
    P.data_ticks(ax, cube.eps)  # the sweep's own ε, after log_axes (it would relabel them)
    base, mine = P.algorithm_name(str(f.sweep.baseline["algorithm"].iloc[0])), P.algorithm_name(FREE_ALGORITHM)
    ax.set(xlabel=f"ε ({mine}'s privacy level)", ylabel="cost ratio at T (seed-paired means)",
           title=f"{title}:\n(R[{mine}] − R[{base}]) / R[{base}] against ε, per T")
    P.legend(ax, [crossing], **LEGEND_BESIDE)


def _threshold_series(ax: Axes, f: FreeFit, label: str, colour: str, marker: str, fit_ls: str) -> bool:
    """ε_c(T) of one sweep with its per-T bootstrap interval (filled: a horizon inside the
    regime; white: outside it), the least-squares line of the slope the row judges over the
    fitted horizons (:attr:`FreeFit.fit`) and its 95% interval (:attr:`FreeFit.est`: two
    lines through the fit's centre at the interval's slopes). Returns whether it drew a point."""
    cube, found = f.cube, f.found
    crossing = np.isfinite(found)
    if not crossing.any():
        P.note(ax, f"{label}: no horizon with a crossing inside the sweep")
        return False
    if (~crossing).any():
        P.note(ax, f"{label}: no crossing inside the sweep at T = " + ", ".join(f"{t:.3g}" for t in cube.episodes[~crossing]))
    inside = np.array([s in INSIDE for s in f.states])
    est = [_interval(f, lambda idx, j=j: float(cube.crossovers(idx)[j])) for j in np.flatnonzero(crossing)]
    bars = _bars(found[crossing], est)
    for keep, face, words in ((inside[crossing], colour, "inside the regime"),
                              (~inside[crossing], P.HOLLOW, "outside the regime")):
        if keep.any():
            ax.errorbar(cube.episodes[crossing][keep], found[crossing][keep], yerr=bars[:, keep], fmt=marker,
                        color=colour, mfc=face, mec=colour, ms=6, capsize=3, label=f"{label}: ε_c(T), {words}")
    x, y = cube.episodes[f.fit], found[f.fit]
    if f.est is None or x.size < 2:
        P.note(ax, f"{label}: fewer than 3 horizons with a crossing, no slope")
        return True
    xs = np.geomspace(x.min(), x.max(), 20)
    centre = np.log(x).mean(), np.log(y).mean()  # the least-squares line passes through it
    for slope, ls, text in ((f.est.value, fit_ls, f"{label}: fitted slope {_ci(f.est)}"),
                            (f.est.low, INTERVAL_LS, f"{label}: the slope's 95% interval"),
                            (f.est.high, INTERVAL_LS, f"{label}: the slope's 95% interval")):
        if np.isfinite(slope):
            ax.plot(xs, np.exp(centre[1] + slope * (np.log(xs) - centre[0])), color=colour, ls=ls, lw=1.1, label=text)
    return True


def _threshold_panel(ax: Axes, f: FreeFit, garnet: list[FreeFit], title: str) -> None:
    """ε_c(T) against T for the family (judged), garnet's beside it (reported, not judged),
    the paper's T^{-1/2} through the family's fitted points (:func:`P.reference_rate`)."""
    colour = P.algorithm_color(FREE_ALGORITHM)
    x, y = f.cube.episodes[f.fit], f.found[f.fit]
    title = f"{title}:\nε_c(T) against T, paper's slope {FREE_SLOPE:g}"
    drawn = [_threshold_series(ax, f, "family", colour, FAMILY_MARKER, FIT_LS)]
    for g in garnet:
        drawn.append(_threshold_series(ax, g, f"{P.environment_name(g.sweep.label)}, not judged",
                                       baseline_shade(colour), GARNET_MARKER, GARNET_FIT_LS))
    if not any(drawn):
        P.empty_panel(ax, "no horizon with a crossing inside the sweep")
        ax.set_title(title)
        P.flush_notes(ax)
        return
    if np.isfinite(y).sum() >= 2:
        P.reference_rate(ax, FREE_SLOPE, "T", x, y, label=f"paper: ε* {P.rate_text(FREE_SLOPE, 'T')}")
    T = float(f.cube.episodes.max())
    star = printed_threshold(f.sweep.S, f.sweep.A, f.sweep.H, T)
    measured = f.found[-1]
    P.note(ax, f"printed ε* = S^1.5 A^0.5 H²/√(KH) at T = {T:.3g}: {star:.3g}"
           + (f" (ε_c is {measured / star:.3g}× it; its order only, not drawn)" if np.isfinite(measured) else ""))
    P.log_axes(ax)
    P.data_ticks(ax, f.cube.episodes)  # the family's own T (more labels collide with them)
    ax.set(xlabel="T (episodes): family, one run per T; garnet, checkpoints of one run",
           ylabel="ε_c(T): cost = non-private regret", title=title)
    P.legend(ax, **LEGEND_BESIDE)


def free_threshold(tables: Tables) -> Figure:
    """L3's evidence, one row per Figure 1 family of ``beyond_free_hard`` (module docstring):
    left the cost ratio against ε per T with ε_c(T), right ε_c(T) against T with the fitted
    slope, its 95% bootstrap interval and the paper's T^{-1/2}; garnet's ε_c
    (``beyond_free``) beside the family's when that experiment ran."""
    # a sweep of one ε has no crossover (the claim's row: inconclusive), and no fit
    fits = [(s, fit_free(s) if s.costs["epsilon"].nunique() >= 2 else None)
            for s in sweeps(tables[FREE_HARD_TABLE], family=True)]
    garnet = [fit_free(s) for s in sweeps(tables[FREE_TABLE], family=False) if s.costs["epsilon"].nunique() >= 2] \
        if tables.get(FREE_TABLE) is not None else []
    fig, axes = P.subplots(2 * max(len(fits), 1), 1, panel=(9.6, 3.9))
    axes = axes.reshape(-1, 2)  # a family's two panels, one above the other
    mine = P.algorithm_name(FREE_ALGORITHM)
    if not fits:
        for ax in axes[0]:
            P.empty_panel(ax, f"no {mine} run paired with its non-private baseline")
            ax.set_title("Figure 1 family hard at T")
    for row, (sweep, f) in zip(axes, fits):
        title = _family_title(sweep)
        if f is None:
            for ax in row:
                P.empty_panel(ax, "fewer than two ε in the sweep")
                ax.set_title(title)
            continue
        _ratio_panel(row[0], f, title)
        _threshold_panel(row[1], f, garnet, title)
    base = P.algorithm_name(str(fits[0][0].baseline["algorithm"].iloc[0])) if fits else "its non-private baseline"
    seeds = min((int(s.costs["seed"].nunique()) for s, _ in fits), default=0)
    fig.suptitle(f"{mine}'s privacy for free: ε_c(T), where its seed-paired privacy cost equals {base}'s regret "
                 f"({seeds} seed{'s' if seeds != 1 else ''}; 95% bootstrap intervals, seeds resampled jointly)")
    return fig
