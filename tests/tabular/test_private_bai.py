import numpy as np
import pytest

from dprl.agents.tabular.private_bai import dp_successive_elimination, lemma8_bound
from dprl.envs.bandit import mab


def test_bai_succeeds_and_respects_lemma8():
    bandit = mab(np.random.default_rng(0), k=3, alpha=0.2, best_mean=0.7)
    env_rng, noise_rng = np.random.default_rng(1), np.random.default_rng(2)
    eps, beta = 0.05, 0.05
    runs = [dp_successive_elimination(bandit, eps, beta, env_rng, noise_rng) for _ in range(200)]
    assert np.mean([r.chosen == bandit.best_arm for r in runs]) >= 1 - beta
    sub = bandit.gaps() > 0
    assert np.mean([r.pulls[sub].mean() for r in runs]) > lemma8_bound(eps, 0.2, beta)
    # every user is pulled once: total pulls equal the epochs' sums
    r = runs[0]
    assert r.pulls.sum() >= 2 * bandit.k


def test_bai_pulls_grow_like_one_over_epsilon_in_the_private_regime():
    bandit = mab(np.random.default_rng(0), k=2, alpha=0.2, best_mean=0.7)
    def pulls(eps):
        rng1, rng2 = np.random.default_rng(3), np.random.default_rng(4)
        return np.mean([dp_successive_elimination(bandit, eps, 0.05, rng1, rng2).pulls.min() for _ in range(100)])
    ratio = pulls(0.005) / pulls(0.05)
    assert 4 < ratio < 25  # ~10 when the Laplace term dominates


def test_lemma8_needs_small_beta():
    with pytest.raises(ValueError, match=r"Lemma 8 beta must be in \(0, 0.25\)"):
        lemma8_bound(1.0, 0.1, 0.3)
