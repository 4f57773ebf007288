"""The whole `smoke` DAG, run by Snakemake in a temporary directory, produces the claims
table (every registered claim, verdicts computed) and every figure; a malformed config is
rejected before any job runs."""

import shutil
import subprocess
from pathlib import Path

import pandas as pd
import pytest
import yaml

from dprl.analysis.claims import all_claims
from dprl.analysis.figures import all_figures

ROOT = Path(__file__).resolve().parents[2]


def workflow_copy(dest: Path) -> Path:
    shutil.copy(ROOT / "Snakefile", dest / "Snakefile")
    shutil.copy(ROOT / "config.yaml", dest / "config.yaml")
    shutil.copytree(ROOT / "workflow", dest / "workflow", symlinks=False)
    return dest


def snakemake(cwd: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess:
    cmd = ["snakemake", "--cores", "2", "--config", "preset=smoke", *args]
    res = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=1500)
    if check and res.returncode != 0:
        raise AssertionError(f"{' '.join(cmd)} failed:\n{res.stdout[-3000:]}\n{res.stderr[-6000:]}")
    return res


@pytest.mark.slow
def test_smoke_dag_end_to_end(smoke_run):
    wd = smoke_run  # the report built from it: test_report.py
    figs = wd / "results" / "smoke" / "figures"
    claims = pd.read_csv(figs / "claims.csv")
    assert set(claims["claim"]) == {c.id for c in all_claims()}
    assert set(claims["verdict"]) <= {"reproduced", "not reproduced", "inconclusive"}
    failed = claims[claims["note"].fillna("").str.startswith("evaluation failed")]
    assert failed.empty, failed[["claim", "note"]].to_string()
    # every row says which privacy level it is about: private rows an ε, non-private rows none
    private = claims["calibration"].isin(["paper", "tight"])
    # (a row with no runs at all, e.g. F1 when the preset runs no paper-calibration PUCB, has no ε to name)
    no_runs = claims["note"].str.contains("not run in this preset", na=False) | claims["note"].str.match(r"no [\w-]+ .*runs$", na=False)
    assert claims.loc[private & ~no_runs, "epsilon"].notna().all(), claims.loc[private & ~no_runs & claims["epsilon"].isna()]
    assert claims.loc[private & no_runs, "measured"].isna().all()  # and it measured nothing
    ofu = (claims["claim"] == "C2") & claims["note"].str.contains(": OFU-RL on", na=False)
    assert ofu.any() and claims.loc[ofu, "epsilon"].isna().all()
    # the papers' claims, this package's findings and the later papers' claims (this repository's
    # dprl_beyond declares them through dprl.claims) are told apart
    # plug-in: V1's rows of the later algorithms smoke's tabular_audit audits (their counters)
    assert set(claims["source"]) == {"paper claim", "package finding", "beyond the four papers", "plug-in"}
    assert set(claims.loc[claims["source"] == "plug-in", "claim"]) == {"V1"}
    assert set(claims.loc[claims["source"] == "beyond the four papers", "claim"]) == {"L1", "L2", "L3"}
    assert (figs / "tables" / "tabular_regret.csv").exists() and (figs / "tables" / "tabular_regret.inputs.json").exists()
    assert (figs / "claims.md").read_text().count("| M1 |") >= 1
    assert (figs / "claims.tex").read_text().startswith("\\begin{tabular}")
    for fid in all_figures():
        for ext in ("pdf", "png"):
            f = figs / f"{fid}.{ext}"
            assert f.exists() and f.stat().st_size > 1000, f
    manifest = yaml.safe_load((figs / "manifest.json").read_text())
    assert manifest["preset"] == "smoke" and manifest["cores"] == 2 and manifest["jobs"] > 0
    # nothing left to do: a second run reuses every finished job
    res = snakemake(wd, "-n")
    assert "Nothing to be done" in res.stdout + res.stderr


def test_malformed_config_fails_before_any_job(tmp_path):
    wd = workflow_copy(tmp_path)
    cfg = yaml.safe_load((wd / "config.yaml").read_text())
    cfg["experiments"]["counter_error"]["privacy"]["epsilon"] = [0.0]
    (wd / "config.yaml").write_text(yaml.safe_dump(cfg))
    res = snakemake(wd, check=False)
    assert res.returncode != 0
    assert "config.yaml is invalid" in res.stderr and "epsilon[0]" in res.stderr
    assert not (wd / "results").exists()


