"""The plotting vocabulary: fixed palettes, display names, one band, one way to draw theory
rates and burn-ins, claims in titles, byte-identical outputs, and the figure check
(dprl.analysis.figure_check): each check fails on a figure with the defect it names,
including a reconstruction of a bootstrap band whose lower edge is ~0 on a log axis (it
dragged the axis to 1e-300 and squashed every curve), and every figure drawn passes."""

from __future__ import annotations

import hashlib
import inspect
import os
import re
import subprocess
import sys
from pathlib import Path

import matplotlib
from matplotlib.container import ErrorbarContainer
import numpy as np
import pandas as pd
import pytest

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from dprl.analysis import plotting as P  # noqa: E402
from dprl.analysis.figure_check import FigureCheckError, check_figure  # noqa: E402
from dprl.analysis.figures import FIGURES  # noqa: E402
from dprl.analysis.stats import bootstrap_ci  # noqa: E402

EPS_GRID = (0.1, 0.5, 1.0, 3.0, 5.0, 10.0, 30.0, 100.0, 250.0, 500.0, 1000.0, 1e4)


def _registered() -> tuple[set[str], set[str]]:
    from dprl.experiments.registry import kinds

    algs, envs = set(), set()
    for kind in kinds().values():
        algs |= set(kind.algorithms)
        envs |= set(kind.environments)
    return algs, envs


# ------------------------------------------------------------------ names and colours


def test_every_registered_algorithm_and_environment_declares_a_display_name():
    from dprl.experiments.registry import kinds

    unlabelled = [(k.name, x.name) for k in kinds().values() for x in [*k.algorithms.values(), *k.environments.values()] if not x.label]
    assert not unlabelled, unlabelled
    algs, envs = _registered()
    assert algs <= set(P.algorithm_names()) and algs <= set(P.algorithm_colors())
    assert envs <= set(P.environment_names())
    with pytest.raises(KeyError, match="no display name"):
        P.environment_name("unknown_env_S3")


def test_a_name_declared_twice_must_say_the_same(monkeypatch):
    from dataclasses import replace

    from dprl.experiments import registry

    table = dict(registry.kinds())
    lq = table["lq_oracle"]
    table["lq_oracle"] = replace(lq, algorithms={**lq.algorithms, "ofu_rl": replace(lq.algorithms["ofu_rl"], colour="#ff0000")})
    monkeypatch.setattr(registry, "kinds", lambda: table)
    with pytest.raises(ValueError, match="'ofu_rl' is declared with two colours"):
        P.algorithm_color("ofu_rl")


def test_environment_labels_of_every_preset_get_display_names():
    import yaml

    from dprl.config.load import load_config

    raw = yaml.safe_load(open("config.yaml"))
    labels = set()
    for preset in ("smoke", "default", "full"):
        labels |= {job.labels["env_label"] for job in load_config({**raw, "preset": preset}).jobs.values()}
    for label in labels:
        name = P.environment_name(label)
        assert "_" not in name, (label, name)
    assert P.environment_name("garnet_H2_S3") == "Garnet (H=2, S=3)"
    assert P.environment_name("spread_mixture_A16") == "spread mixture (|A|=16)"
    assert P.environment_name("lowerbound_gap0.4") == "lower-bound MDP (gap=0.4)"
    assert P.series_label("private_linopt_vi", 10.0, "tight") == "Private-LinOpt-VI ε=10 (tight)"
    assert P.series_label("ucrl_vtr", np.inf, "none") == "UCRL-VTR"


def test_epsilon_colours_are_keyed_by_value_and_distinct():
    colours = [P.epsilon_color(e) for e in EPS_GRID]
    assert len(set(colours)) == len(colours)
    # the same ε gets the same colour whatever else is drawn and in whatever order
    assert P.series_style("pucb", 10.0, "tight")["color"] == P.epsilon_color(10.0) == colours[EPS_GRID.index(10.0)]
    assert P.series_style("pucb", 10.0, "paper")["color"] == P.epsilon_color(10.0)
    assert P.series_style("ubev", np.inf, "none")["color"] == P.algorithm_color("ubev")
    assert P.categorical_colors(["b", "a", "c"]) == P.categorical_colors(["c", "b", "a"])
    # the algorithms one PE panel compares are told apart
    pe = [P.algorithm_color(a) for a in ("lsw", "lsl", "dp_lsw", "dp_lsl", "gs_dp_lsl")]
    assert len(set(pe)) == len(pe)


# ------------------------------------------------------------------ bands, references, burn-in


def test_band_is_the_claims_bootstrap():
    rng = np.random.default_rng(3)
    df = pd.DataFrame({"x": np.repeat([1.0, 10.0], 8), "y": rng.lognormal(size=16)})
    s = P.seed_means(df, "x", "y")
    for x, g in df.groupby("x"):
        e = bootstrap_ci(g["y"].to_numpy())
        assert (s.loc[x, "mean"], s.loc[x, "low"], s.loc[x, "high"]) == (e.value, e.low, e.high)


def test_reference_rate_passes_through_the_last_decade_anchor():
    import matplotlib.pyplot as plt

    x = np.geomspace(1, 1e4, 17)
    y = 3 * x**0.4
    fig, ax = plt.subplots()
    P.reference_rate(ax, 0.5, "T", x, y)
    (line,) = [ln for ln in ax.get_lines() if ln.get_gid() == "reference:0.5"]
    last = x >= 1e3
    x0, y0 = np.exp(np.log(x[last]).mean()), np.exp(np.log(y[last]).mean())
    assert np.interp(np.log(x0), np.log(line.get_xdata()), np.log(line.get_ydata())) == pytest.approx(np.log(y0))
    assert line.get_label() == "$\\propto \\mathrm{T}^{1/2}$"
    assert P.rate_text(-1, "ε") == "$\\propto \\mathrm{ε}^{-1}$" and P.rate_text(1, "S") == "$\\propto \\mathrm{S}$"
    assert P.rate_text(0.25, "ln(1/δ)") == "$\\propto (\\mathrm{ln(1/δ)})^{1/4}$"
    plt.close(fig)


def _linmix_table(points: int = 20) -> pd.DataFrame:
    rows = []
    for alg, eps, cal, t_star in (("private_linopt_vi", 10.0, "tight", 5e3), ("private_linopt_vi", 100.0, "tight", 1e3),
                                  ("ucrl_vtr", np.inf, "none", np.nan), ("oppo", np.inf, "none", np.nan),
                                  ("private_linopt_po", 10.0, "tight", 5e3)):
        for seed in range(3):
            for k in np.unique(np.geomspace(1, 1e5, points).astype(int)):
                reg = np.sqrt(k) * (1 + (0 if cal == "none" else 10 / eps)) * (1 + 0.02 * seed)
                rows.append({"algorithm": alg, "calibration": cal, "epsilon": eps, "delta": 1e-5,
                             "privacy_label": f"{cal}{eps:g}", "alg_label": alg, "seed": seed, "episode": k, "T": 2 * k, "H": 2,
                             "regret": reg, "burn_in_episodes": t_star, "env_label": "mixture"})
    return pd.DataFrame(rows)


def _tabular_table() -> pd.DataFrame:
    rows = []
    for alg, eps, cal in (("ubev", np.inf, "none"), ("pucb", 1.0, "tight"), ("pucb", 10.0, "tight"),
                          ("pucb", 10.0, "paper")):
        for env in ("garnet_H2_S3", "riverswim_H3_S3"):
            for seed in range(3):
                for t in np.unique(np.geomspace(10, 1e6, 15).astype(int)):
                    rows.append({"algorithm": alg, "epsilon": eps, "calibration": cal, "env_label": env,
                                 "alg_label": alg, "privacy_label": f"{cal}{eps:g}", "seed": seed, "episode": t,
                                 "regret": np.sqrt(t) * (1 + 0.05 * seed) * (1 if cal == "none" else 1 + 3 / eps),
                                 "burn_in_episodes": 1e4 / eps, "onset_episode": 2e4 / eps})
    return pd.DataFrame(rows)


