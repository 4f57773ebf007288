"""The statistics UBEV and PUCB plan from: exact counts (UBEV) or private tree counters (PUCB).

Both sources expose the same two operations, ``update`` (one episode's trajectory) and
``release`` (a :class:`ReleasedStats`), and are the *only* difference between UBEV and
PUCB (spec: "UBEV means the same algorithm with exact counts, no noise and ``E_ε = 0``").
The planner receives a :class:`ReleasedStats` and nothing else; for PUCB it holds the
noisy prefix sums of the tree counters and a data-independent error bound ``E``, so every
policy is a post-processing of ε-DP releases (billboard lemma, Section 4).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dprl.agents.tabular import calibration as cal
from dprl.privacy.noise import LaplaceNoise
from dprl.privacy.tree_counter import TreeCounter


@dataclass(frozen=True)
class ReleasedStats:
    """Released statistics at the start of an episode (read-only arrays).

    ``r[h, s, a]`` reward sums, ``n[h, s, a]`` visit counts, ``m[h, s, a, s']`` transition
    counts, ``e`` the bound ``E`` on ``|released − true|`` the planner must allow for
    (``0`` for exact counts)."""

    r: np.ndarray
    n: np.ndarray
    m: np.ndarray
    e: float


def _readonly(x: np.ndarray) -> np.ndarray:
    v = x.view()
    v.flags.writeable = False
    return v


def episode_indicators(S: int, A: int, H: int, states: np.ndarray, actions: np.ndarray, rewards: np.ndarray) -> np.ndarray:
    """One episode's stream element for all ``2SAH + S²AH`` counters, flat, laid out as
    ``[r (H,S,A) | n (H,S,A) | m (H,S,A,S)]`` (Algorithm 2, the two "Feed" lines): the
    reward at ``(s_h, a_h, h)``, 1 at ``(s_h, a_h, h)`` and at ``(s_h, a_h, s_{h+1}, h)``, 0
    elsewhere."""
    sah = S * A * H
    x = np.zeros(2 * sah + sah * S)
    h = np.arange(H)
    i = (h * S + states[:H]) * A + actions
    x[i] = rewards
    x[sah + i] = 1.0
    x[2 * sah + i * S + states[1 : H + 1]] = 1.0
    return x


class ExactStats:
    """UBEV's statistics: exact counts, ``E = 0``."""

    def __init__(self, S: int, A: int, H: int) -> None:
        self.S, self.A, self.H = S, A, H
        self._r = np.zeros((H, S, A))
        self._n = np.zeros((H, S, A))
        self._m = np.zeros((H, S, A, S))
        self._h = np.arange(H)
        self._released = ReleasedStats(_readonly(self._r), _readonly(self._n), _readonly(self._m), 0.0)

    def update(self, states: np.ndarray, actions: np.ndarray, rewards: np.ndarray) -> None:
        h, s, a = self._h, states[: self.H], actions
        # one visit per step h, so the index tuples are distinct and += is exact
        self._r[h, s, a] += rewards
        self._n[h, s, a] += 1.0
        self._m[h, s, a, states[1:]] += 1.0

    def release(self) -> ReleasedStats:
        return self._released


class PrivateStats:
    """PUCB's statistics: one tree counter (Laplace, ``mechanisms.md``) per r̃, ñ, m̃ entry,
    held as a single flat :class:`TreeCounter` (all ``2SAH + S²AH`` counters advance
    together and share the same ε' and scale, Algorithm 2 lines 1-4).

    ``calibration``: ``paper`` uses the printed ``E_ε``; ``tight`` the per-episode bound of
    :func:`calibration.e_eps_tight`. The noise is identical in both.

    ``noise_multiplier`` (tests and audits only, never set from the config) scales the
    Laplace scale and ``E`` together: 0 gives exact counters with ``E = 0`` (must then
    reproduce UBEV exactly), a small value gives a deliberately broken mechanism.
    """

    def __init__(
        self, S: int, A: int, H: int, T: int, epsilon: float, calibration: str, beta: float,
        rng: np.random.Generator | None, l1_per_step: int = 2, noise_multiplier: float = 1.0,
    ) -> None:
        self.S, self.A, self.H, self.T = S, A, H, T
        self.scale = cal.counter_scale(epsilon, H, T, l1_per_step) * noise_multiplier
        noise = LaplaceNoise(self.scale) if noise_multiplier > 0 else None
        self.counter = TreeCounter(cal.n_counters(S, A, H), T, noise, rng)
        if calibration == "paper":
            self._e = np.full(T + 1, cal.e_eps_paper(epsilon, S, A, H, T, beta, l1_per_step))
        elif calibration == "tight":
            self._e = cal.e_eps_tight(epsilon, S, A, H, T, beta, l1_per_step)
        else:
            raise ValueError(f"calibration must be 'paper' or 'tight', got {calibration!r}")
        self._e = self._e * noise_multiplier
        self._sah = S * A * H

    def update(self, states: np.ndarray, actions: np.ndarray, rewards: np.ndarray) -> None:
        self.counter.update(episode_indicators(self.S, self.A, self.H, states, actions, rewards))

    def release(self) -> ReleasedStats:
        flat = self.counter.release()
        S, A, H, k = self.S, self.A, self.H, self._sah
        return ReleasedStats(
            _readonly(flat[:k].reshape(H, S, A)),
            _readonly(flat[k : 2 * k].reshape(H, S, A)),
            _readonly(flat[2 * k :].reshape(H, S, A, S)),
            float(self._e[min(self.counter.t + 1, self.T)]),
        )
