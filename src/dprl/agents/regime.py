"""Regime helpers shared by the papers' agents and job functions (src/dprl/README.md, "Regimes"):
the measured onset of a run from its checkpointed cumulative regret, and the fixed point
``K >= factor · T*(K)`` of a burn-in that itself grows (logarithmically) with the horizon
it is computed for. Below the job functions (which record both) and the claims (which
read the recorded columns: :mod:`dprl.analysis.regime`)."""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

ONSET_REGRET_FRACTION = 0.5  # onset: per-episode regret below half its initial level
INITIAL_EPISODES = 10  # the initial level: mean per-episode regret over the first checkpoints up to here


def onset_episode(episodes: np.ndarray, cum_regret: np.ndarray, fraction: float = ONSET_REGRET_FRACTION,
                  initial: int = INITIAL_EPISODES) -> float:
    """Measured onset from checkpointed cumulative regret: the first checkpoint whose mean
    per-episode regret since the previous checkpoint is at most ``fraction`` of the initial
    level (mean over episodes ``1..k0``, ``k0`` the first checkpoint ``>= initial``).
    During the burn-in the policy is the same clipped (or all-tied) one every episode, so
    per-episode regret is flat; ``NaN`` if it never falls within the run."""
    k = np.asarray(episodes, dtype=float)
    r = np.asarray(cum_regret, dtype=float)
    first = int(np.searchsorted(k, initial))
    if first >= len(k) or r[first] <= 0:
        return float("nan")
    level = r[first] / k[first]
    window = np.diff(r[first:]) / np.diff(k[first:])
    below = np.nonzero(window <= fraction * level)[0]
    return float(k[first + 1 + below[0]]) if below.size else float("nan")


def burn_in_episodes(lam_of_k: Callable[[int], float], factor: float, k_max: float = 1e15, steps: int = 60) -> float:
    """Smallest ``K`` with ``K >= factor · Λ(K)`` (``inf`` beyond ``k_max``), by bisection
    on ``log K`` (``K - factor·Λ(K)`` changes sign once: Λ grows only logarithmically), in
    ``steps`` halvings: the result is at most ``e^(ln(k_max)/2^steps)`` times the smallest such
    ``K`` (20 steps: 3e-5 relative, what a printed horizon needs; 60 for a recorded one)."""
    def gap(log_k: float) -> float:
        k = int(round(math.exp(log_k)))
        return k - factor * lam_of_k(max(k, 1))

    lo, hi = 0.0, math.log(k_max)
    if gap(lo) >= 0:
        return 1.0
    if gap(hi) < 0:
        return math.inf
    for _ in range(steps):
        mid = 0.5 * (lo + hi)
        if gap(mid) >= 0:
            hi = mid
        else:
            lo = mid
    return float(math.ceil(math.exp(hi)))
