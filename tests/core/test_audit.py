"""The audit passes on correct counters and fails on deliberately broken ones."""

import numpy as np
import pytest

from dprl.experiments.mechanisms.jobs import _audit_sampler, counter_noise, neighbouring_streams
from dprl.privacy.audit import audit, clopper_pearson
from dprl.privacy.broken import break_noise
from dprl.privacy.tree_counter import tree_levels

T, DIM, N = 8, 2, 60000
PRIV = {
    "laplace_tree": {"epsilon": 1.0, "delta": None, "calibration": "tight"},
    "gaussian_tree_vector": {"epsilon": 1.0, "delta": 1e-5, "calibration": "tight"},
    "gaussian_tree_matrix": {"epsilon": 1.0, "delta": 1e-5, "calibration": "tight"},
}


def run(alg, broken, seed=0):
    priv = PRIV[alg]
    noise = break_noise(counter_noise(alg, priv, tree_levels(T)), broken)
    d0, d1 = neighbouring_streams(alg, T, DIM)
    return audit(_audit_sampler(alg, noise, T, DIM), d0, d1, priv["epsilon"], priv["delta"] or 0.0,
                 n=N, rng=np.random.default_rng(seed))


@pytest.mark.parametrize("alg", sorted(PRIV))
def test_correct_counters_pass(alg):
    res = run(alg, "none")
    assert res.passed, res


@pytest.mark.parametrize("alg", sorted(PRIV))
@pytest.mark.parametrize("broken", ["halved", "reused", "unnoised"])
def test_broken_counters_fail(alg, broken):
    res = run(alg, broken, seed=1)
    assert not res.passed, res
    assert res.eps_lb > res.epsilon


def test_paper_calibration_also_passes():
    priv = {"epsilon": 0.5, "delta": 1e-5, "calibration": "paper"}
    noise = counter_noise("gaussian_tree_vector", priv, tree_levels(T))
    d0, d1 = neighbouring_streams("gaussian_tree_vector", T, DIM)
    assert audit(_audit_sampler("gaussian_tree_vector", noise, T, DIM), d0, d1, 0.5, 1e-5, n=N).passed


def test_clopper_pearson_edges():
    lo, hi = clopper_pearson(np.array([0, 10]), 10, 0.05)
    assert lo[0] == 0.0 and hi[1] == 1.0
    assert 0 < hi[0] < 0.4 and 0.6 < lo[1] < 1


def test_point_masses_split_by_rounding_jitter_do_not_fake_epsilon():
    """Both inputs put half their mass on an atom at 1.0, up to 1e-16 jitter; an audit
    that split the atom would report an enormous ε_lb."""
    from dprl.privacy.audit import audit_samples

    rng = np.random.default_rng(0)
    n = 20000

    def draw(jitter):
        x = rng.standard_normal((n, 1))
        atom = rng.random(n) < 0.5
        x[atom, 0] = 1.0 + jitter
        return x

    res = audit_samples(draw(0.0), draw(2e-16), draw(0.0), draw(2e-16), epsilon=0.1)
    assert res.passed, res