def test_yaml_errors_and_other_presets_refused_by_snakemake(tmp_path):
    """A duplicated key: file, line and column, exit status 2, no traceback. A typo in
    presets.full is refused during a smoke run, its key path inside presets.full."""
    wd = workflow_copy(tmp_path)
    text = (wd / "config.yaml").read_text()
    (wd / "config.yaml").write_text(text + "preset: smoke\n")
    res = snakemake(wd, check=False)
    line = len(text.splitlines()) + 1
    assert res.returncode == 2, res.stderr[-2000:]
    assert f"config.yaml:{line}:1: duplicate key 'preset'" in res.stderr and "Traceback" not in res.stderr
    cfg = yaml.safe_load(text)
    cfg["experiments"]["audit"]["presets"] = {"full": {"settings": {"rns": 10}}}  # inline, over the preset file
    (wd / "config.yaml").write_text(yaml.safe_dump(cfg))
    res = snakemake(wd, check=False)
    assert res.returncode == 2 and "Traceback" not in res.stderr
    assert "experiments.audit.presets.full.settings.rns: unknown parameter" in res.stderr, res.stderr[-2000:]
    assert not (wd / "results").exists()


def test_dry_run_of_default_preset_lists_every_job(tmp_path):
    from dprl.config.load import load_config_file

    wd = workflow_copy(tmp_path)
    n_jobs = len(load_config_file(str(wd / "config.yaml"), "default").jobs)
    # one Snakemake job per simulation
    res = subprocess.run(["snakemake", "-n", "--cores", "8", "--quiet", "rules", "--config", "bundle_seconds=0"],
                         cwd=wd, capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr[-3000:]
    line = next(l for l in res.stdout.splitlines() if l.strip().startswith("simulate"))
    assert int(line.split()[-1]) == n_jobs
    # config.yaml's bundles: every simulation in one bundle rule, far fewer Snakemake jobs
    res = subprocess.run(["snakemake", "-n", "--cores", "8", "--quiet", "rules"], cwd=wd, capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr[-3000:]
    bundles = [l for l in res.stdout.splitlines() if l.strip().startswith("simulate_")]
    assert 0 < len(bundles) < n_jobs / 2, len(bundles)


def test_job_spec_files_are_rewritten_only_where_the_jobs_changed(tmp_path):
    """Aggregation checks each result file against ``results/<preset>/specs/<experiment>.json``,
    which the main Snakemake process writes as it parses the workflow: every experiment's
    file after a dry run, unchanged (modification time kept, so no table is re-made) by a
    second parse, and only the edited experiment's file rewritten after a config edit, with
    the edited jobs in it. The dry run lists no rule for them (a `run:` job would be a
    Snakemake subprocess per experiment)."""
    import json
    import time

    wd = workflow_copy(tmp_path)
    res = snakemake(wd, "-n", "--quiet", "rules")
    assert "job_specs" not in res.stdout
    specs = wd / "results" / "smoke" / "specs"
    before = {p.name: p.stat().st_mtime_ns for p in specs.glob("*.json")}
    assert "tabular_regret.json" in before and "pe_batch.json" in before, sorted(before)
    time.sleep(0.05)
    snakemake(wd, "-n", "--quiet", "rules")
    assert {p.name: p.stat().st_mtime_ns for p in specs.glob("*.json")} == before
    cfg = yaml.safe_load((wd / "config.yaml").read_text())
    cfg["experiments"]["pe_batch"]["presets"] = {"smoke": {"seeds": {"start": 0, "count": 3}}}  # over the preset file
    (wd / "config.yaml").write_text(yaml.safe_dump(cfg, sort_keys=False))
    snakemake(wd, "-n", "--quiet", "rules")
    after = {p.name: p.stat().st_mtime_ns for p in specs.glob("*.json")}
    assert [n for n in after if after[n] != before[n]] == ["pe_batch.json"]
    seeds = {m["spec"]["seed"] for m in json.loads((specs / "pe_batch.json").read_text()).values()}
    assert seeds == {0, 1, 2}
