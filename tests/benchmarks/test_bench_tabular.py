"""Speed and memory of UBEV/PUCB: the compiled loop and the NumPy reference loop
(``tests/tabular/tabular_reference.py``) measured in the same run, the ratio reported.

Targets on garnet S=3 A=2 H=2: PUCB >= 500,000 episodes/s and >= 20x the reference, UBEV
>= 1,000,000 episodes/s. Also the 23-state 4-action H=10 MDP of the speed targets (UBEV >= 5,000,
PUCB >= 2,000 episodes/s; there 46,000 Laplace draws per PUCB episode dominate) and the
100-state 4-action H=20 PUCB counter memory < 1 GiB.

Run: ``pytest tests/benchmarks/test_bench_tabular.py --benchmark-only -o addopts=""``.
Rates and start-up are CPU time (``time.process_time``, as the bench measures them: the
machine's two cores are shared, and wall-clock rates under load say more about the
neighbours than about the loop); wall times are in ``extra_info``. Episodes/s, the reference's episodes/s and the ratio are in each benchmark's
``extra_info``; compile time is excluded (one warm-up round; with ``cache=True`` it is
paid once per installation, see ``test_bench_compile_and_startup``).
"""

import resource
import subprocess
import sys
import time

import numpy as np
import pytest
from tabular_reference import make_reference_agent, reference_run_episodes

from dprl.agents.tabular.build import build_agent
from dprl.agents.tabular.episodes import feed_episodes
from dprl.envs.tabular import garnet
from dprl.runner.online import CheckpointSummary
from dprl.privacy.setting import PrivacySetting

PUCB = PrivacySetting(epsilon=1.0, calibration="tight")


def _env(S: int, A: int, H: int):
    return garnet(np.random.default_rng(0), S=S, A=A, H=H, branching=min(3, S))


def _compiled(env, name, privacy, T):
    agent = build_agent(name, {"beta": 0.05, "bonus_scale": 1.0, "l1_per_step": 2}, privacy, env, T, np.random.default_rng(1), np.random.default_rng(2)).agent
    feed_episodes(agent, env, T, np.random.default_rng(3), CheckpointSummary(np.array([T])))


def _reference_rate(env, name, privacy, T) -> float:
    """Episodes/s of the reference loop (best of 3)."""
    best = np.inf
    for _ in range(3):
        agent = make_reference_agent(name, env, T, privacy, 0.05, 1.0, np.random.default_rng(1), np.random.default_rng(2))
        t = time.process_time()  # the benchmark's own timer
        reference_run_episodes(env, agent, T, np.random.default_rng(3))
        best = min(best, time.process_time() - t)
    return T / best


@pytest.mark.benchmark(timer=time.process_time)
@pytest.mark.parametrize("name,privacy,sizes,episodes,ref_episodes,target,target_ratio", [
    ("pucb", PUCB, (3, 2, 2), 300_000, 6_000, 500_000, 20.0),
    ("ubev", None, (3, 2, 2), 300_000, 6_000, 1_000_000, 20.0),
    ("pucb", PUCB, (23, 4, 10), 1_000, 300, 2_000, 1.0),
    ("ubev", None, (23, 4, 10), 20_000, 1_000, 5_000, 1.0),
], ids=["pucb-garnet-3-2-2", "ubev-garnet-3-2-2", "pucb-garnet-23-4-10", "ubev-garnet-23-4-10"])
def test_bench_episodes_per_second(benchmark, name, privacy, sizes, episodes, ref_episodes, target, target_ratio):
    env = _env(*sizes)
    benchmark.pedantic(_compiled, args=(env, name, privacy, episodes), rounds=3, iterations=1, warmup_rounds=1)
    rate = episodes / benchmark.stats.stats.min
    wall = time.perf_counter()
    _compiled(env, name, privacy, episodes)
    wall = episodes / (time.perf_counter() - wall)
    ref = _reference_rate(env, name, privacy, ref_episodes)
    benchmark.extra_info.update(episodes_per_s=rate, reference_episodes_per_s=ref, ratio=rate / ref,
                                wall_episodes_per_s=wall, target_episodes_per_s=target, target_ratio=target_ratio)
    assert rate >= target and rate / ref >= target_ratio, benchmark.extra_info


