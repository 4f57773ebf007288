"""Reference oracle for the binary mechanism: the plain NumPy ``TreeCounter`` the package ran
before the mechanism was one compiled kernel (``dprl.privacy.kernels.feed_tree``), kept
verbatim in the tests only. ``tests/core/test_tree_counter.py`` checks that ``TreeCounter``
releases exactly what it releases; ``tabular_reference.py`` counts with it, so the compiled
loops are compared with a reference that shares no code with them.
"""

from __future__ import annotations

import numpy as np

from dprl.privacy.tree_counter import tree_levels


class PlainTreeCounter:
    """``TreeCounter`` (same arguments, ``update``/``release``) in plain NumPy."""

    def __init__(self, shape, max_elements, noise, rng=None, symmetric=False) -> None:
        self.shape = (shape,) if isinstance(shape, int) else tuple(shape)
        self.max_elements = int(max_elements)
        self.levels = tree_levels(self.max_elements)
        self.noise, self.rng, self.symmetric = noise, rng, symmetric
        self.t = 0
        self._exact = np.zeros((self.levels, *self.shape))
        self._suffix = np.zeros((self.levels, *self.shape))
        self._zero = np.zeros(self.shape)

    def update(self, x: np.ndarray) -> None:
        assert self.t < self.max_elements
        self.t += 1
        t = self.t
        i = (t & -t).bit_length() - 1  # trailing zeros of t
        node = np.asarray(x, dtype=float)
        assert node.shape == self.shape
        if i:
            node = node + self._exact[:i].sum(axis=0)
        self._exact[i] = node
        if self.noise is not None:
            node = node + self.noise.sample(self.rng, self.shape, self.symmetric)
        higher = t >> (i + 1)
        if higher:
            j = i + 1 + ((higher & -higher).bit_length() - 1)  # next set bit above i
            np.add(node, self._suffix[j], out=self._suffix[i])
        else:
            self._suffix[i] = node

    def release(self) -> np.ndarray:
        if self.t == 0:
            return self._zero
        i = (self.t & -self.t).bit_length() - 1
        return self._suffix[i]
