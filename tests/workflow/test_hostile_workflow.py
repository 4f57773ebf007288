"""Hostile configs through Snakemake itself: refused at start-up (exit status 2, the key
path named) before any rule runs, and nothing is written outside the run directory.

The config-level checks are tested case by case in tests/core/test_hostile_config.py;
this runs the newline variants (which a bare ``$`` in a pattern lets through) and two
shell payloads through a real `snakemake -n`, as a user would start a run.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from conftest import copy_workflow, snakemake

pytestmark = pytest.mark.slow

CASES = {
    # name: (how to make the config hostile, the key path the refusal names)
    "experiment name with newline": (lambda c: c["experiments"].__setitem__("audit\n", c["experiments"].pop("audit")), "experiments"),
    "label with newline": (lambda c: c["experiments"]["audit"]["algorithms"][0].__setitem__("label", "srv\n"), "algorithms[0].label"),
    "results_dir with newline": (lambda c: c.__setitem__("results_dir", "results\n"), "results_dir"),
    "figures_dir with newline": (lambda c: c.__setitem__("figures_dir", "paper_figures\n"), "figures_dir"),
    "label running a command": (lambda c: c["experiments"]["audit"]["environments"][0].__setitem__("label", "x;touch PWNED"), "environments[0].label"),
    "results_dir escaping the run": (lambda c: c.__setitem__("results_dir", "../PWNED"), "results_dir"),
}


@pytest.mark.parametrize("case", list(CASES))
def test_hostile_config_is_refused_by_snakemake_and_writes_nothing_outside(case, tmp_path):
    wd = copy_workflow(tmp_path / "run", experiments=("audit",))
    cfg = yaml.safe_load((wd / "config.yaml").read_text())
    make, key = CASES[case]
    make(cfg)
    (wd / "config.yaml").write_text(yaml.safe_dump(cfg, sort_keys=False))
    before = set(tmp_path.iterdir())
    run = snakemake(wd, "-n", "--cores", "1", "--config", "preset=smoke", check=False, timeout=120)
    assert run.returncode == 2, run.tail(40)
    assert "config.yaml is invalid" in run.output and key in run.output, run.tail(40)
    assert set(tmp_path.iterdir()) == before  # nothing beside the run directory
    assert not list(wd.rglob("PWNED*")) and not Path("/tmp/PWNED").exists()
    assert not (wd / "results").exists()  # refused before any output folder is made
