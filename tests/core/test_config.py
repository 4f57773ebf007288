"""config.yaml validation: malformed configs are rejected before any job, with a message
naming the key path and what is allowed; expansion is stable under added sweep values."""

import re
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


# --------------------------------------------------------------- the battery
# A config with one experiment of each family whose constraints are checked, and overrides
# in presets.smoke / presets.full: every case below breaks one thing and must be refused
# with its key path (inside presets.<preset> when the value comes from there), whichever
# preset is selected.

X = ["experiments"]


def multi():
    cfg = base()
    cfg["experiments"].update({
        "private_mab": {
            "algorithms": [{"name": "dp_se"}], "environments": [{"name": "mab", "k": 4, "best_mean": 0.6}],
            "privacy": {"epsilon": [1.0], "calibration": ["tight"]}, "settings": {"alphas": [0.05, 0.1], "runs": 10},
            "seeds": {"count": 1},
        },
        "pe_batch": {
            "algorithms": [{"name": "lsw"}, {"name": "dp_lsw"}], "environments": [{"name": "chain", "n_states": 10}],
            "privacy": {"epsilon": [1.0], "delta": [0.1], "calibration": ["paper"]},
            "settings": {"m_min": 10, "m_max": 100}, "seeds": {"count": 1},
        },
        "linmix_regret": {
            "algorithms": [{"name": "ucrl_vtr"}], "environments": [{"name": "mixture", "S": 4, "d2": 2}],
            "settings": {"episodes": 10}, "seeds": {"count": 1},
        },
        "tabular_regret": {
            "algorithms": [{"name": "ubev"}], "environments": [{"name": "garnet", "S": 4, "branching": 2}],
            "settings": {"episodes": 100}, "seeds": {"count": 1},
            "presets": {"smoke": {"settings": {"episodes": 10}}, "full": {"seeds": {"count": 2}}},
        },
    })
    return cfg


def put(path, value=None, delete=False):
    cfg = multi()
    node = cfg
    for key in path[:-1]:
        node = node.setdefault(key, {}) if isinstance(node, dict) else node[key]
    if delete:
        del node[path[-1]]
    else:
        node[path[-1]] = value
    return cfg


