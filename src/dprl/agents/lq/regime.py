"""Where Private-OFU-RL's regret rate applies (src/dprl/README.md, "Regimes").

The Regularizer's shift ``η = 2Λ`` dominates the Gram matrix until the data outweigh it: one
episode adds Gram eigenvalues of order ``[5e-5, 0.2, 1]`` on the random system, so for
``k ≲ 50Λ`` the confidence set still covers the whole parameter ball, the optimistic policy
is ``u ≡ 0`` whatever ε, and regret is linear. Measured (ε = 10 to K = 2.6e5, and
ε = 1000 at equal ``k/Λ``), regret is about a function of ``k/Λ`` alone: the onset is near
``k ≈ 50Λ`` and the local log-log slope falls to ≤ 0.6 near ``k ≈ 170Λ``. These two
factors are empirical constants of this package's instances, stated as such.

:func:`burn_in_episodes` turns them into a horizon from a job's own calibration: the
smallest ``K`` with ``K >= 170·Λ(K)`` (``Λ`` grows like ``sqrt(log K)`` through the tree
depth and the union bound over ``K``, so this is a fixed point).
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

# onset_episode and the fixed point are shared with the linear-mixture paper
from dprl.agents.regime import INITIAL_EPISODES, ONSET_REGRET_FRACTION, onset_episode  # noqa: F401
from dprl.agents.regime import burn_in_episodes as _fixed_point
from dprl.privacy.setting import PrivacySetting

ONSET_K_OVER_LAMBDA = 50.0
RATE_K_OVER_LAMBDA = 170.0


def burn_in_episodes(lam_of_k: Callable[[int], float], factor: float = RATE_K_OVER_LAMBDA, k_max: float = 1e15) -> float:
    """Smallest ``K`` with ``K >= factor · Λ(K)`` (:func:`dprl.agents.regime.burn_in_episodes`)."""
    return _fixed_point(lam_of_k, factor, k_max)


def private_ofu_burn_in(
    privacy: PrivacySetting, horizon: int, gamma: float, n: int, d: int, alpha: float,
    factor: float = RATE_K_OVER_LAMBDA,
) -> float:
    """:func:`burn_in_episodes` with ``Λ(K)`` = ``λ_min`` of Private-OFU-RL's calibration
    at ``privacy`` for ``K`` episodes (:func:`~dprl.agents.lq.calibration.private_ofu_calibration`)."""
    from dprl.agents.lq.calibration import private_ofu_calibration

    def lam(k: int) -> float:
        return private_ofu_calibration(privacy, k, horizon, gamma, n, d,
                                       alpha).regularizer.lam_min

    return burn_in_episodes(lam, factor)


def sigma_exponents(calibration: str, epsilons: list[float], deltas: list[float], delta0: float, eps0: float,
                    horizon: int, gamma: float, n: int, d: int, alpha: float, episodes: int) -> tuple[float, float]:
    """Expected exponents of the privacy cost in ε and in ln(1/δ) for the calibration in use.

    The paper's C3 follows from regret's privacy term scaling like ``sqrt(λ_max) ∝ sqrt(σ)``:
    with its zCDP route ``σ ∝ sqrt(ln(2/δ))/ε`` this gives ``−1/2`` and ``+1/4``. The same
    derivation for another calibration is the log-log slope of ``sqrt(σ)`` over the grid
    actually run (least squares), e.g. about ``−0.41, +0.385`` under ``tight``.
    """
    from dprl.agents.lq.calibration import private_ofu_calibration

    def half_log_sigma(e: float, dl: float) -> float:
        cal = private_ofu_calibration(PrivacySetting(epsilon=e, delta=dl, calibration=calibration), episodes, horizon, gamma, n, d, alpha)
        return 0.5 * math.log(cal.regularizer.sigma_gram)

    def slope(x: list[float], y: list[float]) -> float:
        return float(np.polyfit(x, y, 1)[0]) if len(x) >= 2 else float("nan")

    eps_slope = slope([math.log(e) for e in epsilons], [half_log_sigma(e, delta0) for e in epsilons])
    delta_slope = slope([math.log(math.log(1 / dl)) for dl in deltas], [half_log_sigma(eps0, dl) for dl in deltas])
    return eps_slope, delta_slope
