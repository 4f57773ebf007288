"""How fast the machine that produced a run is, so that run times can be compared across
machines: the CPU model and the speed of one fixed workload, recorded in the manifest.

The workload is the loop that dominates the ``default`` preset (PUCB, tight calibration at
ε = 1, on the 3-state 2-action horizon-2 garnet of ``tabular_regret_eps1``): episodes per
CPU-second of the compiled loop, best of a few repeats (CPU time, not wall time: a busy
neighbour on a shared core says nothing about this machine). The same workload on two
machines gives the ratio by which their run times of the same commit should differ; the
README states the measured ``default`` wall time together with this speed.
"""

from __future__ import annotations

import platform
import time
from pathlib import Path

import numpy as np

from dprl.agents.tabular.build import build_agent
from dprl.agents.tabular.episodes import feed_episodes
from dprl.envs.tabular import garnet
from dprl.privacy.setting import PrivacySetting
from dprl.runner.online import CheckpointSummary

WORKLOAD = "PUCB tight, epsilon 1, garnet S=3 A=2 H=2 (tabular_regret_eps1's loop)"


def cpu_model(cpuinfo: str | Path = "/proc/cpuinfo") -> str:
    """The CPU's model name (Linux ``/proc/cpuinfo``; elsewhere what :mod:`platform` says)."""
    try:
        for line in Path(cpuinfo).read_text().splitlines():
            key, _, value = line.partition(":")
            if key.strip() == "model name" and value.strip():
                return value.strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "unknown"


def _run(episodes: int) -> float:
    """CPU seconds of ``episodes`` episodes of the workload (agent built outside the clock)."""
    env = garnet(np.random.default_rng(0), S=3, A=2, H=2, branching=2)
    privacy = PrivacySetting(epsilon=1.0, calibration="tight")
    params = {"beta": 0.05, "bonus_scale": 1.0, "l1_per_step": 2}
    agent = build_agent("pucb", params, privacy, env, episodes, np.random.default_rng(1), np.random.default_rng(2)).agent
    t = time.process_time()
    feed_episodes(agent, env, episodes, np.random.default_rng(3), CheckpointSummary(np.array([episodes])))
    return time.process_time() - t


def reference_speed(episodes: int = 500_000, repeats: int = 3) -> dict[str, float | int | str]:
    """The workload's speed: ``episodes_per_cpu_s`` (best of ``repeats``, after one short
    warm-up that loads or compiles the kernels), with the episodes and CPU seconds behind it."""
    if episodes < 1 or repeats < 1:
        raise ValueError(f"reference_speed needs episodes >= 1 and repeats >= 1, got {episodes}, {repeats}")
    _run(min(episodes, 1000))  # kernels loaded (or compiled) outside the measurement
    best = min(_run(episodes) for _ in range(repeats))
    return {"workload": WORKLOAD, "episodes": episodes, "cpu_s": round(best, 6),
            "episodes_per_cpu_s": round(episodes / max(best, 1e-9), 1)}
