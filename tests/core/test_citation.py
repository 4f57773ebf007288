"""CITATION.cff is valid Citation File Format 1.2.0 (the keys the format requires, for the
package and for each cited paper) and agrees with pyproject.toml and LICENSE."""

import tomllib
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]

# CFF 1.2.0 schema: required keys of the root and of a reference; the reference types
# used here are a subset of the schema's enum.
ROOT_REQUIRED = ("cff-version", "message", "title", "authors")
REFERENCE_REQUIRED = ("type", "title", "authors")
REFERENCE_TYPES = {"article", "conference-paper", "proceedings", "report", "software", "book", "thesis", "unpublished"}
# The four papers whose claims the package tests.
PAPERS = {
    ("Balle", 2016): "Differentially Private Policy Evaluation",
    ("Vietri", 2020): "Private Reinforcement Learning with PAC and Regret Guarantees",
    ("Chowdhury", 2021): "Adaptive Control of Differentially Private Linear Quadratic Systems",
    ("Zhou", 2022): "Differentially Private Reinforcement Learning with Linear Function Approximation",
}


@pytest.fixture(scope="module")
def cff() -> dict:
    return yaml.safe_load((ROOT / "CITATION.cff").read_text(encoding="utf-8"))


def _check_authors(authors: object, where: str) -> None:
    assert isinstance(authors, list) and authors, f"{where}: authors must be a non-empty list"
    for a in authors:
        # a person needs family-names (given-names optional), an entity needs name
        assert isinstance(a, dict) and (a.get("family-names") or a.get("name")), f"{where}: author {a!r} has neither family-names nor name"


def test_root_has_the_required_keys(cff):
    missing = [k for k in ROOT_REQUIRED if not cff.get(k)]
    assert not missing, f"CITATION.cff lacks {missing}"
    assert str(cff["cff-version"]) == "1.2.0"
    _check_authors(cff["authors"], "root")


def test_version_and_license_agree_with_the_package(cff):
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert str(cff["version"]) == project["version"]
    assert cff["license"] == "MIT" and (ROOT / "LICENSE").read_text().startswith("MIT License")


def test_references_cite_the_four_papers(cff):
    refs = cff.get("references") or []
    for i, ref in enumerate(refs):
        missing = [k for k in REFERENCE_REQUIRED if not ref.get(k)]
        assert not missing, f"references[{i}] lacks {missing}"
        assert ref["type"] in REFERENCE_TYPES, f"references[{i}]: type {ref['type']!r}"
        assert isinstance(ref.get("year"), int), f"references[{i}]: year must be an integer"
        _check_authors(ref["authors"], f"references[{i}]")
    cited = {(r["authors"][0].get("family-names"), r["year"]): r["title"] for r in refs}
    assert cited == PAPERS
