"""The code version of an experiment changes exactly when code it runs changes."""

import shutil

import pytest

import dprl
from dprl.experiments.registry import kinds
from dprl.runner import code_version as cv


@pytest.fixture
def package_copy(tmp_path, monkeypatch):
    root = tmp_path / "dprl"
    shutil.copytree(cv.ROOT, root, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(cv, "ROOT", root)
    for cached in (cv._parsed, cv.module_syntax, cv.module_imports, cv.code_version):
        cached.cache_clear()
    yield root
    for cached in (cv._parsed, cv.module_syntax, cv.module_imports, cv.code_version):
        cached.cache_clear()


def versions():
    for cached in (cv._parsed, cv.module_syntax, cv.module_imports, cv.code_version):
        cached.cache_clear()
    return {name: cv.code_version(k.run) for name, k in kinds().items()}


def test_closure_follows_imports_transitively():
    closure = cv.module_closure("dprl.experiments.tabular.jobs")
    assert {"dprl.agents.tabular.private_bai", "dprl.envs.bandit", "dprl.privacy.tree_counter", "dprl.runner.job", "dprl.experiments"} <= set(closure)
    assert "dprl.agents.lq.ofu" not in closure and "dprl.cli" not in closure


def test_editing_code_changes_exactly_the_experiments_that_run_it(package_copy):
    before = versions()
    bai = package_copy / "agents" / "tabular" / "private_bai.py"
    bai.write_text(bai.read_text() + "\n# a comment\n")
    doc = package_copy / "privacy" / "tree_counter.py"
    doc.write_text(doc.read_text().replace('"""', '"""Edited docstring. ', 1))
    assert versions() == before  # comments and docstrings do not rerun anything
    bai.write_text(bai.read_text() + "\n_EDITED = True\n")
    after = versions()
    changed = {n for n in before if before[n] != after[n]}
    assert changed == {n for n, k in kinds().items() if k.run.startswith("dprl.experiments.tabular.")}


def test_versions_cache_is_reused_until_a_file_changes(package_copy, tmp_path):
    runs = sorted({k.run for k in kinds().values()})
    cache = tmp_path / "cache.json"
    first = cv.code_versions(runs, cache)
    assert cache.exists() and cv.code_versions(runs, cache) == first
    tc = package_copy / "privacy" / "tree_counter.py"
    tc.write_text(tc.read_text() + "\n_EDITED = 1\n")
    for cached in (cv._parsed, cv.module_syntax, cv.module_imports, cv.code_version):
        cached.cache_clear()
    second = cv.code_versions(runs, cache)
    assert {r for r in runs if first[r] != second[r]} == {r for r in runs if "dprl.privacy.tree_counter" in cv.module_closure(r.partition(":")[0])}
    assert dprl.__file__  # the real package is untouched
