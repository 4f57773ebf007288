"""The compiled UBEV/PUCB loop against its NumPy reference (``tabular_reference.py``): per-episode
regret and sampled return bit-identical, the tree-counter kernel equal to the plain tree counter,
and the online checkpoint summaries equal to the NumPy expressions on full arrays."""

import importlib
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from tabular_reference import make_reference_agent, reference_run_episodes
from tree_reference import PlainTreeCounter

from dprl.agents.tabular.build import build_agent
from dprl.agents.tabular.episodes import feed_episodes, run_episodes
from dprl.envs.tabular import garnet, lowerbound, make_tabular_env, riverswim
from dprl.experiments.tabular import jobs
from dprl.privacy.noise import LaplaceNoise
from dprl.privacy.kernels import feed_tree, laplace_into, sign_words
from dprl.privacy.tree_counter import tree_levels
from dprl.runner.job import JobContext, JobSpec
from dprl.runner import kernel_cache
from dprl.runner.online import CheckpointSummary, EpisodeRecord, StreamingSum, pairwise_sum
from dprl.privacy.setting import PrivacySetting

ENVS = {
    "garnet": lambda: garnet(np.random.default_rng(0), S=3, A=2, H=2, branching=2),
    "riverswim": lambda: riverswim(S=3, H=3),
    "lowerbound": lambda: lowerbound(np.random.default_rng(0), n=2, m=1, gap=0.4, H=2)[0],
}
AGENTS = [
    ("ubev", None),
    ("pucb", PrivacySetting(epsilon=1.0, calibration="tight")),
    ("pucb", PrivacySetting(epsilon=10.0, calibration="tight")),
    ("pucb", PrivacySetting(epsilon=10.0, calibration="paper")),
]


def _both(env, name, privacy, T, bonus_scale=1.0):
    """Compiled and reference runs on the same three random streams."""
    agent = build_agent(name, {"beta": 0.05, "bonus_scale": bonus_scale, "l1_per_step": 2}, privacy, env, T, np.random.default_rng(1), np.random.default_rng(2)).agent
    new = feed_episodes(agent, env, T, np.random.default_rng(3), EpisodeRecord())
    ref_agent = make_reference_agent(name, env, T, privacy, 0.05, bonus_scale, np.random.default_rng(1), np.random.default_rng(2))
    return new, reference_run_episodes(env, ref_agent, T, np.random.default_rng(3))


@pytest.mark.parametrize("env_name", sorted(ENVS))
@pytest.mark.parametrize("name,privacy", AGENTS)
def test_compiled_loop_regret_identical_to_reference(env_name, name, privacy):
    """Per-episode exact regret and sampled return of every episode are bit-identical
    (3000 episodes, UBEV and PUCB under both calibrations)."""
    env = ENVS[env_name]()
    T = 3000
    new, ref = _both(env, name, privacy, T)
    assert np.unique(ref.gap).size > 1  # a non-trivial run: the policies change
    assert np.array_equal(new.gap, ref.gap), np.flatnonzero(new.gap != ref.gap)[:5]
    assert np.array_equal(new.ret, ref.sampled_return)


def test_compiled_loop_with_tight_bonus_exploits_and_stays_identical():
    """A run that leaves the all-tied phase (ε = 100, bonus_scale 0.05: PUCB's known
    branch and the ψ̃ term are exercised), still identical episode by episode."""
    env = ENVS["garnet"]()
    new, ref = _both(env, "pucb", PrivacySetting(epsilon=100.0, calibration="tight"), 4000, bonus_scale=0.05)
    late = ref.gap[-1000:]
    assert late.mean() < 0.5 * ref.gap[:200].mean()  # it learned: the comparison covers exploitation
    assert np.array_equal(new.gap, ref.gap) and np.array_equal(new.ret, ref.sampled_return)
    # positive control: a variant with a 10% larger bonus (a broken loop) is caught
    agent = build_agent("pucb", {"beta": 0.05, "bonus_scale": 0.055, "l1_per_step": 2}, PrivacySetting(epsilon=100.0, calibration="tight"), env, 4000,
                       np.random.default_rng(1), np.random.default_rng(2)).agent
    broken = feed_episodes(agent, env, 4000, np.random.default_rng(3), EpisodeRecord())
    assert not np.array_equal(broken.gap, ref.gap)


def test_block_size_does_not_change_the_run():
    """Blocks of 7 episodes (the tie-break keys and uniforms drawn per block, the Laplace
    noise inside the compiled loop) read the same streams as blocks of 1024 and as the
    reference loop, which draws the noise with NumPy episode by episode: the run is
    unchanged. A loop that drew the sign words before the exponentials (or one episode's noise twice) differs."""
    env = ENVS["riverswim"]()
    privacy = PrivacySetting(epsilon=10.0, calibration="tight")
    new, ref = _both(env, "pucb", privacy, 1500)
    agent = build_agent("pucb", {"beta": 0.05, "bonus_scale": 1.0, "l1_per_step": 2}, privacy, env, 1500,
                        np.random.default_rng(1), np.random.default_rng(2)).agent
    small = feed_episodes(agent, env, 1500, np.random.default_rng(3), EpisodeRecord(), block=7)
    assert np.array_equal(new.gap, ref.gap) and np.array_equal(small.gap, ref.gap)
    assert np.array_equal(small.ret, ref.sampled_return)


