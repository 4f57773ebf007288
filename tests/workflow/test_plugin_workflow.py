"""The worked plug-in end to end: installed into a site directory on the PYTHONPATH, named in
config.yaml like a built-in, run by Snakemake beside UBEV and PUCB on the family hard at T,
and shown in the figure, the claims table (its own rows, apart) and the manifest."""

from __future__ import annotations

import os

import pandas as pd
import pytest

from conftest import copy_workflow, snakemake
from plugin_site import install_example

pytestmark = pytest.mark.slow


def test_a_plugin_runs_through_the_workflow_like_a_builtin(tmp_path):
    site = tmp_path / "site"
    site.mkdir()
    install_example(site)
    algs = [{"name": "ubev"}, {"name": "pucb"}, {"name": "hoeffding_ucbvi"}]
    wd = copy_workflow(tmp_path / "wf", ("tabular_hard",), {"tabular_hard": {"algorithms": algs}})
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(site), os.environ.get("PYTHONPATH")]))}
    # what the assertions read (not the report pages, manifest and runtimes the default target adds)
    targets = [f"results/smoke/{t}" for t in ("tables/tabular_hard.csv", "figures/claims.csv", "figures/tabular_hard_regret.png")]
    snakemake(wd, *targets, "--config", "preset=smoke", "--cores", "2", env=env)
    out = wd / "results" / "smoke"
    table = pd.read_csv(out / "tables" / "tabular_hard.csv")
    assert set(table["algorithm"]) == {"ubev", "pucb", "hoeffding_ucbvi"}
    mine = table[table["algorithm"] == "hoeffding_ucbvi"]
    assert (mine["accounted_epsilon"] <= mine["epsilon"] * (1 + 1e-9)).all() and mine["regret"].notna().all()
    claims = pd.read_csv(out / "figures" / "claims.csv", keep_default_na=False, na_values=[""])
    rows = claims[claims["source"] == "plug-in"]
    assert sorted(rows["claim"]) == ["V8", "V9"] and rows["note"].str.contains("Hoeffding UCB-VI").all()
    assert (out / "figures" / "tabular_hard_regret.png").stat().st_size > 0
    # without the plug-in installed, the same config is refused before any job runs
    res = snakemake(wd, "-n", "--config", "preset=smoke", "--cores", "2", check=False)
    assert res.returncode != 0 and "unknown algorithm 'hoeffding_ucbvi'" in res.output
