"""The README's reproduction table names every registered claim and figure."""

import re
from pathlib import Path

from dprl.analysis.claims import all_claims
from dprl.analysis.figures import all_figures

README = (Path(__file__).resolve().parents[2] / "README.md").read_text()


def test_readme_lists_every_figure():
    missing = [f for f in all_figures() if f"`{f}`" not in README]
    assert not missing, f"README does not mention figures {missing}"


def test_readme_covers_every_claim_id():
    ranges = re.findall(r"\| ([A-Z])(\d+)–[A-Z](\d+) \|", README)
    covered = {f"{p}{i}" for p, a, b in ranges for i in range(int(a), int(b) + 1)}
    missing = [c.id for c in all_claims() if c.id not in covered]
    assert not missing, f"README does not list claims {missing}"


def test_readme_has_the_two_setup_commands():
    assert 'pip install -e . && snakemake --cores 8' in README
    assert 'pip install -e ".[test]" && pytest' in README
