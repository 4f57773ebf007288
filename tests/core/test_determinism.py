"""A job's numbers depend only on its spec: reruns are bit-identical, independent of
which other jobs ran before and in what order; streams are keyed as src/dprl/README.md, "Determinism" says."""

import numpy as np

from dprl.config.load import load_config
from dprl.runner.job import JobSpec
from dprl.experiments.run import run_job

CFG = {
    "experiments": {
        "counter_error": {
            "algorithms": [{"name": "laplace_tree"}, {"name": "gaussian_tree_matrix"}],
            "environments": [{"name": "stream", "T": 50, "counters": 30}],
            "privacy": {"epsilon": [1.0], "delta": [1e-5], "calibration": ["tight"]},
            "seeds": {"count": 2},
        },
        "audit": {
            "algorithms": [{"name": "gaussian_tree_vector"}],
            "environments": [{"name": "neighbouring_streams"}],
            "privacy": {"epsilon": [1.0], "delta": [1e-5], "calibration": ["paper"]},
            "settings": {"runs": 2000},
            "seeds": {"count": 1},
        },
    }
}


def test_rerun_is_bit_identical_and_order_independent(tmp_path):
    jobs = list(load_config(CFG).jobs.values())
    a, b = tmp_path / "a", tmp_path / "b"
    for job in jobs:
        run_job(job.spec, a / job.path, job.labels)
    for job in reversed(jobs):  # other order, fresh process state for each spec
        run_job(job.spec, b / job.path, job.labels)
    for job in jobs:
        assert (a / job.path).read_bytes() == (b / job.path).read_bytes(), job.path
    # a job run alone (nothing else ran in between) gives the same bytes
    lone = tmp_path / "lone.csv"
    run_job(jobs[-1].spec, lone, jobs[-1].labels)
    assert lone.read_bytes() == (a / jobs[-1].path).read_bytes()


def _spec(alg="a", eps=1.0, seed=0, env_T=10):
    return JobSpec("x", "k", {"name": alg}, {"name": "e", "T": env_T},
                   {"epsilon": eps, "delta": None, "calibration": "tight"}, {}, seed)


def draw(spec, scope):
    return np.random.default_rng(spec.seed_sequence(scope)).random(4)


def test_streams_are_keyed_for_common_random_numbers():
    base = _spec()
    # the environment stream is shared across algorithms and privacy levels ...
    assert np.array_equal(draw(base, "env"), draw(_spec(alg="b", eps=5.0), "env"))
    # ... but not across seeds or environments
    assert not np.array_equal(draw(base, "env"), draw(_spec(seed=1), "env"))
    assert not np.array_equal(draw(base, "env"), draw(_spec(env_T=11), "env"))
    # privacy noise differs across privacy levels and from the environment stream
    assert not np.array_equal(draw(base, "noise"), draw(_spec(eps=5.0), "noise"))
    assert not np.array_equal(draw(base, "noise"), draw(base, "env"))
    # the agent stream is shared across privacy levels of one algorithm
    assert np.array_equal(draw(base, "agent"), draw(_spec(eps=5.0), "agent"))
