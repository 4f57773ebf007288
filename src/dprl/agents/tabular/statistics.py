"""The statistics UBEV and PUCB plan from: exact counts (UBEV) or private tree counters (PUCB).

Both sources expose the same two operations, ``update`` (one episode's trajectory) and
``release`` (a :class:`ReleasedStats`), and are the *only* difference between UBEV and
PUCB (spec: "UBEV means the same algorithm with exact counts, no noise and ``E_ε = 0``").
The planner receives a :class:`ReleasedStats` and nothing else; for PUCB it holds the
noisy prefix sums of the tree counters and a data-independent error bound ``E``, so every
policy is a post-processing of ε-DP releases (billboard lemma, Section 4).

All ``2SAH + S²AH`` statistics live in one flat vector laid out as
``[r (H,S,A) | n (H,S,A) | m (H,S,A,S)]``. The two "Feed" lines of Algorithm 2 are the
compiled kernels :func:`feed_exact` and :func:`dprl.privacy.kernels.feed_tree` (the binary
mechanism of :class:`~dprl.privacy.tree_counter.TreeCounter`, with PUCB's node noise
``Lap(b) = ±b·E`` from :func:`~dprl.privacy.kernels.laplace_into`); the episode loop
(``agent._run_block``) calls the same kernels as the step-by-step classes below.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass

import numpy as np
from numba import njit

from dprl.checks import check_number
from dprl.privacy.setting import PrivacySetting
from dprl.agents.tabular import calibration as cal
from dprl.privacy.kernels import feed_tree, laplace_into, sign_words, trailing_zeros
from dprl.privacy.tree_counter import tree_levels


@dataclass(frozen=True)
class ReleasedStats:
    """Released statistics at the start of an episode (read-only).

    ``values`` is the flat vector ``[r | n | m]`` (module docstring); ``r[h, s, a]`` reward
    sums, ``n[h, s, a]`` visit counts, ``m[h, s, a, s']`` transition counts are views of
    it. ``e`` is the bound ``E`` on ``|released − true|`` the planner must allow for
    (``0`` for exact counts)."""

    values: np.ndarray
    e: float
    S: int
    A: int
    H: int

    @property
    def r(self) -> np.ndarray:
        k = self.S * self.A * self.H
        return self.values[:k].reshape(self.H, self.S, self.A)

    @property
    def n(self) -> np.ndarray:
        k = self.S * self.A * self.H
        return self.values[k : 2 * k].reshape(self.H, self.S, self.A)

    @property
    def m(self) -> np.ndarray:
        k = self.S * self.A * self.H
        return self.values[2 * k :].reshape(self.H, self.S, self.A, self.S)


def _readonly(x: np.ndarray) -> np.ndarray:
    v = x.view()
    v.flags.writeable = False
    return v


def episode_indicators(S: int, A: int, H: int, states: np.ndarray, actions: np.ndarray, rewards: np.ndarray) -> np.ndarray:
    """One episode's stream element for all ``2SAH + S²AH`` counters, flat (module
    docstring; Algorithm 2, the two "Feed" lines): the reward at ``(s_h, a_h, h)``, 1 at
    ``(s_h, a_h, h)`` and at ``(s_h, a_h, s_{h+1}, h)``, 0 elsewhere."""
    x = np.zeros(cal.n_counters(S, A, H))
    _indicators_into(x, S, A, H, np.asarray(states, dtype=np.int64), np.asarray(actions, dtype=np.int64), np.asarray(rewards, dtype=float))
    return x


@njit(cache=True)
def _indicators_into(x: np.ndarray, S: int, A: int, H: int, states: np.ndarray, actions: np.ndarray, rewards: np.ndarray) -> None:
    """Write the episode's indicators into the zeroed ``x`` (one visit per step ``h``, so
    the three indices of different steps never collide)."""
    sah = S * A * H
    for h in range(H):
        i = (h * S + states[h]) * A + actions[h]
        x[i] = rewards[h]  # Feed r to r̃(s, a, h)
        x[sah + i] = 1.0  # Feed 1 to ñ(s, a, h) ...
        x[2 * sah + i * S + states[h + 1]] = 1.0  # ... and to m̃(s, a, s', h)


@njit(cache=True)
def feed_exact(counts: np.ndarray, S: int, A: int, H: int, states: np.ndarray, actions: np.ndarray, rewards: np.ndarray) -> None:
    """UBEV's "Feed" lines: add the episode to the exact counts in place."""
    sah = S * A * H
    for h in range(H):
        i = (h * S + states[h]) * A + actions[h]
        counts[i] += rewards[h]
        counts[sah + i] += 1.0
        counts[2 * sah + i * S + states[h + 1]] += 1.0


class ExactStats:
    """UBEV's statistics: exact counts, ``E = 0``."""

    def __init__(self, S: int, A: int, H: int) -> None:
        self.S, self.A, self.H = S, A, H
        self.counts = np.zeros(cal.n_counters(S, A, H))
        self._released = ReleasedStats(_readonly(self.counts), 0.0, S, A, H)

    def update(self, states: np.ndarray, actions: np.ndarray, rewards: np.ndarray) -> None:
        feed_exact(self.counts, self.S, self.A, self.H, np.asarray(states, dtype=np.int64),
                   np.asarray(actions, dtype=np.int64), np.asarray(rewards, dtype=float))

    def release(self) -> ReleasedStats:
        return self._released


