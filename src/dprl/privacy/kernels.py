"""Compiled pieces of the privacy mechanisms that the compiled episode loops share.

The binary (tree) mechanism's update is :func:`feed_tree` (with :func:`trailing_zeros`),
the one implementation of it: :class:`dprl.privacy.tree_counter.TreeCounter` calls it, and
so do the compiled episode loops of UBEV/PUCB, (Private-)OFU-RL and LinOpt, on the
counter arrays of their statistics. :func:`laplace_into` is ``LaplaceNoise.sample``'s
``Lap(b) = ±b·E`` for loops that draw the exponentials and sign words themselves;
:func:`gaussian_into` is ``GaussianNoise.sample``'s ``σ z`` for the loops (and audits) of
Private-OFU-RL and LinOpt, and reports the σ it drew with."""

from __future__ import annotations

import math

import numpy as np
from numba import njit


@njit(cache=True)
def trailing_zeros(t: int) -> int:
    """Trailing zero bits of ``t >= 1``: the level ``i = ctz(t)`` of the node element ``t``
    closes, and the level whose suffix sum is the release after ``t`` elements."""
    i = 0
    while (t >> i) & 1 == 0:
        i += 1
    return i


@njit(cache=True)
def feed_tree(exact: np.ndarray, suffix: np.ndarray, t: int, x: np.ndarray, noise: np.ndarray, noisy: bool) -> None:
    """The binary mechanism's update (``src/dprl/README.md``): element ``t`` (1-based) ``x``
    into the ``N`` counters held as ``(L, N)`` arrays ``exact`` and ``suffix``, in place.

    The new level-``i = ctz(t)`` node's exact sum is ``x`` plus the open lower levels
    (summed in level order), it gets the node noise ``noise`` (if ``noisy``), and
    ``suffix[i]`` = this noisy node + the noisy nodes of the higher set bits of ``t``
    (``suffix[j]``, ``j`` the next set bit above ``i``): each entry is computed from fresh
    node values, never by subtraction, so noiseless integer counts stay exact. The release
    after ``t`` elements is ``suffix[ctz(t)]``."""
    N = x.shape[0]
    i = trailing_zeros(t)
    higher = t >> (i + 1)
    j = i + 1 + trailing_zeros(higher) if higher else -1  # next set bit above i
    for c in range(N):
        node = x[c]
        if i:
            acc = exact[0, c]
            for level in range(1, i):
                acc += exact[level, c]
            node = node + acc
        exact[i, c] = node
        if noisy:
            node = node + noise[c]
        suffix[i, c] = node + suffix[j, c] if j >= 0 else node


# A uniform draw of NumPy's generators is k·2⁻⁵³ for a uniform 53-bit integer k
# (``next_uint64 >> 11``), so one ``random()`` carries 53 fair, independent sign bits.
SIGN_BITS = 53
_TWO_53 = 9007199254740992.0


@njit(cache=True)
def sign_words(n: int) -> int:
    """Uniform draws holding the signs of ``n`` Laplace variates (:func:`laplace_into`)."""
    return (n + SIGN_BITS - 1) // SIGN_BITS


