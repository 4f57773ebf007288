"""One plotting vocabulary for every figure, after rlberry's single plotting
entry point: every figure goes through :func:`render` (claims in the title, one layout, one
deterministic save), and every figure module draws with the same few functions:

- :func:`mean_band`: seed mean with the 95% percentile-bootstrap band of
  :func:`dprl.analysis.stats.bootstrap_ci`, the interval the claims table reports;
- :func:`reference_rate`: a theory rate ``∝ x^p``, dashed grey, anchored at the geometric
  mean of the last decade of the data it is compared with;
- :func:`mark_burn_in`: the burn-in horizon (``T*``, ``Λ``, ``ε·m*``) as a dotted vertical line;
- :func:`series_style` / :func:`series_label`: one colour per algorithm and one per ε
  (fixed palettes keyed by name and value, never by order of appearance), one line style
  per calibration, and display names instead of internal ids;
- :func:`save`: PDF and PNG without timestamps, byte-identical across reruns, after
  :func:`dprl.analysis.figure_check.check_figure` (a figure that fails is refused).
"""

from __future__ import annotations

import io
import re
import textwrap
from collections.abc import Callable, Iterable, Sequence
from fractions import Fraction
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from matplotlib import colormaps  # noqa: E402
from matplotlib.colors import to_hex  # noqa: E402
from matplotlib.ticker import LogFormatterSciNotation, NullFormatter  # noqa: E402

from dprl.analysis.base import outside_regime, verdict_totals  # noqa: E402
from dprl.analysis.figure_check import (  # noqa: E402
    LEGEND_HANDLES,
    STANDS_FOR,
    FigureCheckError,
    check_figure,
    proxy_drawn,
    stands_for,
)
from dprl.analysis.stats import bootstrap_ci  # noqa: E402
from dprl.experiments.registry import declared, plugins  # noqa: E402
from dprl.runner.io import atomic_write_bytes  # noqa: E402

# --------------------------------------------------------------------------- display names

def algorithm_names() -> dict[str, str]:
    return declared("algorithms", "display")


def environment_names() -> dict[str, str]:
    return declared("environments", "display")


def algorithm_colors() -> dict[str, str]:
    return declared("algorithms", "colour")

# parameter names inside labels (``garnet_H2_S3``) -> their symbol in a display name
PARAMETER_NAMES: dict[str, str] = {"n_candidates": "N", "A": "|A|", "S": "S", "H": "H", "gap": "gap", "gap_scale": "gap scale"}

CALIBRATION_NAMES: dict[str, str] = {"tight": "tight", "paper": "paper", "none": "non-private"}


def algorithm_name(name: str) -> str:
    """Display name of a registered algorithm (``private_linopt_vi`` -> ``Private-LinOpt-VI``)."""
    return algorithm_names()[name]


_PARAM = re.compile(r"([A-Za-z][A-Za-z_]*?)(-?\d[\d.e+\-]*)(?:_|$)")


def _split_label(label: str, names: dict[str, str]) -> tuple[str, str]:
    base = max((n for n in names if label == n or label.startswith(n + "_")), key=len, default=None)
    if base is None:
        raise KeyError(f"no display name for {label!r}: declare its label in experiments/<paper>/spec.py")
    return base, label[len(base) + 1:]


def environment_name(label: str) -> str:
    """Display name of an environment label: ``garnet_H2_S3`` -> ``Garnet (H=2, S=3)``
    (the config's labels are the name plus its non-default parameters)."""
    names = environment_names()
    base, rest = _split_label(label, names)
    params = _PARAM.findall(rest)
    if rest and "".join(f"{k}{v}" for k, v in params).replace("_", "") != rest.replace("_", ""):
        return f"{names[base]} ({rest})"  # a hashed label: show what there is
    inner = ", ".join(f"{PARAMETER_NAMES.get(k, k)}={v}" for k, v in params)
    return names[base] + (f" ({inner})" if inner else "")


def epsilon_text(eps: float) -> str:
    return "ε=∞" if not np.isfinite(eps) else f"ε={eps:g}"


