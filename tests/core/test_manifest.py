"""The run manifest records the versions of the Python packages in use."""

import importlib
import json
import tomllib
from pathlib import Path

import pandas as pd
import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from dprl.analysis.manifest import build_manifest, package_versions
from dprl.analysis.reference_speed import cpu_model

ROOT = Path(__file__).resolve().parents[2]

# Packages whose version changes numbers or figures, and the module that reports it.
IN_USE = {
    "numpy": "numpy", "scipy": "scipy", "pandas": "pandas", "numba": "numba",
    "matplotlib": "matplotlib", "seaborn": "seaborn", "snakemake": "snakemake",
    "dp-accounting": "dp_accounting",
}


def test_versions_are_those_of_the_imported_modules():
    versions = package_versions()
    for dist, module in IN_USE.items():
        mod = importlib.import_module(module)
        reported = getattr(mod, "__version__", None)
        if reported is None:  # dp_accounting has no __version__: compare with its metadata
            from importlib import metadata

            reported = metadata.version(dist)
        assert versions[dist] == reported, f"{dist}: manifest {versions[dist]} != in use {reported}"


def test_every_declared_dependency_is_recorded():
    """Every runtime and extra dependency of pyproject.toml has a key (an outdated
    editable install would miss new ones: reinstall with `pip install -e . --no-deps`)."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    declared = project["dependencies"] + [r for extra in project["optional-dependencies"].values() for r in extra]
    wanted = {canonicalize_name(Requirement(r).name) for r in declared}
    missing = wanted - set(package_versions())
    assert not missing, f"manifest records no version for {sorted(missing)}"


def test_manifest_contains_package_versions(tmp_path, monkeypatch):
    jobs = tmp_path / "jobs" / "exp"
    jobs.mkdir(parents=True)
    (jobs / "seed0.csv").write_text("x\n1\n")
    runtimes = tmp_path / "job_runtimes.csv"
    pd.DataFrame({"jobs": [1], "cpu_s_total": [2.0], "wall_s_total": [3.0]}).to_csv(runtimes, index=False)
    monkeypatch.chdir(ROOT)
    man = build_manifest("smoke", str(tmp_path / "jobs"), 2, str(runtimes), "abc", reference_episodes=0)
    assert man["packages"] == package_versions()
    assert man["packages"]["numpy"] and man["python"]
    json.dumps(man)  # written as JSON by `dprl manifest`


@pytest.mark.parametrize("name", ["numpy", "snakemake"])
def test_a_missing_package_is_recorded_as_none(monkeypatch, name):
    from importlib import metadata

    real = metadata.version

    def version(dist: str) -> str:
        if dist == name:
            raise metadata.PackageNotFoundError(dist)
        return real(dist)

    monkeypatch.setattr(metadata, "version", version)
    assert package_versions()[name] is None


def test_cpu_model_is_read_from_cpuinfo(tmp_path):
    info = tmp_path / "cpuinfo"
    info.write_text("processor\t: 0\nvendor_id\t: AuthenticAMD\nmodel name\t: AMD EPYC 7B13\nflags\t: fpu\n")
    assert cpu_model(info) == "AMD EPYC 7B13"
    # no model line (or no file): the platform's answer, never an empty string
    info.write_text("processor\t: 0\n")
    assert cpu_model(info) and cpu_model(tmp_path / "absent")


def test_reference_speed_is_the_workloads_episodes_per_cpu_second(tmp_path, monkeypatch):
    """The manifest times the workload: its rate is episodes / the best CPU time, so a loop
    twice as slow halves it (a workload that skipped the loop would not change with it)."""
    import dprl.analysis.reference_speed as rs

    fast = rs.reference_speed(20_000, repeats=2)
    assert fast["episodes"] == 20_000 and fast["cpu_s"] > 0
    assert fast["episodes_per_cpu_s"] == pytest.approx(20_000 / fast["cpu_s"], rel=1e-2)
    real = rs.feed_episodes

    def twice(*args, **kwargs):  # the same episodes, fed twice: half the speed
        real(*args, **kwargs)
        args[0].source.t = 0
        return real(*args, **kwargs)

    monkeypatch.setattr(rs, "feed_episodes", twice)
    slow = rs.reference_speed(20_000, repeats=2)
    monkeypatch.setattr(rs, "feed_episodes", real)
    # the workload's rate is its best CPU time, but a neighbour (pytest -n on 2 cores) can
    # still slow one measurement: the unhurried rate is the better of two, around the slow one
    best = max(fast["episodes_per_cpu_s"], rs.reference_speed(20_000, repeats=2)["episodes_per_cpu_s"])
    assert slow["episodes_per_cpu_s"] < 0.75 * best

    jobs = tmp_path / "jobs" / "exp"
    jobs.mkdir(parents=True)
    (jobs / "seed0.csv").write_text("x\n1\n")
    runtimes = tmp_path / "job_runtimes.csv"
    pd.DataFrame({"jobs": [1]}).to_csv(runtimes, index=False)
    monkeypatch.chdir(ROOT)
    man = build_manifest("smoke", str(tmp_path / "jobs"), 2, str(runtimes), "abc", reference_episodes=5_000)
    assert man["reference_speed"]["episodes"] == 5_000 and man["cpu_model"]
    assert build_manifest("smoke", str(tmp_path / "jobs"), 2, str(runtimes), "abc", reference_episodes=0)["reference_speed"] is None
