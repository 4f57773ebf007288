"""The finite MRP builder, the chain, exact values and first-visit Monte Carlo data."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from dprl.envs.mrp import FiniteMRP, FirstVisitData, chain_mrp

sys.path.insert(0, str(Path(__file__).parent))  # the NumPy reference (a test helper, not a package)
import mrp_reference  # noqa: E402


def _first_visit_naive(states: list[int], rewards: list[float], gamma: float, n: int, absorbing: int):
    """Reference first-visit MC for one trajectory, written the textbook way."""
    ret, vis = np.zeros(n), np.zeros(n, dtype=bool)
    for t, s in enumerate(states[:-1]):
        if s == absorbing or vis[s]:
            continue
        vis[s] = True
        ret[s] = sum(gamma ** (u - t) * rewards[u] for u in range(t, len(rewards)))
    return ret, vis


def test_chain_structure_and_values():
    mrp = chain_mrp()
    assert mrp.n_states == 40 and mrp.absorbing == 39 and mrp.f_max == pytest.approx(100.0)
    assert mrp.P[38, 38] == 0.5 and mrp.P[38, 39] == 0.5 and mrp.P[39, 39] == 1.0
    assert mrp.R[37, 38] == 1.0 and mrp.R[38, 38] == 1.0 and mrp.R[38, 39] == 0.0
    v = mrp.true_values()
    # Bellman equation V = r + γ P V and the closed form at the goal: V(38) = 0.5 (1 + γ V(38))
    np.testing.assert_allclose(v, mrp.expected_reward + mrp.gamma * mrp.P @ v, atol=1e-12)
    assert v[38] == pytest.approx(0.5 / (1 - 0.5 * mrp.gamma))
    assert v[39] == 0.0
    assert np.all(np.diff(v[:38]) > 0)  # closer to the goal is worth more


@pytest.mark.parametrize("kwargs, msg", [
    ({"P": np.array([[0.5, 0.4], [0.0, 1.0]])}, "rows sum to 1"),
    ({"p0": np.array([0.5, 0.5])}, "no mass on the absorbing"),
    ({"gamma": 1.0}, "gamma"),
    ({"R": np.array([[2.0, 0.0], [0.0, 0.0]])}, r"rewards R must be finite and in \[0, 1\]"),
    ({"R": np.array([[-0.1, 0.0], [0.0, 0.0]])}, r"rewards R must be finite and in \[0, 1\]"),
    ({"max_len": 0}, "max_len"),
    ({"absorbing": 0}, "self-loop"),
])
def test_mrp_validation(kwargs, msg):
    base = dict(P=np.array([[0.5, 0.5], [0.0, 1.0]]), R=np.array([[1.0, 0.0], [0.0, 0.0]]), p0=np.array([1.0, 0.0]),
                gamma=0.9, absorbing=1, max_len=10, r_max=1.0)
    base.update(kwargs)
    with pytest.raises(ValueError, match=msg):
        FiniteMRP(**base)


def test_chain_validation():
    with pytest.raises(ValueError, match="n_states must be >= 3"):
        chain_mrp(n_states=2)
    with pytest.raises(ValueError, match="p_right"):
        chain_mrp(p_right=0.0)


def test_first_visit_matches_naive_reference():
    """Vectorised sampling + backward first-visit returns equal a per-trajectory reference
    computed on trajectories re-simulated with the same random draws."""
    mrp = chain_mrp(n_states=6, gamma=0.9, max_len=15)
    data = mrp.sample_first_visit(300, np.random.default_rng(3))
    # Re-simulate with the same generator calls in the same order (start states, then one
    # uniform per step for the whole chunk) and compare trajectory by trajectory.
    rng = np.random.default_rng(3)
    m, n = 300, mrp.n_states
    s = rng.choice(n, size=m, p=mrp.p0)
    traj = [[int(x)] for x in s]
    for _ in range(mrp.max_len):
        u = rng.random(m)
        for i in range(m):
            cur = traj[i][-1]
            nxt = int(np.searchsorted(np.cumsum(mrp.P[cur]), u[i], side="right"))
            traj[i].append(min(nxt, n - 1))
        if all(t[-1] == mrp.absorbing for t in traj):
            break
    for i in range(m):
        states = traj[i]
        rewards = [mrp.R[a, b] for a, b in zip(states[:-1], states[1:])]
        ret, vis = _first_visit_naive(states, rewards, mrp.gamma, n, mrp.absorbing)
        np.testing.assert_array_equal(data.visited[i], vis)
        np.testing.assert_allclose(data.returns[i], ret, atol=1e-12)


def test_first_visit_mean_estimates_true_values():
    mrp = chain_mrp()
    data = mrp.sample_first_visit(20000, np.random.default_rng(0))
    stats = data.stats()
    v = mrp.true_values()
    counts = stats.counts[0]
    assert counts[39] == 0 and np.all(counts[:39] > 400)
    # first-visit MC is unbiased (the 200-step cut is reached with negligible probability):
    # every state's mean within 4 standard errors of the exact value
    se = np.array([data.returns[data.visited[:, s], s].std() for s in range(39)]) / np.sqrt(counts[:39])
    assert np.all(np.abs(stats.mean_returns[0, :39] - v[:39]) <= 4 * se)


def test_prefix_stats_equal_stats_of_prefixes():
    mrp = chain_mrp(n_states=10)
    data = mrp.sample_first_visit(500, np.random.default_rng(1))
    sizes = np.array([1, 7, 50, 500])
    st = data.prefix_stats(sizes)
    for j, m in enumerate(sizes):
        sub = FirstVisitData(data.returns[:m], data.visited[:m]).stats()
        np.testing.assert_array_equal(st.counts[j], sub.counts[0])
        np.testing.assert_allclose(st.mean_returns[j], sub.mean_returns[0], rtol=1e-12)
    with pytest.raises(ValueError):
        data.prefix_stats(np.array([0, 5]))


def test_streamed_prefix_stats_match_full_sample(monkeypatch):
    """The streaming reduction (chunk by chunk) sees the same trajectories as the full sample,
    including batch sizes that fall inside and on the borders of chunks."""
    monkeypatch.setattr("dprl.envs.mrp._CHUNK", 64)
    mrp = chain_mrp(n_states=10)
    sizes = np.array([1, 63, 64, 65, 128, 200, 333])
    full = mrp.sample_first_visit(333, np.random.default_rng(4)).prefix_stats(sizes)
    streamed = mrp.sample_prefix_stats(sizes, np.random.default_rng(4))
    np.testing.assert_array_equal(streamed.counts, full.counts)
    np.testing.assert_allclose(streamed.mean_returns, full.mean_returns, rtol=1e-12, atol=1e-14)


def test_sampling_is_deterministic():
    mrp = chain_mrp(n_states=8)
    a = mrp.sample_first_visit(100, np.random.default_rng(5))
    b = mrp.sample_first_visit(100, np.random.default_rng(5))
    np.testing.assert_array_equal(a.returns, b.returns)
    np.testing.assert_array_equal(a.visited, b.visited)


def _random_mrp(n: int, rng: np.random.Generator, max_len: int) -> FiniteMRP:
    """Rows with 1 to 4 successors (the chain has at most 2), absorbing state n-1."""
    P = np.zeros((n, n))
    for s in range(n - 1):
        succ = rng.choice(n, size=rng.integers(1, 5), replace=False)
        P[s, succ] = rng.dirichlet(np.ones(succ.size))
    P[n - 1, n - 1] = 1.0
    R = rng.random((n, n)) * (P > 0)
    R[n - 1, n - 1] = 0.0
    p0 = np.r_[np.full(n - 1, 1 / (n - 1)), 0.0]
    return FiniteMRP(P, R, p0, 0.9, n - 1, max_len, 1.0)


@pytest.mark.parametrize("mrp", [chain_mrp(n_states=12), _random_mrp(9, np.random.default_rng(0), 30),
                                 _random_mrp(9, np.random.default_rng(1), 400)], ids=["chain", "cut", "absorbed"])
def test_compiled_sampler_gives_the_numpy_references_numbers(monkeypatch, mrp):
    """The Numba step and backward pass against the NumPy reference: the same random draws,
    so the same trajectories and bit-identical returns, over several chunks (the last one
    partial), with trajectories cut at max_len ("cut") and chunks that stop early because
    every trajectory is absorbed ("absorbed")."""
    monkeypatch.setattr("dprl.envs.mrp._CHUNK", 97)
    for m in (1, 97, 300):
        fast = list(mrp.iter_first_visit(m, np.random.default_rng(7)))
        slow = list(mrp_reference.iter_first_visit(mrp, m, np.random.default_rng(7), 97))
        assert len(fast) == len(slow) == -(-m // 97)
        for a, b in zip(fast, slow):
            np.testing.assert_array_equal(a.returns, b.returns)
            np.testing.assert_array_equal(a.visited, b.visited)
    # and both are first-visit Monte Carlo of the drawn trajectories: positive returns only
    # where visited, the absorbing state never
    assert not fast[-1].visited[:, mrp.absorbing].any() and np.all(fast[-1].returns[~fast[-1].visited] == 0)