def test_bench_compile_and_startup(benchmark):
    """Process start-up of a tiny PUCB + UBEV job with a warm Numba cache (the first
    compile is reported separately: it is paid once, then ``cache=True`` loads it)."""
    code = ("import time; t = time.perf_counter(); import numpy as np; "
            "from dprl.agents.tabular.build import build_agent; from dprl.agents.tabular.episodes import feed_episodes; from dprl.envs.tabular import garnet; "
            "from dprl.runner.online import EpisodeRecord; from dprl.privacy.setting import PrivacySetting; env = garnet(np.random.default_rng(0), S=3, A=2, H=2, branching=2); "
            "[feed_episodes(build_agent(n, {'beta': 0.05, 'bonus_scale': 1.0, 'l1_per_step': 2}, p, env, 10, np.random.default_rng(1), np.random.default_rng(2)).agent, env, 10, "
            "np.random.default_rng(3), EpisodeRecord()) for n, p in (('ubev', None), ('pucb', PrivacySetting(epsilon=1.0, calibration='tight')))]; "
            "print(time.perf_counter() - t)")
    subprocess.run([sys.executable, "-c", code], check=True, capture_output=True)  # fills the cache if cold

    def start():
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t = time.perf_counter()
        out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True)
        wall = time.perf_counter() - t
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), float(out.stdout)

    wall, cpu, inside = benchmark.pedantic(start, rounds=3, iterations=1)
    benchmark.extra_info.update(process_wall_s=wall, process_cpu_s=cpu, import_and_run_s=inside)
    assert cpu < 2.0, benchmark.extra_info


def test_bench_pucb_memory_100_states(benchmark):
    """Counter memory O(L·S²AH): 100 states, 4 actions, H = 20, horizon T = 10^6; a few
    PUCB episodes run, and the process's peak RSS stays under 1 GiB."""
    env = garnet(np.random.default_rng(0), S=100, A=4, H=20, branching=5)

    def run():
        agent = build_agent("pucb", {"beta": 0.05, "bonus_scale": 1.0, "l1_per_step": 2}, PrivacySetting(epsilon=1.0, calibration="tight"), env, 10**6,
                           np.random.default_rng(1), np.random.default_rng(2)).agent
        feed_episodes(agent, env, 20, np.random.default_rng(3), CheckpointSummary(np.array([20])))
        return agent

    agent = benchmark.pedantic(run, rounds=1, iterations=1)
    gib = agent.source.nbytes / 2**30
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20  # KiB -> GiB
    benchmark.extra_info["counter_GiB"] = gib
    benchmark.extra_info["peak_rss_GiB"] = peak
    assert gib < 1.0 and peak < 1.0


@pytest.mark.benchmark(timer=time.process_time)
def test_bench_ubev_policy_table(benchmark, monkeypatch):
    """UBEV's loop on garnet 3-2-2 (300,000 episodes) with its table of policy values
    against the same loop evaluating every episode's policy (``policy_table`` empty, what
    the loop did before 2026-11-28), CPU time, best of 3 each; same numbers either way
    (tests/tabular/test_compiled_loop.py)."""
    import dprl.agents.tabular.episodes as episodes

    env, T = _env(3, 2, 2), 300_000
    benchmark.pedantic(_compiled, args=(env, "ubev", None, T), rounds=3, iterations=1, warmup_rounds=1)
    with monkeypatch.context() as m:
        m.setattr(episodes, "policy_table", lambda S, A, H: np.full(0, np.nan))
        ref = min(_cpu(_compiled, env, "ubev", None, T) for _ in range(3))
    new = benchmark.stats.stats.min
    benchmark.extra_info.update(seconds=new, reference_seconds=ref, speedup=ref / new)
    assert new < ref, benchmark.extra_info


@pytest.mark.benchmark(timer=time.process_time)
def test_bench_planner_width_memo(benchmark):
    """PrivQ on exact counts where ``H`` of the ``SAH`` counts change a call (UBEV's case;
    garnet 3-2-2, 100,000 plans, compiled) with the memo of confidence widths kept across
    calls against an emptied memo every call (every width computed: the planner before
    2026-11-28)."""
    from numba import njit

    from dprl.agents.tabular.planner import log_term, new_memo, priv_q_into

    S, A, H = 3, 2, 2
    sah = S * A * H
    rng = np.random.default_rng(0)
    rel = np.concatenate([rng.random(sah) * 5e4, 1e5 + rng.random(sah) * 5e4, rng.random(sah * S) * 3e4])
    na, lt, Q, V = np.full(S, A, dtype=np.int64), log_term(S, A, H, 0.05), np.empty((H, S, A)), np.empty((2, S))

    @njit
    def loop(n, keep, rel, na, lt, Q, V):
        memo, memo_conf = new_memo(S, A, H)
        for t in range(n):
            rel[sah + (t % sah)] += 1.0  # two counts change a call, as H = 2 do an UBEV episode
            rel[sah + ((t * 7) % sah)] += 1.0
            if not keep:
                memo[:] = np.nan
            priv_q_into(rel, 0.0, S, A, H, na, lt, 1.0, Q, V, memo, memo_conf)

    def plans(n: int, keep: bool) -> None:
        loop(n, keep, rel, na, lt, Q, V)

    plans(10, True)
    benchmark.pedantic(plans, args=(100_000, True), rounds=3, iterations=1)
    ref = min(_cpu(plans, 100_000, False) for _ in range(3))
    new = benchmark.stats.stats.min
    benchmark.extra_info.update(seconds=new, reference_seconds=ref, speedup=ref / new)
    assert new < ref, benchmark.extra_info


def _cpu(f, *args) -> float:
    t = time.process_time()
    f(*args)
    return time.process_time() - t
