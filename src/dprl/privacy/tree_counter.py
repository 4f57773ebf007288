"""Tree-based (binary) continual counting mechanism, many counters at once.

References: Chan, Shi, Song (2011), Dwork, Naor, Pitassi, Rothblum (2010); ``src/dprl/README.md``.

A node ("p-sum") at level ``i`` covers the dyadic block ``(t - 2^i, t]``. When element ``t``
arrives, ``i = ctz(t)`` (trailing zero bits): the new level-``i`` node's exact sum is ``σ_t``
plus the exact sums of the open lower levels, which are discarded. Noise is drawn once
for the new node. The release after ``t`` elements is the sum of the noisy nodes of the
set bits of ``t``; at most ``L = floor(log2 T) + 1`` nodes are summed and every element lies
in at most ``L`` nodes.

All counters that advance together share one array with the counter axes leading
(``shape``), so one update is one call of the compiled
:func:`dprl.privacy.kernels.feed_tree` regardless of how many counters there are (PUCB
advances ``2SAH + S²AH`` of them per episode); the compiled episode loops call the same
kernel on these arrays, so there is one implementation of the mechanism.
"""

from __future__ import annotations

import numpy as np

from dprl.privacy.kernels import feed_tree, trailing_zeros
from dprl.privacy.noise import Noise

_NO_NOISE = np.empty(0)  # feed_tree's noise argument of a noiseless counter (never read)


def tree_levels(max_elements: int) -> int:
    """``L = floor(log2 T) + 1``: the number of levels a stream of length ``T`` uses."""
    if max_elements < 1:
        raise ValueError(f"the stream length (counter horizon) must be >= 1, got {max_elements}")
    return int(max_elements).bit_length()


def nodes_in_release(t: int) -> int:
    """Number of noisy nodes summed in the release after ``t`` elements (popcount)."""
    return int(t).bit_count()


class TreeCounter:
    """Continual release of prefix sums of a stream of arrays of shape ``shape``.

    Parameters
    ----------
    shape:
        Shape of one stream element; leading axes index independent counters.
    max_elements:
        Maximum number of elements ``T`` (the counter's time horizon: users or episodes in
        the RL papers, never their step horizon ``H``); fixes ``L`` levels.
    noise:
        ``LaplaceNoise``/``GaussianNoise`` drawn once per node, or ``None`` for exact sums.
    rng:
        Generator of the privacy noise (the job's noise stream).
    symmetric:
        If true the last two axes are square and node noise is a symmetric matrix.
    """

    def __init__(
        self,
        shape: tuple[int, ...] | int,
        max_elements: int,
        noise: Noise | None,
        rng: np.random.Generator | None = None,
        symmetric: bool = False,
    ) -> None:
        self.shape = (shape,) if isinstance(shape, int) else tuple(shape)
        if symmetric and (len(self.shape) < 2 or self.shape[-1] != self.shape[-2]):
            raise ValueError(f"symmetric counters need square trailing axes, got shape {self.shape}")
        if noise is not None and rng is None:
            raise ValueError("a noisy counter needs the noise generator")
        self.max_elements = int(max_elements)
        self.levels = tree_levels(self.max_elements)
        self.noise = noise
        self.rng = rng
        self.symmetric = symmetric
        self.t = 0
        # _exact[i]: exact sum of the open node at level i (only levels < ctz(t+1) are open).
        self._exact = np.zeros((self.levels, *self.shape))
        # _suffix[i]: sum of the noisy nodes of the set bits of t at levels >= i, stored
        # only at set-bit levels. The release is _suffix[lowest set bit]. Each entry is
        # computed from fresh node values (never by subtraction), so a noiseless counter
        # over integers returns exact prefix sums with no floating-point drift.
        self._suffix = np.zeros((self.levels, *self.shape))
        self._zero = np.zeros(self.shape)

    def node_arrays(self) -> tuple[np.ndarray, np.ndarray]:
        """The counter's state as :func:`~dprl.privacy.kernels.feed_tree` takes it: the open
        nodes' exact sums and the noisy suffix sums, ``(L, N)`` views updated in place (the
        compiled episode loops advance the counter through them)."""
        return self._exact.reshape(self.levels, -1), self._suffix.reshape(self.levels, -1)

    def update(self, x: np.ndarray) -> None:
        """Append one stream element (array of ``shape``): :func:`~dprl.privacy.kernels.feed_tree`
        on the counters flattened to ``(L, N)``, with one node draw of ``noise``."""
        if self.t >= self.max_elements:
            raise RuntimeError(f"tree counter horizon ({self.max_elements} elements) exceeded")
        node = np.asarray(x, dtype=float)
        if node.shape != self.shape:
            raise ValueError(f"stream element has shape {node.shape}, counter expects {self.shape}")
        self.t += 1
        if self.noise is None:
            noise = _NO_NOISE
        else:
            noise = np.ascontiguousarray(self.noise.sample(self.rng, self.shape, self.symmetric), dtype=float).reshape(-1)
        exact, suffix = self.node_arrays()
        feed_tree(exact, suffix, self.t, np.ascontiguousarray(node).reshape(-1), noise, self.noise is not None)

    def release(self) -> np.ndarray:
        """Noisy prefix sum of all elements so far (zeros before the first element)."""
        if self.t == 0:
            return self._zero
        return self._suffix[trailing_zeros(self.t)]

    def noise_variance(self, t: int | None = None) -> float:
        """Per-coordinate variance of the noise in the release after ``t`` elements."""
        t = self.t if t is None else t
        if self.noise is None:
            return 0.0
        return nodes_in_release(t) * self.noise.variance

    @property
    def nbytes(self) -> int:
        return self._exact.nbytes + self._suffix.nbytes
