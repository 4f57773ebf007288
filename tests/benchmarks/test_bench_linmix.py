"""Speed of the Zhou (2022) agents. Target: >= 300 episodes/s on mixture S=100, A=5,
d1=d2=5, H=10 for Private-LinOpt-VI and Private-LinOpt-PO.

Run: pytest tests/benchmarks/test_bench_linmix.py --benchmark-only -o addopts=""
"""

import numpy as np
import pytest

from dprl.agents.linmix.simulate import build_agent, run_episodes
from dprl.envs.linear_mixture import make_mixture

EPISODES = 200


@pytest.mark.parametrize("name", ["private_linopt_vi", "private_linopt_po", "ucrl_vtr", "ldp_linopt_vi"])
def test_bench_linmix_episodes(benchmark, name):
    env = make_mixture(100, 5, 5, 5, 10, np.random.default_rng(0))
    privacy = {"epsilon": 1.0, "delta": 1e-5, "calibration": "tight"}

    def run():
        setup = build_agent(name, env.features(), EPISODES, {}, privacy, np.random.default_rng(1), np.random.default_rng(2))
        return run_episodes(env, setup, EPISODES, np.random.default_rng(3), np.random.default_rng(1), 10)

    benchmark.pedantic(run, rounds=3, iterations=1, warmup_rounds=1)
    eps_per_s = EPISODES / benchmark.stats.stats.mean
    benchmark.extra_info["episodes_per_s"] = eps_per_s
    print(f"{name}: {eps_per_s:.0f} episodes/s")
