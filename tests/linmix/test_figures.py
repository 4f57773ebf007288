"""The regime figure and the T* marks are drawn from the jobs' own regime columns."""

import numpy as np
import pandas as pd

from dprl.analysis.figures import FIGURES
from dprl.analysis.figures.linmix import regime, regret_loglog


def _regret_table() -> pd.DataFrame:
    """Private runs whose per-episode regret is flat until their own T*, then falls."""
    rows = []
    for eps, t_star in ((10.0, 5e4), (100.0, 1e4), (1000.0, 2e3)):
        for seed in range(3):
            for k in np.unique(np.geomspace(1, 5e5, 30).astype(int)):
                regret = min(k, t_star) + np.sqrt(max(k - t_star, 0.0) * t_star)
                rows.append({"algorithm": "private_linopt_vi", "calibration": "tight", "epsilon": eps, "delta": 1e-5,
                             "privacy_label": f"tight{eps:g}", "seed": seed, "episode": k, "T": 2 * k, "H": 2,
                             "regret": regret * (1 + 0.01 * seed), "burn_in_episodes": t_star})
    for seed in range(3):
        for k in np.unique(np.geomspace(1, 5e5, 30).astype(int)):
            rows.append({"algorithm": "ucrl_vtr", "calibration": "none", "epsilon": np.inf, "delta": np.nan,
                         "privacy_label": "nonprivate", "seed": seed, "episode": k, "T": 2 * k, "H": 2,
                         "regret": np.sqrt(k), "burn_in_episodes": 100.0})
    return pd.DataFrame(rows)


def test_regime_and_regret_figures_are_written(tmp_path):
    tables = {"linmix_regret": _regret_table()}
    for fid in ("linmix_regime", "linmix_regret_loglog"):
        FIGURES[fid].make(tables, tmp_path / fid)
        assert (tmp_path / f"{fid}.png").stat().st_size > 0 and (tmp_path / f"{fid}.pdf").stat().st_size > 0


def test_burn_in_marked_where_inside_the_run():
    fig = regret_loglog({"linmix_regret": _regret_table()})
    vi = fig.axes[0]
    marks = sorted(line.get_xdata()[0] for line in vi.get_lines() if line.get_gid() == "burn-in")
    assert marks == [2 * 2e3, 2 * 1e4, 2 * 5e4]  # T*·H of each private curve, all inside T <= 1e6
    fig = regime({"linmix_regret": _regret_table()})
    assert [line.get_xdata()[0] for line in fig.axes[0].get_lines() if line.get_gid() == "burn-in"] == [1.0]


def test_regime_figure_without_regime_columns_says_so(tmp_path):
    old = _regret_table().drop(columns=["burn_in_episodes"])
    FIGURES["linmix_regime"].make({"linmix_regret": old}, tmp_path / "regime")  # tables from before the columns existed
    assert (tmp_path / "regime.png").exists()
