"""Benchmarks of three hot paths of the mechanisms, each against the previous implementation
measured in the same run. Run with ``pytest tests/benchmarks/test_bench_mechanisms.py --benchmark-only -o addopts=""``.

- Laplace noise of PUCB's compiled loop, one episode of garnet 3-2-2's 60 counters:
  ``±b·E`` (one exponential per variate, 53 signs per uniform word; ``kernels.laplace_into``)
  against ``b(E1 − E2)`` (two exponentials). Measured 2026-11-28 (fastest of the rounds):
  298 against 367 ns an episode.
- ``counter_error``'s per-step error of 2000 symmetric 3×3 matrices: the Frobenius screen
  (``eigvalsh`` only near the bound) against ``eigvalsh`` of all of them. Measured
  2026-11-28 with the bound at the 99th percentile: 88 against 1150 µs.
- ``Regularizer._finish`` on 20,000 released 3×3 Gram matrices: the Gershgorin screen (eigh only
  where a floor may apply) against eigh of every matrix (an lq_audit job: 27 -> 11 CPU-s).
"""

import numpy as np
import pytest
from numba import njit
from regularizer_reference import finish_with_eigh_everywhere

from dprl.experiments.mechanisms import jobs
from dprl.privacy.regularizer import NonPrivateRegularizer
from dprl.privacy.kernels import laplace_into, sign_words

N_COUNTERS, EPISODES = 60, 20_000


@njit(cache=True)
def _episodes_sign_words(rng: np.random.Generator, episodes: int, out: np.ndarray) -> None:
    n = out.shape[0]
    e = np.empty(n)
    words = np.empty(sign_words(n))
    for _ in range(episodes):
        for c in range(n):
            e[c] = rng.standard_exponential()
        for j in range(words.shape[0]):
            words[j] = rng.random()
        laplace_into(e, words, 0.7, out)


@njit(cache=True)
def _episodes_two_exponentials(rng: np.random.Generator, episodes: int, out: np.ndarray) -> None:
    n = out.shape[0]
    e1 = np.empty(n)
    e2 = np.empty(n)
    for _ in range(episodes):
        for c in range(n):
            e1[c] = rng.standard_exponential()
        for c in range(n):
            e2[c] = rng.standard_exponential()
        for c in range(n):
            out[c] = 0.7 * (e1[c] - e2[c])


@pytest.mark.parametrize("loop", [_episodes_sign_words, _episodes_two_exponentials], ids=["current", "reference"])
def test_bench_pucb_episode_noise(benchmark, loop):
    out = np.empty(N_COUNTERS)
    loop(np.random.default_rng(0), 2, out)  # compile outside the timing
    benchmark(loop, np.random.default_rng(1), EPISODES, out)


@pytest.fixture(scope="module")
def matrices():
    g = np.random.default_rng(0).normal(size=(2000, 3, 3))
    diff = (g + np.swapaxes(g, 1, 2)) / 2
    return diff, float(np.quantile(jobs._error("gaussian_tree_matrix", diff), 0.99))


def test_bench_counter_error_step_screened(benchmark, matrices):
    diff, bound = matrices
    err = benchmark(jobs._screened_error, "gaussian_tree_matrix", diff, bound)
    assert np.array_equal(err <= bound, jobs._error("gaussian_tree_matrix", diff) <= bound)


def test_bench_counter_error_step_reference(benchmark, matrices):
    diff, _ = matrices
    benchmark(jobs._error, "gaussian_tree_matrix", diff)


@pytest.fixture(scope="module")
def grams():
    g = np.random.default_rng(0).normal(scale=0.3, size=(20_000, 3, 3))
    return g + np.swapaxes(g, 1, 2) + 3.0 * np.eye(3)


def test_bench_regularizer_finish_screened(benchmark, grams):
    reg = NonPrivateRegularizer((len(grams),), 3, 1, 1.0)
    target = np.zeros((len(grams), 3, 1))
    st = benchmark(reg._finish, grams, target, 1.0, 1.0, 0.0)
    assert np.array_equal(st.gram, finish_with_eigh_everywhere(grams, 1.0)[0])


def test_bench_regularizer_finish_reference(benchmark, grams):
    benchmark(finish_with_eigh_everywhere, grams, 1.0)