def series_label(algorithm: str | None = None, epsilon: float | None = None, calibration: str | None = None,
                 delta: float | None = None) -> str:
    """Legend label of one series: ``PUCB ε=10 (tight)``; non-private algorithms by name only."""
    parts = [algorithm_name(algorithm)] if algorithm else []
    private = calibration not in (None, "none") and epsilon is not None and np.isfinite(epsilon)
    if private:
        parts.append(epsilon_text(epsilon))
        if delta is not None and np.isfinite(delta):
            parts.append(f"δ={delta:g}")
        parts.append(f"({CALIBRATION_NAMES.get(calibration, calibration)})")
    return " ".join(parts)


# --------------------------------------------------------------------------- colours and styles

# ε is coloured by its value on a fixed logarithmic scale, so ε = 10 has the same colour
# in every panel and figure whatever other ε are present.
EPSILON_RANGE = (0.1, 1.0e4)  # every preset's ε grid lies inside
_EPS_CMAP = colormaps["turbo"]  # ordered, and a clear change of hue per decade
CALIBRATION_LINESTYLES: dict[str, Any] = {"tight": "-", "paper": "--", "none": "-"}
CALIBRATION_MARKERS: dict[str, str] = {"tight": "o", "paper": "s", "none": "D"}
# for figures that compare calibrations on one algorithm (audits): fixed, colour-blind safe
CALIBRATION_COLORS: dict[str, str] = {"tight": "#0072B2", "paper": "#D55E00", "none": "#000000"}
# δ (when a figure varies it at one ε): a marker per value, the default δ = 1e-3 without one
DELTA_MARKERS: dict[float, str | None] = {1e-1: "^", 1e-3: None, 1e-5: "v"}


def delta_marker(delta: float) -> str | None:
    for value, marker in DELTA_MARKERS.items():
        if np.isclose(delta, value, rtol=1e-9, atol=0.0):
            return marker
    return "x"


def epsilon_color(eps: float) -> str:
    """The colour of ε: the position of log10 ε in :data:`EPSILON_RANGE` on turbo (its darkest
    ends cut off), about a fifth of the map per decade; ε = ∞ (non-private) is black."""
    if not np.isfinite(eps):
        return "#000000"
    lo, hi = np.log10(EPSILON_RANGE)
    pos = float(np.clip((np.log10(eps) - lo) / (hi - lo), 0.0, 1.0))
    return to_hex(_EPS_CMAP(0.05 + 0.9 * pos))


def calibration_style(calibration: str) -> dict[str, Any]:
    """Colour, line style and marker of one calibration, for figures that compare the
    calibrations of a single algorithm (each differs from the other in all three)."""
    return {"color": CALIBRATION_COLORS[calibration], "ls": CALIBRATION_LINESTYLES[calibration],
            "marker": CALIBRATION_MARKERS[calibration]}


def algorithm_color(name: str) -> str:
    # one colour per algorithm, everywhere, declared with it: non-private baselines in
    # black/greys, private algorithms in distinct hues (tab10/Dark2 entries)
    return algorithm_colors()[name]


def categorical_colors(values: Iterable[Any]) -> dict[Any, str]:
    """Colours for a categorical variable that is neither an algorithm nor ε (audit variants,
    oracle sizes): by *sorted* value, so a value's colour does not depend on row order."""
    values = sorted(set(values), key=lambda v: (str(type(v)), v))
    cmap = colormaps["tab10"]
    return {v: to_hex(cmap(i % 10)) for i, v in enumerate(values)}


def series_style(algorithm: str | None = None, epsilon: float | None = None, calibration: str | None = None,
                 by: str = "epsilon") -> dict[str, Any]:
    """Colour, line style and label of a series. ``by="epsilon"``: private series coloured by
    their ε (non-private ones by algorithm); ``by="algorithm"``: coloured by algorithm. A
    plug-in is always drawn in the colour it declares (ε colours are the papers'
    algorithms'; its ε are told apart by the label). Calibration sets the line style
    (tight solid, paper dashed)."""
    private = calibration not in (None, "none") and epsilon is not None and np.isfinite(epsilon)
    if algorithm is not None and algorithm in plugins():
        color = algorithm_color(algorithm)
    elif by == "epsilon" and private:
        color = epsilon_color(float(epsilon))
    elif algorithm is not None:
        color = algorithm_color(algorithm)
    else:
        color = epsilon_color(float(epsilon)) if epsilon is not None else "#000000"
    return {"color": color, "ls": CALIBRATION_LINESTYLES.get(calibration or "none", "-")}


