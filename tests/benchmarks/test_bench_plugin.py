"""The rate of a plug-in through the generic step runner (``dprl.agents.plugin``), against
PUCB's compiled loop measured in the same run: what a researcher's plain-Python plug-in
pays per episode, on the family hard at T's instance and on garnet.

Run: ``pytest tests/benchmarks/test_bench_plugin.py --benchmark-only -o addopts=""``.
CPU time (``time.process_time``); episodes/s and the compiled loop's are in ``extra_info``.
The example's agent (``tests/plugin_example``) is imported from its source folder: speed
does not depend on how it was registered.
"""

import sys
import time
from pathlib import Path

import numpy as np
import pytest

from dprl.agents.plugin import run_tabular_episodes
from dprl.agents.tabular.build import build_agent
from dprl.agents.tabular.episodes import run_episodes
from dprl.envs.tabular import garnet, lowerbound_horizon
from dprl.privacy.setting import PrivacySetting

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "plugin_example"))
from dprl_example_plugin.agent import build as build_example  # noqa: E402

PRIVACY = PrivacySetting(epsilon=1.0, calibration="tight")
PARAMS = {"beta": 0.05, "bonus_scale": 1.0, "l1_per_step": 2}
ENVS = {
    "lowerbound_horizon-n2-m1-H2": lambda: lowerbound_horizon(np.random.default_rng(0), 2, 1, 2, 100_000)[0],
    "garnet-S6-A2-H4": lambda: garnet(np.random.default_rng(0), S=6, A=2, H=4, branching=2),
}


def _run(build, runner, env, T: int) -> None:
    built = build(PARAMS, PRIVACY, env, T, np.random.default_rng(1), np.random.default_rng(2))
    runner(built, env, T, np.random.default_rng(3), np.array([T]))


def _pucb(params, privacy, env, T, agent_rng, noise_rng):
    return build_agent("pucb", params, privacy, env, T, agent_rng, noise_rng)


@pytest.mark.benchmark(timer=time.process_time)
@pytest.mark.parametrize("env_name", sorted(ENVS))
def test_bench_example_plugin_against_compiled_pucb(benchmark, env_name):
    env, T, T_compiled = ENVS[env_name](), 2_000, 100_000
    _run(_pucb, run_episodes, env, 10)  # compiled once, outside the timings
    t = time.process_time()
    _run(_pucb, run_episodes, env, T_compiled)
    compiled = T_compiled / (time.process_time() - t)
    benchmark.pedantic(_run, args=(build_example, run_tabular_episodes, env, T), rounds=3, iterations=1)
    rate = T / benchmark.stats.stats.min
    benchmark.extra_info.update(episodes_per_s=rate, compiled_pucb_episodes_per_s=compiled, ratio_to_compiled=rate / compiled)
    assert rate > 0 and compiled > rate  # a plain-Python plug-in is slower than the compiled loop