CE, MAB, PE, LM, TR = (X + [n] for n in ("counter_error", "private_mab", "pe_batch", "linmix_regret", "tabular_regret"))
NAN, INF = float("nan"), float("inf")
MORE_BAD = [
    # NaN and infinities, everywhere
    (put(CE + ["privacy", "epsilon"], [NAN]), r"experiments\.counter_error\.privacy\.epsilon\[0\]: must be a finite number, got nan"),
    (put(CE + ["privacy", "epsilon"], [INF]), r"counter_error\.privacy\.epsilon\[0\]: must be a finite number, got inf"),
    (put(CE + ["privacy", "delta"], [NAN]), r"counter_error\.privacy\.delta\[0\]: must be a finite"),
    (put(CE + ["privacy", "delta"], [-INF]), r"counter_error\.privacy\.delta\[0\]: must be a finite"),
    (put(["bundle_seconds"], INF), r"^bundle_seconds: must be a finite number, got inf"),
    (put(["bundle_seconds"], NAN), r"^bundle_seconds: must be a finite number, got nan"),
    (put(CE + ["settings", "beta"], NAN), r"counter_error\.settings\.beta: must be a finite"),
    (put(CE + ["environments", 0, "rate"], INF), r"counter_error\.environments\[0\]\.rate: must be a finite"),
    (put(MAB + ["environments", 0, "best_mean"], [0.5, NAN]), r"private_mab\.environments\[0\]\.best_mean\[1\]: must be a finite"),
    (put(CE + ["presets", "smoke", "privacy"], {"epsilon": [NAN], "delta": [1e-5]}), r"counter_error\.presets\.smoke\.privacy\.epsilon\[0\]: must be a finite"),
    (put(["limits", "job_hours"], INF), r"^limits\.job_hours: must be a finite"),
    # typos and bad values inside presets.smoke / presets.full, pointed at there
    (put(CE + ["presets", "smoke", "algorithms"], [{"name": "laplase_tree"}]), r"counter_error\.presets\.smoke\.algorithms\[0\]\.name: unknown algorithm 'laplase_tree'.*did you mean 'laplace_tree'"),
    (put(CE + ["presets", "full", "environments"], [{"name": "stream", "T": 0}]), r"counter_error\.presets\.full\.environments\[0\]\.T: must be >= 1"),
    (put(CE + ["presets", "full", "settings"], {"bta": 0.1}), r"counter_error\.presets\.full\.settings\.bta: unknown parameter.*did you mean 'beta'"),
    (put(CE + ["presets", "smoke", "settings"], {"beta": 0.9}), r"counter_error\.presets\.smoke\.settings\.beta: must be <= 0\.5"),
    (put(TR + ["presets", "smoke", "settings", "episodes"], 1), r"tabular_regret\.presets\.smoke\.settings\.episodes: must be >= 2"),
    (put(TR + ["presets", "full", "environments"], [{"name": "garnet", "S": 3, "branching": 4}]), r"tabular_regret\.presets\.full\.environments\[0\]\.branching: must be <= S"),
    (put(CE + ["presets", "full", "kind"], "counter_eror"), r"counter_error\.presets\.full\.kind: unknown experiment kind"),
    (put(CE + ["presets", "full", "seeds"], {"count": 0}), r"counter_error\.presets\.full\.seeds"),
    (put(CE + ["presets", "smoke", "setings"], {}), r"counter_error\.presets\.smoke: unknown key 'setings'.*did you mean 'settings'"),
    (put(MAB + ["presets", "full", "settings"], {"alphas": [0.1, -1]}), r"private_mab\.presets\.full\.settings\.alphas\[1\]: must be > 0"),
    (put(PE + ["presets", "smoke", "settings"], {"m_max": 5}), r"pe_batch\.presets\.smoke\.settings\.m_max: must be >= m_min"),
    (put(LM + ["presets", "full", "environments"], [{"name": "mixture", "S": 2, "d2": 3}]), r"linmix_regret\.presets\.full\.environments\[0\]\.S: the mixture needs S >= d2"),
    (put(LM + ["presets", "full", "environments"], [{"name": "spread_mixture", "S": 2, "d2": 3}]), r"linmix_regret\.presets\.full\.environments\[0\]\.S: the mixture needs S >= d2"),
    # a base value inherited by a preset is pointed at the base entry
    (put(TR + ["environments", 0, "branching"], 5), r"experiments\.tabular_regret\.environments\[0\]\.branching: must be <= S \(4\), got 5"),
    # list settings item by item
    (put(MAB + ["settings", "alphas"], ["x", -1]), r"private_mab\.settings\.alphas\[0\]: must be a number, got 'x'"),
    (put(MAB + ["settings", "alphas"], [0.1, -1]), r"private_mab\.settings\.alphas\[1\]: must be > 0"),
    (put(MAB + ["settings", "alphas"], []), r"private_mab\.settings\.alphas: must be a non-empty list"),
    (put(MAB + ["settings", "alphas"], 0.1), r"private_mab\.settings\.alphas: must be a list"),
    (put(MAB + ["settings", "alphas"], [0.1, 0.1]), r"private_mab\.settings\.alphas\[1\]: 0\.1 is repeated"),
    (put(MAB + ["settings", "alphas"], [0.1, True]), r"private_mab\.settings\.alphas\[1\]: must be a number"),
    (put(MAB + ["settings", "alphas"], [0.1, 2.0]), r"private_mab\.settings\.alphas\[1\]: must be <= 1"),
    (put(MAB + ["settings", "alphas"], [0.1, 0.7]), r"private_mab\.settings\.alphas\[1\]: gap 0\.7 exceeds the best arm's mean"),
    # cross-parameter rules
    (put(PE + ["settings", "m_max"], 5), r"pe_batch\.settings\.m_max: must be >= m_min \(10\)"),
    (put(LM + ["environments", 0, "S"], 1), r"linmix_regret\.environments\[0\]\.S: the mixture needs S >= d2"),
    (put(LM + ["environments", 0, "S"], [4, 1]), r"linmix_regret\.environments\[0\]\.S\[1\]: the mixture needs S >= d2"),
    (put(LM + ["environments"], [{"name": "tabular_as_linear", "S": 20, "A": 11}]), r"linmix_regret\.environments\[0\]\.S: tabular_as_linear has d1 = S²·A = 4400"),
    (put(LM + ["environments"], [{"name": "hard_linear", "d": 8, "H": 40, "K_ref": 1}]), r"linmix_regret\.environments\[0\]\.K_ref: hard_linear needs \(d-1\)"),
    (put(X + ["tabular_hard"], {"algorithms": [{"name": "ubev"}], "seeds": {"count": 1},
                                "environments": [{"name": "lowerbound_horizon", "n": 2, "m": 1, "T": [100, 7]}]}),
     r"tabular_hard\.environments\[0\]\.T\[1\]: the gap α' = gap_scale·sqrt\(n·m/T\) = 0\.5345 exceeds 1/2 .*needs T >= 4·gap_scale²·n·m = 8, got T = 7"),
    (put(X + ["tabular_hard"], {"algorithms": [{"name": "ubev"}], "seeds": {"count": 1},
                                "environments": [{"name": "lowerbound_horizon", "T": 1000, "gap_scale": 0.0}]}),
     r"tabular_hard\.environments\[0\]\.gap_scale: must be > 0"),
    (put(X + ["tabular_pac"], {"algorithms": [{"name": "ubev"}], "seeds": {"count": 1}, "settings": {"episodes": 10},
                               "environments": [{"name": "lowerbound", "gap": 0.6}]}),
     r"tabular_pac\.environments\[0\]\.gap: must be <= 0\.5"),
    (put(PE + ["privacy", "calibration"], ["paper", "printed"]),
     r"pe_batch\.privacy\.calibration\[1\]: 'printed' is not one of \['paper', 'tight'\]"),
    (put(X + ["pe_lambda"], {"algorithms": [{"name": "dp_lsl"}], "environments": [{"name": "chain"}], "privacy": {"epsilon": [1.0], "delta": [0.1], "calibration": ["paper"]},
                             "settings": {"p_min": 1.0, "p_max": 0.5}, "seeds": {"count": 1}}), r"pe_lambda\.settings\.p_max: must be >= p_min"),
    (put(X + ["pe_lambda"], {"algorithms": [{"name": "dp_lsl"}], "environments": [{"name": "chain"}], "privacy": {"epsilon": [1.0], "delta": [0.1], "calibration": ["paper"]},
                             "settings": {"log10_c_min": 3.0, "log10_c_max": 1.0}, "seeds": {"count": 1}}), r"pe_lambda\.settings\.log10_c_max: must be >= log10_c_min"),
    # sizes that cannot fit: refused with the estimate, not a MemoryError
    (put(TR + ["environments", 0, "S"], 1000000), r"tabular_regret\.environments\[0\]: job ubev/garnet_S1000000.* memory [0-9.e+]+ GiB > limits\.job_memory_gb = 16"),
    (put(["limits", "job_memory_gb"], 0.1), r"experiments\.counter_error: job laplace_tree/stream_T64 is estimated to need memory 0\.24\d* GiB > limits\.job_memory_gb = 0\.1"),
    (put(["limits"], {"job_hours": 0}), r"limits\.job_hours: 0 is less than or equal to the minimum of 0"),
    (put(["limits"], {"max_job": 10}), r"limits: unknown key 'max_job'.*did you mean 'max_jobs'"),
    (put(["limits", "max_jobs"], 2.5), r"limits\.max_jobs: 2\.5 is not of type 'integer'"),
    # structure
    (put(CE + ["environments"], {"name": "stream"}), r"counter_error\.environments: .* is not of type 'array'"),
    (put(CE + ["algorithms", 0], "laplace_tree"), r"counter_error\.algorithms\[0\]: 'laplace_tree' is not of type 'object'"),
    (put(CE + ["seeds"], "four"), r"counter_error\.seeds"),
    (put(CE + ["enabled"], "yes"), r"counter_error\.enabled: 'yes' is not of type 'boolean'"),
    (put(CE + ["privacy", "epsilon"], 1.0), r"counter_error\.privacy"),
    (put(CE + ["privacy", "epsilon"], ["1.0"]), r"counter_error\.privacy"),
    (put(MAB + ["environments", 0, "k"], 1), r"private_mab\.environments\[0\]\.k: must be >= 2"),
    (put(MAB + ["algorithms", 0, "beta"], 0.3), r"private_mab\.algorithms\[0\]\.beta: must be <= 0\.2499"),
    (put(PE + ["settings", "features"], "tiles"), r"pe_batch\.settings\.features: 'tiles' is not allowed"),
    (put(PE + ["environments", 0, "n_states"], [10, 2]), r"pe_batch\.environments\[0\]\.n_states\[1\]: must be >= 3"),
    (put(CE + ["settings", "beta"], [0.05, 0.1]), r"counter_error\.settings: settings cannot be swept"),
    (put(CE + ["environments", 0, "T"], []), r"counter_error\.environments\[0\]\.T: an empty sweep"),
    (put(CE + ["environments"], [{"name": "stream", "label": "s"}, {"name": "stream", "T": 3, "label": "s"}]), r"counter_error\.environments\[1\]: two environments share the label 's'"),
    (put(["figures_dir"], "a b"), r"figures_dir: 'a b' is not a safe path component"),
    (put(["results_dir"], 3), r"results_dir: 3 is not of type 'string'"),
    (put(["experiments"], {}), r"experiments: \{\} should be non-empty"),
]
YAML_BAD = [
    # (file text, message: file:line:column and what)
    ("experiments:\n  a: {kind: audit}\n  a: {kind: audit}\n", r"config\.yaml:3:3: duplicate key 'a' \(first given at line 2\)"),
    ("preset: smoke\npreset: default\nexperiments: {}\n", r"config\.yaml:2:1: duplicate key 'preset'"),
    ("experiments: [1, 2\n", r"config\.yaml:2:1: expected ',' or '\]'"),
    ("experiments:\n  a: 1\n b: 2\n", r"config\.yaml:3:2: expected <block end>"),
    ("preset: !!python/object/apply:os.system [ls]\n", r"config\.yaml:1:9: tag 'tag:yaml\.org,2002:python/object/apply:os\.system' is not allowed"),
    ("preset: !custom smoke\n", r"config\.yaml:1:9: tag '!custom' is not allowed"),
    ("results_dir: 2026-01-01\n", r"config\.yaml:1:14: tag 'tag:yaml\.org,2002:timestamp' is not allowed .*quote it"),
    ("\tpreset: smoke\n", r"config\.yaml:1:1: found character '\\t'"),
    ("preset: *nowhere\n", r"config\.yaml:1:9: found undefined alias 'nowhere'"),
    ("experiments: !!set {a, b}\n", r"config\.yaml:1:14: tag 'tag:yaml\.org,2002:set' is not allowed"),
]


