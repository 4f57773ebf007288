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
    man = build_manifest("smoke", str(tmp_path / "jobs"), 2, str(runtimes), "abc")
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
