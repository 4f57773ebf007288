"""L1 (Private-UCB-VI's regret rate, V9's rule on ``beyond_hard``) and L2 (DP-UCBVI's, the
same rule) in real small jobs (``run_job``, ``aggregate``, ``evaluate``): the plug-in planted as
a non-learner is not reproduced (it cannot escape to "not reached"), because the plug-in
declares its predicted burn-in (``Algorithm.burn_in``) and its agent records the measured end
of its clamp (``last_clamped_episode``): past the no-escape horizon
(``analysis/regime.no_escape_horizon``, ``10 · T* · margin``, ``analysis/burn_in.burn_in_margin``)
a run that never unclamps did not learn.

Each non-learner is planted in the built agent only (its bonus's ``ι`` at 1e30, so every
optimistic value stays at its cap: all-tied play every episode), never in the job's
prediction, which stays the correct algorithm's.

L1. ε = 1000 puts the predicted burn-in near 1.3e3 episodes, so T = 5e4..8e5 are a decade past
it and past the no-escape horizon (about 4e4); the correct plug-in is reproduced.

L2. DP-UCBVI's ``ι`` is read once, in ``DPUCBVI.__init__`` (``log_term``), into ``agent.iota``
(the NumPy step path) and into its compiled block kernel's state (``kernel_plan``, the path the
jobs run): patching ``log_term`` inside ``build`` reaches both, and the test checks it did. At
ε = 1000 on the family (n = 2, m = 1, H = 2, gap scale 10) ``burn_in`` predicts T* = 1.51e4
episodes at T = 2e5 and 1.54e4 at T = 5e5 (its non-private part alone 1.17e4 at T = 1e6: larger
ε barely lowers it), so T = 2e5, 5e5 are a decade past it (13×, 32×) and 5e5 is past the
no-escape horizon 4.73e5 (margin 3.06, the default). There the correct DP-UCBVI's clamp ends at
1.1e4-1.3e4 episodes in every seed (its regime is reached, never "not learned") and the planted
one's never ends (its recorded ``onset_episode`` is NaN in every job): its row is not
reproduced, its regime "not learned" at T = 5e5. The correct DP-UCBVI is not asserted
reproduced: at affordable T its slope on the family is still below 1/2. Measured at ε = 1000: per-seed slopes 0.33-0.55
over T = 2e5, 5e5 (4 seeds; 0.42 [0.26, 0.57]), 0.40-0.44 over 5e5, 2e6 (4 seeds; 0.43
[0.39, 0.46]), 0.38-0.48 over 2e5, 2e6 (6 seeds, 2 min; 0.43 [0.39, 0.47]): inconclusive, the
interval across 0.4, regime reached, share of uniform play 0.60-0.67 at the largest T. Here it is asserted
reached and not refuted.

L3. UCBVI-Bernstein (DP-UCBVI's baseline) planted as uniform play the same way (``log_term``
at 1e30 inside ``build_exact``) in small ``beyond_free_hard`` jobs (gap scale 40, T = 1.2e5,
1.7e5, 2.4e5, ε 100 and 1000, 2 seeds; about 30 s): on the family no policy loses more than
uniform play, so DP-UCBVI's paired cost against it is at most zero and crosses the baseline's
regret at no T: the row cannot be reproduced. Against the correct baseline the cost crosses
inside the sweep at every T (ε_c 190-220 measured); these T are below a decade past
DP-UCBVI's burn-in at ε_c (about 5e5), so that row is "not reached", with the horizon it needs."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import dprl_beyond.dp_ucbvi as dp
import dprl_beyond.private_ucb_vi as puv
from dprl.agents.protocol import BuiltAgent
from dprl.analysis.aggregate import aggregate
from dprl.analysis.claims import evaluate
from dprl.analysis.claims.tabular import regime
from dprl.analysis.burn_in import burn_in_margin
from dprl.analysis.regime import no_escape_horizon
from dprl.config.load import load_config
from dprl.experiments.run import run_job
from dprl_beyond.claims import CLAIMS

L1, L2 = (next(c for c in CLAIMS if c.id == cid) for cid in ("L1", "L2"))
PLANTED_IOTA = 1e30  # every bonus far above every cap: all-tied play, the clamp never ends


def _hard(algorithm: str, T: list[int], seeds: int = 4) -> dict:
    """``beyond_hard`` (the table L1 and L2 read) with one algorithm at ε = 1000 on the Figure 1
    family hard at T (n = 2, m = 1, H = 2, gap scale 10)."""
    return {"beyond_hard": {
        "kind": "tabular_hard", "algorithms": [{"name": algorithm}], "seeds": {"count": seeds},
        "settings": {"checkpoints": 6}, "privacy": {"epsilon": [1000], "calibration": ["tight"]},
        "environments": [{"name": "lowerbound_horizon", "n": 2, "m": 1, "H": 2, "T": T, "gap_scale": 10}]}}


HARD = _hard("private_ucb_vi", [50000, 200000, 800000])
HARD_DP = _hard("dp_ucbvi", [200000, 500000])


def _run(experiments: dict, out: Path, name: str = "beyond_hard") -> pd.DataFrame:
    """``experiments``' real jobs, run by ``run_job`` and aggregated: the ``name`` table."""
    cfg = load_config({"experiments": experiments}, "default")
    paths = []
    for job in cfg.experiments[name].jobs:
        run_job(job.spec, out / job.path, job.labels)
        paths.append(out / job.path)
    return aggregate(paths)


def _rows(claim, table: pd.DataFrame) -> list[dict]:
    """``claim``'s claims-table rows on the ``beyond_hard`` table."""
    return evaluate(claim, {"beyond_hard": table})


