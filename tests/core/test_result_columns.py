"""One vocabulary for the result columns the episodic papers share: a regret job of every
paper writes the same names for the same quantities (regime, regularizer, repairs), and
none of the retired per-paper spellings."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from dprl.agents.regime import onset_episode
from dprl.config.load import load_config
from dprl.experiments.run import run_job
from dprl.runner.io import read_result

PRIV = {"epsilon": [5.0], "delta": [1e-3], "calibration": ["tight"]}
EXPERIMENTS = {
    "tabular_regret": {
        "algorithms": [{"name": "ubev"}, {"name": "pucb"}],
        "environments": [{"name": "riverswim", "S": 3, "H": 3}],
        "privacy": [{"epsilon": [5.0], "calibration": ["tight"]}],
        "settings": {"episodes": 200, "checkpoints": 5},
    },
    "lq_regret": {
        "algorithms": [{"name": "ofu_rl", "lam": 0.1, "n_candidates": 16}, {"name": "private_ofu_rl", "n_candidates": 16}],
        "environments": [{"name": "random_lq", "n": 2, "d": 1, "horizon": 5}],
        "privacy": [PRIV],
        "settings": {"episodes": 40, "checkpoints": 5},
    },
    "linmix_regret": {
        "algorithms": [{"name": "ucrl_vtr"}, {"name": "private_linopt_vi"}],
        "environments": [{"name": "mixture", "S": 4, "A": 2, "d1": 2, "d2": 2, "H": 2}],
        "privacy": [PRIV],
        "settings": {"episodes": 40, "checkpoints": 5},
    },
}
EVERY_JOB = {"episode", "regret", "onset_episode"}
PRIVATE_JOB = {"burn_in_episodes", "accounted_epsilon"}
REGULARIZER = {"sigma_gram", "sigma_target", "lam_min", "nu", "tree_levels"}  # LQ and linear mixture
REPAIRS = {"n_repaired", "n_not_pd"}
RETIRED = {"sigma_gram_p", "lam_min_p", "repaired", "n_floored", "regime_horizon", "eps_accounted", "samples"}


@pytest.fixture(scope="module")
def tables(tmp_path_factory) -> dict[tuple[str, bool], pd.DataFrame]:
    """``(kind, private) -> the job's table``."""
    cfg = load_config({"experiments": {k: {**v, "seeds": {"count": 1}} for k, v in EXPERIMENTS.items()}})
    out = {}
    for job in cfg.jobs.values():
        path = tmp_path_factory.mktemp("jobs") / "table.csv"
        run_job(job.spec, path, job.labels)
        out[(job.spec.kind, job.spec.privacy is not None)] = read_result(path)[0]
    return out


def test_every_paper_writes_the_shared_names(tables):
    assert len(tables) == 6
    for (kind, private), df in tables.items():
        cols = set(df.columns)
        need = EVERY_JOB | (PRIVATE_JOB if private else set())
        if kind != "tabular_regret":
            need |= REPAIRS | ({"lam_min"} if not private else REGULARIZER)
        assert need <= cols, (kind, private, sorted(need - cols))
        assert not cols & RETIRED, (kind, private, sorted(cols & RETIRED))


def test_the_onset_is_the_measured_one_in_every_paper(tables):
    for (kind, _), df in tables.items():
        if kind == "tabular_regret":  # measured from the all-tied play instead (agents/tabular/regime.py)
            continue
        np.testing.assert_equal(df["onset_episode"].iloc[0], onset_episode(df["episode"].to_numpy(), df["regret"].to_numpy()))


def test_the_regularizer_columns_are_the_calibration_s(tables):
    """``lam_min`` is the private regularizer's ``λ_min = Σ`` (above the ridge λ of the
    non-private agent in the same setting) and ``sigma_gram`` its Gram noise scale."""
    for kind in ("lq_regret", "linmix_regret"):
        private, plain = tables[(kind, True)], tables[(kind, False)]
        assert private["lam_min"].iloc[0] > plain["lam_min"].iloc[0] > 0
        assert private["sigma_gram"].iloc[0] > 0 and private["tree_levels"].iloc[0] >= 1
