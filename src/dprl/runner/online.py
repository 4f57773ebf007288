"""Online summaries of per-episode statistics, so jobs of 10⁷–10⁸ episodes run in bounded
memory: the per-episode values arrive in consecutive chunks and only the
numbers reported at the checkpoints are kept.

Every summary is bit-identical to the NumPy expression it replaces on the full array
(``np.cumsum(x)[c - 1]``, ``x[lo:c].mean()``): cumulative sums are sequential in both, and
window means reproduce NumPy's pairwise summation (:func:`pairwise_sum`) on a stream.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
from numba import njit

_BLOCK = 128  # NumPy's PW_BLOCKSIZE (numpy/_core/src/umath/loops_utils.h.src)


@njit(cache=True)
def _pairwise_leaf(a: np.ndarray, lo: int, n: int) -> float:
    """NumPy's pairwise sum of ``n <= 128`` terms: sequential below 8, else 8 accumulators."""
    if n < 8:
        res = -0.0
        for i in range(lo, lo + n):
            res += a[i]
        return res
    r0, r1, r2, r3 = a[lo], a[lo + 1], a[lo + 2], a[lo + 3]
    r4, r5, r6, r7 = a[lo + 4], a[lo + 5], a[lo + 6], a[lo + 7]
    i = 8
    stop = n - n % 8
    while i < stop:
        j = lo + i
        r0 += a[j]
        r1 += a[j + 1]
        r2 += a[j + 2]
        r3 += a[j + 3]
        r4 += a[j + 4]
        r5 += a[j + 5]
        r6 += a[j + 6]
        r7 += a[j + 7]
        i += 8
    res = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
    while i < n:
        res += a[lo + i]
        i += 1
    return res


@njit(cache=True)
def pairwise_sum(a: np.ndarray, lo: int, n: int) -> float:
    """``np.add.reduce(a[lo:lo+n])`` with NumPy's own order of operations (pairwise
    summation: leaves of at most 128 terms, :func:`_pairwise_leaf`; above, the sum of the
    two halves split at a multiple of 8). The recursion runs on an explicit stack (a
    recursive compiled function segfaults when loaded from Numba's cache)."""
    if n <= _BLOCK:
        return _pairwise_leaf(a, lo, n)
    seg_lo = np.empty(64, dtype=np.int64)  # depth <= log2(n) < 64
    seg_n = np.empty(64, dtype=np.int64)
    stage = np.zeros(64, dtype=np.int64)
    vals = np.empty(64)
    top, nv = 1, 0
    seg_lo[0], seg_n[0] = lo, n
    while top:
        f = top - 1
        if seg_n[f] <= _BLOCK:
            vals[nv] = _pairwise_leaf(a, seg_lo[f], seg_n[f])
            nv += 1
            top -= 1
            continue
        n2 = seg_n[f] // 2
        n2 -= n2 % 8
        if stage[f] == 2:  # both halves done: left + right
            vals[nv - 2] = vals[nv - 2] + vals[nv - 1]
            nv -= 1
            top -= 1
            continue
        first = stage[f] == 0
        stage[f] += 1
        seg_lo[top] = seg_lo[f] if first else seg_lo[f] + n2
        seg_n[top] = n2 if first else seg_n[f] - n2
        stage[top] = 0
        top += 1
    return vals[0]


def _pairwise_program(n: int) -> Iterator[int]:
    """Post-order of :func:`pairwise_sum`'s tree for ``n`` terms: leaf sizes (> 0), and 0
    for "add the last two partial sums"."""
    if n <= _BLOCK:
        yield n
        return
    n2 = n // 2
    n2 -= n2 % 8
    yield from _pairwise_program(n2)
    yield from _pairwise_program(n - n2)
    yield 0


class StreamingSum:
    """``np.add.reduce`` of ``n`` values pushed in consecutive chunks, bit-identical, in
    ``O(log n)`` memory: one leaf buffer of at most 128 values and the pending partial
    sums of :func:`pairwise_sum`'s tree."""

    def __init__(self, n: int) -> None:
        if n < 1:
            raise ValueError(f"a streamed sum needs n >= 1 values, got {n}")
        self.n = n
        self._program = _pairwise_program(n)
        self._stack: list[float] = []
        self._buf = np.empty(_BLOCK)
        self._fill = 0
        self._seen = 0
        self._need = self._next_leaf()

    def _next_leaf(self) -> int:
        for op in self._program:
            if op:
                return op
            right = self._stack.pop()
            self._stack.append(self._stack.pop() + right)
        return 0

    def push(self, chunk: np.ndarray) -> None:
        chunk = np.asarray(chunk, dtype=float)
        if self._seen + chunk.size > self.n:
            raise ValueError(f"more than the announced {self.n} values")
        self._seen += chunk.size
        pos = 0
        while pos < chunk.size:
            take = min(self._need - self._fill, chunk.size - pos)
            if self._fill == 0 and take == self._need:  # a whole leaf inside the chunk
                self._stack.append(pairwise_sum(chunk, pos, take))
            else:
                self._buf[self._fill : self._fill + take] = chunk[pos : pos + take]
                self._fill += take
                if self._fill < self._need:
                    break
                self._stack.append(pairwise_sum(self._buf, 0, self._need))
                self._fill = 0
            pos += take
            self._need = self._next_leaf()

    @property
    def value(self) -> float:
        if self._seen < self.n:
            raise ValueError(f"only {self._seen} of {self.n} values pushed")
        return self._stack[0]