@pytest.mark.parametrize("cfg,pattern", MORE_BAD, ids=[f"more{i}" for i in range(len(MORE_BAD))])
@pytest.mark.parametrize("preset", ["smoke", "default"])
def test_every_preset_is_validated_and_the_key_path_named(cfg, pattern, preset):
    """Refused whichever preset is selected (one pass validates all three)."""
    with pytest.raises(ConfigError, match=pattern):
        load_config(cfg, preset)


# Over the limits in some presets only (smoke sizes its own): refused in those, a warning
# naming the preset and the experiment when another preset is run.
OTHER_PRESET_LIMITS = [
    (put(TR + ["settings", "episodes"], 10**12), r"tabular_regret\.settings: job .* time [0-9.e+]+ h > limits\.job_hours = 24 .*T = 1e\+12 episodes",
     ("default", "full")),
    (put(CE + ["seeds"], {"count": 10**9}), r"counter_error\.seeds: the experiment expands to 4e\+09 jobs \(4 algorithm and privacy settings × 1 environments × 1e\+09 seeds\), above limits\.max_jobs = 100000",
     ("default", "full")),
    (put(CE + ["presets", "full", "seeds"], {"count": 10**9}), r"counter_error\.presets\.full\.seeds: the experiment expands to", ("full",)),
]


