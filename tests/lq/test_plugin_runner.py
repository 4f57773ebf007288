"""The generic LQ step runner of plug-ins (``agents/plugin.py``) against the compiled
OFU-RL / Private-OFU-RL loop: run through their step interface (``act().gains`` then
``observe``), the built-ins give the compiled loop's regret columns; bad policies are
refused naming the episode."""

import numpy as np
import pandas as pd
import pytest

from dprl.agents.lq.build import build_agent
from dprl.agents.lq.episodes import run_episodes
from dprl.agents.plugin import run_lq_episodes
from dprl.agents.protocol import BuiltAgent
from dprl.envs.lq import random_system
from dprl.privacy.setting import PrivacySetting
from dprl.runner.checkpoints import log_checkpoints
from step_agents import StepOFU

PARAMS = {"n_candidates": 16, "alpha": 0.1, "lam": 0.1}
COLUMNS = ["episode", "regret", "regret_sampled", "episode_regret", "optimal_cost"]




def _run(name, privacy, runner, K=120, seed=0):
    system = random_system(2, 1, 5, np.random.default_rng(seed))
    built = build_agent(name, PARAMS, privacy, system, K, np.random.default_rng([seed, 1]), np.random.default_rng([seed, 2]))
    marks = log_checkpoints(K, 12)
    if runner == "compiled":
        return run_episodes(built, system, K, np.random.default_rng([seed, 3]), marks)[COLUMNS]
    return run_lq_episodes(BuiltAgent(StepOFU(built.agent), built.calibration), system, K, np.random.default_rng([seed, 3]), marks)


@pytest.mark.parametrize("name,privacy", [("ofu_rl", None),
                                          ("private_ofu_rl", PrivacySetting(epsilon=1.0, delta=1e-3, calibration="tight"))])
def test_builtins_through_the_step_runner_are_the_compiled_loop(name, privacy):
    pd.testing.assert_frame_equal(_run(name, privacy, "step"), _run(name, privacy, "compiled"), rtol=1e-10, atol=1e-12)


def test_a_different_policy_changes_the_regret():
    """The equality above is not vacuous: a plug-in that plays the zero controller has other regret."""

    class Zero:
        def policy(self):
            return np.zeros((5, 1, 2))

        def observe(self, states, controls):
            assert states.shape == (6, 2) and controls.shape == (5, 1)

    system = random_system(2, 1, 5, np.random.default_rng(0))
    df = run_lq_episodes(BuiltAgent(Zero(), None), system, 50, np.random.default_rng(3), log_checkpoints(50, 5))
    ref = _run("ofu_rl", None, "compiled", K=50)
    assert df["regret"].iloc[-1] > 0 and not np.isclose(df["regret"].iloc[-1], ref["regret"].iloc[-1])
    # a fixed controller: the same exact regret every episode
    np.testing.assert_allclose(df["regret"] / df["episode"], df["episode_regret"].iloc[0], rtol=1e-12)


@pytest.mark.parametrize("gains,match", [(np.zeros((5, 2, 2)), "shape"), (np.full((5, 1, 2), np.nan), "finite")])
def test_a_malformed_policy_is_refused_with_its_episode(gains, match):
    class Bad:
        def policy(self):
            return gains

        def observe(self, states, controls):
            pass

    system = random_system(2, 1, 5, np.random.default_rng(0))
    with pytest.raises(ValueError, match=f"episode 1: .*{match}"):
        run_lq_episodes(BuiltAgent(Bad(), None), system, 5, np.random.default_rng(0), log_checkpoints(5, 2))
