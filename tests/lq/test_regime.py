"""Private-OFU-RL's regime: the predicted burn-in horizon and the expected exponents are
computed from the calibration in use."""

from __future__ import annotations

import numpy as np
import pytest

from dprl.agents.lq.calibration import private_ofu_calibration
from dprl.privacy.setting import PrivacySetting
from dprl.agents.lq.regime import (
    ONSET_K_OVER_LAMBDA, burn_in_episodes, horizon_needed, onset_episode, predicted_onset, sigma_exponents,
)

ARGS = dict(horizon=10, gamma=0.6, n=2, d=1, alpha=0.1)


def _lam(eps: float, calibration: str, k: float) -> float:
    return private_ofu_calibration(PrivacySetting(epsilon=eps, delta=1e-3, calibration=calibration), int(k),
                                   ARGS["horizon"], ARGS["gamma"], ARGS["n"], ARGS["d"], ARGS["alpha"]).regularizer.lam_min


def test_the_jobs_horizon_uses_the_one_regime_criterion():
    from dprl.agents.lq import regime
    from dprl.analysis.regime import ONSET_DECADES

    assert regime.ONSET_DECADES == ONSET_DECADES


def test_predicted_onset_is_the_measured_constant_times_lambda():
    assert predicted_onset(3091.5) == pytest.approx(ONSET_K_OVER_LAMBDA * 3091.5)
    # the onsets the package measured (agents/lq/regime.py): 248-310 Λ on lq_regime, 268 Λ held out
    assert 248 <= ONSET_K_OVER_LAMBDA <= 310


@pytest.mark.parametrize("calibration", ["paper", "tight"])
@pytest.mark.parametrize("eps", [1.0, 10.0, 1000.0])
def test_horizon_needed_is_a_decade_past_the_onset_of_a_run_that_long(calibration, eps):
    k = horizon_needed(PrivacySetting(epsilon=eps, delta=1e-3, calibration=calibration), **ARGS)
    assert k >= 10 * ONSET_K_OVER_LAMBDA * _lam(eps, calibration, k)
    assert 0.99 * k < 10 * ONSET_K_OVER_LAMBDA * _lam(eps, calibration, 0.99 * k)  # and not much later


def test_horizon_needed_grows_as_epsilon_shrinks_and_tight_is_shorter():
    paper = [horizon_needed(PrivacySetting(epsilon=e, delta=1e-3, calibration="paper"), **ARGS) for e in (0.1, 1.0, 10.0)]
    tight = [horizon_needed(PrivacySetting(epsilon=e, delta=1e-3, calibration="tight"), **ARGS) for e in (0.1, 1.0, 10.0)]
    assert paper[0] > paper[1] > paper[2] and tight[0] > tight[1] > tight[2]
    assert all(t < p for t, p in zip(tight, paper))
    assert burn_in_episodes(lambda k: 1e20, 10.0) == np.inf and burn_in_episodes(lambda k: 0.0, 10.0) == 1.0


def test_expected_exponents_follow_the_calibration():
    paper = sigma_exponents("paper", [0.1, 1.0, 10.0], [1e-1, 1e-3, 1e-5], 1e-3, 1.0, episodes=8000, **ARGS)
    tight = sigma_exponents("tight", [0.1, 0.5, 1.0, 5.0, 10.0], [1e-1, 1e-3, 1e-5], 1e-3, 1.0, episodes=8000, **ARGS)
    assert paper[0] == pytest.approx(-0.5, abs=0.05)  # exactly -1/2 for the printed closed form
    assert 0.2 < paper[1] < 0.25  # ln(2/δ) over this δ grid: +1/4 only asymptotically
    assert tight == pytest.approx((-0.41, 0.385), abs=0.01)


