"""`dprl parts`: a preset cut into parts by paper or experiment, each with its cost, the
claims it decides (from the claims registry's reads/optional) and its Snakemake targets
(dprl.analysis.parts)."""

from __future__ import annotations

import pytest

from dprl.analysis.claims import all_claims
from dprl.analysis.parts import parts, preset_parts
from dprl.cli import main
from dprl.config.resources import preset_resources
from dprl.config.load import load_config_file


def test_a_claim_is_decided_by_the_part_holding_all_it_reads() -> None:
    got = {p.name: p for p in parts(
        {"a": ["e1", "e2"], "b": ["e3"]}, {"e1": 2, "e2": 3, "e3": 5}, {"e1": 1.0, "e2": 0.5, "e3": 2.0},
        [("X", ("e1", "e2"), ()), ("Y", ("e1", "e3"), ()), ("Z", ("e3",), ("e2",)), ("W", ("nosuch",), ("e1",))])}
    assert (got["a"].jobs, got["a"].hours, got["b"].jobs, got["b"].hours) == (5, 1.5, 5, 2.0)
    assert got["a"].decides == ["X"] and got["b"].decides == ["Z"]
    assert got["a"].with_others == {"Y": ["b"]} and got["b"].with_others == {"Y": ["a"]}
    # an optional table elsewhere adds rows; a claim reading what the preset lacks is left out
    assert got["a"].adds_rows == ["Z"] and got["b"].adds_rows == []


@pytest.mark.parametrize("by", ["paper", "experiment"])
def test_the_parts_of_a_preset_cover_its_jobs_hours_and_claims(by: str) -> None:
    cfg = load_config_file("config.yaml", "smoke")
    ps = preset_parts("smoke", by)
    names = [e for p in ps for e in p.experiments]
    assert sorted(names) == sorted(n for n, x in cfg.experiments.items() if x.jobs)
    assert sum(p.jobs for p in ps) == len(cfg.jobs)
    assert sum(p.hours for p in ps) == pytest.approx(sum(r["hours"] for r in preset_resources("smoke").values()))
    # every claim whose reads the preset runs is decided by one part, or needs several
    for c in all_claims():
        if c.reads and all(e in names for e in c.reads):
            deciding = [p.name for p in ps if c.id in p.decides]
            spanning = [p.name for p in ps if c.id in p.with_others]
            assert (len(deciding) == 1 and not spanning) or (not deciding and len(spanning) >= 2), c.id


def test_parts_command_prints_the_table_and_a_parts_targets(capsys) -> None:
    assert main(["parts", "--preset", "smoke"]) == 0
    out = capsys.readouterr().out
    assert "--targets PART" in out and "total" in out
    # the part's targets before --config (Snakemake reads every word after it as a key=value override)
    assert "--targets PART) --config preset=smoke\n" in out, out
    assert any(line.startswith("lq ") and "C1" in line for line in out.splitlines()), out
    assert main(["parts", "--preset", "smoke", "--targets", "lq"]) == 0
    got = capsys.readouterr().out.split()
    lq = [n for n, x in load_config_file("config.yaml", "smoke").experiments.items() if x.kind.paper == "lq" and x.jobs]
    assert got == [f"results/smoke/tables/{e}.csv" for e in lq]
    assert main(["parts", "--preset", "smoke", "--targets", "nosuch"]) == 2
    assert "no such part" in capsys.readouterr().err
