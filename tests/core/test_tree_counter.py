"""Tree counter: exact prefix sums without noise, the variance the tree implies, symmetry,
and the same releases as the plain NumPy mechanism (``tests/tabular/tree_reference.py``)."""

import numpy as np
import pytest
from scipy import stats
from tree_reference import PlainTreeCounter

from dprl.privacy.broken import break_noise
from dprl.privacy.kernels import laplace_into, sign_words
from dprl.privacy.noise import GaussianNoise, LaplaceNoise
from dprl.privacy.tree_counter import TreeCounter, nodes_in_release, tree_levels


@pytest.mark.parametrize("shape", [(1,), (7,), (3, 4), (5, 3, 3)])
def test_noiseless_releases_equal_prefix_sums(shape):
    rng = np.random.default_rng(0)
    T = 77
    xs = rng.integers(-3, 5, (T, *shape)).astype(float)
    c = TreeCounter(shape, T, None)
    assert np.array_equal(c.release(), np.zeros(shape))
    for t in range(T):
        c.update(xs[t])
        np.testing.assert_array_equal(c.release(), xs[: t + 1].sum(0))


def test_noiseless_float_stream_matches_cumsum():
    rng = np.random.default_rng(1)
    xs = rng.random((200, 10))
    c = TreeCounter((10,), 200, None)
    for t in range(200):
        c.update(xs[t])
        np.testing.assert_allclose(c.release(), xs[: t + 1].sum(0), rtol=1e-12)


def test_levels_and_horizon():
    assert tree_levels(1) == 1 and tree_levels(7) == 3 and tree_levels(8) == 4
    c = TreeCounter(2, 3, None)
    for _ in range(3):
        c.update(np.ones(2))
    with pytest.raises(RuntimeError, match="horizon"):
        c.update(np.ones(2))
    with pytest.raises(ValueError, match="shape"):
        TreeCounter(2, 3, None).update(np.ones(3))


@pytest.mark.parametrize("noise", [GaussianNoise(1.5), LaplaceNoise(0.7)])
def test_release_noise_variance_follows_tree(noise):
    """Var(release_t - prefix_t) = popcount(t) · Var(node noise), independently per t."""
    n, T = 40000, 21
    c = TreeCounter((n,), T, noise, np.random.default_rng(2))
    for t in range(1, T + 1):
        c.update(np.zeros(n))
        err = c.release()
        expected = nodes_in_release(t) * noise.variance
        # chi-square-type interval for the sample variance (n large: normal approx with kurtosis)
        kurt = 3.0 if isinstance(noise, GaussianNoise) else 6.0 / nodes_in_release(t) + 3.0
        se = expected * np.sqrt((kurt - 1) / n)
        assert abs(err.var() - expected) < 5 * se, (t, err.var(), expected)
        assert abs(err.mean()) < 5 * np.sqrt(expected / n)


def test_a_reused_noise_tree_is_not_the_tree():
    """Consecutive releases 1 and 2 use independent nodes: their noises are uncorrelated."""
    n = 50000
    c = TreeCounter((n,), 4, GaussianNoise(1.0), np.random.default_rng(3))
    c.update(np.zeros(n))
    r1 = c.release().copy()
    c.update(np.zeros(n))
    r2 = c.release().copy()
    c.update(np.zeros(n))
    r3 = c.release().copy()
    assert abs(np.corrcoef(r1, r2)[0, 1]) < 0.03  # node (0,1] vs node (0,2]
    assert np.corrcoef(r2, r3)[0, 1] > 0.6  # r3 = node(0,2] + node(2,3]


def test_symmetric_noise_is_symmetric_with_equal_entry_variance():
    n, p = 20000, 3
    c = TreeCounter((n, p, p), 4, GaussianNoise(2.0), np.random.default_rng(4), symmetric=True)
    c.update(np.zeros((n, p, p)))
    r = c.release()
    np.testing.assert_array_equal(r, np.swapaxes(r, -1, -2))
    v = r.var(axis=0)
    assert np.all(np.abs(v - 4.0) < 0.2)
    with pytest.raises(ValueError, match="square"):
        TreeCounter((3, 2), 4, None, symmetric=True)


def test_memory_is_O_levels_times_size():
    c = TreeCounter((1000, 5), 100000, None)
    assert c.nbytes == 2 * tree_levels(100000) * 1000 * 5 * 8


def test_noisy_counter_requires_generator():
    with pytest.raises(ValueError, match="generator"):
        TreeCounter(3, 10, GaussianNoise(1.0), None)


def test_gaussian_noise_is_gaussian():
    n = 100000
    c = TreeCounter((n,), 2, GaussianNoise(1.0), np.random.default_rng(5))
    c.update(np.zeros(n))
    assert stats.kstest(c.release(), "norm").pvalue > 1e-3


def _laplace_sign_checks(draw: np.ndarray, scale: float) -> tuple[float, float, float]:
    """KS p-value against Lap(scale), and the largest |correlation| of the signs of variates
    c and c + k (k = 1 and k = 53: the same bit of the next sign word), and of a sign with
    the magnitude."""
    sign = np.sign(draw)
    corr = [abs(np.corrcoef(sign[:-k], sign[k:])[0, 1]) for k in (1, 53)]
    corr.append(abs(np.corrcoef(sign, np.abs(draw))[0, 1]))
    return stats.kstest(draw, stats.laplace(scale=scale).cdf).pvalue, max(corr[:2]), corr[2]


def test_laplace_noise_is_laplace_with_independent_signs():
    """``LaplaceNoise`` draws ``±b·E`` with 53 signs per uniform word (``kernels.laplace_into``):
    the law is Lap(b), and no sign depends on another or on its magnitude. A sampler that
    took every sign from the first word (signs repeating with period 53) fails the check."""
    n, b = 200_000, 0.7
    draw = LaplaceNoise(b).sample(np.random.default_rng(3), (n,))
    p, corr, dep = _laplace_sign_checks(draw, b)
    assert p > 1e-3 and corr < 0.02 and dep < 0.02
    rng = np.random.default_rng(3)
    e, words = rng.standard_exponential(n), rng.random(sign_words(n))
    broken = np.empty(n)
    laplace_into(e, np.full_like(words, words[0]), b, broken)
    assert _laplace_sign_checks(broken, b)[1] > 0.5


@pytest.mark.parametrize("shape, noise, symmetric", [
    ((9,), None, False),
    ((9,), LaplaceNoise(0.7), False),
    ((4, 3), GaussianNoise(1.3), False),
    ((2, 3, 3), GaussianNoise(1.3), True),
    ((6,), break_noise(GaussianNoise(1.3), "reused"), False),
])
def test_compiled_counter_releases_what_the_plain_mechanism_releases(shape, noise, symmetric):
    """``TreeCounter`` (one call of the compiled ``feed_tree`` per element) is bit-identical
    to the plain NumPy mechanism on the same stream and noise generator, at every step."""
    T = 45
    xs = np.random.default_rng(7).integers(-2, 4, (T, *shape)).astype(float)
    compiled = TreeCounter(shape, T, noise, np.random.default_rng(3), symmetric=symmetric)
    plain = PlainTreeCounter(shape, T, noise, np.random.default_rng(3), symmetric=symmetric)
    for t in range(T):
        compiled.update(xs[t])
        plain.update(xs[t])
        assert np.array_equal(compiled.release(), plain.release()), t
