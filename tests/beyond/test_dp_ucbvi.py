"""DP-UCBVI (Qiao & Wang 2023, Algorithm 1) and UCBVI-Bernstein as dprl plug-ins
(``src/dprl_beyond/dp_ucbvi.py``): the Privatizer's conditions on its post-processing,
optimism of the Bernstein-type bonus, learning below uniform play, the calibration read
from the counters the agent holds, planted bugs detected, determinism."""

from __future__ import annotations

import numpy as np
import pytest

from dprl.agents.plugin import run_tabular_episodes
from dprl.agents.protocol import BuiltAgent
from dprl.agents.tabular.privacy import held_calibration
from dprl.agents.tabular.statistics import ExactStats, PrivateStats
from dprl.envs.tabular import garnet, riverswim
from dprl.experiments import registry
from dprl.privacy.setting import PrivacySetting
from dprl_beyond import dp_ucbvi as D

PRIV = PrivacySetting(epsilon=1.0, calibration="tight")


def _uniform_regret(env) -> float:
    """Per-episode regret of uniform play: ρ* minus the value of the uniformly random policy."""
    P = env.P.mean(axis=2)  # (H, S, S): the action averaged out
    R = env.R.mean(axis=2)
    V = np.zeros(env.S)
    for h in range(env.H - 1, -1, -1):
        V = R[h] + P[h] @ V
    return float(env.optimal_value - env.p0 @ V)


def test_both_are_registered_beside_the_example_without_colliding():
    algs = registry.get_kind("tabular_regret").algorithms
    assert algs["dp_ucbvi"].privacy == "pure" and algs["dp_ucbvi"].baseline == "ucbvi_bernstein"
    assert algs["ucbvi_bernstein"].privacy == "none" and algs["dp_ucbvi"].factory == "dprl_beyond.dp_ucbvi:build"


def test_the_privatizer_output_meets_the_papers_conditions():
    """Released counts within E/4 of the true ones: ñ' > 0, ñ = Σ ñ', n ≤ ñ ≤ n + E and
    |ñ' − n'| ≤ E (the Privatizer's assumption), so P̃ is a probability vector."""
    rng = np.random.default_rng(0)
    H, S, A, E = 2, 4, 3, 8.0
    m = rng.integers(0, 6, (H, S, A, S)).astype(float)
    n = m.sum(-1)
    n_hat = n + rng.uniform(-E / 4, E / 4, n.shape)
    m_hat = m + rng.uniform(-E / 4, E / 4, m.shape)
    n_t, m_t = D.privatize_counts(n_hat, m_hat, E)
    assert (m_t > 0).all()
    np.testing.assert_allclose(n_t, m_t.sum(-1))
    assert (n_t >= n - 1e-9).all() and (n_t <= n + E + 1e-9).all()
    assert (np.abs(m_t - m) <= E + 1e-9).all()
    # the min-max projection: no point of the constraint set is nearer the released counts
    dev = np.abs(m_t - E / (2 * S) - m_hat).max(-1)
    assert (dev <= np.abs(m - m_hat).max(-1) + 1e-9).all()  # the true counts are feasible
    # exact counts (E = 0): the identity
    n0, m0 = D.privatize_counts(n, m, 0.0)
    np.testing.assert_array_equal(m0, m)
    np.testing.assert_array_equal(n0, n)


def _optimism_gap(env, T: int = 400, seed: int = 0) -> float:
    """min over episodes of V̄_1(s) − V*_1(s) on the states of p0 (UCBVI-Bernstein, exact
    counts): non-negative when the bonus makes the plan optimistic."""
    built = D.build_exact({"beta": 0.05}, None, env, T, None, None)
    agent = built.agent
    rng = np.random.default_rng(seed)
    v_star = env._v_star[0]
    worst = np.inf
    for u in env.draw_uniforms(rng, T):
        pi = agent.policy()
        worst = min(worst, float((agent.upper[0] - v_star)[env.p0 > 0].min()))
        agent.observe(*env.rollout(pi, u))
    return worst


def test_the_bonus_keeps_the_plan_optimistic_and_a_wrong_sign_is_detected(monkeypatch):
    env = garnet(np.random.default_rng(3), S=3, A=2, H=2, branching=2)
    assert _optimism_gap(env) >= -1e-9
    bonus = D.bernstein_bonus
    monkeypatch.setattr(D, "bernstein_bonus", lambda *a: -bonus(*a))  # planted bug: bonus subtracted
    assert _optimism_gap(env) < 0


def test_ucbvi_bernstein_learns_well_below_uniform_play():
    """Non-private, on a garnet: its regret per episode over episodes 8000-16000 is under
    0.15 of uniform play's (measured 0.025 against 0.375; riverswim at S = 3, H = 3 needs
    longer: 0.11 against 0.18 there, not asserted)."""
    env = garnet(np.random.default_rng(0), S=3, A=2, H=2, branching=2)
    built = D.build_exact({"beta": 0.05}, None, env, 16000, None, None)
    tab = run_tabular_episodes(built, env, 16000, np.random.default_rng(1), np.array([8000, 16000]))
    late = (tab["regret"].iloc[1] - tab["regret"].iloc[0]) / 8000
    assert late < 0.15 * _uniform_regret(env), (late, _uniform_regret(env))


