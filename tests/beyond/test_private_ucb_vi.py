"""Private-UCB-VI and UCB-VI (``dprl_beyond.private_ucb_vi``): the step and the compiled block
protocol give the same table and leave dprl's counters in the same state; the planner is
the paper's lines 3-6 (checked against a plain NumPy restatement); privately it is accounted
from and audited on the PrivateStats it holds, and a broken counter fails the audit; the
entry points register both, the private one with ``ucb_vi`` as its baseline."""

import dataclasses

import numpy as np
import pandas as pd
import pytest

from dprl.agents.plugin import TabularBlockKernel, run_tabular_episodes
from dprl.agents.protocol import BuiltAgent
from dprl.agents.tabular.privacy import audit_episode, counters_only_env, held_calibration, ran_calibration
from dprl.agents.tabular.statistics import ExactStats, PrivateStats
from dprl.envs.tabular import garnet, riverswim
from dprl.experiments import registry
from dprl.privacy.setting import PrivacySetting
from dprl_beyond.private_ucb_vi import PrivateUCBVI, build, build_exact, log_term

# ε large enough that the counters' error E (about 9 at T = 2,500) lets the bonuses resolve
# within the runs below: the policies change over a run (at ε = 1 every Q̃ stays clamped at H)
PRIVACY = PrivacySetting(epsilon=1000.0, calibration="tight")
PARAMS = {"beta": 0.05}


class _StepOnly:
    """The agent's step protocol alone (no ``block_kernel``)."""

    def __init__(self, agent: PrivateUCBVI) -> None:
        self.source, self._agent = agent.source, agent

    def policy(self) -> np.ndarray:
        return self._agent.policy()

    def observe(self, states, actions, rewards) -> None:
        self._agent.observe(states, actions, rewards)


def _run(factory, env, T: int, step: bool, checkpoints) -> tuple[pd.DataFrame, BuiltAgent]:
    built = factory(PARAMS, PRIVACY, env, T, np.random.default_rng(1), np.random.default_rng(2))
    if step:
        built = dataclasses.replace(built, agent=_StepOnly(built.agent))
    return run_tabular_episodes(built, env, T, np.random.default_rng(3), checkpoints, alpha=0.05), built


@pytest.mark.parametrize("factory", [build, build_exact], ids=["private_ucb_vi", "ucb_vi"])
def test_step_and_compiled_block_protocols_give_the_same_numbers(factory):
    env, T = garnet(np.random.default_rng(0), S=5, A=2, H=4, branching=2), 2_500
    checkpoints = np.array([1, 10, 100, 1000, 2500])
    (step, a), (compiled, b) = _run(factory, env, T, True, checkpoints), _run(factory, env, T, False, checkpoints)
    assert isinstance(b.agent.block_kernel, TabularBlockKernel)
    pd.testing.assert_frame_equal(step, compiled, check_exact=True)
    sa, sb = a.agent.source, b.agent.source
    if factory is build:
        assert sa.t == sb.t == T and np.array_equal(sa.suffix, sb.suffix) and np.array_equal(sa.drawn, sb.drawn)
        assert ran_calibration(b) == held_calibration(b) == b.calibration  # the noise drawn is the noise held
    else:
        assert np.array_equal(sa.counts, sb.counts)


def _numpy_plan(values, E, S, A, H, n_actions, iota):
    """Lines 3-6 restated with NumPy arrays (the reference the compiled planner must match)."""
    k = S * A * H
    C, N, M = values[:k].reshape(H, S, A), values[k:2 * k].reshape(H, S, A), values[2 * k:].reshape(H, S, A, S)
    n = np.maximum(1.0, N + E)
    r, P = C / n, M / n[..., None]
    root = np.sqrt(iota / (2 * n))
    b_r, b_pv = root + 3 * E / n, H * root + H * (S + 2) * E / n
    V = np.zeros(S)
    pi = np.empty((H, S), dtype=np.int64)
    for h in range(H - 1, -1, -1):
        Q = np.minimum(H, r[h] + b_r[h] + P[h] @ V + b_pv[h])
        Q[np.arange(A)[None, :] >= n_actions[:, None]] = -np.inf
        pi[h], V = Q.argmax(axis=1), Q.max(axis=1)
    return pi


def test_the_planner_is_lines_3_to_6():
    env, T = garnet(np.random.default_rng(4), S=4, A=3, H=3, branching=2), 3_000
    env = dataclasses.replace(env, n_actions=np.array([3, 1, 2, 3]))  # fewer actions in some states
    built = build(PARAMS, PRIVACY, env, T, np.random.default_rng(1), np.random.default_rng(2))
    agent, rng = built.agent, np.random.default_rng(5)
    iota = log_term(env.S, env.A, env.H, T, 0.05)
    seen = set()
    for _ in range(T):
        st = agent.source.release()
        pi = agent.policy()
        assert np.array_equal(pi, _numpy_plan(st.values, st.e, env.S, env.A, env.H, env.n_actions, iota))
        assert np.all(pi < env.n_actions[None, :])
        states, actions, rewards = env.rollout(pi, rng.random(2 * env.H + 1))
        agent.observe(states, actions, rewards)
        seen.add(pi.tobytes())
    assert len(seen) > 3  # the planner resolves: not one clamped policy throughout


def test_ucb_vi_learns_riverswim():
    """UCB-VI on exact counts: regret per episode falls well below uniform play's."""
    env, T = riverswim(S=3, H=6), 20_000
    df, _ = _run(build_exact, env, T, False, np.array([1000, T]))
    late = (df.regret.iloc[1] - df.regret.iloc[0]) / (T - 1000)
    uniform = env.optimal_value - np.mean([env.policy_value(np.random.default_rng(i).integers(0, 2, (6, 3)))
                                           for i in range(50)])
    assert late < 0.2 * uniform


def test_private_ucb_vi_audited_on_its_counters_and_a_broken_mechanism_fails():
    env, privacy = counters_only_env(2, 1, 1), PrivacySetting(epsilon=6.0, calibration="tight")
    built = build(PARAMS, privacy, env, 4, np.random.default_rng(1), np.random.default_rng(2))
    assert isinstance(built.agent.source, PrivateStats) and held_calibration(built) == built.calibration
    ok = audit_episode(built, 50_000, np.random.default_rng(7))
    src = built.agent.source
    broken_src = PrivateStats(src.S, src.A, src.H, src.T, privacy, 0.05, np.random.default_rng(2), noise_multiplier=0.4)
    broken = BuiltAgent(PrivateUCBVI(broken_src, env.n_actions, 1.0, built.agent.watch), broken_src.calibration())
    bad = audit_episode(broken, 50_000, np.random.default_rng(7))  # claims ε = 6 with 0.4 of the noise
    assert ok.passed and not bad.passed


def test_entry_points_register_both_with_the_baseline():
    registry.refresh()
    plugins = registry.plugins()
    assert plugins["private_ucb_vi"].privacy == "pure" and plugins["private_ucb_vi"].baseline == "ucb_vi"
    assert plugins["ucb_vi"].privacy == "none" and not plugins["ucb_vi"].baseline
    assert "private_ucb_vi" in registry.get_kind("tabular_audit").algorithms
    assert "ucb_vi" not in registry.get_kind("tabular_audit").algorithms
    assert {"private_ucb_vi", "ucb_vi"} <= set(registry.get_kind("tabular_regret").algorithms)
    assert isinstance(ExactStats(2, 2, 2).kernel_state(), tuple)
