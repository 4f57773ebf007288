"""The generic linear-mixture step runner of plug-ins (``agents/plugin.py``) against the
compiled LinOpt loop: run through their step interface (``begin_episode`` + ``act_policy``,
then ``end_episode``), UCRL-VTR, OPPO and the private LinOpts give the compiled loop's
regret to round-off (deterministic VI policies played as is, PO's stochastic ones sampled
from the agent's stream as the loop samples them); bad policies are refused."""

import numpy as np
import pandas as pd
import pytest

from dprl.agents.linmix.build import build_agent
from dprl.agents.linmix.episodes import run_episodes
from dprl.agents.plugin import run_linmix_episodes
from dprl.agents.protocol import BuiltAgent
from dprl.envs.linear_mixture import make_env
from dprl.experiments.linmix.spec import AGENTS
from dprl.privacy.setting import PrivacySetting
from dprl.runner.checkpoints import log_checkpoints
from step_agents import StepLinOpt

MIXTURE = {"S": 8, "A": 3, "d1": 2, "d2": 2, "H": 3, "concentration": 0.5}
COLUMNS = ["episode", "T", "regret", "sampled_return", "optimal_value"]




def _run(name, privacy, runner, K=150, seed=0):
    env = make_env("mixture", MIXTURE, np.random.default_rng(seed))
    agent_rng = np.random.default_rng(seed + 1)
    built = build_agent(name, AGENTS[name].defaults(), privacy, env, K, agent_rng, np.random.default_rng(seed + 2))
    marks = log_checkpoints(K, 12)
    if runner == "compiled":
        return run_episodes(built, env, K, np.random.default_rng(seed + 3), marks)[COLUMNS]
    return run_linmix_episodes(BuiltAgent(StepLinOpt(built.agent), built.calibration), env, K,
                               np.random.default_rng(seed + 3), marks, action_rng=agent_rng)


PRIVATE = PrivacySetting(epsilon=10.0, delta=1e-3, calibration="tight")


@pytest.mark.parametrize("name,privacy", [("ucrl_vtr", None), ("oppo", None), ("private_linopt_vi", PRIVATE),
                                          ("private_linopt_po", PRIVATE)])
def test_builtins_through_the_step_runner_are_the_compiled_loop(name, privacy):
    step, compiled = _run(name, privacy, "step"), _run(name, privacy, "compiled")
    pd.testing.assert_frame_equal(step, compiled, rtol=1e-10, atol=1e-10)


def test_a_uniform_plugin_has_the_uniform_policys_regret():
    """A plug-in playing uniformly at random: its exact regret is K·(V* − V^uniform), and its
    actions are drawn from the stream it is given (another stream, other returns)."""
    env = make_env("mixture", MIXTURE, np.random.default_rng(0))
    uniform = np.full((env.horizon, env.S, env.A), 1.0 / env.A)

    class Uniform:
        def policy(self):
            return uniform

        def observe(self, states, actions, rewards):
            assert states.shape == (env.horizon + 1,) and actions.shape == rewards.shape == (env.horizon,)

    def run(seed):
        return run_linmix_episodes(BuiltAgent(Uniform(), None), env, 40, np.random.default_rng(3), log_checkpoints(40, 4),
                                   action_rng=np.random.default_rng(seed))

    a, b = run(1), run(2)
    gap = float(env.optimal_values()[0, env.s1]) - env.policy_value(uniform)
    np.testing.assert_allclose(a["regret"], a["episode"] * gap, rtol=1e-12)
    assert not np.array_equal(a["sampled_return"], b["sampled_return"])


@pytest.mark.parametrize("bad,match", [(lambda s: np.ones(s), "distribution"), (lambda s: np.ones(s[:2]), "shape"),
                                       (lambda s: np.full(s, np.nan), "finite")])
def test_a_malformed_policy_is_refused_with_its_episode(bad, match):
    env = make_env("mixture", MIXTURE, np.random.default_rng(0))

    class Bad:
        def policy(self):
            return bad((env.horizon, env.S, env.A))

        def observe(self, states, actions, rewards):
            pass

    with pytest.raises(ValueError, match=f"episode 1: .*{match}"):
        run_linmix_episodes(BuiltAgent(Bad(), None), env, 3, np.random.default_rng(0), log_checkpoints(3, 2),
                            action_rng=np.random.default_rng(0))
