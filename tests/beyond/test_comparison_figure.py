"""The comparison figure ``beyond_regret_comparison``: every private tabular algorithm the
registry declares, solid, beside the non-private baseline it declares, dashed in a darker
shade of its colour, on garnet (``beyond_regret``) and the family hard at T (``beyond_hard``)
at ε = 1 and 10; what a table lacks is said in the panel, never a crash."""

from __future__ import annotations

import re

import matplotlib
import numpy as np
import pandas as pd
import pytest

matplotlib.use("Agg")
import matplotlib.colors as mcolors  # noqa: E402
import matplotlib.pyplot as plt  # noqa: E402

from dprl.analysis import plotting as P  # noqa: E402
from dprl.analysis.figures import FIGURES  # noqa: E402
from dprl.analysis.figures.beyond import COMPARISON_EPSILONS, baseline_shade, regret_comparison  # noqa: E402
from dprl.experiments.registry import kinds  # noqa: E402

FID = "beyond_regret_comparison"
NONPRIVATE = (np.inf, "none")


def _declared_pairs(kind: str) -> dict[str, str]:
    """private algorithm -> baseline, as the registry declares them for ``kind``."""
    return {a.name: a.baseline for a in kinds()[kind].algorithms.values() if a.privacy != "none" and a.baseline}


def _regret(alg: str, eps: float, seed: int, t: float) -> float:
    """A distinct curve per (algorithm, ε): the ε filter and the pairing show in the values."""
    bump = 1 + 0.1 * sorted(kinds()["tabular_regret"].algorithms).index(alg)
    return np.sqrt(t) * bump * (1 if not np.isfinite(eps) else 1 + 3 / eps) * (1 + 0.02 * seed)


def _settings(algs, epsilons):
    private = {a for a in _declared_pairs("tabular_regret")}
    return [(a, e, "tight") for a in algs if a in private for e in epsilons] + \
        [(a, *NONPRIVATE) for a in algs if a not in private]


def _regret_table(algs, epsilons=COMPARISON_EPSILONS, seeds=3) -> pd.DataFrame:
    rows = []
    for alg, eps, cal in _settings(algs, epsilons):
        for env, name in (("garnet_H2_S3", "garnet"), ("riverswim_H3_S3", "riverswim")):
            for seed in range(seeds):
                for t in np.unique(np.geomspace(10, 1e5, 9).astype(int)):
                    rows.append({"kind": "tabular_regret", "algorithm": alg, "alg_label": alg, "epsilon": eps,
                                 "calibration": cal, "privacy_label": f"{cal}{eps:g}", "environment": name,
                                 "env_label": env, "seed": seed, "episode": t,
                                 "regret": _regret(alg, eps, seed, t) * (2 if name == "riverswim" else 1)})
    return pd.DataFrame(rows)


