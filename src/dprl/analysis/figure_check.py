"""Checks of a drawn figure that a reader would otherwise catch by eye, run on the matplotlib
``Figure`` before it is saved (:func:`dprl.analysis.plotting.save` calls :func:`check_figure`
and refuses a figure that fails).

A figure fails when

- a log axis spans more decades than its data need (``log-range``): e.g. a bootstrap band
  whose lower edge is ~0 drags a log axis down to 1e-300 and squashes every curve;
- a legend entry has nothing drawn (``legend-empty``): its artist has no point inside the
  axes, or it is a proxy handle that stands for artists the panel does not contain;
- a legend key cannot be seen (``legend-key``): everything it draws (line, marker, edge,
  fill) is transparent or within :data:`KEY_MIN_CONTRAST` of the legend's background, e.g. a
  white outline drawn for a dark heatmap;
- a legend hides more than :data:`LEGEND_COVER_MAX` of the data drawn in a panel (``legend-cover``);
- a marker is invisible (``marker``): too small, fully transparent, entirely outside the axes,
  or hollow and of the same colour as the line it sits on;
- panels meant to be compared (images or meshes with the same colour map) have different
  colour scales (``color-scale``);
- the figure has no title (``title``).

"Data" are the lines, markers and scatter points drawn in data coordinates (means, bounds,
references); bands (filled areas) and reference marks spanning the axes (``axvline``,
``axhline``) are not data: an axis stretched to show them is what the checks catch.
Proxy legend handles declare what they stand for with :func:`stands_for`.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np
from matplotlib.artist import Artist
from matplotlib.axes import Axes
from matplotlib.collections import Collection, PathCollection, PolyCollection
from matplotlib.colors import to_rgba
from matplotlib.container import Container
from matplotlib.figure import Figure
from matplotlib.image import AxesImage
from matplotlib.legend import Legend
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

# A legend may hide at most this share of the data points drawn in a panel (lines sampled
# every few pixels, markers and scatter points): beyond it, curves disappear under the box.
LEGEND_COVER_MAX = 0.05
# A log axis may extend this many decades beyond its data (bands clipped half a decade beyond
# their curves on each side), plus matplotlib's margins (a share of the axis' own span).
LOG_EXCESS_DECADES = 1.0
LOG_MARGIN_SHARE = 0.1
LOG_MIN_DECADES = 2.5  # a log axis may always span this much (matplotlib widens one value to ~2.2)
MIN_MARKER_PT = 3.0  # smallest marker (diameter, points) a reader sees on a 130-dpi PNG
SAMPLE_PX = 3.0  # lines are sampled every SAMPLE_PX display pixels for the legend cover
STANDS_FOR = "_dprl_stands_for"  # attribute of a proxy handle: what it stands for
LEGEND_HANDLES = "_dprl_handles"  # attribute of a legend: its original handles, by label


@dataclass(frozen=True)
class Problem:
    """One failed check: which (``log-range``, ...), where (panel title or index), what."""

    check: str
    where: str
    detail: str

    def __str__(self) -> str:
        return f"[{self.check}] {self.where}: {self.detail}"


class FigureCheckError(ValueError):
    """A figure failed :func:`check_figure`; the message lists every problem."""

    def __init__(self, name: str, problems: list[Problem]):
        self.problems = problems
        super().__init__(f"figure {name} fails its checks:\n" + "\n".join(f"  {p}" for p in problems))


def stands_for(handle: Artist, **match: Any) -> Artist:
    """Declare what a proxy legend handle (drawn nowhere itself) stands for: drawn artists of
    its panel whose ``gid``, ``color``, ``ls`` and/or ``marker`` equal ``match``. Without
    one, :func:`check_figure` reports a proxy entry as having nothing drawn."""
    setattr(handle, STANDS_FOR, match)
    return handle


# ------------------------------------------------------------------ what is drawn where


def _panel_name(ax: Axes, i: int) -> str:
    title = ax.get_title() or ax.get_title("left")
    return f"panel {i + 1}" + (f" ({title!r})" if title else "")


def _in_data_coords(artist: Line2D, ax: Axes) -> bool:
    return artist.get_transform() == ax.transData


def _finite_xy(line: Line2D) -> np.ndarray:
    xy = np.column_stack([np.asarray(line.get_xdata(), float), np.asarray(line.get_ydata(), float)])
    return xy[np.isfinite(xy).all(axis=1)] if len(xy) else np.empty((0, 2))


def _data_lines(ax: Axes) -> list[Line2D]:
    return [ln for ln in ax.get_lines() if ln.get_visible() and _in_data_coords(ln, ax) and len(_finite_xy(ln))]


def _scatter_points(ax: Axes) -> list[tuple[PathCollection, np.ndarray]]:
    out = []
    for c in ax.collections:
        if isinstance(c, PathCollection) and c.get_visible() and c.get_offset_transform() == ax.transData:
            off = np.asarray(c.get_offsets(), float)
            off = off[np.isfinite(off).all(axis=1)] if len(off) else np.empty((0, 2))
            if len(off):
                out.append((c, off))
    return out


def _data_points(ax: Axes) -> np.ndarray:
    """Every data point of ``ax`` in data coordinates (lines and scatter offsets)."""
    parts = [_finite_xy(ln) for ln in _data_lines(ax)] + [off for _, off in _scatter_points(ax)]
    return np.concatenate(parts) if parts else np.empty((0, 2))


def _in_view(ax: Axes, xy: np.ndarray) -> np.ndarray:
    (x0, x1), (y0, y1) = sorted(ax.get_xlim()), sorted(ax.get_ylim())
    return (xy[:, 0] >= x0) & (xy[:, 0] <= x1) & (xy[:, 1] >= y0) & (xy[:, 1] <= y1)


def _artist_drawn(artist: Any, ax: Axes | None) -> bool:
    """Whether ``artist`` (drawn on ``ax``) shows anything inside its axes."""
    if isinstance(artist, Container):
        return any(_artist_drawn(c, ax) for c in artist.get_children() if c is not None)
    if not isinstance(artist, Artist) or not artist.get_visible() or artist.get_alpha() == 0:
        return False
    ax = artist.axes or ax
    if ax is None:
        return False
    if isinstance(artist, Line2D):
        xy = _finite_xy(artist)
        if not len(xy):
            return False
        if _in_data_coords(artist, ax):
            return bool(_in_view(ax, xy).any())
        # axvline / axhline: one coordinate in data units, the other in axes units
        (x0, x1), (y0, y1) = sorted(ax.get_xlim()), sorted(ax.get_ylim())
        x_data = artist.get_transform().contains_branch_seperately(ax.transData)[0]
        v = xy[:, 0] if x_data else xy[:, 1]
        lo, hi = (x0, x1) if x_data else (y0, y1)
        return bool(((v >= lo) & (v <= hi)).any())
    if isinstance(artist, PathCollection) and len(artist.get_offsets()):
        off = np.asarray(artist.get_offsets(), float)
        return bool(_in_view(ax, off[np.isfinite(off).all(axis=1)]).any()) if artist.get_offset_transform() == ax.transData else True
    if isinstance(artist, Collection):
        return len(artist.get_paths()) > 0
    if isinstance(artist, Patch):
        return True
    return True


def _color(c: Any) -> tuple[float, ...] | None:
    try:
        return tuple(np.round(to_rgba(c), 3))
    except (ValueError, TypeError):
        return None


def _matches(artist: Any, match: dict[str, Any]) -> bool:
    if isinstance(artist, Container):
        return any(_matches(c, match) for c in artist.get_children() if c is not None)
    for key, want in match.items():
        if key == "gid":
            if artist.get_gid() != want:
                return False
        elif key == "color":
            if isinstance(artist, Line2D):
                have = [artist.get_color()]
            elif isinstance(artist, Collection):
                have = list(artist.get_facecolor()) + list(artist.get_edgecolor())
            else:
                return False
            if _color(want) not in {_color(h) for h in have}:
                return False
        elif key == "ls":
            if not isinstance(artist, Line2D) or artist._unscaled_dash_pattern != Line2D([], [], ls=want)._unscaled_dash_pattern:
                return False
        elif key == "marker":
            if not isinstance(artist, Line2D) or artist.get_marker() != want:
                return False
        else:
            raise ValueError(f"stands_for: unknown property {key!r}")
    return True


def _scope_artists(axes: Iterable[Axes]) -> list[tuple[Any, Axes]]:
    out = []
    for ax in axes:
        out += [(a, ax) for a in [*ax.get_lines(), *ax.collections, *ax.patches]]
        out += [(c, ax) for c in ax.containers]
    return out


def proxy_drawn(handle: Artist, axes: Iterable[Axes]) -> bool:
    """Whether a proxy declared with :func:`stands_for` stands for something drawn on ``axes``
    (before the figure is final: a legend leaves out the entries this says are empty)."""
    match = getattr(handle, STANDS_FOR, None)
    return match is not None and any(_matches(a, match) and _artist_drawn(a, ax) for a, ax in _scope_artists(axes))


# ------------------------------------------------------------------ the checks


def _log_range(ax: Axes, where: str) -> list[Problem]:
    problems = []
    pts = _data_points(ax)
    for k, axis in enumerate("xy"):
        if (ax.get_xscale() if axis == "x" else ax.get_yscale()) != "log":
            continue
        v = pts[:, k] if len(pts) else np.empty(0)
        v = v[v > 0]
        if not len(v):
            continue
        lo, hi = sorted(ax.get_xlim() if axis == "x" else ax.get_ylim())
        view = np.log10(hi) - np.log10(max(lo, np.finfo(float).tiny))
        data = np.log10(v.max()) - np.log10(v.min())
        allowed = max(data + LOG_EXCESS_DECADES + LOG_MARGIN_SHARE * view, LOG_MIN_DECADES)
        if view > allowed:
            problems.append(Problem("log-range", where, f"log {axis} axis spans {view:.1f} decades "
                                    f"({lo:.3g} to {hi:.3g}) for data spanning {data:.1f} ({v.min():.3g} to "
                                    f"{v.max():.3g}); allowed {allowed:.1f}"))
    return problems


def _legends(fig: Figure) -> list[tuple[Legend, list[Axes]]]:
    out = [(ax.get_legend(), [ax]) for ax in fig.axes if ax.get_legend() is not None]
    panels = [ax for ax in fig.axes if not hasattr(ax, "_colorbar")]
    return out + [(leg, panels) for leg in fig.legends]


KEY_MIN_CONTRAST = 0.15  # RGB distance (0 … √3) a key's colour keeps from the legend background


def _key_colors(key: Any) -> list[tuple[float, ...]]:
    """The colours a legend key really draws (alpha > 0): a line's stroke and marker, a patch's
    edge (when stroked) and face (when filled)."""
    out = []
    if isinstance(key, Line2D):
        if key.get_linestyle() not in ("None", "", " ") and key.get_linewidth() > 0:
            out.append(to_rgba(key.get_color()))
        if key.get_marker() not in (None, "None", "", " ", "none"):
            out += [to_rgba(key.get_markeredgecolor()), to_rgba(key.get_markerfacecolor())]
    elif isinstance(key, Patch):
        if key.get_linewidth() > 0:
            out.append(key.get_edgecolor())
        if key.get_fill():
            out.append(key.get_facecolor())
    else:  # collections and the rest: not judged
        return [(0.0, 0.0, 0.0, 1.0)]
    return [tuple(c) for c in out if c[3] > 0]


def _legend_keys(fig: Figure) -> list[Problem]:
    problems = []
    for leg, scope in _legends(fig):
        where = _panel_name(scope[0], fig.axes.index(scope[0])) if len(scope) == 1 else "figure legend"
        background = np.asarray(leg.get_frame().get_facecolor()[:3])
        for key, text in zip(leg.legend_handles, leg.get_texts()):
            colors = _key_colors(key)
            if not any(np.linalg.norm(np.asarray(c[:3]) - background) >= KEY_MIN_CONTRAST for c in colors):
                problems.append(Problem("legend-key", where, f"the key of {text.get_text()!r} cannot be seen on "
                                        "the legend's background"))
    return problems


def _legend_entries(fig: Figure) -> list[Problem]:
    problems = []
    for leg, scope in _legends(fig):
        where = _panel_name(scope[0], fig.axes.index(scope[0])) if len(scope) == 1 else "figure legend"
        originals: dict[str, Any] = getattr(leg, LEGEND_HANDLES, {})
        artists = _scope_artists(scope)
        for text in leg.get_texts():
            label = text.get_text()
            handle = originals.get(label)
            if handle is not None and getattr(handle, STANDS_FOR, None) is not None:
                match = getattr(handle, STANDS_FOR)
                if not any(_matches(a, match) and _artist_drawn(a, ax) for a, ax in artists):
                    problems.append(Problem("legend-empty", where, f"entry {label!r} stands for {match} "
                                            "but nothing of the kind is drawn in the panel"))
                continue
            candidates = [(a, ax) for a, ax in artists if a.get_label() == label]
            if handle is not None and getattr(handle, "axes", None) is None and not isinstance(handle, Container) \
                    and not candidates:
                problems.append(Problem("legend-empty", where, f"entry {label!r} is a proxy handle that stands "
                                        "for nothing (declare it with figure_check.stands_for)"))
                continue
            if not any(_artist_drawn(a, ax) for a, ax in candidates):
                problems.append(Problem("legend-empty", where, f"entry {label!r} has nothing drawn inside the axes"))
    return problems


def _sample_display(ax: Axes) -> np.ndarray:
    """The data of ``ax`` as display points: lines sampled every SAMPLE_PX pixels along their
    path (so a curve crossing a legend counts even between its vertices), markers and
    scatter points; only points inside the axes."""
    parts = []
    for ln in _data_lines(ax):
        xy = ax.transData.transform(_finite_xy(ln))
        xy = xy[np.isfinite(xy).all(axis=1)]
        if ln.get_linestyle() not in ("None", "", " ") and len(xy) >= 2:
            seg = np.diff(xy, axis=0)
            n = np.clip(np.ceil(np.hypot(seg[:, 0], seg[:, 1]) / SAMPLE_PX).astype(int), 1, 2000)
            t = np.concatenate([np.arange(k) / k for k in n])
            start = np.repeat(xy[:-1], n, axis=0)
            parts.append(start + np.repeat(seg, n, axis=0) * t[:, None])
        parts.append(xy)
    parts += [ax.transData.transform(off) for _, off in _scatter_points(ax)]
    if not parts:
        return np.empty((0, 2))
    pts = np.concatenate(parts)
    return pts[_inside(ax.get_window_extent(), pts)]


def _inside(box: Any, pts: np.ndarray) -> np.ndarray:
    return (pts[:, 0] >= box.x0) & (pts[:, 0] <= box.x1) & (pts[:, 1] >= box.y0) & (pts[:, 1] <= box.y1)


def _legend_cover(fig: Figure) -> list[Problem]:
    problems = []
    for leg, scope in _legends(fig):
        box = leg.get_window_extent()
        for ax in scope:
            pts = _sample_display(ax)
            if len(pts) == 0:
                continue
            share = float(_inside(box, pts).mean())
            if share > LEGEND_COVER_MAX:
                where = _panel_name(ax, fig.axes.index(ax))
                problems.append(Problem("legend-cover", where, f"the legend hides {share:.0%} of the data drawn "
                                        f"(at most {LEGEND_COVER_MAX:.0%}); place it outside or make it compact"))
    return problems


def _distance_to_line(pts: np.ndarray, line: np.ndarray) -> np.ndarray:
    """Display distance of each point to the polyline ``line`` (both in pixels)."""
    if len(line) < 2:
        return np.hypot(*(pts - line[0]).T) if len(line) else np.full(len(pts), np.inf)
    a, b = line[:-1], line[1:]
    ab = b - a
    denom = np.maximum((ab**2).sum(axis=1), 1e-12)
    t = np.clip(((pts[:, None, :] - a[None]) * ab[None]).sum(axis=2) / denom[None], 0, 1)
    closest = a[None] + t[..., None] * ab[None]
    return np.hypot(*(pts[:, None, :] - closest).transpose(2, 0, 1)).min(axis=1)


def _markers(ax: Axes, where: str) -> list[Problem]:
    problems = []
    lines = _data_lines(ax)
    for ln in lines:
        if ln.get_marker() in (None, "None", "", " ") or ln.get_alpha() == 0:
            continue
        name = ln.get_label() if not ln.get_label().startswith("_") else "unlabelled markers"
        xy = _finite_xy(ln)
        if ln.get_markersize() < MIN_MARKER_PT:
            problems.append(Problem("marker", where, f"{name!r}: markers of {ln.get_markersize():g} pt "
                                    f"(at least {MIN_MARKER_PT:g})"))
        elif not _in_view(ax, xy).any():
            problems.append(Problem("marker", where, f"{name!r}: every marker lies outside the axes"))
        elif _color(ln.get_markerfacecolor()) in (None, (0.0, 0.0, 0.0, 0.0)) or ln.get_markerfacecolor() == "none":
            # hollow: invisible when it sits on a line of its own colour
            pts = ax.transData.transform(xy)
            for other in lines:
                if other is ln or other.get_linestyle() in ("None", "", " "):
                    continue
                if _color(other.get_color()) != _color(ln.get_markeredgecolor()):
                    continue
                near = _distance_to_line(pts, ax.transData.transform(_finite_xy(other)))
                if (near <= ln.get_markersize() * fig_dpi(ax) / 72).all():
                    problems.append(Problem("marker", where, f"{name!r}: hollow markers on a line of their own "
                                            "colour (they vanish into it)"))
                    break
    for c, off in _scatter_points(ax):
        sizes = np.sqrt(np.asarray(c.get_sizes(), float))
        name = c.get_label() if not c.get_label().startswith("_") else "unlabelled scatter"
        if len(sizes) and sizes.max() < MIN_MARKER_PT:
            problems.append(Problem("marker", where, f"{name!r}: scatter markers of {sizes.max():.2g} pt"))
        elif c.get_alpha() == 0:
            problems.append(Problem("marker", where, f"{name!r}: fully transparent markers"))
        elif not _in_view(ax, off).any():
            problems.append(Problem("marker", where, f"{name!r}: every marker lies outside the axes"))
    return problems


def fig_dpi(ax: Axes) -> float:
    return float(ax.figure.dpi)


def _color_scales(fig: Figure) -> list[Problem]:
    """Images and meshes (heatmaps) drawing one colour map are panels to compare: one scale."""
    scales: dict[str, set[tuple[float, float]]] = {}
    for ax in fig.axes:
        if hasattr(ax, "_colorbar"):  # a colour bar's own mesh
            continue
        for m in [*ax.images, *ax.collections]:
            if not isinstance(m, (AxesImage, Collection)) or isinstance(m, (PathCollection, PolyCollection)):
                continue
            if m.get_array() is None:
                continue
            lo, hi = m.get_clim()
            scales.setdefault(m.get_cmap().name, set()).add((round(float(lo), 9), round(float(hi), 9)))
    return [Problem("color-scale", "figure", f"{len(s)} panels drawn with colour map {name!r} have different "
                    f"colour scales (e.g. {sorted(s)[0]} and {sorted(s)[-1]}); share one norm")
            for name, s in scales.items() if len(s) > 1]


def check_figure(fig: Figure) -> list[Problem]:
    """Every problem of ``fig`` (empty when it passes). Draws the canvas first, so that the
    layout, the legends' boxes and the axis limits are the ones that will be saved."""
    fig.canvas.draw()
    problems: list[Problem] = []
    if not (fig.get_suptitle() or "").strip():
        problems.append(Problem("title", "figure", "no title (fig.suptitle)"))
    for i, ax in enumerate(fig.axes):
        if hasattr(ax, "_colorbar") or not ax.get_visible():
            continue
        where = _panel_name(ax, i)
        problems += _log_range(ax, where)
        problems += _markers(ax, where)
    problems += _legend_entries(fig)
    problems += _legend_keys(fig)
    problems += _legend_cover(fig)
    problems += _color_scales(fig)
    return problems
