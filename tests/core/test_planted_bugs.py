"""Every claim knows which bug would flip its verdict: each claim's declaration
(``Claim.planted_bugs``) names, for every claim and finding, a plausible bug and the test that plants it and asserts
the flip through the claim's own rule. These tests keep that catalog complete and true."""

from __future__ import annotations

import ast
import re
from functools import cache
from pathlib import Path

import pytest

from dprl.analysis.base import PlantedBug
from dprl.analysis.claims import all_claims, planted_bugs

ROOT = Path(__file__).resolve().parents[2]
NODE = re.compile(r"^(tests/[\w/]+\.py)::(test_\w+)$")


@cache
def _functions(path: str) -> dict[str, ast.FunctionDef]:
    tree = ast.parse((ROOT / path).read_text())
    return {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}


def _is_slow(fn: ast.FunctionDef) -> bool:
    return any("slow" in ast.unparse(d) for d in fn.decorator_list)


def check(claim_id: str, rule: str, bug: PlantedBug) -> list[str]:
    """What is wrong with one catalog entry: the node id's form, the test's existence, a slow
    mark (planted-bug tests run in every suite run), and whether its module reaches the
    claim's rule (by the claim's id or the rule's function name)."""
    m = NODE.match(bug.test)
    if not bug.bug.strip():
        return [f"{claim_id}: empty bug description for {bug.test}"]
    if not m:
        return [f"{claim_id}: {bug.test!r} is not a node id tests/<path>.py::test_<name>"]
    path, name = m.groups()
    if not (ROOT / path).is_file():
        return [f"{claim_id}: {path} does not exist"]
    fn = _functions(path).get(name)
    if fn is None:
        return [f"{claim_id}: {path} has no module-level {name}"]
    problems = []
    if _is_slow(fn):
        problems.append(f"{claim_id}: {bug.test} is slow-marked")
    text = (ROOT / path).read_text()
    if not (re.search(rf"\b{re.escape(claim_id)}\b", text) or re.search(rf"\b{re.escape(rule)}\b", text)):
        problems.append(f"{claim_id}: {path} mentions neither {claim_id} nor its rule {rule}")
    return problems


def test_every_claim_and_finding_names_a_bug_that_flips_it():
    bugs = planted_bugs()
    missing = [c.id for c in all_claims() if not bugs.get(c.id)]
    assert not missing, f"claims without a planted bug: {missing}"


def test_every_planted_bug_names_a_fast_test_that_reaches_the_rule():
    # a claim's rule is reached through its id, or the name of its own code
    rules = {c.id: c.compute.__name__ if c.compute is not None else c.id for c in all_claims()}
    problems = [p for cid, bugs in planted_bugs().items() for b in bugs for p in check(cid, rules[cid], b)]
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("test, expected", [
    ("tests/core/test_planted_bugs.py::test_no_such_function", "has no module-level"),
    ("tests/core/no_such_file.py::test_x", "does not exist"),
    ("tests/core/test_planted_bugs.py", "is not a node id"),
    ("tests/core/test_layers.py::" + next(f for f in _functions("tests/core/test_layers.py") if f.startswith("test_")),
     "mentions neither"),
])
def test_the_check_refuses_a_wrong_entry(test, expected):
    assert any(expected in p for p in check("V1", "v1", PlantedBug("a bug", test)))


def test_claims_md_prints_each_claims_planted_bugs():
    from dprl.analysis.claims import _planted_markdown

    lines = _planted_markdown(["V9", "Z7"])
    assert any("UBEV without its exploration bonus" in line and "test_v9_flags" in line for line in lines)
    assert not any("**V1**" in line for line in lines)