class PrivateStats:
    """PUCB's statistics: one tree counter (Laplace, ``src/dprl/README.md``) per r̃, ñ, m̃ entry;
    all ``2SAH + S²AH`` counters advance together and share the same ε' and scale
    (Algorithm 2 lines 1-4), so they are held as two ``(L, N)`` arrays (:func:`feed_tree`).

    ``privacy.calibration``: ``paper`` uses the printed ``E_ε``; ``tight`` the per-episode bound of
    :func:`calibration.e_eps_tight` (0 in episode 1, a constant after). The noise is
    identical in both.

    ``noise_multiplier`` (tests and audits only, never set from the config) scales the
    Laplace scale and ``E`` together: 0 gives exact counters with ``E = 0`` (must then
    reproduce UBEV exactly), a small value gives a deliberately broken mechanism.
    """

    def __init__(
        self, S: int, A: int, H: int, T: int, privacy: PrivacySetting, beta: float,
        rng: np.random.Generator | None, l1_per_step: int = 2, noise_multiplier: float = 1.0,
    ) -> None:
        # named here: a NaN l1_per_step would otherwise surface as a bad ε' further down
        check_number("beta", beta, exclusive_minimum=0.0, exclusive_maximum=1.0)
        check_number("l1_per_step", l1_per_step, exclusive_minimum=0.0)
        check_number("noise_multiplier", noise_multiplier, minimum=0.0)
        check_number("T", T, minimum=1, integer=True)
        # E for the release used in episode t = 1 and t >= 2 (checks the calibration first)
        e_first, e_rest = cal.count_error_bounds(privacy, S, A, H, T, beta, l1_per_step)
        self.S, self.A, self.H, self.T = S, A, H, T
        self.privacy, self.l1_per_step = privacy, l1_per_step
        self.N = cal.n_counters(S, A, H)
        self.scale = cal.counter_scale(privacy.epsilon, H, T, l1_per_step) * noise_multiplier
        if not (self.scale >= 0 and np.isfinite(self.scale)):
            raise ValueError(f"Laplace scale must be non-negative and finite, got {self.scale}")
        if self.scale > 0 and rng is None:
            raise ValueError("a noisy counter needs the noise generator")
        self.rng = rng
        L = tree_levels(T)
        self.exact = np.zeros((L, self.N))
        self.suffix = np.zeros((L, self.N))
        self.t = 0  # elements fed so far
        self._zero = _readonly(np.zeros(self.N))
        self.e_first, self.e_rest = e_first * noise_multiplier, e_rest * noise_multiplier

    def calibration(self) -> cal.PUCBCalibration:
        """The calibration of the noise these counters add: read from this object's own
        Laplace scale and bounds ``E`` (what the compiled loop runs with), so accounting it
        accounts the agent as it runs."""
        return cal.PUCBCalibration(self.privacy.epsilon, self.privacy.calibration, self.scale, self.e_first, self.e_rest,
                                   self.H, self.exact.shape[0])

    def replicas(self, width: int) -> PrivateStats:
        """``width`` fresh counters (no element fed yet) with this object's noise: the same
        Laplace scale, horizon ``T`` and kernels (:meth:`add`). Audits run these, so they
        examine the noise the agent holds, not a rebuilt copy of its calibration."""
        twin = copy.copy(self)
        twin.N = int(width)
        twin.exact = np.zeros((self.exact.shape[0], twin.N))
        twin.suffix = np.zeros_like(twin.exact)
        twin.t = 0
        twin._zero = _readonly(np.zeros(twin.N))
        return twin

    def add(self, x: np.ndarray, e: np.ndarray, words: np.ndarray) -> None:
        """Feed one stream element ``x`` with the draws of its node noise: ``N`` standard
        exponentials ``e`` and the uniform ``words`` holding their signs (:func:`laplace_into`)."""
        if self.t >= self.T:
            raise RuntimeError(f"tree counter horizon {self.T} exceeded")
        self.t += 1
        noise = np.empty(self.N)
        if self.scale > 0:
            laplace_into(e, words, self.scale, noise)
        feed_tree(self.exact, self.suffix, self.t, x, noise, self.scale > 0)

    def update(self, states: np.ndarray, actions: np.ndarray, rewards: np.ndarray) -> None:
        x = episode_indicators(self.S, self.A, self.H, states, actions, rewards)
        if self.scale > 0:
            # LaplaceNoise.sample's draw order: E (all counters), then the sign words
            e = self.rng.standard_exponential(self.N)
            words = self.rng.random(sign_words(self.N))
        else:
            e = words = self._zero
        self.add(x, e, words)

    def release_values(self) -> np.ndarray:
        """Noisy prefix sums of all counters after ``t`` elements (zeros before the first)."""
        if self.t == 0:
            return self._zero
        return _readonly(self.suffix[trailing_zeros(self.t)])

    def current_e(self) -> float:
        """``E`` for the release used in episode ``t + 1`` (``E_1`` is an empty sum's bound)."""
        return self.e_first if self.t == 0 else self.e_rest

    def release(self) -> ReleasedStats:
        return ReleasedStats(self.release_values(), self.current_e(), self.S, self.A, self.H)

    @property
    def nbytes(self) -> int:
        return self.exact.nbytes + self.suffix.nbytes
