"""One agent factory and one episode runner across the papers (``dprl.agents.protocol``):
every episodic paper's ``build_agent``/``run_episodes`` take the protocol's leading
parameters, in order, and the job functions build their agents through them."""

from __future__ import annotations

import importlib
import inspect

import numpy as np
import pytest

from dprl.agents.protocol import BuiltAgent, checked_checkpoints

AGENT_MODULES = ("dprl.agents.tabular.agent", "dprl.agents.lq.run", "dprl.agents.linmix.simulate")
FACTORY = ["name", "params", "privacy", "env", "n_episodes", "agent_rng", "noise_rng"]
RUNNER = ["built", "env", "n_episodes", "env_rng", "checkpoints", "progress"]


def _head(func, n: int) -> list[str]:
    return list(inspect.signature(func).parameters)[:n]


def _extra_are_keyword_only(func, n: int) -> bool:
    params = list(inspect.signature(func).parameters.values())[n:]
    return all(p.kind is inspect.Parameter.KEYWORD_ONLY for p in params)


@pytest.mark.parametrize("module", AGENT_MODULES)
def test_every_paper_has_the_protocol_signatures(module):
    mod = importlib.import_module(module)
    assert _head(mod.build_agent, len(FACTORY)) == FACTORY and _extra_are_keyword_only(mod.build_agent, len(FACTORY))
    assert _head(mod.run_episodes, len(RUNNER)) == RUNNER and _extra_are_keyword_only(mod.run_episodes, len(RUNNER))
    assert inspect.signature(mod.run_episodes).parameters["progress"].default is None


def test_policy_evaluation_factory_has_the_protocol_head():
    from dprl.agents.pe.estimators import build_estimator

    assert _head(build_estimator, 3) == FACTORY[:3]


def test_a_diverging_signature_is_caught():
    """The check itself: a factory with the old ``(system, name, ...)`` order fails it."""

    def old_build_agent(system, name, params, privacy, episodes, agent_rng, noise_rng):
        return BuiltAgent(None, None)

    assert _head(old_build_agent, len(FACTORY)) != FACTORY


@pytest.mark.parametrize("kind", ["tabular", "lq", "linmix"])
def test_job_functions_use_only_the_protocol_entry_points(kind):
    jobs = importlib.import_module(f"dprl.experiments.{kind}.jobs")
    src = inspect.getsource(jobs)
    assert "build_agent(" in src and "run_episodes(" in src
    for old in ("make_agent(", "AgentSetup", "feed_episodes("):
        assert old not in src


def test_checkpoints_are_checked():
    assert checked_checkpoints(np.array([1, 5, 10]), 10).tolist() == [1, 5, 10]
    for bad in (np.array([], dtype=int), np.array([[1, 2]]), np.array([2, 2]), np.array([0, 3]), np.array([3, 11]),
                np.array([1.0, 2.0])):
        with pytest.raises(ValueError, match="checkpoints"):
            checked_checkpoints(bad, 10)