class CheckpointSummary:
    """Per-episode ``gap`` and ``ret`` summarised at the 1-based ``checkpoints`` (sorted,
    distinct): at each checkpoint ``c`` the same numbers as the NumPy expressions on the
    full arrays, namely

    - ``cum_gap[c]  = np.cumsum(gap)[c-1]``, ``cum_ret[c] = np.cumsum(ret)[c-1]``,
    - ``n_above[c]  = np.cumsum(gap > alpha)[c-1]`` (when ``alpha`` is given),
    - ``window_mean[c] = gap[max(0, c - max(c // 10, 1)) : c].mean()`` (the last tenth).
    """

    def __init__(self, checkpoints: np.ndarray, alpha: float | None = None) -> None:
        cp = np.asarray(checkpoints, dtype=np.int64)
        if cp.ndim != 1 or cp.size == 0 or cp[0] < 1 or np.any(np.diff(cp) <= 0):
            raise ValueError("checkpoints must be sorted, distinct episode counts >= 1")
        self.checkpoints = cp
        self.alpha = alpha
        self.cum_gap = np.empty(cp.size)
        self.cum_ret = np.empty(cp.size)
        self.n_above = np.zeros(cp.size, dtype=np.int64)
        self.window_mean = np.empty(cp.size)
        self._lo = np.maximum(0, cp - np.maximum(cp // 10, 1))
        self._order = np.argsort(self._lo, kind="stable")  # windows by start
        self._next_window = 0
        self._open: dict[int, StreamingSum] = {}
        self._t = 0
        self._gap_sum = self._ret_sum = None
        self._above = 0
        self._k = 0  # next checkpoint to fill

    @property
    def episodes(self) -> int:
        return self._t

    def add(self, gap: np.ndarray, ret: np.ndarray) -> None:
        """The next ``len(gap)`` episodes."""
        if len(gap) != len(ret):
            raise ValueError(f"gap and ret differ in length: {len(gap)} != {len(ret)}")
        if len(gap) == 0:
            return
        b0, b1 = self._t, self._t + len(gap)
        # sequential running sums, continued across chunks exactly as one np.cumsum
        cg = np.cumsum(gap if self._gap_sum is None else np.concatenate(([self._gap_sum], gap)))[-len(gap):]
        cr = np.cumsum(ret if self._ret_sum is None else np.concatenate(([self._ret_sum], ret)))[-len(ret):]
        above = self._above + np.cumsum(gap > self.alpha) if self.alpha is not None else None
        while self._next_window < self._order.size and self._lo[self._order[self._next_window]] < b1:
            k = int(self._order[self._next_window])
            self._open[k] = StreamingSum(int(self.checkpoints[k] - self._lo[k]))
            self._next_window += 1
        for k in list(self._open):
            lo, hi = max(int(self._lo[k]), b0), min(int(self.checkpoints[k]), b1)
            if lo < hi:
                self._open[k].push(gap[lo - b0 : hi - b0])
            if self.checkpoints[k] <= b1:
                w = self._open.pop(k)
                self.window_mean[k] = w.value / w.n
        while self._k < self.checkpoints.size and self.checkpoints[self._k] <= b1:
            j = int(self.checkpoints[self._k]) - 1 - b0
            self.cum_gap[self._k], self.cum_ret[self._k] = cg[j], cr[j]
            if above is not None:
                self.n_above[self._k] = above[j]
            self._k += 1
        self._t = b1
        self._gap_sum, self._ret_sum = cg[-1], cr[-1]
        if above is not None:
            self._above = int(above[-1])

    def check_complete(self) -> None:
        if self._k < self.checkpoints.size:
            raise ValueError(f"summary stopped at episode {self._t}, before checkpoint {self.checkpoints[self._k]}")


class EpisodeRecord:
    """A sink that keeps every episode's ``gap`` and ``ret`` (short runs and tests only:
    memory grows with the number of episodes)."""

    def __init__(self) -> None:
        self._gap: list[np.ndarray] = []
        self._ret: list[np.ndarray] = []

    def add(self, gap: np.ndarray, ret: np.ndarray) -> None:
        self._gap.append(np.array(gap, dtype=float))
        self._ret.append(np.array(ret, dtype=float))

    @property
    def gap(self) -> np.ndarray:
        return np.concatenate(self._gap) if self._gap else np.empty(0)

    @property
    def ret(self) -> np.ndarray:
        return np.concatenate(self._ret) if self._ret else np.empty(0)
