"""Every result checked against its job, every table against its inputs:
a result copied over another job's, a byte flipped with the mtime kept, an edited table,
a result of another config are each caught, and one run names every bad file."""

import json
import os
import shutil
from pathlib import Path

import pandas as pd
import pytest
import yaml

from dprl.analysis.aggregate import CorruptResultsFound, aggregate
from dprl.analysis.integrity import IntegrityError, check_job_file, check_table, verify_preset, write_sidecar
from dprl.cli import main
from dprl.config.load import load_config_file
from dprl.runner.io import atomic_write_text, frame_to_csv, write_result

CONFIG = {
    "results_dir": "results",
    "experiments": {
        "counter_error": {
            "algorithms": [{"name": "laplace_tree"}],
            "environments": [{"name": "stream", "T": 16, "counters": 10}],
            "privacy": {"epsilon": [1.0], "calibration": ["tight"]},
            "seeds": {"count": 2},
        },
        "audit": {
            "algorithms": [{"name": "laplace_tree"}],
            "environments": [{"name": "neighbouring_streams"}],
            "privacy": {"epsilon": [1.0], "calibration": ["tight"]},
            "settings": {"runs": 1000},
            "seeds": {"count": 1},
        },
    },
}


@pytest.fixture
def run(tmp_path, monkeypatch):
    """A finished run of CONFIG in tmp_path: a result per job (its spec in the header,
    a per-seed value) and an aggregated table with its checksums, per experiment."""
    monkeypatch.chdir(tmp_path)
    Path("config.yaml").write_text(yaml.safe_dump(CONFIG))
    cfg = load_config_file("config.yaml")
    for name, exp in cfg.experiments.items():
        paths = []
        for job in exp.jobs:
            path = f"{cfg.preset_dir}/{job.path}"
            write_result(path, pd.DataFrame({"t": [1, 2], "x": [job.spec.seed, job.spec.seed + 0.5]}), {"spec": job.spec.to_dict(), "labels": job.labels})
            paths.append(path)
        digests = {}
        table = f"{cfg.preset_dir}/tables/{name}.csv"
        atomic_write_text(table, frame_to_csv(aggregate(paths, digests)))
        write_sidecar(table, digests)
    assert not verify_preset(cfg).problems
    return cfg


def job_file(cfg, experiment, seed):
    return Path(cfg.preset_dir) / next(j.path for j in cfg.experiments[experiment].jobs if j.spec.seed == seed)


def test_copy_of_another_seed_is_caught_by_aggregation_and_verify(run):
    seed0, seed1 = job_file(run, "counter_error", 0), job_file(run, "counter_error", 1)
    shutil.copy(seed0, seed1)
    problems, _ = check_job_file(seed1)
    assert problems == [f"{seed1}: holds the result of {seed0.relative_to(run.preset_dir)} (spec seed 0), not of this path"]
    assert main(["verify"]) == 2
    with pytest.raises(CorruptResultsFound, match="seed1.csv: holds the result of .*seed0.csv"):
        aggregate([seed0, seed1])
    assert seed0.exists() and not seed1.exists()  # only the bad copy is moved aside