# --------------------------------------------------------------------------- bands and marks

BAND_ALPHA = 0.2
BAND_GID = "seed-mean"  # the mean line of every band, found again by reference_rate
# On a log axis a band is clipped to its curve's range widened by this factor on each side
# (half a decade): a lower bootstrap edge near 0 would otherwise pull the axis down to
# ~1e-300 and squash every curve; a band cut at the clip still shows "unbounded below".
BAND_LOG_CLIP = 10**0.5


def seed_means(df: pd.DataFrame, x: str, y: str) -> pd.DataFrame:
    """Per ``x``: the seed mean of ``y`` and its 95% bootstrap CI (``stats.bootstrap_ci``, the
    interval of the claims table). Columns ``mean, low, high, n``, indexed by ``x``."""
    rows = {}
    for xv, g in df.groupby(x, sort=True):
        e = bootstrap_ci(g[y].to_numpy(dtype=float))
        rows[xv] = (e.value, e.low, e.high, e.n)
    out = pd.DataFrame.from_dict(rows, orient="index", columns=["mean", "low", "high", "n"]).rename_axis(x)
    return out.astype({"mean": float, "low": float, "high": float, "n": int})


# the measured onsets on a regime figure: filled, black-edged and larger than the curve's line
# (a hollow circle of the curve's own colour vanished into it)
ONSET_MARKER = {"marker": "o", "ms": 6.0, "mec": "k", "mew": 0.8}


def mark_onsets(ax: plt.Axes, curve: pd.DataFrame, onsets: Any, x_scale: float, color: str, label: str) -> int:
    """Circles at the measured onsets (one per seed, in the units of the curve's x, NaN
    dropped) on a seed-mean ``curve`` drawn by :func:`mean_band` with the same ``x_scale``:
    where a regime figure's x is scaled by the predicted burn-in, a circle's distance from
    ``x = 1`` is the prediction's error. Returns the number drawn."""
    x = np.asarray(onsets, dtype=float)
    x = x[np.isfinite(x)] / x_scale
    if not len(x) or curve.empty:
        return 0
    y = np.interp(x, curve.index.to_numpy(float) / x_scale, curve["mean"].to_numpy())
    ax.plot(x, y, ls="none", **ONSET_MARKER, mfc=color, label=label)
    return len(x)


def prediction_ratio(predicted: float, onset: float) -> str:
    """A series label's suffix: predicted burn-in over the measured onset (the median over
    seeds of :func:`dprl.analysis.regime.median_onset`, as in the claims' burn-in check), or
    that none was measured (``NaN``)."""
    return f"; predicted/measured {predicted / onset:.2g}" if np.isfinite(onset) else "; no onset measured"


