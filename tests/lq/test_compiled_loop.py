"""The compiled OFU-RL / Private-OFU-RL loop (``agents/lq/loop.py``) against its NumPy
reference (``lq_reference_loop.py``, the pre-issue-12 code path): per-episode regret equal to
round-off, final regret over seeds equal to round-off, the Regularizer's state and every
random stream's consumption identical, the ridge check, bounded memory and progress."""

import sys
import tracemalloc
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).parent))  # the reference loop (a test helper, not a package)
import lq_reference_loop as ref  # noqa: E402

from dprl.agents.lq.loop import _givens_add_rows  # noqa: E402
from dprl.agents.lq.ofu import OFUAgent  # noqa: E402
from dprl.agents.lq.oracle import OptimisticOracle  # noqa: E402
from dprl.agents.lq.build import build_agent
from dprl.agents.lq.episodes import ridge_estimate, run_episodes  # noqa: E402
from dprl.agents.protocol import BuiltAgent  # noqa: E402
from dprl.envs.lq import double_integrator, random_system  # noqa: E402
from dprl.privacy.regularizer import CentralRegularizer, RegularizerCalibration  # noqa: E402
from dprl.privacy.setting import PrivacySetting  # noqa: E402
from dprl.runner.checkpoints import log_checkpoints  # noqa: E402

PARAMS = {"n_candidates": 48, "alpha": 0.1, "lam": 0.1}
VARIANTS = {
    "ofu_rl": ("ofu_rl", None),
    "private-paper": ("private_ofu_rl", PrivacySetting(epsilon=1.0, delta=1e-3, calibration="paper")),
    "private-tight": ("private_ofu_rl", PrivacySetting(epsilon=1.0, delta=1e-3, calibration="tight")),
}
ROUND_OFF = 1e-9  # relative; the two loops differ only in summation order and LAPACK builds


def _pair(system, variant, episodes, seed=0, n_checkpoints=None):
    """Both loops on the same streams; the compiled one records every episode."""
    alg, privacy = VARIANTS[variant]
    seeds = [np.random.default_rng([seed, i]) for i in range(3)]
    built = build_agent(alg, PARAMS, privacy, system, episodes, *seeds[:2])
    new = run_episodes(built, system, episodes, seeds[2], log_checkpoints(episodes, n_checkpoints or 10 * episodes))
    seeds = [np.random.default_rng([seed, i]) for i in range(3)]
    agent = ref.build_reference_agent(system, alg, PARAMS, privacy, episodes, *seeds[:2])
    old = ref.reference_run_episodes(system, agent, episodes, seeds[2], n_checkpoints or 10 * episodes)
    return built, new, agent, old, seeds


@pytest.mark.parametrize("variant", list(VARIANTS))
def test_per_episode_regret_equals_the_reference_to_round_off(variant):
    """The first 300 episodes: per-episode exact regret, sampled regret, β_k, the estimation
    errors and every counter of the checkpoint table equal the reference's to round-off."""
    system = random_system(2, 1, 10, np.random.default_rng(11))
    K = 300
    built, new, agent, (table, regrets, sampled, betas), _ = _pair(system, variant, K)
    assert new["episode"].tolist() == list(range(1, K + 1))
    np.testing.assert_allclose(new["episode_regret"], regrets, rtol=ROUND_OFF, atol=1e-12)
    np.testing.assert_allclose(np.diff(new["regret_sampled"], prepend=0.0), sampled, rtol=ROUND_OFF, atol=1e-12)
    np.testing.assert_allclose(new["beta"], betas, rtol=ROUND_OFF)
    for col in table.columns:
        np.testing.assert_allclose(new[col], table[col], rtol=ROUND_OFF, atol=1e-12, err_msg=col)
    assert regrets.std() > 0  # a non-trivial run


@pytest.mark.parametrize("variant", list(VARIANTS))
def test_final_regret_over_seeds_equals_the_reference(variant):
    """Several seeds of 800 episodes (double integrator and a random system): the final
    cumulative regret agrees to round-off (the streams are consumed identically, so it is
    not merely statistically indistinguishable)."""
    for seed, system in enumerate([double_integrator(10), random_system(2, 1, 10, np.random.default_rng(5)),
                                   random_system(3, 2, 5, np.random.default_rng(6))]):
        _, new, _, (table, _, _, _), _ = _pair(system, variant, 800, seed=seed, n_checkpoints=5)
        np.testing.assert_allclose(new["regret"].iloc[-1], table["regret"].iloc[-1], rtol=ROUND_OFF)
        assert new["n_repaired"].iloc[-1] == table["n_repaired"].iloc[-1]
        assert new["n_clipped"].iloc[-1] == table["n_clipped"].iloc[-1]


