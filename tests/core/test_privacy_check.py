"""Private jobs whose accounted ε (under replacement) exceeds the nominal ε are refused
before any job runs, naming the key and the accounted value; every private algorithm of
the simulation experiments is accounted, and within its nominal ε."""

from __future__ import annotations

import pytest

from dprl.privacy.setting import PrivacySetting
from dprl.config.load import ConfigError
from dprl.config.privacy_check import check_privacy_accounting
from dprl.experiments.accounting import accounted_epsilon
from dprl.experiments.registry import kinds
from dprl.runner.job import JobSpec


def _tabular(l1_per_step):
    return {"experiments": {"tabular_regret": {
        "algorithms": [{"name": "pucb", "l1_per_step": l1_per_step}],
        "environments": [{"name": "garnet", "S": 3, "A": 2, "H": 2}],
        "privacy": {"epsilon": [1.0], "calibration": ["tight"]},
        "settings": {"episodes": 1000},
        "seeds": {"count": 1},
    }}}


def test_printed_pucb_level_is_refused_with_key_and_accounted_value():
    with pytest.raises(ConfigError) as err:
        check_privacy_accounting(_tabular(1))
    msg = str(err.value)
    assert "experiments.tabular_regret.privacy" in msg and "l1_per_step=1" in msg
    assert "accounted epsilon under replacement" in msg and "is 2 > 1" in msg


def test_correct_pucb_level_is_accepted():
    check_privacy_accounting(_tabular(2))


def _spec(kind, alg, env, privacy, settings):
    return JobSpec(kind, kind, alg, env, privacy, settings, 0)


SPECS = [
    _spec("tabular_regret", {"name": "pucb", "beta": 0.05, "bonus_scale": 1.0, "l1_per_step": 2},
          {"name": "garnet", "S": 3, "A": 2, "H": 2, "branching": 2}, {"epsilon": 1.0, "delta": None, "calibration": "paper"},
          {"episodes": 5000}),
    _spec("lq_regret", {"name": "private_ofu_rl", "alpha": 0.1, "n_candidates": 8},
          {"name": "random_lq", "n": 2, "d": 1, "horizon": 10, "c_a": 0.3, "c_b": 0.3, "noise_radius": 0.1},
          {"epsilon": 10.0, "delta": 1e-3, "calibration": "paper"}, {"episodes": 1000}),
    *[_spec("linmix_regret", {"name": name, "alpha": 0.05, "eta_scale": 1.0},
            {"name": "mixture", "S": 10, "A": 3, "d1": 2, "d2": 2, "H": 2, "concentration": 0.5},
            {"epsilon": eps, "delta": 1e-5, "calibration": cal}, {"episodes": 2000})
      for name in ("private_linopt_vi", "ldp_linopt_po") for eps in (1.0, 1000.0) for cal in ("paper", "tight")],
]


@pytest.mark.parametrize("spec", SPECS, ids=lambda s: f"{s.kind}-{s.algorithm['name']}-{s.epsilon}-{s.calibration}")
def test_simulation_jobs_are_within_their_nominal_epsilon(spec):
    acc = accounted_epsilon(spec)
    assert acc is not None and acc <= spec.epsilon * (1 + 1e-9)


def test_every_private_simulation_algorithm_is_accounted():
    """A new private algorithm in a simulation experiment must declare an accounting, and the
    job's own lookup must find it: a default job of every private (kind, algorithm) is
    accounted through :func:`accounted_epsilon`."""
    missing = []
    for kind in kinds().values():
        if kind.name.endswith("_audit") or kind.paper == "mechanisms":
            continue
        env = next(iter(kind.environments.values()))
        for alg in kind.algorithms.values():
            if alg.privacy == "none":
                continue
            privacy = {"epsilon": 1.0, "delta": None if alg.privacy == "pure" else 1e-5,
                       "calibration": "paper" if kind.paper == "pe" else "tight"}
            spec = _spec(kind.name, {"name": alg.name, **{k: v.default for k, v in alg.params.items()}},
                         {"name": env.name, **{k: v.default for k, v in env.params.items()}}, privacy,
                         {k: v.default for k, v in kind.settings.items()})
            if alg.accounting is None or accounted_epsilon(spec) is None:
                missing.append((kind.name, alg.name))
    assert not missing, missing


def test_a_job_that_is_not_private_at_its_nominal_epsilon_does_not_run():
    from dprl.experiments.run import execute

    spec = _spec("tabular_regret", {"name": "pucb", "beta": 0.05, "bonus_scale": 1.0, "l1_per_step": 1},
                 {"name": "garnet", "S": 3, "A": 2, "H": 2, "branching": 2},
                 {"epsilon": 1.0, "delta": None, "calibration": "tight"}, {"episodes": 50, "checkpoints": 5})
    with pytest.raises(ValueError, match="accounted epsilon under replacement 2 exceeds"):
        execute(spec)


def test_private_job_rows_record_the_accounted_epsilon():
    from dprl.experiments.run import execute

    spec = _spec("tabular_regret", {"name": "pucb", "beta": 0.05, "bonus_scale": 1.0, "l1_per_step": 2},
                 {"name": "garnet", "S": 3, "A": 2, "H": 2, "branching": 2},
                 {"epsilon": 1.0, "delta": None, "calibration": "tight"}, {"episodes": 50, "checkpoints": 5})
    df = execute(spec)
    assert df["accounted_epsilon"].to_numpy() == pytest.approx(1.0)


def test_lq_accounting_does_not_depend_on_the_system():
    """The LQ accounting skips building the system: σ_i ∝ Δ_i, so μ does not depend on γ."""
    from dprl.agents.lq.calibration import private_ofu_calibration

    for cal in ("paper", "tight"):
        eps = [private_ofu_calibration(PrivacySetting(epsilon=1.0, delta=1e-3, calibration=cal), 1000, 10, g, 2, 1, 0.1).accounted_epsilon for g in (0.05, 0.25, 1.0, 3.0)]
        assert max(eps) - min(eps) < 1e-9
