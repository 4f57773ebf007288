"""The smoke and full presets live in files of their own (``workflow/presets/``, named by
``config.yaml``'s ``preset_files``): the jobs are exactly those the same overrides give
inline, an inline ``presets.<preset>`` is merged over a file's entry, and every problem in a
file names the file and its key path before any job runs."""

from __future__ import annotations

import copy
import shutil
from pathlib import Path

import pytest
import yaml

from dprl.config.load import ConfigError, load_config, load_config_file, read_config

ROOT = Path(__file__).resolve().parents[2]


def _jobs(cfg) -> dict[str, str]:
    return {path: repr(job.spec) for path, job in cfg.jobs.items()}


@pytest.fixture
def repo(tmp_path) -> Path:
    """A copy of config.yaml and its preset files."""
    shutil.copy(ROOT / "config.yaml", tmp_path / "config.yaml")
    shutil.copytree(ROOT / "workflow" / "presets", tmp_path / "workflow" / "presets")
    return tmp_path


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, old
    path.write_text(text.replace(old, new, 1))


@pytest.mark.parametrize("preset", ["smoke", "full"])
def test_a_preset_file_gives_the_jobs_its_overrides_give_inline(preset):
    raw = read_config(str(ROOT / "config.yaml"))
    inline = copy.deepcopy({k: v for k, v in raw.items() if k != "preset_files"})
    for name, over in yaml.safe_load((ROOT / raw["preset_files"][preset]).read_text())["experiments"].items():
        inline["experiments"][name]["presets"] = {preset: over}
    from_files, written_inline = load_config(raw, preset), load_config(inline, preset)
    assert len(from_files.jobs) > 100 and _jobs(from_files) == _jobs(written_inline)
    # and a preset without its file runs every experiment at its default size
    assert _jobs(load_config({k: v for k, v in raw.items() if k != "preset_files"}, preset)) != _jobs(from_files)


def test_an_inline_preset_is_merged_over_the_files_entry():
    raw = read_config(str(ROOT / "config.yaml"))
    base = load_config(raw, "smoke").experiments["audit"].jobs
    raw["experiments"]["audit"]["presets"] = {"smoke": {"seeds": {"count": 3}}}
    jobs = load_config(raw, "smoke").experiments["audit"].jobs
    assert len(jobs) == 3 * len(base)  # the inline seeds win ...
    assert {j.spec.settings["runs"] for j in jobs} == {j.spec.settings["runs"] for j in base} == {20000}  # ... the file's runs stay
    raw["experiments"]["audit"]["presets"]["smoke"]["settings"] = {"rns": 1}
    with pytest.raises(ConfigError, match=r"^experiments\.audit\.presets\.smoke\.settings\.rns: unknown parameter"):
        load_config(raw, "smoke")  # a problem in config.yaml's own override points there


BROKEN = [
    ("smoke.yaml", "settings: {runs: 20000}", "settings: {rns: 20000}",
     r"workflow/presets/smoke\.yaml: experiments\.audit\.settings\.rns: unknown parameter .*did you mean 'runs'"),
    ("full.yaml", "  audit:", "  audt:",
     r"workflow/presets/full\.yaml: experiments\.audt: config\.yaml has no experiment 'audt'; did you mean 'audit'"),
    ("full.yaml", "{name: lowerbound, n: 2, m: 1, H: 2, gap: [0.2", "{name: lowerbund, n: 2, m: 1, H: 2, gap: [0.2",
     r"workflow/presets/full\.yaml: experiments\.tabular_pac\.environments\[0\]\.name: unknown environment 'lowerbund'"),
    ("smoke.yaml", "seeds: {count: 2}", "seeds: {count: 0}",
     r"workflow/presets/smoke\.yaml: experiments\.counter_error\.seeds\.count: 0 is less than the minimum of 1"),
    ("smoke.yaml", "counters: 200}", "counters: 200, counters: 3}",
     r"preset_files\.smoke: .*workflow/presets/smoke\.yaml:\d+:\d+: duplicate key 'counters'"),
    ("smoke.yaml", "settings: {runs: 20000}", "settings: {runs: .nan}",
     r"workflow/presets/smoke\.yaml: experiments\.audit\.settings\.runs: must be a finite number"),
]


@pytest.mark.parametrize("name, old, new, message", BROKEN, ids=[b[3].split(": ")[1][:40] for b in BROKEN])
def test_a_problem_in_a_preset_file_names_the_file_and_the_key(repo, name, old, new, message):
    load_config_file(str(repo / "config.yaml"), "smoke")  # the copy is valid as it is
    _edit(repo / "workflow" / "presets" / name, old, new)
    with pytest.raises(ConfigError, match=message):
        load_config_file(str(repo / "config.yaml"), "smoke")


def test_a_missing_preset_file_is_named(repo):
    (repo / "workflow" / "presets" / "full.yaml").unlink()
    with pytest.raises(ConfigError, match=r"preset_files\.full: .*workflow/presets/full\.yaml: no such file"):
        load_config_file(str(repo / "config.yaml"), "default")


def test_preset_files_are_found_from_any_directory(repo, tmp_path_factory, monkeypatch):
    monkeypatch.chdir(tmp_path_factory.mktemp("elsewhere"))
    assert _jobs(load_config_file(str(repo / "config.yaml"), "smoke")) == _jobs(load_config_file(str(ROOT / "config.yaml"), "smoke"))


def test_a_config_cut_down_to_some_experiments_keeps_its_preset_files(repo, caplog):
    """The files' entries of experiments config.yaml no longer has are ignored, with a
    warning; a misspelt name of one it has (and the file does not name) stays refused."""
    raw = yaml.safe_load((repo / "config.yaml").read_text())
    raw["experiments"] = {k: v for k, v in raw["experiments"].items() if k.startswith("lq_")}
    (repo / "config.yaml").write_text(yaml.safe_dump(raw, sort_keys=False))
    with caplog.at_level("WARNING", logger="dprl.config.preset_files"):
        cfg = load_config_file(str(repo / "config.yaml"), "smoke")
    assert set(cfg.experiments) <= set(raw["experiments"]) and {j.spec.settings["episodes"] for j in cfg.experiments["lq_regret"].jobs} == {300}
    assert any("experiments.tabular_regret: config.yaml has no experiment 'tabular_regret'; its entry is ignored" in r.getMessage()
               for r in caplog.records)
    _edit(repo / "workflow" / "presets" / "smoke.yaml", "  lq_regret:", "  lq_regert:")
    with pytest.raises(ConfigError, match=r"smoke\.yaml: experiments\.lq_regert: .*did you mean 'lq_regret'"):
        load_config_file(str(repo / "config.yaml"), "smoke")