@njit(cache=True)
def laplace_into(e: np.ndarray, words: np.ndarray, scale: float, out: np.ndarray) -> None:
    """``LaplaceNoise.sample``: ``Lap(b) = ±b·E`` from one standard exponential ``E`` per
    variate and a fair sign independent of it (the Laplace law is the exponential one with a
    random sign), the sign of variate ``c`` being bit ``c mod 53`` of the 53-bit integer
    ``words[c // 53]·2⁵³`` (:data:`SIGN_BITS`; ``words`` from ``random()``). One exponential
    per variate, not two as in ``b (E1 − E2)``: PUCB draws one variate per counter and
    episode (60 counters on garnet 3-2-2: 298 against 367 ns an episode,
    ``tests/benchmarks/test_bench_mechanisms.py``; a PUCB episode 1.04 -> 0.91 µs)."""
    for c in range(out.shape[0]):
        k = np.int64(words[c // SIGN_BITS] * _TWO_53)
        if (k >> (c % SIGN_BITS)) & 1:
            out[c] = scale * e[c]
        else:
            out[c] = -(scale * e[c])


# Rows of a ``drawn`` array (:func:`gaussian_into`): the smallest and largest σ a statistic's
# noise was drawn with. Its initial state (nothing drawn) is ``[+inf, -inf]``.
DRAWN_MIN, DRAWN_MAX = 0, 1


@njit(cache=True)
def gaussian_into(z: np.ndarray, scale: float, d: int, out: np.ndarray, drawn: np.ndarray, slot: int) -> None:
    """``GaussianNoise.sample``: ``out = scale · z`` from standard normals ``z`` (flat), with
    ``d > 0`` per ``(d, d)`` block the entries on and above the diagonal mirrored below
    (``symmetric=True``), and records ``scale`` in ``drawn[slot] = (min, max)`` of the σ's
    this statistic's noise was drawn with (:data:`DRAWN_MIN`, :data:`DRAWN_MAX`).

    The one place the Gaussian noise of Private-OFU-RL's and LinOpt's regularizers is scaled,
    in their episode loops and in their audits, so the σ a job accounts from is the σ the
    noise was drawn with (:meth:`dprl.privacy.regularizer.Regularizer.drawn_calibration`
    checks it against the calibration before a job writes results) and the audit examines
    the noise the loop adds (``src/dprl/README.md``, "Privacy audits")."""
    if scale < drawn[slot, DRAWN_MIN]:
        drawn[slot, DRAWN_MIN] = scale
    if scale > drawn[slot, DRAWN_MAX]:
        drawn[slot, DRAWN_MAX] = scale
    if d == 0:
        for c in range(out.shape[0]):
            out[c] = scale * z[c]
        return
    for blk in range(out.shape[0] // (d * d)):
        base = blk * d * d
        for i in range(d):
            for j in range(d):
                a, b = (i, j) if i <= j else (j, i)
                out[base + i * d + j] = scale * z[base + a * d + b]


@njit(cache=True)
def cholesky_into(a: np.ndarray, t: float, L: np.ndarray) -> bool:
    """The Cholesky factor of ``a − t I`` (symmetric; lower triangle read) into the lower
    triangle of ``L``, without allocating. Returns False, ``L`` partly set, unless every
    pivot is positive."""
    d = a.shape[0]
    for j in range(d):
        acc = a[j, j] - t
        for k in range(j):
            acc -= L[j, k] * L[j, k]
        if not acc > 0.0:  # also False for NaN
            return False
        L[j, j] = math.sqrt(acc)
        for i in range(j + 1, d):
            acc = a[i, j]
            for k in range(j):
                acc -= L[i, k] * L[j, k]
            L[i, j] = acc / L[j, j]
    return True


@njit(cache=True)
def lower_inverse_into(L: np.ndarray, W: np.ndarray) -> None:
    """``W = L^{-1}`` for the lower-triangular factor in the lower triangle of ``L`` (as
    :func:`cholesky_into` leaves it), by forward substitution column by column; ``W`` is
    lower triangular. Shared by the linear-mixture whitening and the LQ oracle's map."""
    d = L.shape[0]
    for j in range(d):
        for i in range(d):
            if i < j:
                W[i, j] = 0.0
                continue
            acc = 1.0 if i == j else 0.0
            for k in range(j, i):
                acc -= L[i, k] * W[k, j]
            W[i, j] = acc / L[i, i]


@njit(cache=True)
def finish_into(m: np.ndarray, lam_min: float) -> tuple[bool, bool]:
    """:meth:`dprl.privacy.regularizer.Regularizer._finish` for one ``(d, d)`` release, in
    place: symmetrise, and if the smallest eigenvalue is below ``λ_min`` (off the good
    event) floor the spectrum at ``λ_min``. Returns ``(repaired, not_pd)``.

    Most releases are far above the floor: a Cholesky factorisation of
    ``sym − (thr + margin) I`` that succeeds proves it without ``eigh`` (a fifth of the cost).
    Exactly the same decisions as ``eigh``'s: a factorisation that succeeds in floating point
    is exact for a perturbation of norm ``O(d² u max|a_ii|)`` (Higham 2002, Thm 10.5), and
    ``eigh``'s smallest eigenvalue is within ``O(d u ||sym||₂)`` of the true one (LAPACK
    Users' Guide §4.7), both below ``1e-13`` of ``scale`` for any ``d`` here, so with
    ``margin = 1e-9 scale`` ``eigh`` would report at least ``thr``: not repaired, and
    positive definite as ``thr >= 0``. Otherwise (a release near or below the floor, or
    NaN) ``eigh`` decides, as before."""
    d = m.shape[0]
    return finish_with(m, lam_min, np.empty((d, d)), np.empty((d, d)))


@njit(cache=True)
def finish_with(m: np.ndarray, lam_min: float, sym: np.ndarray, chol: np.ndarray) -> tuple[bool, bool]:
    """:func:`finish_into` with its two ``(d, d)`` work arrays given (episode loops call it
    for every release: an allocation costs about as much as the screen)."""
    d = m.shape[0]
    scale = 0.0
    for i in range(d):
        for j in range(d):
            sym[i, j] = 0.5 * (m[i, j] + m[j, i])
            scale += abs(sym[i, j])
    thr = lam_min * (1.0 - 1e-12)
    scale += d * abs(thr)
    if thr >= 0.0 and cholesky_into(sym, thr + 1e-9 * scale, chol):
        for i in range(d):
            for j in range(d):
                m[i, j] = sym[i, j]
        return False, False
    w, v = np.linalg.eigh(sym)
    repaired = w[0] < thr
    not_pd = w[0] <= 0.0
    if repaired:
        for i in range(d):
            for j in range(d):
                acc = 0.0
                for k in range(d):
                    acc += v[i, k] * max(w[k], lam_min) * v[j, k]
                m[i, j] = acc
    else:
        for i in range(d):
            for j in range(d):
                m[i, j] = sym[i, j]
    return repaired, not_pd
