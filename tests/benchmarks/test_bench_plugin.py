"""The rate of a plug-in through the generic step runner (``dprl.agents.plugin``), against
PUCB's compiled loop measured in the same run: what a researcher's plain-Python plug-in
pays per episode, on the family hard at T's instance and on garnet; and the plug-ins through the
compiled block protocol (``dprl_beyond``: Private-UCB-VI, DP-UCBVI and their non-private
planners UCB-VI and UCBVI-Bernstein) against the same compiled loop, which is what
``dprl.config.estimate.BLOCK_PLUGIN_SLOWDOWN`` budgets them at.

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
from step_agents import StepLinOpt, StepOFU  # noqa: E402

PRIVACY = PrivacySetting(epsilon=1.0, calibration="tight")
PARAMS = {"beta": 0.05, "bonus_scale": 1.0, "l1_per_step": 2}
ENVS = {
    "lowerbound_horizon-n2-m1-H2": lambda: lowerbound_horizon(np.random.default_rng(0), 2, 1, 2, 100_000)[0],
    "garnet-S6-A2-H4": lambda: garnet(np.random.default_rng(0), S=6, A=2, H=4, branching=2),
}


def _run(build, runner, env, T: int, privacy: PrivacySetting | None = PRIVACY) -> None:
    built = build(PARAMS, privacy, env, T, np.random.default_rng(1), np.random.default_rng(2))
    runner(built, env, T, np.random.default_rng(3), np.array([T]))


def _pucb(params, privacy, env, T, agent_rng, noise_rng):
    return build_agent("pucb", params, privacy, env, T, agent_rng, noise_rng)


def _against_compiled_pucb(benchmark, build, env, T: int, T_compiled: int,
                           privacy: PrivacySetting | None = PRIVACY) -> tuple[float, float]:
    """Episodes/s of the plug-in ``build`` through :func:`run_tabular_episodes` (best of 3) and
    of PUCB's compiled loop (at ``PRIVACY``) on ``env`` in the same run, both compiled outside
    the timings; ``privacy`` is the plug-in's (``None``: a non-private one, as its jobs get)."""
    _run(_pucb, run_episodes, env, 10)
    _run(build, run_tabular_episodes, env, 10, privacy)
    t = time.process_time()
    _run(_pucb, run_episodes, env, T_compiled)
    compiled = T_compiled / (time.process_time() - t)
    benchmark.pedantic(_run, args=(build, run_tabular_episodes, env, T, privacy), rounds=3, iterations=1)
    rate = T / benchmark.stats.stats.min
    benchmark.extra_info.update(episodes_per_s=rate, compiled_pucb_episodes_per_s=compiled, ratio_to_compiled=rate / compiled)
    return rate, compiled


@pytest.mark.benchmark(timer=time.process_time)
@pytest.mark.parametrize("env_name", sorted(ENVS))
def test_bench_example_plugin_against_compiled_pucb(benchmark, env_name):
    rate, compiled = _against_compiled_pucb(benchmark, build_example, ENVS[env_name](), 2_000, 100_000)
    assert rate > 0 and compiled > rate  # a plain-Python plug-in is slower than the compiled loop


@pytest.mark.benchmark(timer=time.process_time)
@pytest.mark.parametrize("env_name", sorted(ENVS))
def test_bench_private_ucb_vi_block_kernel_against_compiled_pucb(benchmark, env_name):
    """Private-UCB-VI (``dprl_beyond``) through the compiled block protocol
    (``TabularBlockKernel``: its njit plan/learn on dprl's counters, one compiled loop per
    block), against PUCB's compiled loop on the same instance in the same run."""
    from dprl_beyond.private_ucb_vi import build as build_private_ucb_vi

    rate, compiled = _against_compiled_pucb(benchmark, build_private_ucb_vi, ENVS[env_name](), 100_000, 100_000)
    assert rate > 0 and compiled > 0


