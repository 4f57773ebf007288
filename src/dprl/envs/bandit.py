"""Bernoulli multi-armed bandit for best-arm identification (Vietri et al. 2020, Section 6.1)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dprl.checks import check_array, check_number


@dataclass
class BernoulliBandit:
    """Arms with Bernoulli rewards of means ``means``; validated at construction."""

    means: np.ndarray

    def __post_init__(self) -> None:
        self.means = check_array("Bernoulli arm means", self.means, minimum=0.0, maximum=1.0)
        if self.means.ndim != 1 or self.means.size < 2:
            raise ValueError(f"a bandit needs at least 2 arms, got means of shape {self.means.shape}")

    @property
    def k(self) -> int:
        return self.means.size

    @property
    def best_arm(self) -> int:
        return int(np.argmax(self.means))

    def gaps(self) -> np.ndarray:
        return self.means.max() - self.means


def mab(rng: np.random.Generator, k: int = 4, alpha: float = 0.1, best_mean: float = 0.6) -> BernoulliBandit:
    """``k`` arms: one optimal arm (its index drawn from ``rng``) of mean ``best_mean``, the
    others ``α``-suboptimal (mean ``best_mean − α``), the instance of Lemma 8."""
    check_number("mab k", k, minimum=2, integer=True)
    if not (0 < alpha <= best_mean <= 1):
        raise ValueError(f"mab needs 0 < alpha <= best_mean <= 1, got alpha={alpha}, best_mean={best_mean}")
    means = np.full(k, best_mean - alpha)
    means[rng.integers(k)] = best_mean
    return BernoulliBandit(means)