@pytest.mark.parametrize("cfg,pattern,refused_in", OTHER_PRESET_LIMITS, ids=[f"limits{i}" for i in range(len(OTHER_PRESET_LIMITS))])
def test_a_limit_of_another_preset_is_a_warning_and_of_the_one_run_an_error(cfg, pattern, refused_in, caplog, monkeypatch):
    from dprl.config import load

    for preset in ("smoke", "default", "full"):
        if preset in refused_in:
            with pytest.raises(ConfigError, match=pattern):
                load_config(cfg, preset)
            continue
        caplog.clear()
        monkeypatch.setattr(load, "_WARNED", set())  # logged once per process
        with caplog.at_level("WARNING", logger="dprl.config.load"):
            assert load_config(cfg, preset).experiments
        assert [r for r in caplog.records if re.search(pattern, r.getMessage()) and f"preset {refused_in[-1]!r}" in r.getMessage()]


@pytest.mark.parametrize("text,pattern", YAML_BAD, ids=[f"yaml{i}" for i in range(len(YAML_BAD))])
def test_yaml_errors_name_file_line_and_column(tmp_path, text, pattern):
    path = tmp_path / "config.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError, match=pattern):
        load_config_file(str(path))


def test_multi_base_is_valid_in_every_preset():
    for preset in ("smoke", "default", "full"):
        assert load_config(multi(), preset).experiments