def test_onset_is_where_per_episode_regret_leaves_its_burn_in_level():
    ks = np.unique(np.geomspace(1, 1e6, 60).astype(int)).astype(float)
    onset_true = 3e4
    per_episode = np.where(ks < onset_true, 1.0, (onset_true / ks) ** 0.5)  # flat, then √K regret
    cum = np.cumsum(np.diff(np.concatenate([[0.0], ks])) * per_episode)
    found = onset_episode(ks, cum)
    assert 4 * onset_true <= found < 5 * onset_true  # (3e4/k)^½ = ½ at k = 4·3e4
    assert np.isnan(onset_episode(ks, ks * 1.0))  # linear throughout: no onset




# The experiments whose Private-OFU-RL rows are there to be inside the regime (docs/experiments.md);
# lq_regret's small K is the out-of-regime grid by design.
REGIME_EXPERIMENTS = ("lq_regime", "lq_regime_eps10", "lq_regime_long")


@pytest.mark.parametrize("preset", ["default", "full"])
def test_every_regime_job_of_the_config_is_a_decade_past_its_predicted_burn_in(preset):
    """Each private job of the regime experiments runs K >= horizon_needed (10·T*(K)) for its
    own system and privacy, so its rows can be inside the regime (the measured onset decides
    the rest). Guards the config against stale sizes: `full` ran lq_regime's tight ε = 1 at
    6e7 < 6.3e7 and the paper calibration at ε = 1 at 2.5e8 < 3.0e8."""
    from dprl.config.load import load_config_file
    from dprl.experiments.lq.jobs import make_system
    from dprl.runner.job import JobContext

    experiments = load_config_file("config.yaml", preset).experiments
    checked = 0
    for name in REGIME_EXPERIMENTS:
        if name not in experiments:
            continue
        for job in experiments[name].jobs:
            spec = job.spec
            if spec.privacy is None:
                continue
            system = make_system(spec.environment, JobContext(spec))
            need = horizon_needed(spec.privacy, system.horizon, system.gamma, system.n, system.d,
                                  float(spec.algorithm["alpha"]))
            assert spec.settings["episodes"] >= need, (name, spec.privacy, need)
            checked += 1
    assert checked >= (12 if preset == "default" else 60)


def test_full_tests_c3_inside_the_regime_where_its_exponents_are_the_papers():
    """`full` has a paper-calibration grid of >= 3 points in ε and in δ, paired with OFU-RL at
    the same K in a table C3 reads, whose calibration predicts the paper's exponents within
    C3's tolerance (at ε = 10 it would not: +0.15 in ln 1/δ)."""
    from dprl.analysis.claims.lq import C3_DELTA, C3_EPS, COST_TABLES
    from dprl.analysis.stats import PAPER_EXPONENT_TOL
    from dprl.config.load import load_config_file

    long = load_config_file("config.yaml", "full").experiments["lq_regime_long"]
    assert "lq_regime_long" in COST_TABLES
    specs = [j.spec for j in long.jobs]
    assert {s.algorithm["name"] for s in specs} == {"ofu_rl", "private_ofu_rl"}
    assert len({s.settings["episodes"] for s in specs}) == 1
    paper = [s.privacy for s in specs if s.privacy is not None and s.privacy.calibration == "paper"]
    eps = sorted({p.epsilon for p in paper if p.delta == 1e-3})
    deltas = sorted({p.delta for p in paper if p.epsilon == 1.0}, reverse=True)
    assert len(eps) >= 3 and len(deltas) >= 3
    k = specs[0].settings["episodes"]
    eps_exp, _ = sigma_exponents("paper", eps, [1e-3], 1e-3, 1.0, episodes=k, **ARGS)
    _, delta_exp = sigma_exponents("paper", [1.0], deltas, 1e-3, 1.0, episodes=k, **ARGS)
    assert abs(eps_exp - C3_EPS) < PAPER_EXPONENT_TOL and abs(delta_exp - C3_DELTA) < PAPER_EXPONENT_TOL
    # the same grids at ε = 10 miss the paper's exponents: why default has no C3 row at ε <= 10
    _, at_ten = sigma_exponents("paper", [10.0], deltas, 1e-3, 10.0, episodes=k, **ARGS)
    assert abs(at_ten - C3_DELTA) > PAPER_EXPONENT_TOL
