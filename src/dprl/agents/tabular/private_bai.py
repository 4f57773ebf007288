"""ε-DP best-arm identification: successive elimination in doubling epochs with
Laplace-noised epoch means (used against the lower bound of Lemma 8).

Algorithm (epochs ``j = 1, 2, ...``): every active arm is pulled ``2^j`` times by fresh
users; each arm's epoch reward sum gets ``Lap(1/ε)`` noise, giving a noisy mean
``μ̃_{a,j}``; with radius ``c_j = sqrt(ln(4 k j²/β) / 2^{j+1}) + ln(2 k j²/β)/(ε 2^j)``
(Hoeffding plus the Laplace tail, union bound over arms and epochs, ``Σ_j 1/j² < 2``),
arms with ``μ̃_a + c_j < max_b μ̃_b − c_j`` are eliminated. It stops with one arm left
(the released ``â``) or when ``max_epochs`` is reached (then ``â`` is the best noisy mean).

Privacy (Definition 4, standard ε-DP over the whole output ``(a^(1..T), â)``): every user
is pulled exactly once, so each user's reward enters exactly one (arm, epoch) sum, whose
sensitivity is 1 (rewards in {0, 1}). The noisy sums are Laplace mechanisms on disjoint
users, hence ε-DP jointly by parallel composition. Which arm each user is asked to pull,
when elimination happens and ``â`` are functions of the noisy sums alone (post-processing),
so the released sequence is ε-DP. Only the epoch's own data enter the epoch's means, so
no user is ever counted twice.

Simulation: the sum of ``2^j`` Bernoulli(p) pulls is drawn as one Binomial(2^j, p); it has
exactly the distribution of the sum of the individual pulls, and the algorithm reads only
the sum.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from dprl.checks import check_number
from dprl.envs.bandit import BernoulliBandit


@dataclass
class BAIResult:
    pulls: np.ndarray  # (k,) pulls per arm
    chosen: int
    epochs: int


@dataclass(frozen=True)
class SECalibration:
    """The noise of DP successive elimination: ``Lap(scale)`` on each (arm, epoch) reward sum."""

    scale: float

    @property
    def accounted_epsilon(self) -> float:
        """ε under replacement (module docstring): each user's reward enters one sum of
        sensitivity 1 (parallel composition over disjoint users), so ``ε = 1/scale``."""
        return 1.0 / self.scale

    @property
    def accounted_delta(self) -> float:
        """Laplace noise: pure ε-DP."""
        return 0.0


def se_calibration(epsilon: float) -> SECalibration:
    """The Laplace scale ``1/ε`` the algorithm adds at level ``ε``."""
    check_number("epsilon", epsilon, exclusive_minimum=0.0)
    return SECalibration(1.0 / epsilon)


def lemma8_bound(epsilon: float, alpha: float, beta: float) -> float:
    """Lemma 8: ``E[n_a] > ln(1/(4β)) / (24 ε α)`` for an α-suboptimal arm, β in (0, 1/4)."""
    check_number("Lemma 8 beta", beta, exclusive_minimum=0.0, exclusive_maximum=0.25)
    check_number("epsilon", epsilon, exclusive_minimum=0.0)
    check_number("alpha", alpha, exclusive_minimum=0.0)
    return math.log(1.0 / (4.0 * beta)) / (24.0 * epsilon * alpha)


def dp_successive_elimination(
    bandit: BernoulliBandit, epsilon: float, beta: float, env_rng: np.random.Generator,
    noise_rng: np.random.Generator, max_epochs: int = 40,
) -> BAIResult:
    """Run the algorithm of the module docstring once."""
    # a NaN β or ε makes every confidence radius NaN and eliminates every arm at once
    check_number("epsilon", epsilon, exclusive_minimum=0.0)
    check_number("beta", beta, exclusive_minimum=0.0, exclusive_maximum=1.0)
    check_number("max_epochs", max_epochs, minimum=1, integer=True)
    scale = se_calibration(epsilon).scale
    k = bandit.k
    active = np.ones(k, dtype=bool)
    pulls = np.zeros(k, dtype=np.int64)
    j = 0
    while active.sum() > 1 and j < max_epochs:
        j += 1
        n_j = 2**j
        idx = np.flatnonzero(active)
        sums = env_rng.binomial(n_j, bandit.means[idx]).astype(float)
        pulls[idx] += n_j
        noisy = (sums + noise_rng.laplace(0.0, scale, idx.size)) / n_j
        radius = math.sqrt(math.log(4 * k * j * j / beta) / (2 * n_j)) + math.log(2 * k * j * j / beta) / (epsilon * n_j)
        keep = noisy + radius >= noisy.max() - radius
        active[idx[~keep]] = False
        last = (idx, noisy)
    idx, noisy = last
    chosen = int(np.flatnonzero(active)[0]) if active.sum() == 1 else int(idx[np.argmax(noisy)])
    return BAIResult(pulls, chosen, j)