def mean_band(ax: plt.Axes, df: pd.DataFrame, x: str, y: str, *, label: str | None, color: str,
              ls: Any = "-", marker: str | None = None, errorbars: bool = False, lw: float = 1.3,
              positive: bool = False, x_scale: float = 1.0, markevery: Any = None,
              mfc: str | None = None) -> pd.DataFrame:
    """Draw the seed mean of ``y`` against ``x`` with its 95% bootstrap band (or error bars
    for scattered points). ``positive`` drops non-positive means (log axes) and keeps the
    band within half a decade of the curve (:data:`BAND_LOG_CLIP`). ``x_scale`` divides
    ``x`` (e.g. ``T/T*``); ``mfc`` the markers' face (:data:`HOLLOW`: the ``paper``
    calibration where both share a marker). Returns the :func:`seed_means` frame it drew."""
    s = seed_means(df, x, y)
    if s.empty:
        return s
    if positive:
        s = s[s["mean"] > 0]
    xs = s.index.to_numpy(dtype=float) / x_scale
    if errorbars:
        # log axis: a bar through 0 breaks the autoscaled limits (tests/core/test_plotting.py)
        bottom = s["low"].clip(lower=s["mean"] / BAND_LOG_CLIP) if positive else s["low"]
        low = (s["mean"] - bottom).clip(lower=0)
        high = (s["high"] - s["mean"]).clip(lower=0)
        bars = ax.errorbar(xs, s["mean"], yerr=[low, high], fmt=marker or "o", color=color, ls=ls, lw=lw, capsize=3,
                           label=label, ms=4)
        bars.lines[0].set_gid(BAND_GID)
    else:
        ax.plot(xs, s["mean"], color=color, ls=ls, lw=lw, marker=marker, ms=3.5 if mfc is None else 4.5, label=label,
                gid=BAND_GID, markevery=markevery, **({"mfc": mfc} if mfc is not None else {}))
        lo, hi = s["low"], s["high"]
        if positive:  # log axis: the band stays within half a decade of its curve's range
            lo = lo.clip(lower=s["mean"].min() / BAND_LOG_CLIP)
            hi = hi.clip(upper=s["mean"].max() * BAND_LOG_CLIP)
        ax.fill_between(xs, lo, hi, color=color, alpha=BAND_ALPHA, lw=0)
    return s


# white-faced markers: the paper calibration beside the tight one when both carry the same
# marker (markers on every point hide the dashes that tell the calibrations apart)
HOLLOW = "white"
CALIBRATION_FACES: dict[str, str | None] = {"paper": HOLLOW}


COINCIDE_MARKERS = ("o", "s", "^", "v", "D", "P", "X", "*")
# Seed means within this relative distance of one another at every x are drawn on top of
# one another (5% is 0.02 decades, under 2 pixels on a log axis of a few decades).
COINCIDE_RTOL = 0.05


def distinguish_coinciding(ax: plt.Axes, means: dict[Any, pd.Series], name: Callable[[Any], str],
                           rtol: float = COINCIDE_RTOL) -> dict[Any, dict]:
    """Series whose seed means coincide (same x, values within ``rtol`` of one another) are
    drawn on top of one another and look like one. Returns, per such series, a marker and a
    staggered ``markevery`` for :func:`mean_band` (each curve's markers show between the
    others'), and notes under the x label which series coincide (``name(key)`` of each) and
    whether their means are identical or only close."""
    keys = list(means)
    groups: list[list[Any]] = []
    for k in keys:
        for grp in groups:
            a, b = means[grp[0]], means[k]
            if len(a) == len(b) and len(a) and np.array_equal(a.index.to_numpy(), b.index.to_numpy()) \
                    and np.allclose(a.to_numpy(float), b.to_numpy(float), rtol=rtol, atol=0.0):
                grp.append(k)
                break
        else:
            groups.append([k])
    out: dict[Any, dict] = {}
    for grp in (g for g in groups if len(g) > 1):
        for i, k in enumerate(grp):
            out[k] = {"marker": COINCIDE_MARKERS[i % len(COINCIDE_MARKERS)], "markevery": (i, len(grp))}
        first = means[grp[0]].to_numpy(float)
        exact = all(np.array_equal(first, means[k].to_numpy(float)) for k in grp[1:])
        what = "identical seed means" if exact else f"seed means within {rtol:.0%} of one another"
        note(ax, f"{what}, the curves overlap (markers alternate): " + ", ".join(name(k) for k in grp))
    return out


def rate_text(exponent: float, var: str = "T") -> str:
    """``∝ T^{1/2}`` for ``exponent = 0.5`` (mathtext; a simple fraction when there is one)."""
    frac = Fraction(exponent).limit_denominator(8)
    if abs(float(frac) - exponent) > 1e-9:
        exp = f"{exponent:.2g}"
    elif frac.denominator == 1:
        exp = f"{frac.numerator}"
    else:
        exp = f"{frac.numerator}/{frac.denominator}"
    if exp == "1":
        return f"$\\propto \\mathrm{{{var}}}$"
    base = f"\\mathrm{{{var}}}" if len(var) == 1 else f"(\\mathrm{{{var}}})"  # upright, like the axis labels
    return f"$\\propto {base}^{{{exp}}}$"