def test_byte_flip_with_mtime_kept_is_caught_by_verify(run, capsys):
    victim = job_file(run, "audit", 0)
    st = victim.stat()
    raw = bytearray(victim.read_bytes())
    raw[raw.index(b"\n") + 3] ^= 0x01
    victim.write_bytes(bytes(raw))
    os.utime(victim, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert main(["verify"]) == 2
    err = capsys.readouterr().err
    assert f"corrupt result file {victim}: checksum mismatch" in err
    assert "tables/audit.csv: 1 input(s) changed" in err


def test_edited_table_is_caught_by_verify_and_claims(run, capsys, tmp_path):
    table = Path(run.preset_dir) / "tables" / "counter_error.csv"
    df = pd.read_csv(table)
    df.loc[0, "x"] = 99.0
    table.write_text(frame_to_csv(df))
    assert check_table(table) == [f"{table}: edited after aggregation (checksum differs from counter_error.inputs.json)"]
    assert main(["verify"]) == 2
    assert main(["claims", "--out-dir", str(tmp_path / "figs"), str(table), str(Path(run.preset_dir) / "tables" / "audit.csv")]) == 2
    err = capsys.readouterr().err
    assert "edited after aggregation" in err and not table.exists()  # moved aside: the rerun re-aggregates
    assert not (tmp_path / "figs" / "claims.csv").exists()


def test_result_of_another_config_is_caught(run, capsys):
    cfg = yaml.safe_load(Path("config.yaml").read_text())
    cfg["experiments"]["counter_error"]["settings"] = {"beta": 0.1}  # same paths, other spec
    Path("other.yaml").write_text(yaml.safe_dump(cfg))
    assert main(["verify", "--config", "other.yaml"]) == 2
    err = capsys.readouterr().err
    assert err.count("spec differs from the current config's job (settings)") == 2


def test_one_run_names_every_bad_file_of_every_experiment_and_quarantine_lets_a_rerun_redo_them(run, capsys):
    seed0, seed1, audit = job_file(run, "counter_error", 0), job_file(run, "counter_error", 1), job_file(run, "audit", 0)
    shutil.copy(seed1, seed0)
    audit.write_bytes(audit.read_bytes()[:-30])
    assert main(["verify", "--quarantine"]) == 2
    err = capsys.readouterr().err
    assert "found 4 bad file(s)" in err  # 2 job files + the 2 tables built from them
    assert f"{seed0}: holds the result" in err and f"corrupt result file {audit}" in err
    tables = Path(run.preset_dir) / "tables"
    assert not seed0.exists() and not audit.exists() and seed1.exists()
    assert not list(tables.glob("*.csv")) and not list(tables.glob("*.inputs.json"))


def test_sidecar_records_the_inputs(run):
    record = json.loads((Path(run.preset_dir) / "tables" / "counter_error.inputs.json").read_text())
    assert sorted(record["inputs"]) == sorted(f"{run.preset_dir}/{j.path}" for j in run.experiments["counter_error"].jobs)
    assert main(["verify"]) == 0


def test_missing_sidecar_is_a_problem(run):
    (Path(run.preset_dir) / "tables" / "audit.inputs.json").unlink()
    with pytest.raises(IntegrityError, match="no audit.inputs.json"):
        from dprl.cli import _tables

        _tables([str(Path(run.preset_dir) / "tables" / "audit.csv")])


def test_claims_from_another_directory_moves_nothing(run, capsys, tmp_path, monkeypatch):
    """Run from elsewhere, no recorded input is found: that says nothing about the tables,
    so they are not moved aside (they were, before: a user lost a preset's tables)."""
    tables = [Path(run.preset_dir).resolve() / "tables" / f"{e}.csv" for e in ("counter_error", "audit")]
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    assert main(["claims", "--out-dir", str(tmp_path / "figs"), *map(str, tables)]) == 2
    assert "run from the workflow directory" in capsys.readouterr().err
    assert all(t.exists() for t in tables) and not list(tables[0].parent.glob("*.corrupt"))


def test_one_deleted_input_still_moves_the_table_aside(run, capsys, tmp_path):
    table = Path(run.preset_dir) / "tables" / "counter_error.csv"
    job_file(run, "counter_error", 0).unlink()
    assert main(["claims", "--out-dir", str(tmp_path / "figs"), str(table)]) == 2
    assert "input(s) changed or missing" in capsys.readouterr().err and not table.exists()


def test_a_published_table_rebuilds_the_claims_anywhere_and_an_edit_is_caught(run, capsys, tmp_path, monkeypatch):
    """`dprl publish-table` copies a checked table beside the figures with its checksum and
    a digest of the jobs it came from; `dprl claims` then runs from any directory (a fresh
    clone has the published tables, not the job files), and an edit is still caught."""
    published = tmp_path / "paper" / "tables"
    for e in ("counter_error", "audit"):
        assert main(["publish-table", "--out", str(published / f"{e}.csv"), str(Path(run.preset_dir) / "tables" / f"{e}.csv")]) == 0
    record = json.loads((published / "counter_error.inputs.json").read_text())
    assert record["inputs"] == {} and record["aggregated_from"]["jobs"] == 2
    clone = tmp_path / "clone"
    clone.mkdir()
    monkeypatch.chdir(clone)
    tables = [str(published / f"{e}.csv") for e in ("counter_error", "audit")]
    assert main(["claims", "--out-dir", str(clone / "figs"), *tables]) == 0 and (clone / "figs" / "claims.csv").exists()
    with open(tables[0], "a") as fh:
        fh.write("0,0\n")
    assert main(["claims", "--out-dir", str(clone / "figs2"), *tables]) == 2
    assert "edited after aggregation" in capsys.readouterr().err


def test_a_bad_table_is_not_published(run, tmp_path):
    table = Path(run.preset_dir) / "tables" / "counter_error.csv"
    job_file(run, "counter_error", 1).unlink()
    with pytest.raises(IntegrityError, match="publishing a table"):
        from dprl.analysis.integrity import publish_table

        publish_table(table, tmp_path / "out.csv")
    assert not (tmp_path / "out.csv").exists()
