"""config.yaml validation: malformed configs are rejected before any job, with a message
naming the key path and what is allowed; expansion is stable under added sweep values."""

from pathlib import Path

import pytest
import yaml

from dprl.config.load import ConfigError, load_config, load_config_file


ROOT = Path(__file__).resolve().parents[2]


def base():
    return {
        "experiments": {
            "counter_error": {
                "algorithms": [{"name": "laplace_tree"}, {"name": "gaussian_tree_vector"}],
                "environments": [{"name": "stream", "T": 64}],
                "privacy": {"epsilon": [1.0], "delta": [1e-5], "calibration": ["paper", "tight"]},
                "settings": {"beta": 0.05},
                "seeds": {"count": 2},
                "presets": {"smoke": {"seeds": {"count": 1}}},
            }
        }
    }


def mutate(path, value=None, delete=False):
    cfg = base()
    node = cfg
    for key in path[:-1]:
        node = node[key]
    if delete:
        del node[path[-1]]
    else:
        node[path[-1]] = value
    return cfg


E = ["experiments", "counter_error"]
BAD = [
    # (config, regex the message must match)
    (mutate(E + ["algorithms", 0, "name"], "laplase_tree"), r"algorithms\[0\]\.name: unknown algorithm 'laplase_tree'.*did you mean 'laplace_tree'"),
    (mutate(E + ["environments", 0, "name"], "strem"), r"environments\[0\]\.name: unknown environment 'strem'.*did you mean 'stream'"),
    (mutate(E + ["kind"], "counter_eror"), r"experiments\.counter_error\.kind: unknown experiment kind 'counter_eror'.*did you mean 'counter_error'"),
    (mutate(E + ["privacy", "epsilon"], [0.0]), r"privacy.*epsilon\[0\].*0\.0.*(less than or equal|minimum)"),
    (mutate(E + ["privacy", "epsilon"], [-1.0]), r"epsilon\[0\]"),
    (mutate(E + ["privacy", "delta"], [1.0]), r"delta\[0\].*1\.0"),
    (mutate(E + ["privacy", "delta"], [0]), r"delta\[0\]"),
    (mutate(E + ["seeds"], {"count": 2.5}), r"seeds"),
    (mutate(E + ["seeds"], [-1, 2]), r"seeds"),
    (mutate(E + ["seeds"], {"count": 0}), r"seeds"),
    (mutate(E + ["environments", 0, "T"], 0), r"environments\[0\]\.T: must be >= 1, got 0"),
    (mutate(E + ["environments", 0, "T"], -5), r"environments\[0\]\.T: must be >= 1"),
    (mutate(E + ["environments", 0, "T"], 10.5), r"environments\[0\]\.T: must be an integer"),
    (mutate(E + ["setings"], {}), r"unknown key 'setings'.*did you mean 'settings'"),
    (mutate(["experimnts"], {}), r"unknown key 'experimnts'.*did you mean 'experiments'"),
    (mutate(E + ["environments", 0, "dimm"], 3), r"environments\[0\]\.dimm: unknown parameter.*did you mean 'dim'"),
    (mutate(E + ["settings", "beta"], 0.9), r"settings\.beta: must be <= 0\.5"),
    (mutate(E + ["settings", "bta"], 0.1), r"settings\.bta: unknown parameter.*did you mean 'beta'"),
    (mutate(E + ["privacy", "calibration"], ["tigth"]), r"calibration\[0\].*tigth"),
    (mutate(E + ["privacy"], None, delete=True), r"privacy.*is private"),
    (mutate(E + ["privacy", "delta"], None, delete=True), r"give 'delta'"),
    (mutate(E + ["presets", "smok"], {}), r"unknown key 'smok'.*did you mean 'smoke'"),
    (mutate(E + ["algorithms"], []), r"algorithms"),
    (mutate(E + ["environments", 0, "name"], "../etc"), r"safe path component"),
    (mutate(["experiments", "bad/name"], base()["experiments"]["counter_error"]), r"safe path component"),
    (mutate(["preset"], "smok"), r"preset.*smok"),
    (mutate(E + ["environments", 0, "label"], "a b"), r"label.*safe path component"),
    (mutate(E + ["environments", 0, "rate"], 1.5), r"rate: must be <= 1"),
]


@pytest.mark.parametrize("cfg,pattern", BAD, ids=[f"bad{i}" for i in range(len(BAD))])
def test_malformed_configs_are_rejected_with_a_clear_message(cfg, pattern):
    with pytest.raises(ConfigError, match=pattern):
        load_config(cfg)


def test_at_least_fifteen_distinct_malformed_configs():
    assert len({yaml.safe_dump(c) for c, _ in BAD}) >= 15


def test_base_is_valid_and_expands():
    cfg = load_config(base())
    jobs = cfg.experiments["counter_error"].jobs
    # laplace (pure): 1 eps × 2 calibrations; gaussian (approx): 1 × 1 δ × 2 → 4 settings × 2 seeds
    assert len(jobs) == 8
    assert len(load_config(base(), "smoke").experiments["counter_error"].jobs) == 4


def test_adding_a_sweep_value_only_adds_jobs():
    before = load_config(base()).jobs
    cfg = base()
    cfg["experiments"]["counter_error"]["privacy"]["epsilon"].append(2.0)
    cfg["experiments"]["counter_error"]["environments"][0]["T"] = [64, 128]
    cfg["experiments"]["counter_error"]["seeds"] = {"count": 3}
    after = load_config(cfg).jobs
    assert set(before) < set(after)
    for path, job in before.items():
        assert after[path].spec == job.spec


def test_sweep_expands_a_scalar_parameter_and_labels_are_distinct():
    cfg = base()
    cfg["experiments"]["counter_error"]["environments"] = [{"name": "stream", "T": [32, 64], "dim": 2}]
    jobs = load_config(cfg).jobs
    envs = {j.labels["env_label"] for j in jobs.values()}
    assert envs == {"stream_T32_dim2", "stream_T64_dim2"}


def test_defaults_are_filled():
    cfg = load_config(base())
    assert cfg.preset == "default" and cfg.results_dir == "results" and cfg.figures_dir == "paper_figures"
    spec = cfg.experiments["counter_error"].jobs[0].spec
    assert spec.settings["checkpoints"] == 40 and spec.environment["counters"] == 2000


def test_repository_config_is_valid_in_every_preset():
    for preset in ("smoke", "default", "full"):
        cfg = load_config_file(str(ROOT / "config.yaml"), preset)
        assert cfg.jobs, preset