REFERENCE_STYLE = {"color": "0.45", "ls": (0, (5, 3)), "lw": 1.1, "zorder": 1.5}
# a second and third reference in one panel (∝ S and ∝ S²): told apart in the legend too
REFERENCE_DASHES = ((0, (5, 3)), (0, (9, 3, 2, 3)), (0, (2, 2)))


def reference_anchor(x: Sequence[float], y: Sequence[float]) -> tuple[float, float]:
    """Where every theory reference passes: the geometric mean of ``x`` and of ``y`` over the
    points in the last decade of ``x`` (``x >= max x / 10``; positive finite points only)."""
    x, y = np.asarray(x, float), np.asarray(y, float)
    ok = np.isfinite(x) & np.isfinite(y) & (x > 0) & (y > 0)
    x, y = x[ok], y[ok]
    if x.size == 0:
        raise ValueError("no positive points to anchor a reference rate")
    last = x >= x.max() / 10
    return float(np.exp(np.log(x[last]).mean())), float(np.exp(np.log(y[last]).mean()))


def band_points(ax: plt.Axes) -> tuple[np.ndarray, np.ndarray]:
    """The seed means of every band drawn on ``ax`` by :func:`mean_band` (in axis units)."""
    lines = [ln for ln in ax.get_lines() if ln.get_gid() == BAND_GID]
    if not lines:
        return np.empty(0), np.empty(0)
    return (np.concatenate([np.asarray(ln.get_xdata(), float) for ln in lines]),
            np.concatenate([np.asarray(ln.get_ydata(), float) for ln in lines]))


def reference_rate(ax: plt.Axes, exponent: float, var: str = "T", x: Sequence[float] | None = None,
                   y: Sequence[float] | None = None, label: str | None = None) -> None:
    """The theory rate ``y ∝ x^exponent`` as a dashed grey line over the range of the data,
    anchored at :func:`reference_anchor` of the data it is compared with — by default every
    seed mean drawn on the panel (:func:`band_points`), else ``(x, y)`` — and labelled
    ``∝ T^{1/2}`` (or ``label``). The one way every rate figure draws its theory."""
    if x is None or y is None:
        x, y = band_points(ax)
    try:
        x0, y0 = reference_anchor(x, y)
    except ValueError:
        return
    xv = np.asarray(x, float)
    xv = xv[np.isfinite(xv) & (xv > 0)]
    if xv.min() == xv.max():
        return  # one x: no slope to show
    xs = np.geomspace(xv.min(), xv.max(), 50)
    text = label or rate_text(exponent, var)
    ys = y0 * (xs / x0) ** exponent
    drawn = sum(1 for ln in ax.get_lines() if (ln.get_gid() or "").startswith("reference:"))
    style = {**REFERENCE_STYLE, "ls": REFERENCE_DASHES[drawn % len(REFERENCE_DASHES)]}
    ax.plot(xs, ys, label=text, gid=f"reference:{exponent:g}", **style)
    # also written at the line's end, so that two references in one panel are told apart
    ax.annotate(text, (xs[-1], ys[-1]), xytext=(2, 0), textcoords="offset points", fontsize=7, color="0.35",
                va="center", annotation_clip=False)


BURN_IN_STYLE = {"ls": (0, (1, 1.5)), "lw": 1.2}
NOTES = "_dprl_notes"  # attribute of an axes: what its marks could not show, for the x label


def note(ax: plt.Axes, text: str) -> None:
    """A remark about the panel (a mark beyond the data, a fit that could not be made),
    written under its x label by :func:`legend`: never over the data, never a legend entry
    with nothing drawn."""
    notes = getattr(ax, NOTES, [])
    if text not in notes:
        notes.append(text)
    setattr(ax, NOTES, notes)


def data_xrange(ax: plt.Axes) -> tuple[float, float] | None:
    """The x range of the seed means drawn on ``ax`` so far (:func:`band_points`)."""
    x, _ = band_points(ax)
    x = x[np.isfinite(x)]
    return (float(x.min()), float(x.max())) if len(x) else None


