"""L1 (Private-UCB-VI's regret rate, V9's rule on ``beyond_hard``) in real small jobs: the
correct plug-in is reproduced, and the plug-in planted as a non-learner is not reproduced
(it cannot escape to "not reached"), because the plug-in declares its predicted burn-in
(``Algorithm.burn_in``) and its agent records the measured end of its clamp
(``last_clamped_episode``): past the no-escape horizon a run that never unclamps did not learn.

The non-learner is planted in the built agent only (its bonus's ``ι`` at 1e30, so every
``Q̃`` stays at ``H``: all-tied play every episode), never in the job's prediction, which
stays the correct algorithm's. ε = 1000 puts the predicted burn-in near 1.3e3 episodes, so
T = 5e4..8e5 are a decade past it and past the no-escape horizon (about 4e4)."""

from __future__ import annotations

from pathlib import Path

import pytest

import dprl_beyond.private_ucb_vi as puv
from dprl.analysis.aggregate import aggregate
from dprl.analysis.claims import evaluate
from dprl.config.load import load_config
from dprl.experiments.run import run_job
from dprl_beyond.claims import CLAIMS

L1 = next(c for c in CLAIMS if c.id == "L1")
HARD = {"beyond_hard": {
    "kind": "tabular_hard", "algorithms": [{"name": "private_ucb_vi"}], "seeds": {"count": 4},
    "settings": {"checkpoints": 6}, "privacy": {"epsilon": [1000], "calibration": ["tight"]},
    "environments": [{"name": "lowerbound_horizon", "n": 2, "m": 1, "H": 2, "T": [50000, 200000, 800000],
                      "gap_scale": 10}]}}


def _l1_rows(out: Path) -> list[dict]:
    """L1's rows on ``HARD``'s real jobs, run by ``run_job`` and aggregated."""
    cfg = load_config({"experiments": HARD}, "default")
    paths = []
    for job in cfg.experiments["beyond_hard"].jobs:
        run_job(job.spec, out / job.path, job.labels)
        paths.append(out / job.path)
    return evaluate(L1, {"beyond_hard": aggregate(paths)})


def test_l1_is_reproduced_and_a_planted_non_learner_is_not(tmp_path, monkeypatch):
    (ok,) = _l1_rows(tmp_path / "correct")
    assert ok["verdict"] == "reproduced" and ok["regime"] == "reached", ok

    real = puv.build

    def uniform(*args):
        with pytest.MonkeyPatch.context() as m:  # the agent's bonus only: burn_in still predicts the correct one
            m.setattr(puv, "log_term", lambda *a: 1e30)
            return real(*args)

    monkeypatch.setattr(puv, "build", uniform)
    (bad,) = _l1_rows(tmp_path / "planted")
    assert bad["verdict"] == "not reproduced", bad
