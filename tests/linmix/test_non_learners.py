"""Non-learners planted in real jobs make every in-regime row of Z2, Z7 and Z8 not reproduced.

Each non-learner is planted by monkeypatching the compiled loop's inputs where the episode
runner takes them (``episodes.confidence_radii``: the bonus radii β_p, β_r; the agent's tie
priorities), then real jobs run through the package's runner (``run_job``), are aggregated
(``aggregate``) and judged by the claim's own rows (``claim(id).evaluate``):

- uniform play: radii so large that every optimistic Q is clipped at its ceiling, so all
  actions tie and the random tie-break plays uniformly;
- LinOpt without optimism: β_p = β_r = 0 (greedy on the ridge estimate);
- wrong-sign bonus: −β_p, −β_r (pessimism);
- a learner that locks on its first action: every action tied (as uniform play) and the
  same tie priorities every episode, so it plays its first episode's actions for ever.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from dprl.agents.linmix import episodes
from dprl.agents.linmix.linopt import LinOptAgent
from dprl.analysis.aggregate import aggregate
from dprl.analysis.claims import claim, evaluate
from dprl.config.load import load_config
from dprl.experiments.run import run_job

ALL_TIED = 1e9  # a radius past every clip ceiling (H <= 3 here)


class _FixedPriorities:
    """An agent generator whose tie priorities are the same every episode (the first ones)."""

    def __init__(self, rng: np.random.Generator) -> None:
        self._rng, self._first = rng, None

    def random(self, shape):
        if self._first is None:
            self._first = self._rng.random(shape[1:])
        return np.broadcast_to(self._first, shape).copy()

    def __getattr__(self, name):
        return getattr(self._rng, name)


def _plant(monkeypatch, bug: str) -> None:
    radii = episodes.confidence_radii
    scale = {"uniform": None, "no_optimism": 0.0, "wrong_sign": -1.0, "locks_first": None}[bug]

    def planted(*args, **kwargs):
        beta_p, beta_r = radii(*args, **kwargs)
        return (ALL_TIED, ALL_TIED) if scale is None else (scale * beta_p, scale * beta_r)

    monkeypatch.setattr(episodes, "confidence_radii", planted)
    if bug == "locks_first":
        init = LinOptAgent.__init__

        def locked(self, *args, **kwargs):
            init(self, *args, **kwargs)
            self.rng = _FixedPriorities(self.rng)

        monkeypatch.setattr(LinOptAgent, "__init__", locked)


BUGS = ("uniform", "no_optimism", "wrong_sign", "locks_first")


def _tables(tmp_path, experiments: dict) -> dict[str, pd.DataFrame]:
    """Real jobs of ``experiments`` (config entries), each aggregated into its table."""
    cfg = load_config({"experiments": experiments})
    paths: dict[str, list] = {name: [] for name in experiments}
    for key, job in cfg.jobs.items():
        path = tmp_path / key
        path.parent.mkdir(parents=True, exist_ok=True)
        run_job(job.spec, path, job.labels)
        paths[job.spec.experiment].append(path)
    return {name: aggregate(p) for name, p in paths.items()}


def _in_regime(rows: list[dict]) -> list[dict]:
    return [r for r in rows if r["regime"] == "reached"]


UCRL = [{"name": "ucrl_vtr"}]
# Z2: UCRL-VTR on the default mixture at K = 1e5 (median onset near 8e3: inside its regime)
Z2_EXPERIMENTS = {"linmix_regret": {"algorithms": UCRL, "environments": [{"name": "mixture", "S": 10, "A": 3, "d1": 2, "d2": 2, "H": 2}],
                                    "settings": {"episodes": 100000, "checkpoints": 30}, "seeds": {"count": 4}}}


def _hard(envs: list, checkpoints: int = 4, seeds: int = 8) -> dict:
    return {"kind": "linmix_hard", "algorithms": UCRL, "environments": envs, "settings": {"checkpoints": checkpoints},
            "seeds": {"count": seeds}}


# Z7: the family tuned to K (gap scale 1, K past 10·T* ≈ 1.6e3) and the fixed gaps at K = 2e4
Z7_EXPERIMENTS = {
    "linmix_hard": _hard([{"name": "hard_linear_horizon", "d": 3, "H": 2, "K": [1700, 17000]}]),
    "linmix_hard_gaps": _hard([{"name": "hard_linear_horizon", "d": 3, "H": 2, "K": 20000, "gap_scale": [16, 32, 64, 128, 256]}],
                              checkpoints=20),
}
# Z8: the d grid at gap scale 1 and at gap scale 100, where UCRL-VTR resolves the gap within K
Z8_EXPERIMENTS = {
    "linmix_hard": _hard([{"name": "hard_linear_horizon", "d": [2, 3, 5], "H": 2, "K": 3000}]),
    "linmix_hard_gaps": _hard([{"name": "hard_linear_horizon", "d": [2, 3], "H": 2, "K": 20000, "gap_scale": 100}], seeds=4),
}


def _check(tmp_path, monkeypatch, cid: str, experiments: dict, bug: str | None) -> list[dict]:
    if bug is not None:
        _plant(monkeypatch, bug)
    rows = _in_regime(evaluate(claim(cid), _tables(tmp_path, experiments)))
    assert rows, f"{cid}: no row inside its regime"
    return rows


@pytest.mark.parametrize("bug", (None, *BUGS))
def test_z2_non_learners_in_real_jobs_are_not_reproduced(tmp_path, monkeypatch, bug):
    rows = _check(tmp_path, monkeypatch, "Z2", Z2_EXPERIMENTS, bug)
    want = {"reproduced"} if bug is None else {"not reproduced"}
    assert {r["verdict"] for r in rows} == want, [(r["verdict"], r["note"][-400:]) for r in rows]


@pytest.mark.parametrize("bug", (None, *BUGS))
def test_z7_non_learners_in_real_jobs_are_not_reproduced(tmp_path, monkeypatch, bug):
    rows = _check(tmp_path, monkeypatch, "Z7", Z7_EXPERIMENTS, bug)
    want = {"reproduced"} if bug is None else {"not reproduced"}
    assert {r["verdict"] for r in rows} == want, [(r["verdict"], r["note"][-400:]) for r in rows]


@pytest.mark.parametrize("bug", (None, *BUGS))
def test_z8_non_learners_in_real_jobs_are_not_reproduced(tmp_path, monkeypatch, bug):
    rows = _check(tmp_path, monkeypatch, "Z8", Z8_EXPERIMENTS, bug)
    want = {"reproduced"} if bug is None else {"not reproduced"}
    assert {r["verdict"] for r in rows} == want, [(r["verdict"], r["note"][-400:]) for r in rows]