def mark_x(ax: plt.Axes, value: float, label: str | None = None, within: tuple[float, float] | None = None,
           beyond: str | None = None, **style: Any) -> bool:
    """A vertical reference mark at ``x = value`` (a burn-in, the start of a rate window),
    drawn only inside ``within`` (default: the x range of the data drawn so far): a mark
    beyond the data would stretch the axis and squeeze the curves into one corner. When it
    is skipped, ``beyond`` (e.g. ``"T = T*"``) is noted under the x label."""
    if value is None or not np.isfinite(value) or value <= 0:
        return False
    rng = within if within is not None else data_xrange(ax)
    if rng is not None and not (rng[0] <= value <= rng[1]):
        if beyond:
            side = "beyond" if value > rng[1] else "before"
            note(ax, f"{beyond} at {value:.3g} lies {side} the data (not drawn)")
        return False
    ax.axvline(value, label=label, **style)
    return True


def mark_burn_in(ax: plt.Axes, value: float, color: str = "0.2", label: str | None = None,
                 within: tuple[float, float] | None = None, beyond: str | None = None) -> bool:
    """Mark a burn-in horizon (``T*``, ``270Λ``, ``ε·m*``) as a dotted vertical line in the
    series' colour (:func:`mark_x`); skipped (returns False) outside ``within`` (default:
    the data's x range) or when not finite."""
    return mark_x(ax, value, label=label, within=within, beyond=beyond, color=color, gid="burn-in", **BURN_IN_STYLE)


def burn_in_legend_entry(symbol: str = "T*") -> plt.Line2D:
    """A legend handle explaining the dotted burn-in lines (:func:`mark_burn_in`); the
    figure check refuses it in a panel where no burn-in line is drawn."""
    handle = plt.Line2D([], [], color="0.2", label=f"burn-in {symbol} (dotted, series colour)", **BURN_IN_STYLE)
    return stands_for(handle, gid="burn-in")


def line_handle(label: str, match: dict[str, Any] | None = None, **style) -> plt.Line2D:
    """A legend entry for lines drawn in several colours with one meaning (e.g. a bound).
    ``match``: what it stands for among the drawn lines (default: its line style)."""
    handle = plt.Line2D([], [], label=label, **{"color": "k", **style})
    return stands_for(handle, **(match if match is not None else {"ls": style.get("ls", "-")}))


def flush_notes(ax: plt.Axes) -> None:
    """Write the panel's notes (:func:`note`) under its x label (once)."""
    notes = getattr(ax, NOTES, [])
    if notes:
        ax.set_xlabel("\n".join([ax.get_xlabel(), *(textwrap.fill(n, 80) for n in notes)]))
        setattr(ax, NOTES, [])


def handles_of(axes: Iterable[plt.Axes]) -> dict[str, Any]:
    """The labelled handles of several panels, by label (first wins): one figure legend."""
    out: dict[str, Any] = {}
    for ax in axes:
        for h, lab in zip(*ax.get_legend_handles_labels()):
            out.setdefault(lab, h)
    return out


def is_reference(handle: Any) -> bool:
    """A theory-rate line of :func:`reference_rate`."""
    return str(getattr(handle, "get_gid", lambda: "")() or "").startswith("reference:")


def legend(ax: plt.Axes, extra: Sequence[plt.Artist] = (), keep: Callable[[Any], bool] | None = None, **kw) -> None:
    """The panel's legend (labels deduplicated; ``keep``: only the handles it accepts), small
    font, plus explanatory handles, each only when what it explains is drawn in the panel (no
    burn-in entry when every burn-in lies beyond the horizon). The original handles are kept
    on the legend for the figure check (matplotlib draws copies). The panel's notes
    (:func:`note`) go under its x label."""
    flush_notes(ax)
    handles, labels = ax.get_legend_handles_labels()
    seen: dict[str, Any] = {}
    for h, lab in zip(handles, labels):
        if keep is None or keep(h):
            seen.setdefault(lab, h)
    for h in extra:
        if getattr(h, STANDS_FOR, None) is None or proxy_drawn(h, [ax]):
            seen.setdefault(h.get_label(), h)
    if seen:
        leg = ax.legend(list(seen.values()), list(seen.keys()), fontsize=kw.pop("fontsize", 6.5), **kw)
        setattr(leg, LEGEND_HANDLES, dict(seen))