@pytest.mark.parametrize("variant", ["private-tight", "ofu_rl"])
def test_regularizer_state_and_stream_consumption_are_the_references(variant):
    """After the loop, the Regularizer holds what the reference's holds (tree nodes, users,
    repairs) and every generator is at the same position (the next draws agree)."""
    system = random_system(2, 1, 10, np.random.default_rng(3))
    K = 200
    built, _, agent, _, seeds = _pair(system, variant, K, n_checkpoints=7)
    new_reg, old_reg = built.agent.regularizer, agent.regularizer
    assert (new_reg.n_users, new_reg.n_repaired, new_reg.n_not_pd) == (old_reg.n_users, old_reg.n_repaired, old_reg.n_not_pd)
    assert built.agent.n_clipped == agent.n_clipped
    if isinstance(new_reg, CentralRegularizer):
        for name in ("gram_counter", "target_counter"):
            a, b = getattr(new_reg, name), getattr(old_reg, name)
            assert a.t == b.t == K
            np.testing.assert_allclose(a._suffix, b._suffix, rtol=ROUND_OFF, atol=1e-10)
            np.testing.assert_allclose(a._exact, b._exact, rtol=ROUND_OFF, atol=1e-10)
        np.testing.assert_allclose(new_reg.release().gram, old_reg.release().gram, rtol=ROUND_OFF, atol=1e-10)
    else:
        np.testing.assert_allclose(new_reg.release().gram, old_reg.release().gram, rtol=ROUND_OFF)
    # the compiled run's generators vs the reference's (same seeds, same consumption)
    new_rngs = (built.agent.oracle.rng, getattr(getattr(new_reg, "gram_counter", None), "rng", None))
    old_rngs = (agent.oracle.rng, getattr(getattr(old_reg, "gram_counter", None), "rng", None))
    for a, b in zip(new_rngs, old_rngs):
        if a is not None:
            assert a.random() == b.random()


def test_floored_releases_follow_the_reference():
    """Noise far above the shift: many releases leave the good event and are floored; the
    compiled release (``_release_central``) floors, counts and plans exactly as the Python one."""
    system = random_system(2, 1, 10, np.random.default_rng(4))
    cal = RegularizerCalibration(sigma_gram=20.0, sigma_target=1.0, shift=1.0, lam_min=2.0, lam_max=5.0, nu=1.0)

    def agent(cls_oracle, cls_agent):
        oracle = cls_oracle(2, 1, system.q, system.r, 10, system.x1, system.noise_radius, 16, np.random.default_rng(1))
        reg = CentralRegularizer((), 3, 2, 64, cal, np.random.default_rng(2))
        return cls_agent(reg, oracle, 2, 1, system.noise_radius, system.gamma, 0.1, clip=True)

    new = agent(OptimisticOracle, OFUAgent)
    df = run_episodes(BuiltAgent(new, None), system, 64, np.random.default_rng(3), log_checkpoints(64, 640))
    old = agent(ref.OptimisticOracle, ref.OFUAgent)
    table, regrets, _, _ = ref.reference_run_episodes(system, old, 64, np.random.default_rng(3), 640)
    assert df["n_repaired"].iloc[-1] == table["n_repaired"].iloc[-1] > 10
    assert df["n_not_pd"].iloc[-1] == table["n_not_pd"].iloc[-1] > 0
    np.testing.assert_allclose(df["episode_regret"], regrets, rtol=ROUND_OFF, atol=1e-12)


def test_python_agent_and_compiled_loop_are_one_implementation():
    """``OFUAgent.act``/``observe`` (the kernels one episode at a time, as audits use them)
    and ``run_episodes`` produce the same policies from the same streams."""
    system = random_system(2, 1, 10, np.random.default_rng(8))
    privacy = VARIANTS["private-tight"][1]
    built = build_agent("private_ofu_rl", PARAMS, privacy, system, 40, np.random.default_rng(1), np.random.default_rng(2))
    df = run_episodes(built, system, 40, np.random.default_rng(3), log_checkpoints(40, 400))
    step = build_agent("private_ofu_rl", PARAMS, privacy, system, 40, np.random.default_rng(1), np.random.default_rng(2))
    env_rng = np.random.default_rng(3)
    from dprl.envs.lq import RegretEvaluator, rollout
    ev = RegretEvaluator(system)
    for k in range(40):
        plan = step.agent.act()
        states, controls, _ = rollout(system, plan.gains, system.sample_noise(env_rng, system.horizon))
        step.agent.observe(states, controls)
        assert ev.regret(plan.gains) == pytest.approx(df["episode_regret"].iloc[k], rel=1e-12, abs=1e-14)


def test_ridge_check_is_an_independent_least_squares_solution():
    """The Givens-updated QR factor of ``[√λ I; Z]`` solves the same ridge problem as the
    augmented ``lstsq`` (claim C4), and the job's ``ridge_gap`` is round-off; a wrong λ in
    the factor would be detected."""
    rng = np.random.default_rng(0)
    z, x = rng.standard_normal((50, 3)), rng.standard_normal((50, 2))
    for lam, expect_equal in ((0.1, True), (1.0, False)):
        fac = np.zeros((3, 5))
        fac[:, :3] = np.sqrt(lam) * np.eye(3)
        for block in range(5):
            _givens_add_rows(fac, np.hstack([z, x])[10 * block:10 * block + 10].copy())
        theta = np.linalg.solve(np.triu(fac[:, :3]), fac[:, 3:])
        assert np.allclose(theta, ridge_estimate(z, x, 0.1), rtol=1e-10) == expect_equal
    system = random_system(2, 1, 10, np.random.default_rng(2))
    built = build_agent("ofu_rl", PARAMS, None, system, 300, np.random.default_rng(1), np.random.default_rng(2))
    df = run_episodes(built, system, 300, np.random.default_rng(3), log_checkpoints(300, 8), check_ridge=True)
    assert df["ridge_gap"].iloc[1:].max() < 1e-10


