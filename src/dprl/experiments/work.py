"""Shared pieces of the per-paper work models (``experiments/<paper>/work.py``)."""

from __future__ import annotations

import math

F64 = 8  # bytes


def tree_levels(T: float) -> int:
    """Levels of a binary-tree counter over ``T`` steps (``floor(log2 T) + 1``)."""
    return int(math.floor(math.log2(max(T, 1)))) + 1