def test_at_least_sixty_distinct_malformed_configs():
    dicts = {yaml.safe_dump(c, sort_keys=True) for c, _ in BAD + MORE_BAD}
    texts = {t for t, _ in YAML_BAD}
    assert len(dicts) == len(BAD) + len(MORE_BAD), "two cases are the same config"
    assert len(dicts) + len(texts) >= 60


def test_every_problem_of_every_preset_is_reported_at_once():
    cfg = multi()
    cfg["experiments"]["counter_error"]["presets"]["full"] = {"settings": {"bta": 0.1}}
    cfg["experiments"]["private_mab"]["settings"]["alphas"] = []
    cfg["experiments"]["pe_batch"]["presets"] = {"smoke": {"settings": {"m_max": 5}}}
    with pytest.raises(ConfigError) as err:
        load_config(cfg, "default")
    assert len(err.value.problems) == 3, err.value.problems
    assert str(err.value).startswith("3 problems:")


def test_seed_count_is_checked_before_expansion():
    """A billion seeds are refused from their count (no list of a billion jobs is built)."""
    import tracemalloc

    tracemalloc.start()
    with pytest.raises(ConfigError, match="max_jobs"):
        load_config(put(CE + ["seeds"], {"count": 10**9}))
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 50 * 2**20


def test_limits_can_be_raised():
    cfg = put(TR + ["settings", "episodes"], 10**12)  # ~250 h at the compiled loop's measured rate
    with pytest.raises(ConfigError, match="job_hours"):
        load_config(cfg)
    cfg["limits"] = {"job_hours": 10**6}
    assert load_config(cfg).jobs


def test_cli_validate_reports_yaml_errors_with_exit_code_2_and_no_traceback(tmp_path, capsys):
    from dprl.cli import main

    bad = tmp_path / "config.yaml"
    bad.write_text("experiments:\n  a: {kind: audit}\n  a: {kind: audit}\n")
    assert main(["validate", "--config", str(bad)]) == 2
    err = capsys.readouterr().err
    assert f"{bad}:3:3: duplicate key 'a'" in err and "Traceback" not in err
    good = tmp_path / "good.yaml"
    good.write_text(yaml.safe_dump(put(["bundle_seconds"], INF)))
    assert main(["validate", "--config", str(good)]) == 2
    assert "bundle_seconds: must be a finite number" in capsys.readouterr().err


def test_schema_defaults_fill_after_a_preset_merges_and_never_override_the_base():
    """A preset's partial override keeps what the experiment gives (dicts merge), and the
    schema's defaults (privacy calibration, seeds start) fill what neither gives."""
    cfg = base()
    exp = cfg["experiments"]["counter_error"]
    exp["seeds"] = {"start": 5, "count": 2}
    exp["privacy"]["calibration"] = ["tight"]
    exp["presets"] = {"smoke": {"seeds": {"count": 1}, "privacy": {"epsilon": [2.0]}},
                      "full": {"privacy": [{"epsilon": [3.0], "delta": [1e-5]}], "seeds": [7]}}
    jobs = {p: load_config(cfg, p).experiments["counter_error"].jobs for p in ("default", "smoke", "full")}
    assert {(j.spec.seed, j.spec.privacy.calibration) for j in jobs["default"]} == {(5, "tight"), (6, "tight")}
    assert {(j.spec.seed, j.spec.privacy.epsilon, j.spec.privacy.calibration) for j in jobs["smoke"]} == {(5, 2.0, "tight")}
    assert {(j.spec.seed, j.spec.privacy.calibration) for j in jobs["full"]} == {(7, "paper"), (7, "tight")}
    del exp["seeds"]["start"]
    assert {j.spec.seed for j in load_config(cfg, "default").experiments["counter_error"].jobs} == {0, 1}