def test_memory_does_not_grow_with_episodes_and_progress_is_reported():
    """Python-side allocations of a 20x longer run stay the same (no per-episode arrays), and
    progress is reported block by block up to K."""
    system = random_system(2, 1, 10, np.random.default_rng(2))
    params = dict(PARAMS, n_candidates=4)

    def peak(K):
        built = build_agent("ofu_rl", params, None, system, K, np.random.default_rng(1), np.random.default_rng(2))
        calls = []
        tracemalloc.start()
        run_episodes(built, system, K, np.random.default_rng(3), log_checkpoints(K, 10), progress=lambda d, t: calls.append((d, t)),
                     check_ridge=True, block=1000)
        size = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        return size, calls

    small, _ = peak(1_000)
    large, calls = peak(20_000)
    assert large < 1.5 * small + 50_000, (small, large)
    assert calls[-1] == (20_000, 20_000) and len(calls) >= 20
    assert all(a[0] < b[0] for a, b in zip(calls, calls[1:]))


def test_bad_input_is_rejected_before_the_loop():
    system = random_system(2, 1, 10, np.random.default_rng(2))
    built = build_agent("private_ofu_rl", PARAMS, VARIANTS["private-tight"][1], system, 10, np.random.default_rng(1),
                        np.random.default_rng(2))
    with pytest.raises(ValueError, match="horizon"):
        run_episodes(built, system, 11, np.random.default_rng(3), log_checkpoints(11, 3))
    with pytest.raises(ValueError, match="ridge"):
        run_episodes(built, system, 5, np.random.default_rng(3), log_checkpoints(5, 3), check_ridge=True)
    with pytest.raises(ValueError, match="checkpoints"):
        run_episodes(built, system, 5, np.random.default_rng(3), np.array([2, 7]))


@pytest.mark.parametrize("module,callee,kernel", [
    ("dprl.agents.lq.loop", "dprl.agents.lq.oracle", "run_block"),
    ("dprl.agents.lq.loop", "dprl.envs.lq", "run_block"),
    ("dprl.agents.lq.ofu", "dprl.agents.lq.oracle", "plan_step"),
    ("dprl.agents.lq.oracle", "dprl.envs.lq", "optimistic_step"),
    ("dprl.agents.lq.loop", "dprl.privacy.kernels", "run_block"),
])
def test_an_edited_kernel_file_drops_every_dependent_cache(monkeypatch, tmp_path, module, callee, kernel):
    """Numba checks only a function's own file (``run_block`` embeds the oracle, Riccati,
    ...): editing a callee's file flushes the caller's cached kernels, and nothing is
    flushed while the sources match (``runner/kernel_cache.py``, called by ``loop.py``). The
    callees are derived from the import closure, not listed."""
    import importlib
    from pathlib import Path

    from dprl.runner import kernel_cache

    importlib.import_module("dprl.agents.lq.loop")
    kernels = kernel_cache._kernels(module)
    flushed = []
    for k in kernels:  # record instead of flushing: the real caches stay warm
        monkeypatch.setattr(k._cache, "flush", lambda k=k: flushed.append(k.__name__))
    assert callee in kernel_cache.kernel_closure(module)
    stamp = tmp_path / "stamp"
    assert kernel_cache.drop_stale_caches(module, stamp=stamp) and kernel in flushed
    flushed.clear()
    assert not kernel_cache.drop_stale_caches(module, stamp=stamp) and not flushed
    edited = tmp_path / "callee.py"
    edited.write_bytes(Path(sys.modules[callee].__file__).read_bytes() + b"\n# an edit\n")
    monkeypatch.setattr(sys.modules[callee], "__file__", str(edited))
    assert kernel_cache.drop_stale_caches(module, stamp=stamp) and kernel in flushed


def test_a_loop_checks_every_kernel_module_it_imports(monkeypatch):
    """``drop_stale_closure`` (called at the end of ``loop.py``) checks the loop and each
    kernel module of its import closure that calls into another file (the oracle, the
    planner), not a hand-written list; a module whose kernels call only its own file is
    left to Numba."""
    import importlib

    from dprl.runner import kernel_cache

    importlib.import_module("dprl.agents.lq.loop")
    checked = []
    monkeypatch.setattr(kernel_cache, "drop_stale_caches", lambda name, *a, **k: checked.append(name) or False)
    assert kernel_cache.drop_stale_closure("dprl.agents.lq.loop") == []
    assert {"dprl.agents.lq.loop", "dprl.agents.lq.ofu", "dprl.agents.lq.oracle"} <= set(checked)
    assert "dprl.privacy.kernels" not in checked  # its kernels call only its own file
