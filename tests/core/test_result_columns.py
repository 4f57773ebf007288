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
VALUE = {"tabular_regret": "optimal_value", "linmix_regret": "optimal_value", "lq_regret": "optimal_cost"}  # LQ minimises cost
RETIRED = {"sigma_gram_p", "lam_min_p", "repaired", "n_floored", "regime_horizon", "eps_accounted", "samples", "v_star",
           "levels"}


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
        need = EVERY_JOB | {VALUE[kind]} | (PRIVATE_JOB if private else set())
        if kind != "tabular_regret":
            need |= REPAIRS | ({"lam_min"} if not private else REGULARIZER)
        assert need <= cols, (kind, private, sorted(need - cols))
        assert not cols & RETIRED, (kind, private, sorted(cols & RETIRED))


def test_the_onset_is_the_measured_one_in_every_paper(tables):
    for (kind, _), df in tables.items():
        if kind == "tabular_regret":  # the end of the clamp instead (agents/tabular/regime.py): the family hard at T never halves its regret
            continue
        np.testing.assert_equal(df["onset_episode"].iloc[0], onset_episode(df["episode"].to_numpy(), df["regret"].to_numpy()))


def test_the_regularizer_columns_are_the_calibration_s(tables):
    """``lam_min`` is the private regularizer's ``λ_min = Σ`` (above the ridge λ of the
    non-private agent in the same setting) and ``sigma_gram`` its Gram noise scale."""
    for kind in ("lq_regret", "linmix_regret"):
        private, plain = tables[(kind, True)], tables[(kind, False)]
        assert private["lam_min"].iloc[0] > plain["lam_min"].iloc[0] > 0
        assert private["sigma_gram"].iloc[0] > 0 and private["tree_levels"].iloc[0] >= 1


AUDITS = {
    "audit": {"algorithms": [{"name": "gaussian_tree_vector"}],
              "environments": [{"name": "neighbouring_streams", "T": 4, "dim": 1}],
              "privacy": {"epsilon": [1.0], "delta": [1e-5], "calibration": ["tight"]}},
    "tabular_audit": {"algorithms": [{"name": "pucb"}], "environments": [{"name": "pucb_counters", "S": 2, "A": 1, "H": 1, "T": 2}],
                      "privacy": {"epsilon": [1.0], "calibration": ["tight"]}},
    "lq_audit": {"algorithms": [{"name": "private_ofu_counters"}],
                 "environments": [{"name": "audit_stream", "n": 1, "d": 1, "horizon": 2, "gamma": 1.0, "episodes": 2}],
                 "privacy": {"epsilon": [1.0], "delta": [1e-3], "calibration": ["tight"]}},
    "linmix_audit": {"algorithms": [{"name": "central_privatizer"}], "environments": [{"name": "neighbouring_users", "K": 2, "d": 1, "H": 1}],
                     "privacy": {"epsilon": [1.0], "delta": [1e-5], "calibration": ["tight"]}},
    "pe_audit": {"algorithms": [{"name": "dp_lsw"}], "environments": [{"name": "adversarial", "d": 1, "f_max": 1.0}],
                 "privacy": {"epsilon": [1.0], "delta": [0.1], "calibration": ["paper"]}},
}
AUDIT = {"mechanism", "claimed_epsilon", "claimed_delta", "eps_lb", "passed", "statistic", "runs"}


def test_every_audit_writes_the_shared_names(tmp_path):
    """One :meth:`AuditResult.columns` for the five audit kinds (the mechanisms' and the
    four papers'); an audit that recorded ``samples`` or left out its claimed δ fails."""
    cfg = load_config({"experiments": {k: {**v, "settings": {"runs": 1000}, "seeds": {"count": 1}} for k, v in AUDITS.items()}})
    kinds = set()
    for i, job in enumerate(cfg.jobs.values()):
        path = tmp_path / f"{i}.csv"
        run_job(job.spec, path, job.labels)
        cols = set(read_result(path)[0].columns)
        assert AUDIT <= cols and not cols & RETIRED, (job.spec.kind, sorted(AUDIT - cols), sorted(cols & RETIRED))
        kinds.add(job.spec.kind)
    assert kinds == set(AUDITS)
