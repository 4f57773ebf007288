"""Benchmarks of the LQ agents (issue 4). Skipped in the normal test run; run with
``pytest tests/benchmarks/test_bench_lq.py --benchmark-only -o addopts=""``.

Target: Private-OFU-RL on n=2, d=1, H=10 with N=256 oracle candidates at >= 300
episodes/s (each round plays EPISODES episodes; episodes/s = EPISODES / mean round time,
also stored in ``extra_info``).
"""

import numpy as np
import pytest

from dprl.agents.lq.oracle import OptimisticOracle
from dprl.agents.lq.run import build_agent, run_episodes
from dprl.envs.lq import random_system, riccati

EPISODES = 200
PRIV = {"epsilon": 1.0, "delta": 1e-3, "calibration": "tight"}


@pytest.mark.parametrize("alg, privacy", [("private_ofu_rl", PRIV), ("ofu_rl", None)])
def test_episodes_per_second_n2_d1_h10_n256(benchmark, alg, privacy):
    system = random_system(2, 1, 10, np.random.default_rng(0))

    def play():
        built = build_agent(system, alg, {"n_candidates": 256, "alpha": 0.1, "lam": 0.1}, privacy, EPISODES,
                            np.random.default_rng(1), np.random.default_rng(2))
        return run_episodes(system, built, EPISODES, np.random.default_rng(3), 10)

    benchmark.pedantic(play, rounds=5, iterations=1, warmup_rounds=1)
    benchmark.extra_info["episodes_per_s"] = EPISODES / benchmark.stats.stats.mean


def test_oracle_n256(benchmark):
    system = random_system(2, 1, 10, np.random.default_rng(0))
    oracle = OptimisticOracle(2, 1, system.q, system.r, 10, system.x1, system.noise_radius, 256, np.random.default_rng(1))
    centre, gram = 0.5 * system.theta, 50.0 * np.eye(3)
    benchmark(oracle, centre, gram, 0.5)


def test_batched_riccati_n256_h10(benchmark):
    rng = np.random.default_rng(0)
    a, b = 0.4 * rng.standard_normal((256, 2, 2)), 0.4 * rng.standard_normal((256, 2, 1))
    benchmark(riccati, a, b, np.eye(2), np.eye(1), 10)