def test_tree_kernel_equals_the_plain_tree_counter():
    """``feed_tree`` with ``laplace_into``'s noise (PUCB's loop) releases exactly what the plain
    NumPy tree counter with ``LaplaceNoise`` releases on the same stream and noise generator,
    at every step (and a noise-free kernel gives the exact prefix sums)."""
    N, T, scale = 11, 37, 0.7
    stream = np.random.default_rng(0).integers(0, 2, size=(T, N)).astype(float)
    ref = PlainTreeCounter(N, T, LaplaceNoise(scale), np.random.default_rng(5))
    L = tree_levels(T)
    exact, suffix = np.zeros((L, N)), np.zeros((L, N))
    exact0, suffix0 = np.zeros((L, N)), np.zeros((L, N))
    rng = np.random.default_rng(5)
    for t in range(1, T + 1):
        ref.update(stream[t - 1])
        noise = np.empty(N)
        laplace_into(rng.standard_exponential(N), rng.random(sign_words(N)), scale, noise)
        feed_tree(exact, suffix, t, stream[t - 1], noise, True)
        feed_tree(exact0, suffix0, t, stream[t - 1], np.empty(0), False)
        level = (t & -t).bit_length() - 1
        assert np.array_equal(suffix[level], ref.release()), t
        assert np.array_equal(suffix0[level], stream[:t].sum(axis=0)), t


def test_run_rejects_more_episodes_than_the_counters_horizon():
    env = ENVS["garnet"]()
    agent = build_agent("pucb", {"beta": 0.05, "bonus_scale": 1.0, "l1_per_step": 2}, PrivacySetting(epsilon=1.0, calibration="tight"), env, 100, np.random.default_rng(1), np.random.default_rng(2)).agent
    with pytest.raises(ValueError, match="horizon"):
        feed_episodes(agent, env, 101, np.random.default_rng(3), EpisodeRecord())


# --------------------------------------------------------------------- online summaries


def test_streaming_sum_is_numpy_pairwise_sum():
    rng = np.random.default_rng(0)
    for n in [1, 7, 8, 9, 127, 128, 129, 1000, 4097, 100_003]:
        x = rng.random(n) - 0.3
        s = StreamingSum(n)
        pos = 0
        while pos < n:  # chunks of random sizes
            k = int(rng.integers(1, 700))
            s.push(x[pos : pos + k])
            pos += k
        assert s.value == np.add.reduce(x) == pairwise_sum(x, 0, n), n
    # the order matters: a sequential sum differs from NumPy's somewhere (the test has power)
    x = rng.random(100_003)
    assert np.cumsum(x)[-1] != np.add.reduce(x)