BLOCK_PLUGINS = {  # the other block-protocol plug-ins of dprl_beyond: factory and whether private
    "dp_ucbvi": ("dprl_beyond.dp_ucbvi:build", True),
    "ucb_vi": ("dprl_beyond.private_ucb_vi:build_exact", False),
    "ucbvi_bernstein": ("dprl_beyond.dp_ucbvi:build_exact", False),
}


@pytest.mark.benchmark(timer=time.process_time)
@pytest.mark.parametrize("env_name", sorted(ENVS))
@pytest.mark.parametrize("algorithm", sorted(BLOCK_PLUGINS))
def test_bench_beyond_block_kernel_against_compiled_pucb(benchmark, algorithm, env_name):
    """DP-UCBVI and the two non-private planners (UCB-VI, UCBVI-Bernstein on exact counts)
    through the compiled block protocol, against PUCB's compiled loop on the same instance in
    the same run; a non-private one is built without privacy, as its jobs are."""
    from dprl.experiments.base import load_ref

    factory, private = BLOCK_PLUGINS[algorithm]
    build = load_ref(factory)
    rate, compiled = _against_compiled_pucb(benchmark, build, ENVS[env_name](), 100_000, 100_000,
                                            PRIVACY if private else None)
    assert rate > 0 and compiled > 0


def _lq(step: bool, K: int) -> None:
    from dprl.agents.lq.build import build_agent as build_lq
    from dprl.agents.lq.episodes import run_episodes as run_lq
    from dprl.agents.plugin import run_lq_episodes
    from dprl.envs.lq import random_system

    system = random_system(2, 1, 10, np.random.default_rng(0))
    privacy = PrivacySetting(epsilon=1.0, delta=1e-3, calibration="tight")
    built = build_lq("private_ofu_rl", {"n_candidates": 64, "alpha": 0.1}, privacy, system, K, np.random.default_rng(1),
                     np.random.default_rng(2))
    if step:
        built.agent = StepOFU(built.agent)
        run_lq_episodes(built, system, K, np.random.default_rng(3), np.array([K]))
    else:
        run_lq(built, system, K, np.random.default_rng(3), np.array([K]))


def _linmix(step: bool, K: int) -> None:
    from dprl.agents.linmix.build import build_agent as build_linmix
    from dprl.agents.linmix.episodes import run_episodes as run_linmix
    from dprl.agents.plugin import run_linmix_episodes
    from dprl.envs.linear_mixture import make_env

    env = make_env("mixture", {"S": 10, "A": 3, "d1": 2, "d2": 2, "H": 2, "concentration": 0.5}, np.random.default_rng(0))
    privacy = PrivacySetting(epsilon=10.0, delta=1e-3, calibration="tight")
    agent_rng = np.random.default_rng(1)
    built = build_linmix("private_linopt_vi", {"alpha": 0.05}, privacy, env, K, agent_rng, np.random.default_rng(2))
    if step:
        built.agent = StepLinOpt(built.agent)
        run_linmix_episodes(built, env, K, np.random.default_rng(3), np.array([K]), action_rng=agent_rng)
    else:
        run_linmix(built, env, K, np.random.default_rng(3), np.array([K]))


@pytest.mark.benchmark(timer=time.process_time)
@pytest.mark.parametrize("setting", ["lq", "linmix"])
def test_bench_step_runner_against_the_compiled_loop(benchmark, setting):
    """The generic LQ / linear-mixture runner driving the built-in private agent through its
    step interface (what a plug-in built on dprl's Regularizers pays), against the compiled
    loop of the same agent in the same run."""
    run = {"lq": _lq, "linmix": _linmix}[setting]
    K, K_compiled = 2_000, 20_000
    run(False, 10)  # compiled once, outside the timings
    t = time.process_time()
    run(False, K_compiled)
    compiled = K_compiled / (time.process_time() - t)
    benchmark.pedantic(run, args=(True, K), rounds=3, iterations=1)
    rate = K / benchmark.stats.stats.min
    benchmark.extra_info.update(episodes_per_s=rate, compiled_episodes_per_s=compiled, ratio_to_compiled=rate / compiled)
    assert rate > 0 and compiled > rate
