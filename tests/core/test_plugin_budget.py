"""A plug-in's time budget (``dprl.config.estimate.plugin_slowdown``): a tabular plug-in that
declares the compiled block protocol (``Algorithm.block_protocol``) is budgeted at
``BLOCK_PLUGIN_SLOWDOWN`` times the compiled loop's estimate, a step-protocol one at its
setting's ``PLUGIN_SLOWDOWN``, in validation's estimate and in Snakemake's runtime resource;
the declaration is read without building an agent, and this repository's own block-protocol
plug-ins (``dprl_beyond``) declare what their agents implement."""

from __future__ import annotations

import sys

import numpy as np
import pytest

from dprl.config.estimate import (BLOCK_PLUGIN_SLOWDOWN, PLUGIN_SLOWDOWN, STARTUP_SECONDS, estimate, job_resources,
                                  plugin_slowdown)
from dprl.config.load import load_config
from dprl.experiments import registry
from dprl.experiments.base import Algorithm, load_ref
from plugin_site import install_dist
from test_plugins import site  # noqa: F401 - the example plug-in installed in a site directory

PLANTED = '''
from dprl.experiments.base import Algorithm, Param

BLOCK = Algorithm("planted_block", "pure", {"beta": Param(0.05)}, setting="tabular",
                  factory="dprl_beyond.private_ucb_vi:build", block_protocol=True, label="Planted block")
'''
BEYOND = ("private_ucb_vi", "ucb_vi", "dp_ucbvi", "ucbvi_bernstein")


@pytest.fixture
def planted(site):  # noqa: F811 - the fixture imported above
    """``site`` (the example plug-in, step protocol, in a site directory) with a planted
    third-party declaration of the block protocol."""
    (site / "planted_block.py").write_text(PLANTED)
    install_dist(site, "planted-block", "0.1", {"planted_block": "planted_block:BLOCK"})
    registry.refresh()
    yield site
    sys.modules.pop("planted_block", None)


def _spec(name: str):
    cfg = {"experiments": {"mine": {
        "kind": "tabular_regret", "algorithms": [{"name": name}], "environments": [{"name": "riverswim", "S": 3, "H": 3}],
        "privacy": {"epsilon": [1.0], "calibration": ["tight"]}, "settings": {"episodes": 3000, "checkpoints": 5},
        "seeds": {"count": 1}}}}
    return load_config(cfg, "default").experiments["mine"].jobs[0].spec


def _compute(name: str) -> float:
    return estimate(_spec(name)).seconds - STARTUP_SECONDS


@pytest.mark.parametrize("name", ["planted_block", *BEYOND])
def test_a_block_protocol_plugin_is_budgeted_at_the_block_factor(planted, name):
    assert registry.plugins()[name].block_protocol
    assert _compute(name) == pytest.approx(BLOCK_PLUGIN_SLOWDOWN * _compute("pucb"))
    measured = {"mem_mb": 300, "runtime": 4, "seconds": 7.5}
    assert job_resources(measured, _spec(name)) == {**measured, "runtime": int(np.ceil(4 * BLOCK_PLUGIN_SLOWDOWN))}


def test_a_step_protocol_plugin_keeps_the_step_runners_factor(planted):
    assert not registry.plugins()["hoeffding_ucbvi"].block_protocol
    assert _compute("hoeffding_ucbvi") == pytest.approx(60.0 * _compute("pucb"))
    assert PLUGIN_SLOWDOWN["tabular"] == 60.0 and BLOCK_PLUGIN_SLOWDOWN < PLUGIN_SLOWDOWN["tabular"]


def test_the_budget_reads_the_declaration_without_building_an_agent(monkeypatch):
    """A declaration whose factory cannot even be imported still gets its budget."""
    broken = "no_such_module:build"
    assert plugin_slowdown(Algorithm("b", "pure", setting="tabular", factory=broken, block_protocol=True)) == BLOCK_PLUGIN_SLOWDOWN
    assert plugin_slowdown(Algorithm("s", "pure", setting="tabular", factory=broken)) == PLUGIN_SLOWDOWN["tabular"]
    assert plugin_slowdown(Algorithm("l", "pure", setting="lq", factory=broken)) == PLUGIN_SLOWDOWN["lq"]


def test_the_block_protocol_is_declared_for_the_tabular_setting_only():
    with pytest.raises(ValueError, match="block_protocol is the tabular setting's"):
        Algorithm("x", "pure", setting="lq", factory="m:f", block_protocol=True)


@pytest.mark.parametrize("name", BEYOND)
def test_dprl_beyonds_declarations_match_their_agents(name):
    """Each of this repository's declarations of the block protocol builds an agent with a
    ``block_kernel`` (a ``TabularBlockKernel``), so the block budget it gets is the compiled path's."""
    from dprl.agents.plugin import TabularBlockKernel
    from dprl.envs.tabular import riverswim
    from dprl.privacy.setting import PrivacySetting

    alg = registry.plugins()[name]
    privacy = None if alg.privacy == "none" else PrivacySetting(epsilon=1.0, calibration="tight")
    built = load_ref(alg.factory)(alg.defaults(), privacy, riverswim(S=3, H=3), 100, np.random.default_rng(1),
                                  np.random.default_rng(2) if privacy else None)
    assert alg.block_protocol and isinstance(getattr(built.agent, "block_kernel", None), TabularBlockKernel)