def figure_legend(fig: plt.Figure, handles: dict[str, Any], **kw) -> None:
    """One legend for the whole figure, outside the panels on the right (it hides no data):
    for panels that share their series, or a panel whose legend would cover its curves."""
    if handles:
        leg = fig.legend(list(handles.values()), list(handles.keys()), fontsize=kw.pop("fontsize", 6.5),
                         loc=kw.pop("loc", "outside right center"), **kw)
        setattr(leg, LEGEND_HANDLES, dict(handles))


def log_axes(ax: plt.Axes, x: bool = True, y: bool = True) -> None:
    """Log scales on the chosen axes, labelled by :func:`readable_log_ticks`."""
    if x:
        ax.set_xscale("log")
    if y:
        ax.set_yscale("log")
    readable_log_ticks(ax)


class ReadableLogFormatter(LogFormatterSciNotation):
    """Tick labels of a log axis, decided when the figure is drawn (from the final view):
    below two decades plain numbers (``0.03``, not ``3×10⁻²``); minor ticks labelled when
    fewer than two powers of ten are in view (else one decade can show a single label):
    every minor tick when under half a decade, those at 2× and 5× otherwise."""

    def __init__(self, minor: bool):
        super().__init__(labelOnlyBase=not minor)
        self.minor = minor

    def __call__(self, x: float, pos: int | None = None) -> str:
        lo, hi = sorted(self.axis.get_view_interval())
        if lo <= 0 or x <= 0:
            return super().__call__(x, pos) if not self.minor else ""
        span = np.log10(hi) - np.log10(lo)
        powers = np.floor(np.log10(hi) + 1e-9) - np.ceil(np.log10(lo) - 1e-9) + 1
        if self.minor:
            if powers >= 2:
                return ""
            mantissa = round(x / 10 ** np.floor(np.log10(x) + 1e-9), 6)
            if span >= 0.5 and mantissa not in (2.0, 5.0):
                return ""
        elif span >= 2:
            return super().__call__(x, pos)
        # 3 significant digits, never an exponent: 2000 (not 2e+03), 0.03
        return np.format_float_positional(x, precision=3, unique=True, fractional=False, trim="-")


def readable_log_ticks(ax: plt.Axes) -> None:
    """On every log axis of ``ax``, :class:`ReadableLogFormatter` labels (plain numbers on
    short axes, at least two labels in view)."""
    for axis, scale in ((ax.xaxis, ax.get_xscale()), (ax.yaxis, ax.get_yscale())):
        if scale == "log":
            axis.set_major_formatter(ReadableLogFormatter(minor=False))
            axis.set_minor_formatter(ReadableLogFormatter(minor=True))


def data_ticks(ax: plt.Axes, values: Sequence[float]) -> None:
    """The runs' own x values as the x tick set, unlabelled minor ticks: on a grid of runs
    (each point its own horizon or dimension), a log axis's default labels skip some points
    (d − 1 = 4 had none on ``linmix_hard_regret``)."""
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.set_xticks(list(values), [f"{v:.3g}" for v in values])


def finish_axes(ax: plt.Axes, log: str = "xy", extra: Sequence[plt.Artist] = (), legend_kw: dict | None = None,
                **labels: Any) -> None:
    """Log scales (``log`` names the axes), readable log ticks, labels and title
    (``ax.set(**labels)``), legend (and the panel's notes under the x label)."""
    log_axes(ax, "x" in log, "y" in log)
    readable_log_ticks(ax)
    ax.set(**labels)
    legend(ax, extra, **(legend_kw or {}))


def empty_panel(ax: plt.Axes, text: str = "not run in this preset") -> None:
    ax.text(0.5, 0.5, text, transform=ax.transAxes, ha="center", va="center", fontsize=9, color="0.4")


