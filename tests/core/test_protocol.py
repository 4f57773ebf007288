"""One agent factory and one episode runner across the papers (``dprl.agents.protocol``):
every episodic paper's ``build_agent``/``run_episodes`` take the protocol's leading
parameters, in order, and the job functions build their agents through them."""

from __future__ import annotations

import importlib
import inspect

import numpy as np
import pytest

from dprl.agents.protocol import BuiltAgent, checked_checkpoints

PAPERS = ("tabular", "lq", "linmix")  # the episodic papers; the policy-evaluation paper below
FACTORY = ["name", "params", "privacy", "env", "n_episodes", "agent_rng", "noise_rng"]
RUNNER = ["built", "env", "n_episodes", "env_rng", "checkpoints", "progress"]


def _head(func, n: int) -> list[str]:
    return list(inspect.signature(func).parameters)[:n]


def _extra_are_keyword_only(func, n: int) -> bool:
    params = list(inspect.signature(func).parameters.values())[n:]
    return all(p.kind is inspect.Parameter.KEYWORD_ONLY for p in params)


@pytest.mark.parametrize("paper", PAPERS)
def test_every_paper_has_the_protocol_signatures_in_the_same_modules(paper):
    """``dprl.agents.<paper>.build.build_agent`` and ``.episodes.run_episodes`` in every paper."""
    build = importlib.import_module(f"dprl.agents.{paper}.build").build_agent
    run = importlib.import_module(f"dprl.agents.{paper}.episodes").run_episodes
    assert _head(build, len(FACTORY)) == FACTORY and _extra_are_keyword_only(build, len(FACTORY))
    assert _head(run, len(RUNNER)) == RUNNER and _extra_are_keyword_only(run, len(RUNNER))
    assert inspect.signature(run).parameters["progress"].default is None


def test_policy_evaluation_factory_has_the_protocol_head():
    """No episodes and no random stream at build time: the head stops after ``env``."""
    from dprl.agents.pe.build import build_agent

    assert _head(build_agent, 4) == FACTORY[:4] and _extra_are_keyword_only(build_agent, 4)


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


@pytest.mark.parametrize("paper", [*PAPERS, "pe"])
def test_every_paper_has_its_privacy_in_the_same_module(paper):
    """``dprl.agents.<paper>.privacy.held_calibration(built, ...)`` reads the accounting of
    the noise a built agent holds, in all four papers (its numbers on built agents:
    ``test_accounting_library.py``)."""
    module = importlib.import_module(f"dprl.agents.{paper}.privacy")
    assert _head(module.held_calibration, 1) == ["built"]
    if paper != "tabular":  # a non-private agent has no calibration (PUCB: no PrivateStats)
        assert module.held_calibration(BuiltAgent(None, None), *([10] if paper == "pe" else [])) is None