def test_checkpoint_summary_equals_numpy_on_full_arrays():
    rng = np.random.default_rng(1)
    T, alpha = 30_011, 0.4
    gap, ret = rng.random(T), rng.integers(0, 4, T).astype(float)
    cp = jobs.log_checkpoints(T, 40)
    s = CheckpointSummary(cp, alpha)
    pos = 0
    while pos < T:
        k = int(rng.integers(1, 3000))
        s.add(gap[pos : pos + k], ret[pos : pos + k])
        pos += k
    s.check_complete()
    assert np.array_equal(s.cum_gap, np.cumsum(gap)[cp - 1])
    assert np.array_equal(s.cum_ret, np.cumsum(ret)[cp - 1])
    assert np.array_equal(s.n_above, np.cumsum(gap > alpha)[cp - 1])
    assert np.array_equal(s.window_mean, [gap[max(0, c - max(c // 10, 1)) : c].mean() for c in cp])


def test_regret_job_table_equals_reference_table():
    """The job's table (online summaries of the compiled loop) equals the table the
    pre-issue-12 job built from the reference loop's per-episode arrays."""
    spec = JobSpec("tabular_regret", "tabular_regret", {"name": "pucb", "beta": 0.05, "bonus_scale": 1.0, "l1_per_step": 2},
                   {"name": "garnet", "S": 3, "A": 2, "H": 2, "branching": 2},
                   PrivacySetting(epsilon=10.0, calibration="tight"), {"episodes": 5000, "checkpoints": 25}, 3)
    new = jobs.run_regret(JobContext(spec))
    ctx = JobContext(spec)
    env = make_tabular_env("garnet", spec.environment, ctx.rng("env", "instance"))
    agent = make_reference_agent("pucb", env, 5000, spec.privacy, 0.05, 1.0, ctx.agent_rng, ctx.noise_rng)
    log = reference_run_episodes(env, agent, 5000, ctx.env_rng)
    cp = jobs.log_checkpoints(5000, 25)
    gap = log.gap
    expected = pd.DataFrame({
        "episode": cp, "regret": np.cumsum(gap)[cp - 1], "mean_return": np.cumsum(log.sampled_return)[cp - 1] / cp,
        "mean_gap_last": [gap[max(0, c - max(c // 10, 1)) : c].mean() for c in cp],
    })
    pd.testing.assert_frame_equal(new[expected.columns], expected, check_exact=True)


def test_run_episodes_table_equals_the_per_episode_record():
    """``run_episodes`` (the protocol runner) reports at its checkpoints what the per-episode
    record of the same run gives, ``n_subopt`` included; bad checkpoints are refused first."""
    env = garnet(np.random.default_rng(0), S=3, A=2, H=2, branching=2)
    privacy, params, T, alpha = PrivacySetting(epsilon=10.0, calibration="tight"), {"beta": 0.05, "bonus_scale": 1.0, "l1_per_step": 2}, 3000, 0.05

    def built():
        return build_agent("pucb", params, privacy, env, T, np.random.default_rng(1), np.random.default_rng(2))

    cp = np.array([1, 7, 100, 2999, 3000])
    df = run_episodes(built(), env, T, np.random.default_rng(3), cp, alpha=alpha)
    log = feed_episodes(built().agent, env, T, np.random.default_rng(3), EpisodeRecord())
    assert df["episode"].tolist() == cp.tolist()
    np.testing.assert_array_equal(df["regret"], np.cumsum(log.gap)[cp - 1])
    np.testing.assert_array_equal(df["n_subopt"], np.cumsum(log.gap > alpha)[cp - 1])
    assert 0 < df["n_subopt"].iloc[-1] < T
    for bad in (np.array([0, 5]), np.array([5, 5]), np.array([10, T + 1]), np.array([1.5, 2.0])):
        with pytest.raises(ValueError, match="checkpoints"):
            run_episodes(built(), env, T, np.random.default_rng(3), bad)


# --------------------------------------------------------------------- Numba caches


@pytest.mark.parametrize("module,callee", [
    ("dprl.agents.tabular.episodes", "dprl.agents.tabular.planner"),
    ("dprl.agents.tabular.episodes", "dprl.privacy.kernels"),
    ("dprl.agents.linmix.loop", "dprl.privacy.kernels"),
    ("dprl.agents.linmix.loop", "dprl.envs.tabular"),
])
def test_an_edited_callee_file_drops_the_loops_cache(monkeypatch, tmp_path, module, callee):
    """Numba checks only a kernel's own file: after an edit of a module the loop calls
    into, the loop's cached kernels are flushed (once), and left alone while the sources
    match. The files the loop calls into are derived from its import closure."""
    importlib.import_module(module)
    assert callee in kernel_cache.kernel_closure(module)
    kernels = kernel_cache._kernels(module)
    flushed = []
    for k in kernels:  # record instead of flushing: the real caches stay warm
        monkeypatch.setattr(k._cache, "flush", lambda k=k: flushed.append(k.__name__))
    stamp = tmp_path / "stamp"
    assert kernel_cache.drop_stale_caches(module, stamp=stamp)  # no stamp yet: flushed
    assert sorted(flushed) == sorted(k.__name__ for k in kernels) and "_run_block" in flushed
    flushed.clear()
    assert not kernel_cache.drop_stale_caches(module, stamp=stamp) and not flushed  # unchanged sources
    edited = tmp_path / "callee.py"
    edited.write_bytes(Path(sys.modules[callee].__file__).read_bytes() + b"\n# an edit\n")
    monkeypatch.setattr(sys.modules[callee], "__file__", str(edited))
    assert kernel_cache.drop_stale_caches(module, stamp=stamp)  # the callee changed
    assert "_run_block" in flushed


@pytest.mark.parametrize("name,privacy", AGENTS[:2])
def test_policy_value_table_and_width_memo_keep_the_run_identical(name, privacy):
    """The loop looks up the values of policies it has evaluated (``policy_table``) and
    reuses the confidence widths of unchanged counts (``planner.new_memo``): bit-identical to
    the reference, which evaluates and computes everything, on an instance with a table
    (garnet 3-2-2: 64 policies) and one without (S = 9: 2^18 policies, every policy
    evaluated); the table is filled with exactly the values of the policies played."""
    from dprl.agents.tabular.episodes import _policy_code, policy_table
    from dprl.envs.tabular import policy_value_of

    assert policy_table(3, 2, 2).size == 64 and policy_table(3, 2, 3).size == 512 and policy_table(9, 2, 2).size == 0
    big = garnet(np.random.default_rng(4), S=9, A=2, H=2, branching=2)
    for env in (ENVS["garnet"](), big):
        new, ref = _both(env, name, privacy, 2000)
        assert np.array_equal(new.gap, ref.gap) and np.array_equal(new.ret, ref.sampled_return)
    # the codes are one-to-one on the policies, and a looked-up value is the policy's value
    env = ENVS["garnet"]()
    policies = np.array(np.meshgrid(*[range(2)] * 6, indexing="ij")).reshape(6, -1).T.reshape(-1, 2, 3)
    codes = [_policy_code(p, 2) for p in policies]
    assert sorted(codes) == list(range(64))
    values = [policy_value_of(env.P, env.R, env.p0, p, np.empty(3), np.empty(3)) for p in policies]
    assert len(set(values)) > 8  # the table's entries differ: a code collision would show in the regret
