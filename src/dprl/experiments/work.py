"""Shared pieces of the per-paper work models (``experiments/<paper>/work.py``)."""

from __future__ import annotations

import math

F64 = 8  # bytes


def tree_levels(T: float) -> int:
    """Levels of a binary-tree counter over ``T`` steps (``floor(log2 T) + 1``), as
    :func:`dprl.privacy.tree_counter.tree_levels` counts them; restated because that module
    imports Numba, and validation (which calls the work models) stays import-light."""
    return int(math.floor(math.log2(max(T, 1)))) + 1