def _lq_table() -> pd.DataFrame:
    rows = []
    settings = [("ofu_rl", np.inf, np.nan, "none")] + [("private_ofu_rl", e, 1e-3, "tight") for e in (0.1, 1.0, 10.0)] \
        + [("private_ofu_rl", 1.0, d, "tight") for d in (1e-1, 1e-5)]
    for alg, eps, delta, cal in settings:
        for seed in range(3):
            for k in np.unique(np.geomspace(1, 8000, 15).astype(int)):
                extra = 0 if cal == "none" else 5 * eps**-0.5 * np.log(1 / delta) ** 0.25
                rows.append({"algorithm": alg, "epsilon": eps, "delta": delta, "calibration": cal,
                             "env_label": "random_lq", "alg_label": alg, "privacy_label": f"{cal}{eps:g}{delta:g}",
                             "seed": seed, "episode": k, "regret": np.sqrt(k) * (1 + extra) * (1 + 0.03 * seed),
                             "burn_in_episodes": 500.0 / eps, "lam_min": 10.0 / eps})
    return pd.DataFrame(rows)


def _pe_table() -> pd.DataFrame:
    rows = []
    for alg, eps in (("lsw", np.inf), ("lsl", np.inf), ("dp_lsw", 1.0), ("dp_lsw", 100.0), ("dp_lsl", 1.0),
                     ("dp_lsl", 100.0), ("gs_dp_lsl", 1.0), ("gs_dp_lsl", 100.0)):
        for feat in ("identity", "pairs"):
            for seed in range(3):
                for m in (10, 100, 1000, 10000):
                    private = np.isfinite(eps)
                    sigma = (1e3 / (eps * m)) if private else np.nan
                    rows.append({"algorithm": alg, "epsilon": eps, "delta": 0.1 if private else np.nan,
                                 "features": feat, "seed": seed, "m": m, "sigma": sigma, "psi": 1.0 / m,
                                 "rmse": (sigma if private else 0.0) + 1 / np.sqrt(m) + 0.01 * seed,
                                 "m_star": 300.0 if alg == "dp_lsw" else np.nan, "m_flat": 5.0, "m_half": 50.0,
                                 "eps_m_floor": 1e4})
    return pd.DataFrame(rows)


def _counter_table() -> pd.DataFrame:
    rows = []
    for alg in ("laplace_tree", "gaussian_tree_vector"):
        for cal in ("paper", "tight"):
            for eps in (0.1, 1.0):
                for seed in range(3):
                    for t in (1, 8, 64, 512):
                        err = np.log2(t + 1) / eps * (1 + 0.05 * seed)
                        rows.append({"algorithm": alg, "calibration": cal, "epsilon": eps, "seed": seed, "t": t,
                                     "err_q": err, "bound_paper": 3 * err, "bound_tight": 1.5 * err})
    return pd.DataFrame(rows)