def test_the_calibration_is_read_from_the_counters_it_holds_and_underscaled_noise_is_caught():
    env = riverswim(S=3, H=3)
    built = D.build({"beta": 0.05}, PRIV, env, 500, None, np.random.default_rng(0))
    held = held_calibration(built)
    assert isinstance(built.agent.source, PrivateStats) and held == built.agent.source.calibration()
    assert held.accounted_epsilon <= PRIV.epsilon * (1 + 1e-12)
    # planted bug: counters at half the Laplace scale (noise the accounting must not trust)
    weak = PrivateStats(env.S, env.A, env.H, 500, PRIV, 0.05, np.random.default_rng(0), noise_multiplier=0.5)
    leaky = BuiltAgent(D.DPUCBVI(weak, 500, 0.05, env.n_actions), built.calibration)
    assert held_calibration(leaky).accounted_epsilon > 1.5 * PRIV.epsilon


def test_the_counts_it_plans_from_are_privatized_and_noise_free_counters_give_the_exact_algorithm():
    """DP-UCBVI differs from UCBVI-Bernstein only in its counters: without noise (E = 0) it
    plays UCBVI-Bernstein's policies; with noise its release is not the exact counts."""
    env = garnet(np.random.default_rng(1), S=3, A=2, H=2, branching=2)
    T = 200
    quiet = PrivateStats(env.S, env.A, env.H, T, PRIV, 0.05, None, noise_multiplier=0.0)
    noisy = D.build({"beta": 0.05}, PRIV, env, T, None, np.random.default_rng(5)).agent
    a, b = D.DPUCBVI(quiet, T, 0.05, env.n_actions), D.build_exact({"beta": 0.05}, None, env, T, None, None).agent
    exact = ExactStats(env.S, env.A, env.H)
    for u in env.draw_uniforms(np.random.default_rng(2), T):
        pa, pb = a.policy(), b.policy()
        np.testing.assert_array_equal(pa, pb)
        np.testing.assert_array_equal(a.upper, b.upper)
        traj = env.rollout(pa, u)
        a.observe(*traj), b.observe(*traj), noisy.observe(*traj), exact.update(*traj)
    assert np.abs(noisy.source.release().values - exact.release().values).max() > 0.1


def test_same_seed_same_numbers():
    """A job's numbers depend only on its seeds: the same noise seed gives the same regret
    table and the same privatized counts; another noise seed other counts."""
    env = riverswim(S=3, H=3)

    def run(seed: int):
        built = D.build({"beta": 0.05}, PRIV, env, 300, None, np.random.default_rng(seed))
        tab = run_tabular_episodes(built, env, 300, np.random.default_rng(7), np.array([150, 300]))
        st = built.agent.source.release()
        return tab, D.privatize_counts(st.n, st.m, 4.0 * st.e)[1]

    (first, counts), (again, counts_again), (_, other_counts) = run(0), run(0), run(1)
    assert first.equals(again)
    np.testing.assert_array_equal(counts, counts_again)
    assert not np.array_equal(counts, other_counts)


@pytest.mark.parametrize("beta", [0.0, 0.6])
def test_bad_beta_is_refused_before_any_episode(beta):
    from dprl.config.load import ConfigError, load_config

    cfg = {"experiments": {"mine": {"kind": "tabular_regret", "algorithms": [{"name": "dp_ucbvi", "beta": beta}],
                                    "environments": [{"name": "riverswim", "S": 3, "H": 3}],
                                    "privacy": {"epsilon": [1.0], "calibration": ["tight"]},
                                    "settings": {"episodes": 100, "checkpoints": 2}, "seeds": {"count": 1}}}}
    with pytest.raises(ConfigError, match="beta"):
        load_config(cfg)


@pytest.mark.parametrize("private", [True, False])
def test_the_compiled_block_gives_the_step_paths_numbers(private):
    """The block protocol (``block_kernel``: compiled plan/learn on the agent's own counters)
    and the NumPy step path give the same regret table, the same last plan and the same
    counters, private (same noise seed) and exact."""
    env = garnet(np.random.default_rng(4), S=3, A=2, H=3, branching=2)
    T = 600

    def run(compiled: bool):
        if private:
            source = PrivateStats(env.S, env.A, env.H, T, PRIV, 0.05, np.random.default_rng(9))
        else:
            source = ExactStats(env.S, env.A, env.H)
        agent = D.DPUCBVI(source, T, 0.05, env.n_actions, compiled=compiled)
        tab = run_tabular_episodes(BuiltAgent(agent, None), env, T, np.random.default_rng(3), np.array([300, 600]),
                                   block=256)
        return tab, agent

    (step_tab, step), (block_tab, block) = run(False), run(True)
    assert not hasattr(step, "block_kernel") and hasattr(block, "block_kernel")
    assert step_tab.equals(block_tab)
    np.testing.assert_array_equal(step.source.release().values, block.source.release().values)
    np.testing.assert_array_equal(step.policy(), block.policy())
    np.testing.assert_array_equal(step.upper, block.upper)
    np.testing.assert_array_equal(step.lower, block.lower)
