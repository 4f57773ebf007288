"""Speed and memory of UBEV/PUCB (issue 3 targets, 23-state 4-action H=10 MDP):
UBEV >= 5,000 episodes/s, PUCB (all 2SAH + S²AH counters every episode) >= 2,000
episodes/s, 100-state 4-action H=20 PUCB counters < 1 GiB.

Run: ``pytest tests/benchmarks/test_bench_tabular.py --benchmark-only -o addopts=""``.
Episodes/s are in each benchmark's ``extra_info``.
"""

import resource

import numpy as np
import pytest

from dprl.agents.tabular.agent import make_agent, run_episodes
from dprl.envs.tabular import garnet

EPISODES = 2000


def _run(name: str, privacy):
    env = garnet(np.random.default_rng(0), S=23, A=4, H=10, branching=3)
    agent = make_agent(name, env, 100_000, privacy, 0.05, 1.0, np.random.default_rng(1), np.random.default_rng(2))
    run_episodes(env, agent, EPISODES, np.random.default_rng(3))


@pytest.mark.parametrize("name,privacy,target", [
    ("ubev", None, 5000),
    ("pucb", {"epsilon": 1.0, "calibration": "tight"}, 2000),
])
def test_bench_episodes_per_second(benchmark, name, privacy, target):
    benchmark.pedantic(_run, args=(name, privacy), rounds=3, iterations=1, warmup_rounds=1)
    rate = EPISODES / benchmark.stats.stats.min
    benchmark.extra_info["episodes_per_s"] = rate
    benchmark.extra_info["target_episodes_per_s"] = target


def test_bench_pucb_memory_100_states(benchmark):
    """Counter memory O(L·S²AH): 100 states, 4 actions, H = 20, horizon T = 10^6; a few
    PUCB episodes run, and the process's peak RSS stays under 1 GiB."""
    env = garnet(np.random.default_rng(0), S=100, A=4, H=20, branching=5)

    def run():
        agent = make_agent("pucb", env, 10**6, {"epsilon": 1.0, "calibration": "tight"}, 0.05, 1.0,
                           np.random.default_rng(1), np.random.default_rng(2))
        run_episodes(env, agent, 20, np.random.default_rng(3))
        return agent

    agent = benchmark.pedantic(run, rounds=1, iterations=1)
    gib = agent.source.counter.nbytes / 2**30
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20  # KiB -> GiB
    benchmark.extra_info["counter_GiB"] = gib
    benchmark.extra_info["peak_rss_GiB"] = peak
    assert gib < 1.0 and peak < 1.0