def _plant(monkeypatch, module, factory: str = "build") -> list[BuiltAgent]:
    """``module.<factory>`` planted as a non-learner: ``module.log_term`` at :data:`PLANTED_IOTA`
    while the agent is built (its bonus only: ``module.burn_in``, called by the job outside
    the factory, still predicts the correct algorithm's burn-in). Returns the agents it builds."""
    real, built = getattr(module, factory), []

    def uniform(*args):
        with pytest.MonkeyPatch.context() as m:
            m.setattr(module, "log_term", lambda *a: PLANTED_IOTA)
            built.append(real(*args))
        return built[-1]

    monkeypatch.setattr(module, factory, uniform)
    return built


def test_l1_is_reproduced_and_a_planted_non_learner_is_not(tmp_path, monkeypatch):
    (ok,) = _rows(L1, _run(HARD, tmp_path / "correct"))
    assert ok["verdict"] == "reproduced" and ok["regime"] == "reached", ok

    _plant(monkeypatch, puv)
    (bad,) = _rows(L1, _run(HARD, tmp_path / "planted"))
    assert bad["verdict"] == "not reproduced", bad


def _last(table: pd.DataFrame) -> pd.DataFrame:
    """Each job's last checkpoint, in (T, seed) order."""
    return table.sort_values("episode").groupby(["T", "seed"]).tail(1).sort_values(["T", "seed"])


def test_l2_a_planted_non_learner_is_not_reproduced_and_cannot_escape_to_not_reached(tmp_path, monkeypatch):
    correct = _run(HARD_DP, tmp_path / "correct")
    end = _last(correct)
    t_max = int(end["T"].max())
    # the grid's design: a decade past T* at every T, and the largest past the no-escape horizon
    assert (end["T"] >= 10 * end["burn_in_episodes"]).all(), end
    assert t_max >= no_escape_horizon(float(end.loc[end["T"] == t_max, "burn_in_episodes"].max()), "dp_ucbvi")
    # the correct DP-UCBVI ends its clamp in every job: its regime is reached at every T, never "not learned"
    late = end["burn_in_episodes"] * burn_in_margin("dp_ucbvi")
    assert np.isfinite(end["onset_episode"]).all() and (end["onset_episode"] < late).all(), end
    assert all(regime(correct[correct["T"] == T]).reached for T in end["T"].unique())
    (ok,) = _rows(L2, correct)
    assert ok["regime"] == "reached" and ok["verdict"] != "not reproduced", ok

    built = _plant(monkeypatch, dp)
    planted = _run(HARD_DP, tmp_path / "planted")
    # the bug reached the path the jobs ran (the compiled kernel's ι, state[1]) and the step path's
    assert built and all(b.agent.iota == PLANTED_IOTA and b.agent.block_kernel.state[1] == PLANTED_IOTA for b in built)
    stuck = _last(planted)
    assert stuck["onset_episode"].isna().all(), stuck  # never unclamped, in any job
    # the job's prediction is the correct algorithm's
    np.testing.assert_array_equal(stuck["burn_in_episodes"].to_numpy(), end["burn_in_episodes"].to_numpy())
    assert regime(planted[planted["T"] == t_max]).not_learned
    (bad,) = _rows(L2, planted)
    assert bad["verdict"] == "not reproduced" and bad["regime"] != "not reached", bad


L3 = next(c for c in CLAIMS if c.id == "L3")
# gap scale 40: at these short T the baseline is 0.2 of uniform play there (at 20, about half:
# no room for a cost to reach it before T ~ 3e5), so the correct cost crosses inside ε 100-1000
FREE_HARD = {"beyond_free_hard": {
    "kind": "tabular_hard", "algorithms": [{"name": "ucbvi_bernstein"}, {"name": "dp_ucbvi"}], "seeds": {"count": 2},
    "settings": {"checkpoints": 6}, "privacy": {"epsilon": [100, 1000], "calibration": ["tight"]},
    "environments": [{"name": "lowerbound_horizon", "n": 2, "m": 1, "H": 2, "T": [120000, 170000, 240000], "gap_scale": 40}]}}


def test_l3_a_planted_uniform_baseline_leaves_no_crossover(tmp_path, monkeypatch):
    correct = _run(FREE_HARD, tmp_path / "correct", "beyond_free_hard")
    (ok,) = evaluate(L3, {"beyond_free_hard": correct})
    assert "at 3 of the 3 horizons" in ok["note"], ok  # ε_c 190-220 measured
    # below a decade past DP-UCBVI's burn-in at ε_c (about 5e5 measured): not judged
    assert ok["regime"] == "not reached" and ok["verdict"] == "inconclusive" and ok["horizon_needed"] > 240000, ok

    built = _plant(monkeypatch, dp, "build_exact")
    baseline_only = {"beyond_free_hard": {**FREE_HARD["beyond_free_hard"], "algorithms": [{"name": "ucbvi_bernstein"}]}}
    base = _run(baseline_only, tmp_path / "planted", "beyond_free_hard")
    assert built and all(b.agent.iota == PLANTED_IOTA for b in built)
    assert base["onset_episode"].isna().all()  # the planted baseline never unclamped
    planted = pd.concat([correct[correct["algorithm"] == "dp_ucbvi"], base], ignore_index=True)  # the same DP-UCBVI jobs
    (bad,) = evaluate(L3, {"beyond_free_hard": planted})
    assert bad["verdict"] == "inconclusive" and "fewer than 3 horizons with a crossover" in bad["note"], bad
    assert "at 0 of the 3 horizons" in bad["note"], bad