def _linmix_hard_table(epsilons: tuple[float, ...] = (10.0,)) -> pd.DataFrame:
    """linmix_hard: one run per K on the instance tuned to K at d = 3, and a d grid at one K;
    two private algorithms at each ε (they once shared a colour) and two non-private ones."""
    rows = []
    settings = [("ucrl_vtr", np.inf, "none"), ("oppo", np.inf, "none")]
    settings += [(a, e, "tight") for a in ("private_linopt_vi", "private_linopt_po") for e in epsilons]
    grid = [(3, K) for K in (1000, 10000, 100000)] + [(d, 10000) for d in (2, 5)]
    for alg, eps, cal in settings:
        for d, K in grid:
            for seed in range(3):
                for k in (K // 10, K):
                    rows.append({"algorithm": alg, "alg_label": alg, "env_label": f"hard_d{d}_K{K}", "seed": seed,
                                 "privacy_label": "nonprivate" if cal == "none" else f"{cal}{eps:g}", "epsilon": eps,
                                 "delta": 1e-5, "calibration": cal, "episode": k, "K": K, "d": d, "H": 2,
                                 "horizon_needed": 3e4, "regret": (d - 1) * np.sqrt(k) * (1 + 0.05 * seed)
                                 * (1 if cal == "none" else 1 + 10 / eps) * (1.1 if "po" in alg or alg == "oppo" else 1)})
    return pd.DataFrame(rows)


def _tabular_audit_table() -> pd.DataFrame:
    """tabular_audit as the jobs write it (experiments/tabular/jobs.run_audit), at two ε (as
    in ``full``): PUCB's counter, episode and printed-ε' audits and a plug-in's two audits,
    both calibrations; the printed agent's exact ε is 2ε and its audit fails."""
    rows = []
    for alg, eps, cal in [(a, e, c) for a in ("pucb", "dp_ucbvi") for e in (0.5, 4.0) for c in ("paper", "tight")]:
        audits = [("counter", eps / 6, 0.8, True, True, eps), ("episode_l1x2", eps, 0.56, True, True, eps)]
        if alg == "pucb":
            audits.append(("episode_printed_eps_3H", eps, 1.31, False, False, 2 * eps))
        for mech, claimed, share, passed, expected, exact in audits:
            rows.append({"algorithm": alg, "calibration": cal, "epsilon": eps, "mechanism": mech,
                         "claimed_epsilon": claimed, "claimed_delta": 0.0, "eps_lb": share * claimed * (1 + 0.1 * (eps > 1)),
                         "passed": passed, "expected_pass": expected, "runs": 200000, "eps_exact": exact,
                         "env.S": 2, "env.A": 1, "env.H": 1, "env.T": 2, "alg.l1_per_step": 2})
    return pd.DataFrame(rows)


def _beyond_free_tables() -> dict[str, pd.DataFrame]:
    """beyond_free_hard (the Figure 1 family hard at T, one job per T, its last checkpoint at
    T) and beyond_free (garnet's checkpoints): UCBVI-Bernstein's regret ∝ √T, DP-UCBVI's ∝ √T
    plus a privacy cost ∝ 1/ε, so L3's ε_c(T) falls like T^{-1/2} on the family."""
    rng = np.random.default_rng(3)
    family = {"env.n": 2, "env.m": 1, "env.H": 2, "env.gap_scale": 20.0, "S": 4, "A": 2, "H": 2,
              "environment": "lowerbound_horizon"}
    garnet = {"S": 3, "A": 2, "H": 2, "environment": "garnet", "env_label": "garnet_H2_S3"}
    tables = {}
    for name, xs, const in (("beyond_free_hard", (3e5, 1e6, 3e6), family),
                            ("beyond_free", np.geomspace(1e3, 2e6, 8).astype(int), garnet)):
        rows = []
        for seed in range(3):
            for x in xs:
                base = 5.0 * np.sqrt(x) * np.exp(0.05 * rng.standard_normal())
                for alg, eps in (("ucbvi_bernstein", np.inf), *(("dp_ucbvi", e) for e in (10.0, 100.0, 1000.0))):
                    cost = 0.0 if alg == "ucbvi_bernstein" else 5e5 / eps * np.exp(0.05 * rng.standard_normal())
                    rows.append({"algorithm": alg, "alg_label": alg, "epsilon": eps, "seed": seed, "episode": int(x),
                                 "calibration": "none" if alg == "ucbvi_bernstein" else "tight",
                                 "privacy_label": "nonprivate" if alg == "ucbvi_bernstein" else f"eps{eps:g}_tight",
                                 "regret": base + cost, "burn_in_episodes": 1.2e4, "horizon_needed": 1.2e5,
                                 "onset_episode": 1e4, "env_label": f"lowerbound_horizon_T{int(x)}", **const})
        df = pd.DataFrame(rows)
        tables[name] = df.assign(T=df["episode"], **{"env.T": df["episode"]}) if name == "beyond_free_hard" else df
    return tables


SYNTHETIC = {
    "tabular_audit": lambda: {"tabular_audit": _tabular_audit_table()},
    "pe_rmse_loglog": lambda: {"pe_batch": _pe_table()},
    "pe_noise_scale": lambda: {"pe_batch": _pe_table()},
    "pe_regime": lambda: {"pe_batch": _pe_table()},
    "mechanisms_counter_error": lambda: {"counter_error": _counter_table()},
    "lq_regret_loglog": lambda: {"lq_regret": _lq_table()},
    "lq_privacy_cost": lambda: {"lq_regret": _lq_table()},
    "lq_regime": lambda: {"lq_regret": _lq_table()},
    "linmix_regret_loglog": lambda: {"linmix_regret": _linmix_table()},
    "linmix_privacy_cost": lambda: {"linmix_regret": _linmix_table()},
    "linmix_regime": lambda: {"linmix_regret": _linmix_table()},
    "tabular_regret_loglog": lambda: {"tabular_regret": _tabular_table()},
    "tabular_privacy_cost_eps": lambda: {"tabular_regret": _tabular_table()},
    "tabular_regime": lambda: {"tabular_regret": _tabular_table()},
    "linmix_hard_regret": lambda: {"linmix_hard": _linmix_hard_table()},
    "beyond_free_threshold": _beyond_free_tables,
}
# rate figures and the exponents of the references they must draw (through reference_rate)
RATES = {"pe_noise_scale": {-1.0}, "lq_regret_loglog": {0.5}, "lq_privacy_cost": {-0.5, 0.25}, "linmix_regret_loglog": {0.5}, "linmix_privacy_cost": {-0.5}, "tabular_regret_loglog": {0.5},
         "tabular_privacy_cost_eps": {-1.0}, "linmix_hard_regret": {0.5, 1.0}, "beyond_free_threshold": {-0.5}}
INTERNAL = re.compile(r"\b[a-z]+_[a-z0-9_.]+\b")


def _texts(fig) -> list[str]:
    out = [t.get_text() for ax in fig.axes for t in ([ax.title] + ([*ax.get_legend().get_texts()] if ax.get_legend() else []))]
    return [*out, fig.get_suptitle()]


@pytest.mark.parametrize("fid", sorted(SYNTHETIC))
def test_figures_speak_the_vocabulary(fid):
    """Legends and titles use display names; rate figures draw their theory rate through
    reference_rate (and nothing else grey-dashed); regret figures mark the burn-in."""
    import matplotlib.pyplot as plt

    fig = FIGURES[fid].function()(SYNTHETIC[fid]())
    algs, envs = _registered()
    displays = " ".join([*P.algorithm_names().values(), *P.environment_names().values()])
    raw = [n for n in algs | envs if n not in displays]  # ids no display name contains (pucb, garnet)
    for text in _texts(fig):
        assert not INTERNAL.search(text), (fid, text)
        assert not any(re.search(rf"\b{re.escape(n)}\b", text) for n in raw), (fid, text)
    refs = {float(ln.get_gid().split(":")[1]) for ax in fig.axes for ln in ax.get_lines()
            if (ln.get_gid() or "").startswith("reference:")}
    assert refs == RATES.get(fid, set()), (fid, refs)
    if fid in ("linmix_regret_loglog", "tabular_regret_loglog", "lq_regret_loglog", "linmix_regime", "tabular_regime",
               "lq_regime", "pe_rmse_loglog", "pe_noise_scale", "pe_regime"):
        assert any(ln.get_gid() == "burn-in" for ax in fig.axes for ln in ax.get_lines()), fid
    plt.close(fig)


def test_figure_modules_use_only_the_shared_band_and_reference():
    """No second band convention (normal ±1.96 SE, seaborn's own bootstrap, min–max, a raw
    fill_between) or hand-anchored reference line in any figure module."""
    from dprl.analysis.figures import linmix, lq, mechanisms, pe, tabular
    from dprl_beyond import figures as later  # a plug-in's figure (catalog: dprl_beyond.figures:free_threshold)

    forbidden = ("1.96", "n_boot", "errorbar=", "fill_between", "sns.lineplot", "std()", '"min", "max"',
                 "np.sqrt(T", "** -0.5", "** 0.5", "sns.color_palette")
    for mod in (linmix, lq, mechanisms, pe, tabular, later):
        src = inspect.getsource(mod)
        hits = [f for f in forbidden if f in src]
        assert not hits, (mod.__name__, hits)


# ------------------------------------------------------------------ claims in titles


def test_catalog_claims_match_the_claims_registry():
    from dprl.analysis.claims import all_claims

    ids = {c.id for c in all_claims()}
    for fid, fig in FIGURES.items():
        assert set(fig.claims) <= ids, (fid, fig.claims)
        assert isinstance(fig.claims, tuple)
    for c in all_claims():
        if c.figure and c.beyond:  # a later paper's claim (installed package) names a figure that shows its rows
            assert c.figure in FIGURES, (c.id, c.figure)
        elif c.figure:
            assert c.id in FIGURES[c.figure].claims, (c.id, c.figure)


def test_claims_and_verdicts_go_in_the_title(tmp_path):
    claims = pd.DataFrame({"claim": ["Z2", "Z2", "Z2", "Z3"],
                           "verdict": ["reproduced", "reproduced", "inconclusive", "not reproduced"],
                           "regime": ["reached", "reached", "not reached", "reached"]})
    line = P.claims_summary(("Z2",), claims)
    assert line == "Claims Z2: 2 reproduced, 1 inconclusive [1 outside the regime]"
    assert P.claims_summary(("Z4",), claims) == "Claims Z4: not evaluated"
    fig = P.render(FIGURES["linmix_regret_loglog"].function(), {"linmix_regret": _linmix_table()},
                   tmp_path / "f", FIGURES["linmix_regret_loglog"].claims, claims)
    assert fig.get_suptitle().startswith("Claims Z2: 2 reproduced, 1 inconclusive")
    assert (tmp_path / "f.pdf").exists() and (tmp_path / "f.png").exists()


# ------------------------------------------------------------------ byte-identical outputs

_RENDER = """
import sys
from pathlib import Path

import matplotlib
import numpy as np
import pandas as pd

matplotlib.use("Agg")
from dprl.analysis.figures import FIGURES

{table_source}
fig = FIGURES["linmix_regret_loglog"]
stem = Path(sys.argv[1])
if sys.argv[2] == "save":  # the workflow's path: render() -> save()
    fig.make({{"linmix_regret": _linmix_table(6)}}, stem)
else:  # what the figures did before: matplotlib's default metadata (CreationDate, versions)
    drawn = fig.function()({{"linmix_regret": _linmix_table(6)}})
    drawn.savefig(stem.with_suffix(".pdf"))
    drawn.savefig(stem.with_suffix(".png"))
"""


def _render_in_process(stem, how: str, epoch: str) -> dict[str, str]:
    # SOURCE_DATE_EPOCH stands for "rendered at another time" (matplotlib stamps it as CreationDate)
    env = {**os.environ, "SOURCE_DATE_EPOCH": epoch, "MPLBACKEND": "Agg"}
    script = _RENDER.format(table_source=inspect.getsource(_linmix_table))
    subprocess.run([sys.executable, "-c", script, str(stem), how], check=True, env=env)
    return {s: hashlib.sha256(stem.with_suffix(s).read_bytes()).hexdigest() for s in (".pdf", ".png")}


def test_figure_is_byte_identical_across_processes_and_times(tmp_path):
    """A catalog figure (bootstrap bands included) rendered by two processes at two
    different times gives the same PDF and PNG bytes."""
    a = _render_in_process(tmp_path / "a", "save", "1000000000")
    b = _render_in_process(tmp_path / "b", "save", "1700000000")
    assert a == b
    # positive control: matplotlib's default metadata makes the PDFs differ between the same two runs
    c = _render_in_process(tmp_path / "c", "default", "1000000000")
    d = _render_in_process(tmp_path / "d", "default", "1700000000")
    assert c[".pdf"] != d[".pdf"]


# ------------------------------------------------------------------ the figure check


def _checks(fig) -> set[str]:
    problems = check_figure(fig)
    plt.close(fig)
    return {p.check for p in problems}


def _near_zero_band_table() -> pd.DataFrame:
    """Per-episode regret of three seeds, one of which is ~0 at every checkpoint: the 95%
    bootstrap interval's lower edge is then ~1e-300 (the resamples of only that seed)."""
    rows = []
    for seed, level in ((0, 1e-300), (1, 0.1), (2, 0.12)):
        for k in np.geomspace(1, 1e3, 12):
            rows.append({"seed": seed, "k": k, "relative": level * (1 + 0.1 * np.log10(k))})
    return pd.DataFrame(rows)


def _titled(fig):
    fig.suptitle("a figure")
    return fig


def test_a_band_with_a_near_zero_lower_edge_on_a_log_axis_fails_then_passes_once_clipped():
    df = _near_zero_band_table()
    s = P.seed_means(df, "k", "relative")
    assert s["low"].min() < 1e-250  # the defect's input: a band reaching almost zero

    # how the band was drawn before (lower edge clipped at the smallest positive float)
    fig, ax = plt.subplots(layout="constrained")
    ax.plot(s.index, s["mean"], gid=P.BAND_GID, label="Private-LinOpt-PO ε=1000 (tight)")
    ax.fill_between(s.index, s["low"].clip(lower=np.nextafter(0, 1)), s["high"], alpha=0.2)
    P.finish_axes(ax, xlabel="k / T*", ylabel="relative regret")
    problems = check_figure(_titled(fig))
    plt.close(fig)
    assert [p.check for p in problems] == ["log-range"], problems
    assert "y axis spans" in problems[0].detail

    # the vocabulary's band: clipped within half a decade of its curve
    fig, ax = plt.subplots(layout="constrained")
    P.mean_band(ax, df, "k", "relative", label="Private-LinOpt-PO ε=1000 (tight)", color="#ff7f0e", positive=True)
    P.finish_axes(ax, xlabel="k / T*", ylabel="relative regret")
    assert _checks(_titled(fig)) == set()


def test_error_bars_through_zero_on_a_log_axis_fail_then_pass_once_clipped():
    """A lone positive mean whose interval reaches below 0 (the LQ privacy cost of a short
    run): a bar drawn through 0 breaks the log axis's limits and the figure check refuses it;
    the vocabulary's bar stops half a decade below its mean, as its bands do."""
    df = pd.DataFrame({"x": [6.9, 6.9], "y": [-0.2707, 0.3585]})  # the plug-in test's 2 seeds
    s = P.seed_means(df, "x", "y")
    assert s["mean"].iloc[0] > 0 >= s["low"].iloc[0]  # the defect's input

    def panel(positive: bool) -> tuple[set[str], plt.Axes]:
        fig, axes = P.subplots(1, 1)
        ax = axes[0, 0]
        P.mean_band(ax, df, "x", "y", label=None, color="k", marker="o", errorbars=True, positive=positive)
        P.finish_axes(ax, xlabel="ln(1/δ)", ylabel="privacy cost")
        bottom = ax.containers[0].lines[2][0].get_segments()[0][:, 1].min()
        return _checks(_titled(fig)), bottom

    # positive=False draws a positive mean's bar as it was drawn before: through 0
    checks, bottom = panel(positive=False)
    assert checks == {"marker"} and bottom < 0
    checks, bottom = panel(positive=True)
    assert checks == set() and bottom == pytest.approx(s["mean"].iloc[0] / P.BAND_LOG_CLIP)


def test_save_writes_the_files_then_refuses_a_failing_figure(tmp_path):
    fig, ax = plt.subplots()
    ax.plot([1, 2], [1, 2], label="a line")
    P.legend(ax)
    with pytest.raises(FigureCheckError, match=r"\[title\]"):
        P.save(fig, tmp_path / "f")
    assert (tmp_path / "f.png").exists() and (tmp_path / "f.pdf").exists()


def test_a_legend_entry_with_nothing_drawn_fails():
    # a proxy burn-in entry in a panel whose burn-in lies beyond the horizon
    fig, ax = plt.subplots()
    ax.plot([1, 10, 100], [1, 3, 10], label="PUCB ε=1 (tight)")
    P.mark_burn_in(ax, 1e6, within=(1, 100))  # skipped: beyond the data
    ax.legend(handles=[*ax.get_legend_handles_labels()[0], P.burn_in_legend_entry()])
    ax.get_legend()._dprl_handles = {h.get_label(): h for h in [ax.get_lines()[0], P.burn_in_legend_entry()]}
    assert _checks(_titled(fig)) == {"legend-empty"}
    # the vocabulary's legend leaves that entry out
    fig, ax = plt.subplots()
    ax.plot([1, 10, 100], [1, 3, 10], label="PUCB ε=1 (tight)")
    P.mark_burn_in(ax, 1e6, within=(1, 100))
    P.legend(ax, [P.burn_in_legend_entry()])
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["PUCB ε=1 (tight)"]
    assert _checks(_titled(fig)) == set()
    # a labelled line with no finite point, and an unexplained proxy
    fig, ax = plt.subplots()
    ax.plot([1, 2], [1, 2], label="drawn")
    ax.plot([], [], label="tight (no fit)")
    ax.legend(handles=[*ax.get_lines(), plt.Line2D([], [], label="explains nothing")])
    assert _checks(_titled(fig)) == {"legend-empty"}


def test_a_legend_key_that_cannot_be_seen_fails():
    """The first outline of the authors' λ on pe_lambda_heatmap was white: visible on the dark
    cells, an empty key on the legend's white background."""
    from matplotlib.patches import Rectangle

    def heat(edge):
        fig, ax = plt.subplots(figsize=(4, 3))
        ax.imshow(np.arange(12.0).reshape(3, 4))
        ax.add_patch(Rectangle((0.5, 0.5), 1, 1, fill=False, edgecolor=edge, ls="--", label="the authors' λ"))
        ax.plot([0, 3], [0, 2], color="0.97", label="a near-white line")
        ax.plot([0, 3], [2, 0], color="0.97", marker="o", markeredgecolor="k", label="dark markers")
        fig.legend(loc="outside lower center")
        return fig

    fig = heat("white")
    problems = [p for p in check_figure(_titled(fig)) if p.check == "legend-key"]
    assert len(problems) == 2 and "the authors' λ" in problems[0].detail and "a near-white line" in problems[1].detail
    plt.close(fig)
    fig = heat("#CC79A7")
    assert [p.detail for p in check_figure(_titled(fig)) if p.check == "legend-key"] == [
        "the key of 'a near-white line' cannot be seen on the legend's background"]
    plt.close(fig)


def test_a_legend_over_the_data_fails():
    fig, ax = plt.subplots(figsize=(4, 3))
    x = np.linspace(0, 1, 50)
    for i in range(12):
        ax.plot(x, 0.5 + 0.01 * i + 0 * x, label=f"setting {i} with a long label")
    ax.legend(loc="center", fontsize=8)
    assert "legend-cover" in _checks(_titled(fig))
    fig, ax = plt.subplots(figsize=(4, 3), layout="constrained")
    for i in range(12):
        ax.plot(x, 0.5 + 0.01 * i + 0 * x, label=f"setting {i} with a long label")
    P.figure_legend(fig, P.handles_of([ax]))
    assert _checks(_titled(fig)) == set()


def test_invisible_markers_fail():
    # hollow markers of the curve's own colour, on the curve
    fig, ax = plt.subplots()
    x = np.geomspace(1, 100, 20)
    ax.plot(x, x**0.5, color="#1f77b4")
    ax.plot(x[[5, 9]], x[[5, 9]] ** 0.5, "o", color="#1f77b4", ms=4, mfc="none")
    assert _checks(_titled(fig)) == {"marker"}
    # markers too small, and markers outside the axes
    fig, ax = plt.subplots()
    ax.plot(x, x, "o", ms=1)
    ax.scatter([0.5], [1e4], label="off the axes")
    ax.set(xlim=(1, 100), ylim=(1, 100))
    assert _checks(_titled(fig)) == {"marker"}
    assert len(check_figure(_titled(fig))) == 2
    plt.close(fig)


def test_panels_compared_on_different_colour_scales_fail():
    rng = np.random.default_rng(0)
    fig, axes = plt.subplots(1, 2)
    axes[0].pcolormesh(rng.random((3, 3)), cmap="viridis_r")
    axes[1].pcolormesh(5 * rng.random((3, 3)), cmap="viridis_r")
    assert _checks(_titled(fig)) == {"color-scale"}
    fig, axes = plt.subplots(1, 2)
    for ax in axes:
        ax.pcolormesh(rng.random((3, 3)), cmap="viridis_r", vmin=0, vmax=5)
    assert _checks(_titled(fig)) == set()


def test_a_figure_without_a_title_fails():
    fig, ax = plt.subplots()
    ax.plot([1, 2], [1, 2])
    assert _checks(fig) == {"title"}


@pytest.mark.parametrize("fid", sorted(SYNTHETIC))
def test_every_synthetic_figure_passes(fid):
    fig = FIGURES[fid].function()(SYNTHETIC[fid]())
    problems = check_figure(fig)
    short_axes = _short_log_axes_unreadable(fig)
    plt.close(fig)
    assert problems == [], "\n".join(map(str, problems))
    assert short_axes == [], short_axes


def _short_log_axes_unreadable(fig) -> list[tuple]:
    """Log axes (of a drawn figure) under two decades labelled in powers of ten (``3×10⁻²``)
    or with fewer than two labels (pe_regime's and lq_regime's y axes were)."""
    out = []
    for ax in fig.axes:
        for name in "xy":
            axis = ax.xaxis if name == "x" else ax.yaxis
            lo, hi = sorted(axis.get_view_interval())
            if axis.get_scale() != "log" or lo <= 0 or np.log10(hi / lo) >= 2:
                continue
            labels = _visible_tick_labels(ax, name)
            shared_hidden = not any(t.label1.get_visible() for t in axis.get_major_ticks())
            if not shared_hidden and (len(labels) < 2 or any("times" in t or "^" in t for t in labels)):
                out.append((ax.get_title(), name, labels))
    return out


def test_coinciding_series_are_said_and_told_apart():
    """Private curves with identical seed means (all ε tied before the burn-in) get
    alternating markers and a note under the x label."""
    table = SYNTHETIC["lq_regret_loglog"]()["lq_regret"]
    private = table["calibration"] != "none"
    base = table[private & (table["epsilon"] == 1.0) & np.isclose(table["delta"], 1e-3)].set_index(["seed", "episode"])
    for eps in (0.1, 10.0):
        rows = private & (table["epsilon"] == eps) & np.isclose(table["delta"], 1e-3)
        keys = pd.MultiIndex.from_frame(table.loc[rows, ["seed", "episode"]])
        table.loc[rows, "regret"] = base.loc[keys, "regret"].to_numpy()
    fig = FIGURES["lq_regret_loglog"].function()({"lq_regret": table})
    ax = fig.axes[0]
    assert "identical seed means, the curves overlap" in ax.get_xlabel()
    markers = {ln.get_marker() for ln in ax.get_lines() if ln.get_gid() == P.BAND_GID and ln.get_color() != "#000000"}
    assert len(markers) >= 3, markers
    assert check_figure(fig) == []
    plt.close(fig)
    # means a few percent apart overlap on the log axis just the same (the committed figure's
    # four private curves): they too get markers, and the note says they are close, not equal
    for eps, factor in ((0.1, 1.02), (10.0, 0.98)):
        rows = private & (table["epsilon"] == eps) & np.isclose(table["delta"], 1e-3)
        table.loc[rows, "regret"] *= factor
    fig = FIGURES["lq_regret_loglog"].function()({"lq_regret": table})
    ax = fig.axes[0]
    assert "within 5% of one another, the curves overlap" in ax.get_xlabel()
    markers = {ln.get_marker() for ln in ax.get_lines() if ln.get_gid() == P.BAND_GID and ln.get_color() != "#000000"}
    assert len(markers) >= 3, markers
    plt.close(fig)


def test_lq_regret_burn_in_entry_only_where_a_burn_in_is_drawn():
    """The committed lq_regret_loglog listed 'burn-in T*' with no dotted line in the panel."""
    table = SYNTHETIC["lq_regret_loglog"]()["lq_regret"]
    for burn_in, entry in ((500.0, True), (1e7, False)):
        fig = FIGURES["lq_regret_loglog"].function()({"lq_regret": table.assign(burn_in_episodes=burn_in)})
        ax = fig.axes[0]
        texts = [t.get_text() for t in ax.get_legend().get_texts()]
        assert any(t.startswith("burn-in T*") for t in texts) == entry, texts
        assert ("every private burn-in T* lies beyond the horizon" in ax.get_xlabel()) == (not entry)
        assert check_figure(fig) == []
        plt.close(fig)


# ------------------------------------------------------------------ the reviewed figures' defects


def _legend_entries(fig) -> list[dict[str, tuple]]:
    """Per legend of ``fig``: label -> (colour, dash pattern, marker, marker face) of each
    entry as drawn."""
    out = []
    legends = [ax.get_legend() for ax in fig.axes if ax.get_legend()] + list(fig.legends)
    for leg in legends:
        entries = {}
        drawn_from = getattr(leg, P.LEGEND_HANDLES, {})
        for h, t in zip(leg.legend_handles, leg.get_texts()):
            source = drawn_from.get(t.get_text())
            if isinstance(source, ErrorbarContainer):  # its entry is the bars and the data line's marker
                h = source.lines[0]
            if isinstance(h, plt.Line2D):
                dash = h._unscaled_dash_pattern if h.get_linestyle() not in ("None", "", " ") else None
                style = ("line", P.to_hex(h.get_color()), str(dash), str(h.get_marker()), str(h.get_markerfacecolor()))
            else:  # scatter / patch: face and edge colour, marker path
                face, edge = (np.atleast_2d(c) for c in (h.get_facecolor(), h.get_edgecolor()))
                path = h.get_paths()[0].vertices.round(3).tobytes() if hasattr(h, "get_paths") and h.get_paths() else b""
                style = ("collection", str(face.round(3).tolist()), str(edge.round(3).tolist()), str(hash(path)))
            entries[t.get_text()] = style
        out.append(entries)
    return out


@pytest.mark.parametrize("fid", sorted(SYNTHETIC))
def test_distinct_series_have_distinct_legend_entries(fid):
    """Two entries of one legend drawn alike cannot be told apart (PUCB's paper and tight
    calibrations once shared colour and marker on tabular_privacy_cost_eps)."""
    fig = FIGURES[fid].function()(SYNTHETIC[fid]())
    fig.canvas.draw()
    legends = _legend_entries(fig)
    plt.close(fig)
    for entries in legends:
        items = list(entries.items())
        for i, (a, sa) in enumerate(items):
            for b, sb in items[i + 1:]:
                assert not _alike(sa, sb), f"{fid}: {a!r} and {b!r} are drawn alike ({sa}, {sb})"


def _alike(a: tuple, b: tuple) -> bool:
    """Two legend entries a reader cannot tell apart: drawn the same, or lines of one colour
    and one marker (markers on every point hide the dashes: PUCB's dashed 'paper' and solid
    'tight', both with circles, looked identical)."""
    if a[0] == b[0] == "line" and a[3] != "None":
        return (a[1], a[3], a[4]) == (b[1], b[3], b[4])
    return a == b


def _lq_oracle_table() -> pd.DataFrame:
    rows = []
    for alg, eps, delta, cal in (("ofu_rl", np.inf, np.nan, "none"), ("private_ofu_rl", 1.0, 1e-3, "paper"),
                                 ("private_ofu_rl", 1.0, 1e-3, "tight")):
        for n in (1, 8, 32):
            for seed in range(3):
                for k in (1, 10, 100):
                    rows.append({"algorithm": alg, "alg_label": f"{alg}_n{n}", "env_label": "random_lq",
                                 "privacy_label": f"{cal}{eps:g}", "seed": seed, "epsilon": eps, "delta": delta,
                                 "calibration": cal, "alg.n_candidates": n, "episode": k,
                                 "regret": np.sqrt(k) * (1 + 1 / n) * (1 + 0.05 * seed) * (1.0 if cal == "none" else 3.0)})
    return pd.DataFrame(rows)


def _lq_both_calibrations() -> pd.DataFrame:
    """lq_regret of the default preset: both calibrations at δ = 1e-1, 1e-3, 1e-5 (ε = 1)."""
    lq = _lq_table()
    private = lq[lq["calibration"] != "none"]
    paper = private.assign(calibration="paper", privacy_label=private["privacy_label"] + "p",
                           regret=private["regret"] * 1.3)
    return pd.concat([lq, paper], ignore_index=True)


def _linmix_full_like(name: str) -> pd.DataFrame:
    """The full preset's linmix_ldp / linmix_states grids: several ε, both calibrations."""
    rows = []
    algs = ("private_linopt_vi", "ldp_linopt_vi") if name == "linmix_ldp" else ("private_linopt_vi", "ucrl_vtr")
    for alg in algs:
        settings = [(np.inf, "none")] if alg == "ucrl_vtr" else [(e, c) for e in (100.0, 1000.0) for c in ("paper", "tight")]
        for eps, cal in settings:
            for S in ((10,) if name == "linmix_ldp" else (10, 30)):
                for seed in range(3):
                    for k in (1, 10, 100, 1000):
                        rows.append({"algorithm": alg, "alg_label": alg, "env_label": f"mixture_S{S}", "S": S,
                                     "privacy_label": f"{cal}{eps:g}", "seed": seed, "epsilon": eps, "delta": 1e-5,
                                     "calibration": cal, "episode": k, "T": 2 * k, "H": 2, "burn_in_episodes": 1e5,
                                     "regret": np.sqrt(k) * (1 + S / 10) * (1 + 0.03 * seed)
                                     * (1 if cal == "none" else 1 + 100 / eps + (cal == "paper"))})
    return pd.DataFrame(rows)


def _counter_full_like() -> pd.DataFrame:
    """counter_error of the full preset: Gaussian counters at δ = 1e-3 and 1e-5 for every ε."""
    df = _counter_table()
    gauss = df["algorithm"] != "laplace_tree"
    return pd.concat([df[~gauss].assign(delta=np.nan), df[gauss].assign(delta=1e-3),
                      df[gauss].assign(delta=1e-5, err_q=df.loc[gauss, "err_q"] * 1.2)], ignore_index=True)


DEFAULT_GRIDS = {
    "mechanisms_counter_error": lambda: {"counter_error": _counter_full_like()},
    "lq_oracle_size": lambda: {"lq_oracle": _lq_oracle_table()},
    "lq_regime": lambda: {"lq_regret": _lq_both_calibrations()},
    "linmix_ldp": lambda: {"linmix_ldp": _linmix_full_like("linmix_ldp")},
    "linmix_states": lambda: {"linmix_states": _linmix_full_like("linmix_states")},
    "linmix_hard_regret": lambda: {"linmix_hard": _linmix_hard_table((1.0, 10.0, 100.0))},
}


@pytest.mark.parametrize("fid", sorted(DEFAULT_GRIDS))
def test_both_calibrations_and_several_eps_are_told_apart(fid):
    """The default and full presets run both calibrations (and several ε in one colour): with a
    marker on every point, a dashed and a solid line of one colour and marker look alike."""
    fig = FIGURES[fid].function()(DEFAULT_GRIDS[fid]())
    problems = check_figure(fig)
    legends = _legend_entries(fig)
    plt.close(fig)
    assert problems == [], problems
    for entries in legends:
        items = list(entries.items())
        for i, (a, sa) in enumerate(items):
            for b, sb in items[i + 1:]:
                assert not _alike(sa, sb), f"{fid}: {a!r} and {b!r} are drawn alike ({sa}, {sb})"


def test_counter_error_draws_each_delta_of_an_eps_and_names_it():
    """The full preset runs the Gaussian counters at two δ per ε: one curve per (ε, δ), not
    their mean under one label."""
    fig = FIGURES["mechanisms_counter_error"].function()({"counter_error": _counter_full_like()})
    for ax in fig.axes:
        bands = [ln for ln in ax.get_lines() if ln.get_gid() == P.BAND_GID]
        texts = [t.get_text() for t in ax.get_legend().get_texts()]
        if "Gaussian" in ax.get_title():
            assert len(bands) == 4 and {"ε=0.1 δ=0.001", "ε=0.1 δ=1e-05"} <= set(texts), (ax.get_title(), texts)
        else:
            assert len(bands) == 2 and "ε=0.1" in texts, (ax.get_title(), texts)
    plt.close(fig)


def test_linmix_figures_do_not_average_over_delta():
    """The default preset runs the paper calibration at ε = 1000 with δ = 1e-3, 1e-5, 1e-7:
    the figures keyed by (algorithm, ε, calibration) averaged the three into one curve."""
    table = _linmix_table()
    paper = table[table["calibration"] != "none"].assign(calibration="paper")
    other = [paper.assign(delta=d, regret=paper["regret"] * f) for d, f in ((1e-3, 0.5), (1e-7, 4.0))]
    table = pd.concat([table, paper, *other], ignore_index=True)
    for fid in ("linmix_regret_loglog", "linmix_regime", "linmix_privacy_cost"):
        fig = FIGURES[fid].function()({"linmix_regret": table})
        assert "δ = 1e-05" in fig.get_suptitle(), fid
        for ax in fig.axes:
            for ln in (ln for ln in ax.get_lines() if ln.get_gid() == P.BAND_GID and "(paper)" in ln.get_label()):
                y = np.asarray(ln.get_ydata(), float)
                if fid == "linmix_regret_loglog":  # the δ = 1e-5 curve itself, not a mean over δ
                    alg = ln.get_label().split(" ")[0]
                    sub = paper[paper["algorithm"].map(P.algorithm_name) == alg]
                    sub = sub[sub["epsilon"] == float(ln.get_label().split("ε=")[1].split(" ")[0])]
                    want = P.seed_means(sub, "T", "regret")["mean"].to_numpy()
                    np.testing.assert_allclose(y, want[want > 0])
        plt.close(fig)


def test_tabular_privacy_cost_calibrations_differ_in_colour_marker_and_line():
    fig = FIGURES["tabular_privacy_cost_eps"].function()(SYNTHETIC["tabular_privacy_cost_eps"]())
    fig.canvas.draw()
    entries = _legend_entries(fig)[0]
    plt.close(fig)
    paper, tight = entries["PUCB (paper)"], entries["PUCB (tight)"]
    assert all(a != b for a, b in zip(paper[1:], tight[1:])), (paper, tight)  # colour, dashes, marker, face
    # the style the figure used before (the algorithm's colour, circles, dashed/solid) is alike
    fig, ax = plt.subplots()
    for cal in ("paper", "tight"):
        ax.plot([1, 10], [3, 1], marker="o", label=f"PUCB ({cal})", **P.series_style("pucb", None, cal, by="algorithm"))
    ax.legend()
    before = _legend_entries(fig)[0]
    plt.close(fig)
    assert _alike(before["PUCB (paper)"], before["PUCB (tight)"])


def test_tabular_regime_onsets_are_visible_and_in_the_legend():
    fig = FIGURES["tabular_regime"].function()(SYNTHETIC["tabular_regime"]())
    ax = fig.axes[0]
    onsets = [ln for ln in ax.get_lines() if ln.get_label() == "measured end of the clamp (one per seed, series colour)"]
    assert onsets and all(ln.get_markerfacecolor() not in ("none", (0, 0, 0, 0)) for ln in onsets)
    assert all(ln.get_markersize() >= 5 for ln in onsets)
    assert "measured end of the clamp (one per seed, series colour)" in [t.get_text() for t in ax.get_legend().get_texts()]
    assert check_figure(fig) == []
    plt.close(fig)
    # the old circles (hollow, small, the curve's colour, on the curve) fail the figure check
    fig = FIGURES["tabular_regime"].function()(SYNTHETIC["tabular_regime"]())
    ax = fig.axes[0]
    for ln in [ln for ln in ax.get_lines() if ln.get_label().startswith("measured end of the clamp")]:
        ln.set(markerfacecolor="none", markeredgecolor=ln.get_markerfacecolor(), markersize=2.5)
    assert "marker" in _checks(fig)
    # no onset within the horizon: said under the axis instead of circles promised in the title
    table = SYNTHETIC["tabular_regime"]()["tabular_regret"].assign(onset_episode=np.nan)
    fig = FIGURES["tabular_regime"].function()({"tabular_regret": table})
    assert "no measured end of the clamp within the horizon" in fig.axes[0].get_xlabel()
    plt.close(fig)


def _visible_tick_labels(ax, axis: str = "y") -> list[str]:
    a = ax.yaxis if axis == "y" else ax.xaxis
    lo, hi = sorted(a.get_view_interval())
    out = []
    for minor in (False, True):
        for tick, loc in zip(a.get_major_ticks() if not minor else a.get_minor_ticks(),
                             a.get_majorticklocs() if not minor else a.get_minorticklocs()):
            if lo <= loc <= hi and tick.label1.get_visible() and tick.label1.get_text():
                out.append(tick.label1.get_text())
    return out


def test_two_references_in_one_panel_differ_in_the_legend():
    """∝ S and ∝ S² (tabular_scaling_S), ∝ T^{3/4} and ∝ T^{1/2} (linmix_ldp) were two
    identical grey dashed legend entries."""
    x = np.geomspace(1, 100, 9)
    fig, ax = plt.subplots()
    ax.plot(x, x**1.5, label="data")
    P.reference_rate(ax, 1.0, "S", x, x**1.5)
    P.reference_rate(ax, 2.0, "S", x, x**1.5)
    P.legend(ax)
    fig.canvas.draw()
    entries = _legend_entries(fig)[0]
    plt.close(fig)
    assert not _alike(entries[P.rate_text(1.0, "S")], entries[P.rate_text(2.0, "S")]), entries


def test_short_log_axes_have_two_plain_tick_labels():
    """A log axis spanning 1.0 decade (0.14 to 1.5) showed one label (the power of ten), and
    a short one labels like 3×10⁻²: plain numbers, at least two of them."""
    for lo, hi in ((0.14, 1.5), (0.029, 0.031), (0.002, 0.09), (1e-3, 1e3), (1800, 9000)):
        fig, ax = plt.subplots()
        ax.plot([1, 2], [lo, hi])
        P.log_axes(ax)
        P.readable_log_ticks(ax)
        ax.set_ylim(lo, hi)
        fig.canvas.draw()
        labels = _visible_tick_labels(ax)
        plt.close(fig)
        assert len(labels) >= 2, (lo, hi, labels)
        if np.log10(hi / lo) < 2:
            assert not any("times" in t or "^" in t or "e+" in t or "e-" in t for t in labels), (lo, hi, labels)


def _lq_two_systems() -> pd.DataFrame:
    """The committed lq_regime's shape: a random LQ reaching k = 1e4·Λ and a double integrator
    whose data end near k = 4Λ, left of both regime marks; a dozen settings."""
    lq = _lq_table()
    lq = lq[lq["calibration"] != "none"]
    short = lq.assign(env_label="double_integrator", lam_min=lq["lam_min"] * 2000.0,
                      regret=lq["regret"] * 0.01 + lq["episode"] * 0.03)
    more = pd.concat([lq.assign(epsilon=e, privacy_label=f"x{e:g}", lam_min=10.0 / e) for e in (250.0, 500.0, 1000.0)])
    return pd.concat([lq, short, more], ignore_index=True)


def test_lq_regime_marks_only_what_the_data_reach_and_keeps_its_legend_off_the_data():
    fig = FIGURES["lq_regime"].function()({"lq_regret": _lq_two_systems()})
    fig.canvas.draw()
    by_title = {ax.get_title(): ax for ax in fig.axes}
    short, long_ = by_title["double integrator"], by_title["random LQ"]
    # no vertical mark beyond the double integrator's data (they sat left of both); named instead
    assert not [ln for ln in short.get_lines() if ln.get_gid() == "burn-in" or ln.get_linestyle() == "-."]
    assert "predicted onset k = 270Λ at 270 lies beyond the data" in short.get_xlabel()
    x_hi = max(float(np.max(ln.get_xdata())) for ln in short.get_lines() if ln.get_gid() == P.BAND_GID)
    assert short.get_xlim()[1] < 10 * x_hi
    assert [ln for ln in long_.get_lines() if ln.get_gid() == "burn-in"]  # reached there: drawn
    # one legend outside the panels, the short y axis labelled in plain numbers
    assert not any(ax.get_legend() for ax in fig.axes) and len(fig.legends) == 1
    assert len(fig.legends[0].get_texts()) >= 9
    labels = _visible_tick_labels(short)
    assert len(labels) >= 2 and not any("times" in t for t in labels), labels
    assert check_figure(fig) == []
    plt.close(fig)


def _pe_lambda_table(cs=(0.01, 0.1, 1.0, 10.0), ps=(0.0, 0.5, 1.0)) -> pd.DataFrame:
    rows = []
    for eps in (1.0, 100.0):
        for m in (100, 1000):
            for c in cs:
                for p in ps:
                    for seed in range(2):
                        lam = c * m**p
                        rows.append({"epsilon": eps, "m": m, "c": c, "p": p, "seed": seed,
                                     "rmse": 1e3 / (eps * m) / (1 + lam) + 0.01 * lam + 0.001 * seed})
    return pd.DataFrame(rows)


def test_pe_lambda_heatmap_has_one_colour_scale_and_marks_the_default_and_the_authors_lambda_in_each_panel():
    from matplotlib.patches import Rectangle

    from dprl.analysis.figures import pe

    cs = (0.001, 0.01, 0.1, 1.0, 10.0)  # 10^-3 lies outside the authors' sweep (10^-2 … 10^4)
    fig = FIGURES["pe_lambda_heatmap"].function()({"pe_lambda": _pe_lambda_table(cs=cs, ps=(0.0, 0.4, 0.5, 1.0))})
    panels = [ax for ax in fig.axes if not hasattr(ax, "_colorbar")]
    assert len(panels) == 4 and len(fig.axes) == 5  # one colour bar
    assert len({m.get_clim() for ax in panels for m in ax.collections if m.get_array() is not None}) == 1
    for ax in panels:
        outlines = [p for p in ax.patches if isinstance(p, Rectangle) and p.get_label().startswith("default λ")]
        assert len(outlines) == 1, ax.get_title()
        rows = [t.get_text() for t in ax.get_yticklabels()]
        cols = [t.get_text() for t in ax.get_xticklabels()]
        col, row = outlines[0].get_xy()
        assert (float(rows[int(row)]), float(cols[int(col)])) == (pe.DEFAULT_C, pe.DEFAULT_P)
        # the authors' sweep: the p = 0.4 column over c = 10^-2 … 10 (the rows it holds), not 10^-3
        authors = [p for p in ax.patches if isinstance(p, Rectangle) and p.get_label().startswith("the authors' λ")]
        assert len(authors) == 1, ax.get_title()
        col, row = authors[0].get_xy()
        assert float(cols[int(col)]) == pe.AUTHORS_P
        covered = sorted(float(rows[int(row) + k]) for k in range(int(authors[0].get_height())))
        assert covered == [0.01, 0.1, 1.0, 10.0]
    assert not fig.get_supxlabel()
    assert check_figure(fig) == []
    plt.close(fig)
    # a grid without them says so
    fig = FIGURES["pe_lambda_heatmap"].function()({"pe_lambda": _pe_lambda_table(cs=(0.01, 10.0))})
    assert "the default λ and the authors' λ" in fig.get_supxlabel() and "not on this grid" in fig.get_supxlabel()
    plt.close(fig)


def _text_of(fig) -> list[str]:
    """What a reader reads on a figure besides its title line of verdicts: panel titles,
    axis labels, tick labels and legend entries."""
    out = []
    for ax in fig.axes:
        out += [ax.get_title(), ax.get_xlabel(), ax.get_ylabel()]
        out += [t.get_text() for t in ax.get_xticklabels() + ax.get_yticklabels()]
        if ax.get_legend():
            out += [t.get_text() for t in ax.get_legend().get_texts()]
    for leg in fig.legends:
        out += [t.get_text() for t in leg.get_texts()]
    return out


def test_tabular_audit_draws_every_v1_row_and_the_printed_one_above_the_claim():
    """Each V1 row's max ε_lb/ε is a drawn point of its calibration (the figure reads the
    audits V1 reads), and the printed ε' = ε/(3H), which fails V1, is drawn above 1."""
    from dprl.analysis.claims.tabular import V1_LABELS, v1

    tables = SYNTHETIC["tabular_audit"]()
    fig = FIGURES["tabular_audit"].function()(tables)
    drawn: dict[str, list[float]] = {}
    for ax in fig.axes:
        labels = [t.get_text().replace("\n", " ") for t in ax.get_xticklabels()]
        for c in ax.containers:
            if isinstance(c, ErrorbarContainer):
                x, y = c.lines[0].get_data()
                for xi, yi in zip(x, y):
                    drawn.setdefault(labels[int(round(xi))], []).append(float(yi))
    plt.close(fig)
    rows = v1(tables)
    assert len(rows) == 5  # two algorithms x two calibrations, then the printed row
    for row in rows:
        assert any(np.isclose(row.measured, y) for y in drawn[row.calibration]), (row.calibration, drawn)
    printed = V1_LABELS["printed"]
    assert min(drawn[printed]) > 1 > max(y for k, ys in drawn.items() if k != printed for y in ys)


def test_lq_audit_names_no_counter_like_a_claim():
    """The audit table's counter ids B1/B2 (the paper's notation) read as claims B1-B5 of
    the policy-evaluation paper: the figure names the counters by what they count."""
    from dprl.analysis.claims import all_claims

    rows = [{"mechanism": mech, "calibration": cal, "claimed_epsilon": e, "eps_lb": 0.5 * e, "eps_exact": e}
            for mech in ("B1", "B2", "joint") for cal in ("paper", "tight") for e in (0.4, 1.0)]
    fig = FIGURES["lq_audit"].function()({"lq_audit": pd.DataFrame(rows)})
    ids = {c.id for c in all_claims()}
    texts = _text_of(fig)
    assert check_figure(fig) == []
    plt.close(fig)
    clash = [t for t in texts for cid in ids if re.search(rf"\b{cid}\b", t)]
    assert not clash, clash
    assert any("Gram counter" in t for t in texts) and any("target counter" in t for t in texts)


def _audit_tables(runs: int = 200_000) -> dict[str, pd.DataFrame]:
    from dprl.privacy.audit import max_eps_lb

    rows = []
    for mech in ("laplace_tree", "gaussian_tree_vector"):
        for e in (0.5, 1.0, 2.0):
            rows.append({"mechanism": mech, "broken": "none", "claimed_epsilon": e, "claimed_delta": 1e-5,
                         "eps_lb": 0.7 * e, "runs": runs})
    broken = [{"mechanism": mech, "broken": b, "claimed_epsilon": 1.0, "claimed_delta": 1e-5, "runs": runs,
               "eps_lb": max_eps_lb(runs, 1e-5, 1e-3) if b != "halved" else 1.8}
              for mech in ("laplace_tree", "gaussian_tree_vector") for b in ("halved", "reused", "unnoised")]
    return {"audit": pd.DataFrame(rows), "audit_broken": pd.DataFrame(broken)}


def test_mechanisms_audit_draws_and_names_the_cap_broken_counters_sit_at():
    from dprl.privacy.audit import max_eps_lb

    fig = FIGURES["mechanisms_audit"].function()(_audit_tables())
    cap = max_eps_lb(200_000, 1e-5, 1e-3)
    for ax in fig.axes:
        lines = [ln for ln in ax.get_lines() if ln.get_label().startswith("largest measurable ε_lb")]
        assert len(lines) == 1 and np.allclose(lines[0].get_ydata(), cap), ax.get_title()
        assert f"{cap:.1f}" in lines[0].get_label() and "200,000 runs" in lines[0].get_label()
    # the legend beside the panels: inside, it covered the broken counters at the cap
    assert not any(ax.get_legend() for ax in fig.axes) and fig.legends
    assert check_figure(fig) == []
    plt.close(fig)
    # the full preset audits the correct counters with 1e6 runs, the broken ones with 2e5:
    # two caps, two legend entries that must not look alike
    tables = _audit_tables()
    tables["audit"] = tables["audit"].assign(runs=1_000_000)
    fig = FIGURES["mechanisms_audit"].function()(tables)
    fig.canvas.draw()
    (entries,) = _legend_entries(fig)
    plt.close(fig)
    caps = [v for k, v in entries.items() if k.startswith("largest measurable")]
    assert len(caps) == 2 and not _alike(*caps), entries
    caption = " ".join((Path(__file__).parents[2] / "workflow/report/mechanisms_audit.rst").read_text().split())
    assert "largest ε_lb an audit of that many runs can report" in caption and "10.2" in caption
    assert f"{cap:.1f}" == "10.2"


def test_job_runtimes_figure_passes_the_figure_check(tmp_path):
    """The runtime figure goes through plotting.save like every figure, so it needs a title
    (it had none) and passes every other check."""
    from dprl.analysis.runtimes import write_runtime_outputs

    rng = np.random.default_rng(0)
    # pe_batch: four jobs of one size and an outlier just beyond the (zero-length) whisker,
    # where seaborn's hollow flier, in the whisker's colour, vanished (the smoke run's case)
    df = pd.DataFrame({"experiment": np.repeat(["audit", "lq_regret", "pe_batch"], 5), "job": [f"j{i}" for i in range(15)],
                       "sims": 1, "wall_s": rng.lognormal(0, 1, 15),
                       "max_rss_mb": [*rng.uniform(100, 400, 10), 200.0, 200.0, 200.0, 200.0, 201.0], "cpu_s": 1.0})
    write_runtime_outputs(df, str(tmp_path / "job_runtimes.csv"), str(tmp_path / "job_runtimes"))
    assert (tmp_path / "job_runtimes.png").exists()


def test_linmix_regime_title_claims_a_collapse_only_across_several_eps():
    table = _linmix_table()
    fig = FIGURES["linmix_regime"].function()({"linmix_regret": table})
    assert "across ε" in fig.get_suptitle()
    plt.close(fig)
    one = table[(table["calibration"] == "none") | (table["epsilon"] == 10.0)]
    fig = FIGURES["linmix_regime"].function()({"linmix_regret": one})
    assert "across ε" not in fig.get_suptitle().replace("no collapse across ε", "") and "one ε" in fig.get_suptitle()
    plt.close(fig)
