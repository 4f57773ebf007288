"""Bundles of simulations per Snakemake job (dprl.runner.bundle)."""

from __future__ import annotations

import pytest

from dprl.config.load import ConfigError, load_config
from dprl.runner.bundle import MAX_RUN_FACTOR, chunk, make_bundles


def _paths(n: int, exp: str = "a") -> list[str]:
    return sorted(f"jobs/{exp}/alg/eps{k % 7}/seed{k}.csv" for k in range(n))


@pytest.mark.parametrize("n,secs,target", [(1, 5, 120), (7, 5, 12), (40, 3.5, 120), (96, 8.9, 120), (13, 100, 60), (5, 1, 0)])
def test_chunk_covers_every_path_once_in_order(n, secs, target):
    paths = _paths(n)
    runs = chunk(paths, secs, target)
    assert [p for r in runs for p in r] == paths
    assert all(len(r) >= 1 for r in runs)
    if target <= 0:
        assert len(runs) == n
    else:
        size = -(-target // secs)
        assert max(len(r) for r in runs) <= MAX_RUN_FACTOR * size


def test_chunk_runs_average_the_target():
    """Content-defined runs: sizes vary, their mean is the size that reaches the target."""
    paths = _paths(5000)
    for secs, target in [(2.0, 60.0), (10.0, 120.0), (1.0, 30.0)]:
        size = target / secs
        mean = len(paths) / len(chunk(paths, secs, target))
        assert 0.7 * size <= mean <= 1.3 * size, (secs, target, mean)


@pytest.mark.parametrize("added", [["jobs/a/alg/eps9/seed3.csv"], [f"jobs/a/alg/eps9/seed{k}.csv" for k in range(8)], ["jobs/a/zzz/seed0.csv"]])
def test_adding_jobs_keeps_the_other_bundles(added):
    """Adding a sweep value re-bundles only the runs its jobs fall into (and, after a
    cap, the next one): the other bundles keep their members, so Snakemake reuses them.
    Fixed-position packing fails this (every bundle after the first new job moved)."""
    before = chunk(_paths(400), 2.0, 20.0)
    after = chunk(sorted(_paths(400) + added), 2.0, 20.0)
    changed = set(before) - set(after)
    runs_hit = {r for r in before for p in added if r[0] <= p <= r[-1]}
    assert len(changed) <= 2 * len(added), (len(changed), len(before))
    assert len(changed) <= len(runs_hit) + len(added) + 1
    assert len(set(before) & set(after)) >= len(before) - 2 * len(added)


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