def _hard_table(algs, epsilons=COMPARISON_EPSILONS, seeds=3, Ts=(1_000_000, 2_000_000)) -> pd.DataFrame:
    rows = []
    for alg, eps, cal in _settings(algs, epsilons):
        for T in Ts:
            for seed in range(seeds):
                for k in (T // 10, T):  # two checkpoints: the figure reads each run's last
                    rows.append({"kind": "tabular_hard", "algorithm": alg, "alg_label": alg, "epsilon": eps,
                                 "calibration": cal, "privacy_label": f"{cal}{eps:g}",
                                 "environment": "lowerbound_horizon", "env_label": f"lbh_T{T}", "seed": seed,
                                 "episode": k, "T": T, "env.n": 2, "env.m": 1, "env.H": 2, "env.gap_scale": 10.0,
                                 "regret": _regret(alg, eps, seed, k)})
    return pd.DataFrame(rows)


ALL = sorted(kinds()["tabular_regret"].algorithms)


def _series(ax) -> dict[str, object]:
    """label -> the mean line of each seed-mean series drawn on ``ax`` (bands and error bars)."""
    out = {c.get_label(): c.lines[0] for c in ax.containers if c.lines[0] is not None}
    out.update({ln.get_label(): ln for ln in ax.get_lines() if ln.get_gid() == P.BAND_GID
                and not ln.get_label().startswith("_")})  # an error bar's data line: its container's
    return out


def _expected_labels(pairs: dict[str, str]) -> set[str]:
    labels = {f"{P.algorithm_name(a)} (tight)" for a in pairs}
    return labels | {f"{P.algorithm_name(b)} (non-private, baseline of {P.algorithm_name(a)})" for a, b in pairs.items()}


def test_the_private_algorithms_and_baselines_are_the_registrys():
    pairs = _declared_pairs("tabular_regret")
    # PUCB and the two plug-ins of dprl_beyond, each with the baseline its declaration names
    assert pairs == {"pucb": "ubev", "private_ucb_vi": "ucb_vi", "dp_ucbvi": "ucbvi_bernstein"} | {
        a: b for a, b in pairs.items() if a not in ("pucb", "private_ucb_vi", "dp_ucbvi")}
    assert _declared_pairs("tabular_hard") == pairs


def test_every_private_algorithm_is_drawn_beside_its_baseline_per_panel(tmp_path):
    tables = {"beyond_regret": _regret_table(ALL), "beyond_hard": _hard_table(ALL)}
    FIGURES[FID].make(tables, tmp_path / FID)  # the plotting entry point, with the figure check
    assert (tmp_path / f"{FID}.png").stat().st_size > 1000 and (tmp_path / f"{FID}.pdf").stat().st_size > 1000

    fig = regret_comparison(tables)
    axes = np.asarray(fig.axes).reshape(2, len(COMPARISON_EPSILONS))
    pairs = _declared_pairs("tabular_regret")
    for r, (name, table) in enumerate((("beyond_regret", tables["beyond_regret"]), ("beyond_hard", tables["beyond_hard"]))):
        for c, eps in enumerate(COMPARISON_EPSILONS):
            ax = axes[r, c]
            series = _series(ax)
            assert set(series) == _expected_labels(pairs), (name, eps, sorted(series))
            assert P.epsilon_text(eps) in ax.get_title()
            assert ax.get_xscale() == ax.get_yscale() == "log"
            assert ("Garnet" in ax.get_title()) == (r == 0) and ("hard at T" in ax.get_title()) == (r == 1)
            rows = table[table["environment"] != "riverswim"]
            if r == 1:
                rows = rows[rows["episode"] == rows["T"]]
            x = "episode" if r == 0 else "T"
            for alg, base in pairs.items():
                colour = P.algorithm_color(alg)
                mine = series[f"{P.algorithm_name(alg)} (tight)"]
                theirs = series[f"{P.algorithm_name(base)} (non-private, baseline of {P.algorithm_name(alg)})"]
                assert mcolors.to_hex(mine.get_color()) == colour and mine.get_linestyle() == "-"
                assert mcolors.to_hex(theirs.get_color()) == baseline_shade(colour) != colour
                assert theirs.get_linestyle() == "--"
                # the private curve is this column's ε; the baseline's the one non-private run
                for line, sel in ((mine, (rows["algorithm"] == alg) & np.isclose(rows["epsilon"], eps)),
                                  (theirs, rows["algorithm"] == base)):
                    want = rows[sel].groupby(x)["regret"].mean()
                    np.testing.assert_allclose(np.asarray(line.get_xdata(), float), want.index.to_numpy(float))
                    np.testing.assert_allclose(np.asarray(line.get_ydata(), float), want.to_numpy())
    # display names only, no internal ids, in the titles and the figure legend
    legend_texts = [t.get_text() for leg in fig.legends for t in leg.get_texts()]
    for text in [ax.get_title() for ax in fig.axes] + legend_texts + [fig.get_suptitle()]:
        assert not re.search(r"\b[a-z]+_[a-z0-9_.]+\b", text), text
    assert set(legend_texts) >= _expected_labels(pairs)
    plt.close(fig)


def test_a_table_without_the_plugins_still_renders_and_says_what_is_absent(tmp_path):
    pairs = _declared_pairs("tabular_regret")
    plugins = sorted(a for a in pairs if a != "pucb")
    assert plugins, "dprl_beyond's plug-ins are not registered"
    tables = {"beyond_regret": _regret_table(["ubev", "pucb"]), "beyond_hard": _hard_table(["ubev", "pucb"])}
    FIGURES[FID].make(tables, tmp_path / FID)
    fig = regret_comparison(tables)
    for ax in fig.axes:
        assert set(_series(ax)) == {"PUCB (tight)", "UBEV (non-private, baseline of PUCB)"}
        note = " ".join(ax.get_xlabel().split())
        for alg in plugins:
            assert P.algorithm_name(alg) in note, (alg, note)
            assert P.algorithm_name(pairs[alg]) in note, (pairs[alg], note)
    plt.close(fig)


def test_a_missing_table_or_eps_is_said_in_its_panels(tmp_path):
    """The smoke preset's shape: ε = 10 only, and no hard-family table at all."""
    tables = {"beyond_regret": _regret_table(ALL, epsilons=(10.0,))}
    FIGURES[FID].make(tables, tmp_path / FID)
    fig = regret_comparison(tables)
    axes = np.asarray(fig.axes).reshape(2, len(COMPARISON_EPSILONS))
    pairs = _declared_pairs("tabular_regret")
    at_1, at_10 = axes[0, COMPARISON_EPSILONS.index(1.0)], axes[0, COMPARISON_EPSILONS.index(10.0)]
    # the baselines have no ε: drawn at ε = 1 too, where no private algorithm ran
    assert set(_series(at_1)) == {s for s in _expected_labels(pairs) if "non-private" in s}
    assert all(P.algorithm_name(a) in at_1.get_xlabel() for a in pairs) and "ε=1" in at_1.get_xlabel()
    assert set(_series(at_10)) == _expected_labels(pairs)
    for ax in axes[1]:
        assert not _series(ax) and any("no beyond_hard table" in t.get_text() for t in ax.texts)
    plt.close(fig)
    # nothing at all: every panel says so
    fig = regret_comparison({})
    assert all(not _series(ax) and ax.texts for ax in fig.axes)
    plt.close(fig)


def test_the_figure_is_registered_with_its_tables_and_caption():
    from pathlib import Path

    fig = FIGURES[FID]
    assert fig.experiments == ("beyond_regret",) and fig.optional == ("beyond_hard", "beyond_hard_dp")
    assert fig.function() is regret_comparison
    assert (Path(__file__).resolve().parents[2] / "workflow" / "report" / fig.caption).exists()


@pytest.mark.parametrize("colour", ["#1f77b4", "#bcbd22", "#17becf", "#000000"])
def test_a_baseline_shade_is_the_same_hue_darker(colour):
    import colorsys

    h, _, v = colorsys.rgb_to_hsv(*mcolors.to_rgb(colour))
    h2, _, v2 = colorsys.rgb_to_hsv(*mcolors.to_rgb(baseline_shade(colour)))
    assert v2 <= v and (v == 0 or abs(h2 - h) < 0.02)
