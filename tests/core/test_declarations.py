"""A kind is declared in one place: a kind added in a module of its own (as a new paper's
``experiments/<paper>/spec.py`` would be) is seen by validation, the work estimate, the
accounting check and the figures' names, without editing any of them."""

from __future__ import annotations

import sys
import textwrap

import pytest

from dprl.config.estimate import STARTUP_SECONDS, estimate
from dprl.config.load import ConfigError, load_config
from dprl.experiments import registry
from dprl.experiments.accounting import accounted_epsilon, check_accounting

DECLARATION = '''
from dprl.experiments.base import Algorithm, Environment, ExperimentKind, Param, algorithms, environments

def account(spec):
    return 2.0 * spec.epsilon if spec.algorithm["leaky"] else spec.epsilon

def work(spec):
    return 1000.0, float(spec.settings["episodes"] * spec.environment["S"]), "episodes x S"

def env_rule(p):
    return [("S", f"must be even, got {p['S']}")] if p["S"] % 2 else []

def settings_rule(p):
    return [("episodes", "must be a multiple of 10")] if p["episodes"] % 10 else []

def job_rule(environment, settings, privacy):
    return [(("settings", "gaps", i), "gap exceeds S") for i, g in enumerate(settings["gaps"]) if g > environment["S"]]

KINDS = [ExperimentKind(
    "toy_kind", "toy", "toy_declarations:run",
    algorithms(Algorithm("toy_dp", "pure", {"leaky": Param(False)}, label="Toy-DP", colour="#123456",
                         accounting="toy_declarations:account")),
    environments(Environment("toy_env", {"S": Param(4, minimum=2)}, label="toy world", rule="toy_declarations:env_rule")),
    {"episodes": Param(100, minimum=1), "gaps": Param([1.0])},
    work="toy_declarations:work", seconds_per_work=1e-3,
    settings_rule="toy_declarations:settings_rule", job_rule="toy_declarations:job_rule",
    item_params={"gaps": Param(1.0, exclusive_minimum=0.0)},
)]
'''


@pytest.fixture
def toy_kind(tmp_path, monkeypatch):
    (tmp_path / "toy_declarations.py").write_text(textwrap.dedent(DECLARATION))
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(registry, "DECLARATION_MODULES", (*registry.DECLARATION_MODULES, "toy_declarations"))
    registry.refresh()
    yield
    registry.refresh()
    sys.modules.pop("toy_declarations", None)


def _config(**over):
    body = {"algorithms": [{"name": "toy_dp"}], "environments": [{"name": "toy_env"}],
            "privacy": {"epsilon": [1.0], "calibration": ["tight"]}, "settings": {"episodes": 100}, "seeds": {"count": 1}}
    for key, value in over.items():
        body[key] = value
    return {"experiments": {"toy": {"kind": "toy_kind", **body}}}


def test_validation_sees_the_new_kinds_rules_and_item_ranges(toy_kind):
    cfg = load_config(_config(), "default")
    assert len(cfg.experiments["toy"].jobs) == 1
    with pytest.raises(ConfigError, match=r"toy\.environments\[0\]\.S: must be even, got 3"):
        load_config(_config(environments=[{"name": "toy_env", "S": 3}]), "default")
    with pytest.raises(ConfigError, match=r"toy\.settings\.episodes: must be a multiple of 10"):
        load_config(_config(settings={"episodes": 105}), "default")
    with pytest.raises(ConfigError, match=r"toy\.settings\.gaps\[1\]: gap exceeds S"):
        load_config(_config(settings={"episodes": 100, "gaps": [1.0, 9.0]}), "default")
    with pytest.raises(ConfigError, match=r"toy\.settings\.gaps\[0\]"):
        load_config(_config(settings={"episodes": 100, "gaps": [-1.0]}), "default")
    with pytest.raises(ConfigError, match="did you mean 'toy_dp'"):
        load_config(_config(algorithms=[{"name": "toy_db"}]), "default")


def test_estimate_and_accounting_read_the_declaration(toy_kind):
    spec = load_config(_config(settings={"episodes": 1000}), "default").experiments["toy"].jobs[0].spec
    est = estimate(spec)
    assert est.seconds == pytest.approx(STARTUP_SECONDS + 1e-3 * 1000 * 4) and est.model == "episodes x S"
    assert accounted_epsilon(spec) == 1.0 and check_accounting([("default", "toy", spec)]) == []
    leaky = load_config(_config(algorithms=[{"name": "toy_dp", "leaky": True}]), "default").experiments["toy"].jobs[0].spec
    problems = check_accounting([("default", "toy", leaky)])
    assert len(problems) == 1 and "accounted epsilon under replacement (the paper's neighbouring relation) is 2 > 1" in problems[0]


def test_figures_read_its_display_names_and_colour(toy_kind):
    from dprl.analysis import plotting as P

    assert P.algorithm_name("toy_dp") == "Toy-DP" and P.algorithm_color("toy_dp") == "#123456"
    assert P.environment_name("toy_env_S6") == "toy world (S=6)"
    assert P.series_label("toy_dp", 1.0, "tight") == "Toy-DP ε=1 (tight)"
