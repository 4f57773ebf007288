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
mechanism of :class:`~dprl.privacy.tree_counter.TreeCounter`), with PUCB's node noise
``Lap(b) = ±b·E`` drawn by :func:`draw_laplace` (:func:`~dprl.privacy.kernels.laplace_into`).
The episode loop (``episodes._run_block``), :meth:`PrivateStats.update` and the privacy
audits (``privacy._tree_sampler``) all draw PUCB's noise through :func:`draw_laplace`, which
records the scale it drew with (:class:`DrawnNoise`): the job's accounting is checked against it.
"""

from __future__ import annotations

import copy
import math
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


# The record of the Laplace noise :func:`draw_laplace` drew (``PrivateStats.drawn``): the sum of
# the read noise values' absolute values and of the standard exponentials they were made of,
# each with its Neumaier compensation term, and the number of values read.
ABS_SUM, ABS_COMP, EXP_SUM, EXP_COMP, DRAWS = range(5)


def new_drawn_record() -> np.ndarray:
    """An empty record for :func:`draw_laplace` (the layout above)."""
    return np.zeros(5)


@njit(cache=True)
def _neumaier_add(rec: np.ndarray, i: int, x: float) -> None:
    """``rec[i] += x`` with its compensation in ``rec[i + 1]`` (Neumaier's summation): a
    record summed over 10^9 draws stays exact to a few units in the last place."""
    s = rec[i]
    t = s + x
    if abs(s) >= abs(x):
        rec[i + 1] += (s - t) + x
    else:
        rec[i + 1] += (x - t) + s
    rec[i] = t


@njit(cache=True)
def draw_laplace(noise_rng: np.random.Generator, scale: float, e: np.ndarray, words: np.ndarray, noise: np.ndarray,
                 drawn: np.ndarray, t: int) -> None:
    """PUCB's node noise for stream element ``t`` (1-based) of its ``N`` tree counters: ``N``
    standard exponentials ``e`` then the sign ``words`` from ``noise_rng``
    (``LaplaceNoise.sample``'s draws and order), ``noise = ±scale·e`` (:func:`laplace_into`),
    which the caller adds with :func:`feed_tree`. The one place PUCB's noise is drawn: the
    compiled episode loop, :meth:`PrivateStats.feed` (hence ``update``) and the audits call it.

    Records in ``drawn`` (:func:`new_drawn_record`) the noise of counter ``c = t mod N``, a
    different one each element, so every counter is read over the run: ``|noise_c|`` and
    ``e_c`` summed, and the number read. ``Σ|noise_c| / Σ e_c`` is the scale the noise was
    drawn with, exactly (each ``|noise_c| = scale·e_c`` rounded once), whatever scale was passed
    or applied on the way, and ``Σ e_c`` against its Gamma law checks the exponentials
    (:class:`DrawnNoise`). O(1) an element (summing all ``N`` measured about 10% of a garnet
    3-2-2 PUCB episode)."""
    for c in range(e.shape[0]):
        e[c] = noise_rng.standard_exponential()
    for j in range(words.shape[0]):
        words[j] = noise_rng.random()
    laplace_into(e, words, scale, noise)
    c = t % e.shape[0]
    _neumaier_add(drawn, ABS_SUM, abs(noise[c]))
    _neumaier_add(drawn, EXP_SUM, e[c])
    drawn[DRAWS] += 1.0


# A job's standard exponentials are refused when the sum of those read falls outside its Gamma
# law's central 1 − 2e-12: a correct job is refused once in 5·10^11; exponentials cut by 10%
# are refused from about 10^4 episodes (one read an episode), cut 10x from about 30.
DRAWS_TAIL = 1e-12


@dataclass(frozen=True)
class DrawnNoise:
    """What :func:`draw_laplace` recorded (``PrivateStats.drawn``): ``scale`` is ``Σ|noise_c| / Σ e_c``
    over the values read (NaN before any), ``draws`` their number, ``mean_exponential`` the mean
    of their exponentials."""

    scale: float
    draws: int
    mean_exponential: float

    @classmethod
    def of(cls, drawn: np.ndarray) -> DrawnNoise:
        n = int(drawn[DRAWS])
        if n == 0:
            return cls(math.nan, 0, math.nan)
        exp_sum = drawn[EXP_SUM] + drawn[EXP_COMP]
        return cls(float((drawn[ABS_SUM] + drawn[ABS_COMP]) / exp_sum), n, float(exp_sum / n))

    def exponentials_standard(self) -> bool:
        """Whether the exponentials read sum to inside their Gamma(draws, 1) law's central
        ``1 − 2·DRAWS_TAIL`` (True before any draw)."""
        if self.draws == 0:
            return True
        from scipy.special import gammaincinv

        total = self.mean_exponential * self.draws
        return bool(gammaincinv(self.draws, DRAWS_TAIL) <= total <= gammaincinv(self.draws, 1.0 - DRAWS_TAIL))


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

    def kernel_state(self) -> tuple:
        """The exact counts for compiled code (:func:`feed_stats`, :func:`release_stats`; the
        layout of :meth:`PrivateStats.kernel_state`, so one compiled plug-in serves both):
        ``counts`` is this object's own array."""
        return _stats_state(False, self.counts, np.zeros((1, 0)), np.zeros((1, 0)), np.zeros(1, dtype=np.int64),
                            new_drawn_record(), 0.0, np.random.default_rng(0), 0.0, 0.0, np.iinfo(np.int64).max,
                            self.S, self.A, self.H)


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
        self._t = np.zeros(1, dtype=np.int64)  # elements fed so far (``t``; an array the kernels advance)
        self._zero = _readonly(np.zeros(self.N))
        self.e_first, self.e_rest = e_first * noise_multiplier, e_rest * noise_multiplier
        # the noise draw_laplace drew for these counters and their replicas (DrawnNoise)
        self.drawn = new_drawn_record()

    @property
    def t(self) -> int:
        """Elements fed so far (the compiled kernels advance it: :meth:`kernel_state`)."""
        return int(self._t[0])

    @t.setter
    def t(self, value: int) -> None:
        self._t[0] = value

    def kernel_state(self) -> tuple:
        """These counters for compiled code (:func:`feed_stats`, :func:`release_stats`): the
        arrays are this object's own, so what the kernels feed and draw (``exact``, ``suffix``,
        ``t``, the ``drawn`` record) is this object's state afterwards, exactly as
        :meth:`update` leaves it (layout: :func:`_stats_state`)."""
        noisy = self.scale > 0
        # a generator the kernels never read without noise (its type keeps one compiled kernel)
        rng = self.rng if noisy else np.random.default_rng(0)
        return _stats_state(True, np.zeros(self.N), self.exact, self.suffix, self._t, self.drawn, self.scale, rng,
                            self.e_first, self.e_rest, self.T, self.S, self.A, self.H)

    def calibration(self) -> cal.PUCBCalibration:
        """The calibration of the noise these counters add: read from this object's own
        Laplace scale and bounds ``E`` (what the compiled loop runs with), so accounting it
        accounts the agent as it runs."""
        return cal.PUCBCalibration(self.privacy.epsilon, self.privacy.calibration, self.scale, self.e_first, self.e_rest,
                                   self.H, self.exact.shape[0])

    def replicas(self, width: int) -> PrivateStats:
        """``width`` fresh counters (no element fed yet) with this object's noise: the same
        Laplace scale, horizon ``T`` and kernels (:meth:`feed`, :func:`draw_laplace`). Audits run
        these, so they examine the noise the agent holds, drawn by the code the loop runs; the
        replicas record what they draw in this object's :attr:`drawn`."""
        twin = copy.copy(self)  # shares self.drawn
        twin.N = int(width)
        twin.exact = np.zeros((self.exact.shape[0], twin.N))
        twin.suffix = np.zeros_like(twin.exact)
        twin._t = np.zeros(1, dtype=np.int64)
        twin._zero = _readonly(np.zeros(twin.N))
        return twin

    def drawn_noise(self) -> DrawnNoise:
        """The noise :func:`draw_laplace` has drawn for these counters (and their replicas)."""
        return DrawnNoise.of(self.drawn)

    def feed(self, x: np.ndarray, rng: np.random.Generator | None) -> None:
        """Feed one stream element ``x`` (``N`` values), its node noise drawn from ``rng`` by
        :func:`draw_laplace` (unused without noise): the episode loop's kernels."""
        if self.t >= self.T:
            raise RuntimeError(f"tree counter horizon {self.T} exceeded")
        self.t += 1
        x = np.ascontiguousarray(x, dtype=float)
        noise = np.empty(self.N)  # never read without noise
        if self.scale > 0:
            draw_laplace(rng, self.scale, np.empty(self.N), np.empty(sign_words(self.N)), noise, self.drawn, self.t)
        feed_tree(self.exact, self.suffix, self.t, x, noise, self.scale > 0)

    def update(self, states: np.ndarray, actions: np.ndarray, rewards: np.ndarray) -> None:
        self.feed(episode_indicators(self.S, self.A, self.H, states, actions, rewards), self.rng)

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


def _stats_state(private: bool, counts: np.ndarray, exact: np.ndarray, suffix: np.ndarray, t: np.ndarray,
                 drawn: np.ndarray, scale: float, rng: np.random.Generator, e_first: float, e_rest: float, T: int,
                 S: int, A: int, H: int) -> tuple:
    """The statistics' kernel state, one layout for both sources: ``(private, counts, exact,
    suffix, t, drawn, scale, rng, e_first, e_rest, T, S, A, H, x, e, words, noise)``; ``counts``
    the exact counts (zeros for the tree counters: their release before the first element),
    ``t`` the one-element array of elements fed, the last four the scratch of one element."""
    N = cal.n_counters(S, A, H)
    return (private, counts, exact, suffix, t, drawn, float(scale), rng, float(e_first), float(e_rest), int(T),
            int(S), int(A), int(H), np.zeros(N), np.empty(N), np.empty(sign_words(N)), np.empty(N))


@njit(cache=True)
def feed_stats(ks: tuple, states: np.ndarray, actions: np.ndarray, rewards: np.ndarray) -> None:
    """Algorithm 2's two "Feed" lines in compiled code, on a :meth:`PrivateStats.kernel_state`
    or :meth:`ExactStats.kernel_state`: the episode's indicators into the tree counters with
    node noise drawn by :func:`draw_laplace` (recorded in ``drawn``) and :func:`feed_tree`, or
    into the exact counts (:func:`feed_exact`): the kernels and draws of :meth:`PrivateStats.update`
    and ``episodes._run_block``, so the numbers are theirs."""
    private, counts, exact, suffix, t, drawn, scale, rng, _, _, T, S, A, H, x, e, words, noise = ks
    if not private:
        feed_exact(counts, S, A, H, states, actions, rewards)
        return
    if t[0] >= T:
        raise RuntimeError("tree counter horizon T exceeded")
    t[0] += 1
    x[:] = 0.0
    _indicators_into(x, S, A, H, states, actions, rewards)
    noisy = scale > 0.0
    if noisy:
        draw_laplace(rng, scale, e, words, noise, drawn, t[0])
    feed_tree(exact, suffix, t[0], x, noise, noisy)


@njit(cache=True)
def release_stats(ks: tuple) -> tuple[np.ndarray, float]:
    """The release in compiled code (:meth:`PrivateStats.release` / :meth:`ExactStats.release`):
    the flat ``[r | n | m]`` vector (a view, to be read only) and its error bound ``E``
    (``E_1`` before the first element, ``0`` for exact counts)."""
    private, counts, _, suffix, t, _, _, _, e_first, e_rest, _, _, _, _, _, _, _, _ = ks
    if not private:
        return counts, 0.0
    if t[0] == 0:
        return counts, e_first
    return suffix[trailing_zeros(t[0])], e_rest