def subplots(nrows: int = 1, ncols: int = 1, panel: tuple[float, float] = (5.0, 3.8), **kw) -> tuple[plt.Figure, np.ndarray]:
    """A figure of ``nrows × ncols`` panels of size ``panel`` (inches), constrained layout,
    axes always a 2-D array."""
    fig, axes = plt.subplots(nrows, ncols, figsize=(panel[0] * ncols, panel[1] * nrows), squeeze=False,
                             layout="constrained", **kw)
    return fig, axes


# --------------------------------------------------------------------------- claims in titles


def claims_summary(claim_ids: Sequence[str], claims: pd.DataFrame | None) -> str:
    """One line per figure: each claim it tests with its verdict(s) from the claims table,
    e.g. ``Claims V2: 3 reproduced, 1 inconclusive [1 outside the regime] · F1: not
    reproduced (2 rows)``; a claim without rows is ``not evaluated``."""
    if claims is None or not claim_ids:
        return ""
    parts = []
    for cid in claim_ids:
        rows = claims[claims["claim"] == cid]
        if rows.empty:
            parts.append(f"{cid}: not evaluated")
            continue
        counts = {v: n for v, n in verdict_totals(rows).items() if n}
        if len(counts) == 1:
            text = f"{cid}: {next(iter(counts))}" + (f" ({len(rows)} rows)" if len(rows) > 1 else "")
        else:
            text = f"{cid}: " + ", ".join(f"{n} {v}" for v, n in counts.items())
        outside = outside_regime(rows)
        if outside:  # rates measured before the burn-in (src/dprl/README.md, "Regimes")
            text += f" [{outside} outside the regime]"
        parts.append(text)
    return "Claims " + " · ".join(parts)


# one look for every figure (matplotlib reads these when the axes and texts are made)
RC_STYLE = {"axes.titlesize": 9.5, "axes.labelsize": 9, "xtick.labelsize": 8, "ytick.labelsize": 8,
            "legend.fontsize": 6.5, "figure.dpi": 100}


def render(draw: Callable[[Any], plt.Figure], tables: Any, stem: Path, claim_ids: Sequence[str] = (),
           claims: pd.DataFrame | None = None) -> plt.Figure:
    """The single entry point: ``draw(tables)`` builds the figure, the claims it tests and
    their verdicts go above its own title, and :func:`save` writes ``stem.{pdf,png}``."""
    with matplotlib.rc_context(RC_STYLE):
        fig = draw(tables)
    own = fig.get_suptitle()
    line = claims_summary(claim_ids, claims)
    width = max(60, int(fig.get_figwidth() * 15))
    title = "\n".join(t for t in (textwrap.fill(line, width), textwrap.fill(own, width)) if t)
    if title:
        fig.suptitle(title, fontsize=10)
    save(fig, stem)
    return fig


# --------------------------------------------------------------------------- deterministic save

# No timestamps, no version strings: the same figure gives the same bytes on every rerun.
PDF_METADATA = {"CreationDate": None, "ModDate": None, "Producer": None, "Creator": None}
PNG_METADATA = {"Software": None}
RC_DETERMINISTIC = {"svg.hashsalt": "dprl", "pdf.compression": 6, "path.simplify": True}
PNG_DPI = 130


def save(fig: plt.Figure, stem: Path, check: bool = True) -> None:
    """Write ``stem.pdf`` and ``stem.png`` (tight bounding box), byte-identical across reruns
    (no creation date, producer or software version in the metadata), and close the figure.

    ``check``: run :func:`dprl.analysis.figure_check.check_figure` first; the files are
    written either way (to look at), then :class:`FigureCheckError` lists the problems, so
    the figure's rule fails instead of a squashed or unreadable figure being committed."""
    stem = Path(stem)
    problems = check_figure(fig) if check else []
    with matplotlib.rc_context(RC_DETERMINISTIC):
        for fmt, kw in (("pdf", {"metadata": PDF_METADATA}), ("png", {"metadata": PNG_METADATA, "dpi": PNG_DPI})):
            buf = io.BytesIO()
            fig.savefig(buf, format=fmt, bbox_inches="tight", **kw)
            atomic_write_bytes(stem.with_suffix(f".{fmt}"), buf.getvalue())  # never half a file
    plt.close(fig)
    if problems:
        raise FigureCheckError(stem.name, problems)
