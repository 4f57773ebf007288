"""The compiled block protocol of tabular plug-ins (``dprl.agents.plugin.TabularBlockKernel``):
the same table as the step protocol for an agent implementing both, dprl's counters fed and
released from compiled code left exactly as the step path leaves them, and a clear error for
a policy outside the available actions."""

import numpy as np
import pandas as pd
import pytest
from numba import njit

from dprl.agents.plugin import TabularBlockKernel, run_tabular_episodes
from dprl.agents.protocol import BuiltAgent
from dprl.agents.tabular.privacy import held_calibration, ran_calibration
from dprl.agents.tabular.statistics import ExactStats, PrivateStats, feed_stats, release_stats
from dprl.envs.tabular import garnet
from dprl.privacy.setting import PrivacySetting

PRIVACY = PrivacySetting(epsilon=2.0, calibration="tight")


@njit
def _plan(state, k, policy_out):
    """Greedy on released mean reward plus a bonus, ties broken by uniforms of the state's generator."""
    ks, n_actions, rng, bad = state
    values, e = release_stats(ks)
    S, A, H = ks[11], ks[12], ks[13]
    sah = S * A * H
    for h in range(H):
        for s in range(S):
            best, arg = -np.inf, 0
            for a in range(A):
                key = rng.random()
                if a >= n_actions[s]:
                    continue
                i = (h * S + s) * A + a
                n = max(values[sah + i] - e, 1.0)
                q = values[i] / n + 1.0 / np.sqrt(n) + 1e-9 * key
                if q > best:
                    best, arg = q, a
            policy_out[h, s] = arg
    if bad[0] >= 0 and k == bad[0]:
        policy_out[0, 0] = n_actions[0]  # a deliberately unavailable action


@njit
def _learn(state, k, states, actions, rewards):
    feed_stats(state[0], states, actions, rewards)


class _BothProtocols:
    """The same algorithm in plain Python (step protocol, ``PrivateStats.update``/``release``)
    and as compiled kernels (``block_kernel``)."""

    def __init__(self, source, n_actions, rng, compiled: bool, bad_episode: int = -1) -> None:
        self.source, self.n_actions, self.rng = source, n_actions, rng
        self.bad = np.array([bad_episode], dtype=np.int64)
        self.k = 0
        if compiled:
            self.block_kernel = TabularBlockKernel(_plan, _learn, (source.kernel_state(), n_actions, rng, self.bad))

    def policy(self) -> np.ndarray:
        st = self.source.release()
        H, S, A = st.H, st.S, st.A
        keys = self.rng.random((H, S, A))
        n = np.maximum(st.n - st.e, 1.0)
        q = st.r / n + 1.0 / np.sqrt(n) + 1e-9 * keys
        q[:, np.arange(A)[None, :] >= self.n_actions[:, None]] = -np.inf
        pi = q.argmax(axis=2)
        if self.k == self.bad[0]:
            pi[0, 0] = self.n_actions[0]
        self.k += 1
        return pi

    def observe(self, states, actions, rewards) -> None:
        self.source.update(states, actions, rewards)


def _built(env, T, private: bool, compiled: bool, bad_episode: int = -1) -> BuiltAgent:
    if private:
        source = PrivateStats(env.S, env.A, env.H, T, PRIVACY, 0.05, np.random.default_rng(7))
        calibration = source.calibration()
    else:
        source, calibration = ExactStats(env.S, env.A, env.H), None
    return BuiltAgent(_BothProtocols(source, env.n_actions, np.random.default_rng(8), compiled, bad_episode), calibration)


def _env():
    return garnet(np.random.default_rng(0), S=4, A=3, H=3, branching=2)


@pytest.mark.parametrize("private", [True, False])
def test_block_kernel_gives_the_step_path_table_and_counters(private):
    env, T = _env(), 700
    checkpoints = np.array([1, 10, 100, 333, 700])
    tables, sources = [], []
    for compiled in (False, True):
        built = _built(env, T, private, compiled)
        tables.append(run_tabular_episodes(built, env, T, np.random.default_rng(3), checkpoints, alpha=0.1, block=256))
        sources.append(built.agent.source)
        if private:
            assert held_calibration(built) == built.calibration and ran_calibration(built) == built.calibration
    pd.testing.assert_frame_equal(tables[0], tables[1], check_exact=True)
    step, compiled = sources
    if private:
        assert step.t == compiled.t == T
        assert np.array_equal(step.exact, compiled.exact) and np.array_equal(step.suffix, compiled.suffix)
        assert np.array_equal(step.drawn, compiled.drawn) and compiled.drawn_noise().draws == T
        assert np.array_equal(step.rng.random(4), compiled.rng.random(4))  # the noise stream read as far
    else:
        assert np.array_equal(step.counts, compiled.counts) and compiled.counts[env.S * env.A * env.H:].sum() == 2 * T * env.H


def test_block_kernel_table_does_not_depend_on_the_block_size():
    env, T = _env(), 300
    a = run_tabular_episodes(_built(env, T, True, True), env, T, np.random.default_rng(3), np.array([T]), block=7)
    b = run_tabular_episodes(_built(env, T, True, True), env, T, np.random.default_rng(3), np.array([T]), block=1024)
    pd.testing.assert_frame_equal(a, b, check_exact=True)


@pytest.mark.parametrize("compiled", [False, True])
def test_a_policy_outside_the_actions_is_refused_naming_the_episode(compiled):
    env = _env()
    with pytest.raises(ValueError, match=r"^episode 42: .*outside a state's available actions"):
        run_tabular_episodes(_built(env, 100, True, compiled, bad_episode=41), env, 100, np.random.default_rng(3),
                             np.array([100]), block=16)


def test_private_counters_refuse_feeding_past_their_horizon_in_compiled_code():
    env = _env()
    with pytest.raises(RuntimeError, match="horizon"):
        run_tabular_episodes(_built(env, 5, True, True), env, 6, np.random.default_rng(3), np.array([6]))


def test_block_kernel_must_be_compiled_functions():
    with pytest.raises(TypeError, match="numba.njit"):
        TabularBlockKernel(lambda s, k, p: None, _learn, ())
