"""PUCB's burn-in (agents/tabular/regime.py), its measured onset in the compiled loop, and
the regime-aware claims V2, V3 and V5 on synthetic tables."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from dprl.agents.tabular.episodes import _all_tied, feed_episodes
from dprl.agents.tabular.build import build_agent
from dprl.agents.tabular.regime import (bonus_burn_in, clamp_watch, confidence_width, job_burn_in, pucb_burn_in,
                                        unclamp_count, uniform_visit_rates)
from dprl.agents.tabular.planner import priv_q
from dprl.analysis.claims import tabular as tc
from dprl.envs.tabular import garnet, riverswim
from dprl.runner.online import CheckpointSummary
from dprl.privacy.setting import PrivacySetting

CLAIM = {c.id: c for c in tc.CLAIMS}  # each claim, evaluated through its declaration

TIGHT = {"calibration": "tight"}  # keyword arguments of PrivacySetting


def _garnet(seed: int = 0):
    return garnet(np.random.default_rng(seed), S=3, A=2, H=2, branching=2)


def test_unclamp_count_is_the_crossing():
    E, S, A, H = 1640.0, 3, 2, 2
    n = unclamp_count(1.0, E, S, A, H, 0.05)
    assert confidence_width(n, E, S, A, H, 0.05) < 1.0 <= confidence_width(n * 0.999, E, S, A, H, 0.05)
    # the ψ̃ term alone puts the crossing near 3(1+SH)E/margin = 21E
    assert 15 * E < n < 30 * E
    assert unclamp_count(0.0, E, S, A, H, 0.05) == np.inf
    assert unclamp_count(1.0, E, S, A, H, 0.05, bonus_scale=2.0) > n


def test_burn_in_matches_the_issue_and_scales_like_one_over_eps():
    T = 30_000_000
    t10 = job_burn_in(_garnet(0), PrivacySetting(epsilon=10, **TIGHT), T, 0.05)
    t1 = job_burn_in(_garnet(0), PrivacySetting(epsilon=1, **TIGHT), T, 0.05)
    # measured: garnet S3 H2 unclamps near 3.7e5 (ε=10) and 4.4e6 (ε=1) episodes
    assert 2e5 < t10[1] < 8e5 and 2.5e6 < t1[1] < 8e6
    assert 8 < t1[1] / t10[1] < 12 and 8 < t1[0] / t10[0] < 12
    assert t10[0] < t10[1]  # the first untie precedes the full unclamp
    ubev = job_burn_in(_garnet(0), None, T, 0.05)
    assert ubev[1] < t10[0] / 10
    paper = job_burn_in(_garnet(0), PrivacySetting(epsilon=10, calibration="paper"), T, 0.05)
    assert paper[1] > t10[1]


def test_uniform_visit_rates_sum_to_one_per_step():
    rates = uniform_visit_rates(riverswim(3, 3))
    np.testing.assert_allclose(rates.sum(axis=(1, 2)), 1.0)
    assert rates[0, 0].sum() == 1.0  # riverswim starts in state 0


def test_all_tied():
    Q = np.full((2, 3, 2), 2.0)
    full = np.array([2, 2, 2])
    assert _all_tied(Q, full)
    Q[1, 2, 1] = 1.9
    assert not _all_tied(Q, full)
    assert _all_tied(Q, np.array([2, 2, 1]))  # the differing action is unavailable
    Q[1, 2, 1] = -np.inf
    assert not _all_tied(Q, full)


def _run(T: int, eps: float = 10.0, env=None):
    env = _garnet(0) if env is None else env
    priv = PrivacySetting(epsilon=eps, **TIGHT)
    agent = build_agent("pucb", {"beta": 0.05, "bonus_scale": 1.0, "l1_per_step": 2}, priv, env, T, np.random.default_rng(1), np.random.default_rng(2)).agent
    s = CheckpointSummary(np.array([T]))
    feed_episodes(agent, env, T, np.random.default_rng(3), s)
    return agent, pucb_burn_in(env, agent.source.e_rest, 0.05)


def test_measured_onset_on_a_run_that_unclamps():
    T = 300_000
    agent, (first, t_star) = _run(T)
    last = agent.last_all_tied_episode
    assert 0 < last < T
    assert 0.5 * first < last < 2 * first  # the prediction from the code's constants
    assert agent.all_tied_episodes <= last


def test_measured_onset_with_single_action_states():
    from dprl.envs.tabular import lowerbound
    env = lowerbound(np.random.default_rng(0), n=2, m=1, gap=0.4, H=2)[0]
    agent, (first, _) = _run(300_000, 10.0, env)
    assert 0.5 * first < agent.last_all_tied_episode < 2 * first


def test_onset_is_absent_during_the_burn_in():
    agent, (first, _) = _run(20_000)
    assert first > 20_000
    assert agent.last_all_tied_episode == 20_000 == agent.all_tied_episodes
    assert agent.last_clamped_episode == 20_000  # the clamp has not ended either


def test_measured_clamp_end_is_the_step_by_step_one():
    """The compiled loop's ``last_clamped_episode`` against an independent count: one episode
    at a time, the planner's own ``Q̃⁺`` from the agent's release before each episode, the
    last episode in which a watched pair (``clamp_watch``) is still at ``H``. The run leaves
    the clamp (ε = 100, bonus_scale 0.05), so both branches are exercised."""
    env = _garnet(0)
    priv = PrivacySetting(epsilon=100.0, **TIGHT)
    T = 3000

    def build():
        return build_agent("pucb", {"beta": 0.05, "bonus_scale": 0.05, "l1_per_step": 2}, priv, env, T,
                           np.random.default_rng(1), np.random.default_rng(2)).agent

    whole = build()
    feed_episodes(whole, env, T, np.random.default_rng(3), CheckpointSummary(np.array([T])))
    step, env_rng, watch, last = build(), np.random.default_rng(3), clamp_watch(env), 0
    for t in range(1, T + 1):
        Q = priv_q(step.source.release(), step.beta, step.bonus_scale, step.n_actions)
        if np.any(Q[watch] >= env.H):
            last = t
        feed_episodes(step, env, 1, env_rng, CheckpointSummary(np.array([1])))
    assert 0 < last < T  # the clamp ended within the run
    assert whole.last_clamped_episode == last
    # a loop that watched nothing would report no clamp at all
    none = build()
    feed_episodes(none, env, T, np.random.default_rng(3), CheckpointSummary(np.array([T])), watch=np.zeros_like(watch))
    assert none.last_clamped_episode == 0


def test_predicted_burn_in_is_the_measured_end_of_the_clamp():
    """``T*`` and the measured end of the clamp are one event: on garnet (ε = 10, 1e6
    episodes) the prediction is within 2x of the measurement."""
    agent, (_, t_star) = _run(1_000_000)
    end = agent.last_clamped_episode + 1
    assert end < 1_000_000
    assert 0.5 < t_star / end < 2.0, (t_star, end)


def test_tabular_jobs_use_the_one_regime_criterion():
    from dprl.agents.tabular.regime import ONSET_DECADES
    from dprl.analysis import regime
    assert ONSET_DECADES == regime.ONSET_DECADES


# ------------------------------------------------------------------ claims on synthetic tables


def _regret_table(slope: float, T: float, t_star: float, onset: float, eps=(1.0, 10.0), seeds: int = 4) -> pd.DataFrame:
    """PUCB (tight, per ε) and UBEV curves: PUCB's extra regret linear up to ``T* ∝ 1/ε``,
    then ``∝ T^slope``, so the final cost is ``∝ T*^(1−slope) ∝ ε^(slope−1)``."""
    rng = np.random.default_rng(0)
    ks = np.unique(np.geomspace(10, T, 40).round())
    rows = []
    for seed in range(seeds):
        ub = 10 * np.sqrt(ks)
        rows.append(pd.DataFrame({"algorithm": "ubev", "calibration": "none", "epsilon": np.inf, "seed": seed,
                                  "episode": ks, "regret": ub, "burn_in_episodes": 10.0, "onset_episode": 5.0}))
        for e in eps:
            ts = t_star / e
            reg = np.where(ks < ts, 0.3 * ks, 0.3 * ts * (ks / ts) ** slope) * (1 + 0.01 * rng.standard_normal())
            rows.append(pd.DataFrame({"algorithm": "pucb", "calibration": "tight", "epsilon": e, "seed": seed,
                                      "episode": ks, "regret": ub + reg,
                                      "burn_in_episodes": ts, "onset_episode": onset / e}))
    df = pd.concat(rows, ignore_index=True)
    df["env_label"], df["alg_label"], df["privacy_label"] = "garnet", df["algorithm"], df["epsilon"].astype(str)
    return df


def test_v2_inside_the_regime_fits_past_the_burn_in():
    df = _regret_table(0.3, 3e7, 1e6, 2e5)
    res = CLAIM["V2"].evaluate({"tabular_regret": df})
    assert [r.regime for r in res] == ["reached", "reached"]
    assert all(r.verdict == "reproduced" and abs(r.measured - 0.3) < 0.1 for r in res)


def test_v2_outside_the_regime_is_inconclusive_not_refuted():
    from dprl.analysis.claims import evaluate
    df = _regret_table(0.3, 1e6, 1e6, 2e5)  # ε=1: T = T*, all linear
    rows = evaluate(next(c for c in tc.CLAIMS if c.id == "V2"), {"tabular_regret": df})
    eps1 = next(r for r in rows if "ε=1:" in r["note"])
    assert eps1["regime"] == "not reached" and eps1["horizon_needed"] == pytest.approx(1e7)  # 10·max(T*, onset)
    assert eps1["verdict"] == "inconclusive"
    eps10 = next(r for r in rows if "ε=10:" in r["note"])
    assert eps10["regime"] == "reached"


def test_v2_inside_the_regime_can_fail():
    res = CLAIM["V2"].evaluate({"tabular_regret": _regret_table(0.9, 3e7, 1e6, 2e5)})
    assert all(r.regime == "reached" and r.verdict == "not reproduced" for r in res)


def test_v3_expected_exponent_from_the_burn_in():
    res = CLAIM["V3"].evaluate({"tabular_regret": _regret_table(0.0, 3e7, 1e6, 2e5)})  # cost = burn-in regret ∝ 1/ε
    exp = [r for r in res if "exponent" in r.note][0]
    assert "predicts -1.000" in exp.note and exp.regime == "reached"
    assert exp.measured == pytest.approx(-1.0, abs=0.05) and exp.verdict == "reproduced"
    # a cost still growing like T^0.5 past T* scales like ε^-0.5: refuted inside the regime
    bad = [r for r in CLAIM["V3"].evaluate({"tabular_regret": _regret_table(0.5, 3e7, 1e6, 2e5)}) if "exponent" in r.note][0]
    assert bad.measured == pytest.approx(-0.5, abs=0.05) and bad.verdict == "not reproduced"


def _pac_table(frac_last_decade: float, T: int = 1_000_000) -> pd.DataFrame:
    ks = np.unique(np.geomspace(1, T, 30).round())
    rows = []
    for a in (0.1, 0.2):
        for e in (1.0, 10.0):
            base = 50.0 / (a * e)
            n = np.minimum(ks, base) + frac_last_decade * np.maximum(ks - base, 0)
            for seed in range(3):
                rows.append(pd.DataFrame({"algorithm": "pucb", "calibration": "tight", "alpha": a, "epsilon": e,
                                          "seed": seed, "episode": ks, "n_subopt": n * (1 + 0.01 * seed),
                                          "S": 4, "A": 2, "H": 2, "burn_in_episodes": 1e4 / e}))
    df = pd.concat(rows, ignore_index=True)
    df["env_label"], df["alg_label"], df["privacy_label"] = "lowerbound", "pucb", df["epsilon"].astype(str)
    return df


def test_v5_flags_censored_counts():
    ok = CLAIM["V5"].evaluate({"tabular_pac": _pac_table(0.0)})[0]
    assert ok.regime == "reached" and ok.verdict == "reproduced"
    cens = CLAIM["V5"].evaluate({"tabular_pac": _pac_table(0.5)})[0]
    assert cens.regime == "not reached" and "censored" in cens.note
    assert cens.horizon_needed >= 1e7
    # censored points (here every α=0.1 one) leave the fit when two others remain
    mixed = pd.concat([_pac_table(0.0).query("alpha == 0.2"), _pac_table(0.5).query("alpha == 0.1")])
    part = CLAIM["V5"].evaluate({"tabular_pac": mixed})[0]
    assert part.regime == "reached" and "left out of the fit" in part.note and "over 2 (α, ε)" in part.note


def test_regime_figure_and_burn_in_marks(tmp_path):
    from dprl.analysis.figures import FIGURES
    df = _regret_table(0.3, 3e7, 1e6, 2e5)
    FIGURES["tabular_regime"].make({"tabular_regret": df}, tmp_path / "tabular_regime")
    FIGURES["tabular_regret_loglog"].make({"tabular_regret": df}, tmp_path / "loglog")
    assert any(p.name.startswith("tabular_regime") for p in tmp_path.iterdir())
    assert any(p.name.startswith("loglog") for p in tmp_path.iterdir())


def test_regime_horizon_is_the_fixed_point_and_v7_needs_over_1e8():
    from dprl.agents.tabular.regime import ONSET_DECADES
    from dprl.agents.regime import burn_in_episodes
    span = 10**ONSET_DECADES
    env = garnet(np.random.default_rng(0), S=12, A=2, H=2, branching=2)
    priv = PrivacySetting(epsilon=10, **TIGHT)
    k = burn_in_episodes(lambda t: job_burn_in(env, priv, t, 0.05)[1], span)
    assert k >= span * job_burn_in(env, priv, int(k), 0.05)[1]
    assert 0.99 * k < span * job_burn_in(env, priv, int(0.99 * k), 0.05)[1]
    assert 1e8 < k < 1e9  # S = 12 needs T >= 1e8: why V7's default grid stops at S = 4


def test_burn_in_ignores_pairs_already_at_h():
    from dprl.envs.tabular import lowerbound
    env = lowerbound(np.random.default_rng(1), n=2, m=1, gap=0.5, H=2)[0]  # P[+|s, I_s] = 1: Q* = H
    assert np.any(np.isclose(env.optimal_q[0, :2], 2.0))
    first, t_star = job_burn_in(env, PrivacySetting(epsilon=10, **TIGHT), 10**7, 0.05)
    assert np.isfinite(t_star) and first <= t_star


def test_a_plugins_bonus_burn_in_is_pucbs_analysis_with_its_width():
    """``bonus_burn_in`` (a plug-in's declared prediction) with PUCB's ``conf`` is PUCB's T*;
    a wider bonus, or a lower cap, predicts a later burn-in; a cap at Q* leaves the pair out."""
    env, E = _garnet(), 40.0
    S, A, H = env.S, env.A, env.H
    conf = lambda n: confidence_width(n, E, S, A, H, 0.05)  # noqa: E731
    assert bonus_burn_in(env, conf, max(2 * E, 1.0)) == pucb_burn_in(env, E, 0.05)
    wider = bonus_burn_in(env, lambda n: 2.0 * conf(n), max(2 * E, 1.0))[1]
    assert wider > pucb_burn_in(env, E, 0.05)[1]
    lower = bonus_burn_in(env, conf, max(2 * E, 1.0), caps=np.array([H, H - 0.5]))[1]
    assert lower >= pucb_burn_in(env, E, 0.05)[1]
    capped = clamp_watch(env, np.full(H, -1.0))
    assert not capped.any() and bonus_burn_in(env, conf, 1.0, caps=np.full(H, -1.0))[1] == 0.0
