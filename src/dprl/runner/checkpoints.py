"""Log-spaced integer grids: the checkpoints at which every episode loop records its
cumulative numbers, and the batch-size grids of the policy-evaluation experiments."""

from __future__ import annotations

import numpy as np


def log_checkpoints(stop: int, count: int, start: int = 1) -> np.ndarray:
    """Sorted distinct integers nearest to ``count`` log-spaced points from ``start`` to
    ``stop`` (both included; rounding can merge neighbours at the low end, so there may be
    fewer than ``count``). ``count`` below 2 is taken as 2, so both ends are always there.

    Raises ``ValueError`` unless ``1 <= start <= stop``."""
    if not 1 <= start <= stop:
        raise ValueError(f"log_checkpoints needs 1 <= start <= stop, got start={start}, stop={stop}")
    return np.unique(np.round(np.geomspace(start, stop, max(int(count), 2))).astype(np.int64))
