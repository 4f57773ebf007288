"""Bundles of simulations per Snakemake job (dprl.runner.bundle)."""

from __future__ import annotations

import pytest

from dprl.config.load import ConfigError, load_config
from dprl.runner.bundle import make_bundles, pack


@pytest.mark.parametrize("n,secs,target", [(1, 5, 120), (7, 5, 12), (40, 3.5, 120), (96, 8.9, 120), (13, 100, 60), (5, 1, 0)])
def test_pack_covers_every_index_once_in_order(n, secs, target):
    runs = pack(n, secs, target)
    assert [i for r in runs for i in r] == list(range(n))
    assert all(len(r) >= 1 for r in runs)
    if target <= 0:
        assert len(runs) == n
    else:
        size = -(-target // secs)
        # no bundle is more than ~1.5x the size that reaches the target, and only a
        # whole experiment shorter than the target gives a bundle below half of it
        assert max(len(r) for r in runs) <= 1.5 * size + 1
        if len(runs) > 1:
            assert min(len(r) for r in runs) >= size / 2 - 1


def test_make_bundles_partitions_each_experiment():
    jobs = {"a": [f"jobs/a/x/seed{k}.csv" for k in range(10)], "b": [f"jobs/b/y/seed{k}.csv" for k in range(3)]}
    bundles = make_bundles(jobs, {"a": 10.0, "b": 50.0}, 30.0)
    for exp, paths in jobs.items():
        got = [p for b in bundles if b.experiment == exp for p in b.paths]
        assert sorted(got) == sorted(paths) and len(got) == len(set(got))
    assert len({b.rule_name for b in bundles}) == len(bundles)
    assert all(b.tag.endswith(f"-{len(b.paths)}sims") for b in bundles)
    # editing one experiment never re-bundles another
    jobs2 = {**jobs, "b": jobs["b"] + ["jobs/b/y/seed3.csv"]}
    a1 = [b for b in bundles if b.experiment == "a"]
    a2 = [b for b in make_bundles(jobs2, {"a": 10.0, "b": 50.0}, 30.0) if b.experiment == "a"]
    assert a1 == a2


def test_make_bundles_rejects_colliding_rule_names():
    with pytest.raises(ValueError, match="same rule name"):
        make_bundles({"x.y": ["jobs/p.csv"], "x_y": ["jobs/q.csv"]}, {"x.y": 1.0, "x_y": 1.0}, 10.0)


def _raw(**top):
    return {
        "experiments": {
            "counter_error": {
                "algorithms": [{"name": "laplace_tree"}],
                "environments": [{"name": "stream", "T": 16, "dim": 2, "counters": 4}],
                "privacy": {"epsilon": [1.0], "calibration": ["tight"]},
                "seeds": {"count": 2},
            }
        },
        **top,
    }


def test_bundle_seconds_defaults_to_zero_and_is_validated():
    assert load_config(_raw()).bundle_seconds == 0.0
    assert load_config(_raw(bundle_seconds=90)).bundle_seconds == 90.0
    with pytest.raises(ConfigError, match="bundle_seconds"):
        load_config(_raw(bundle_seconds=-1))
    with pytest.raises(ConfigError, match="bundle_seconds"):
        load_config(_raw(bundle_seconds="fast"))


def test_a_slow_job_is_a_bundle_of_its_own_and_the_others_pack_as_before():
    """A plug-in's simulation (60x its kind's compiled time) is bundled alone with its own
    estimate; the experiment's other jobs pack exactly as without it."""
    jobs = {"a": [f"jobs/a/x/seed{k}.csv" for k in range(10)]}
    plain = make_bundles(jobs, {"a": 10.0}, 30.0)
    slow = "jobs/a/mine/seed0.csv"
    both = make_bundles({"a": jobs["a"] + [slow]}, {"a": 10.0}, 30.0, {slow: 60.0})
    assert both[: len(plain)] == plain
    assert both[-1].paths == (slow,) and both[-1].seconds == 600.0
