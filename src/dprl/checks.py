"""Argument checks shared by every layer (environments, privacy helpers, agents,
estimators): NaN and infinity refused, ranges checked, the parameter named.

A check written as ``if x <= 0: raise`` lets NaN through (every comparison with NaN is
false), and a NaN parameter then flows silently into a result: a confidence width of NaN
makes every action look equally good, a NaN noise scale releases NaN weights. These
helpers test the *allowed* set (``minimum <= x``), so NaN always fails, and refuse
infinity unless a caller asks for it. They run in Python constructors and factories,
never inside compiled (Numba) loops, so valid inputs pass through unchanged: the same
float (or array) is returned, and results stay bit-identical.

This module is the lowest layer of the package (``tests/core/test_layers.py``): it
imports nothing from ``dprl``.
"""

from __future__ import annotations

import math
from numbers import Integral, Real
from typing import Any

import numpy as np


def _range_text(minimum: float | None, exclusive_minimum: float | None, maximum: float | None,
                exclusive_maximum: float | None) -> str:
    """``in (0, 1]`` when bounded on both sides, else ``>= 1`` / ``> 0`` / ``<= 1``."""
    low = f"[{minimum:g}" if minimum is not None else (f"({exclusive_minimum:g}" if exclusive_minimum is not None else None)
    high = f"{maximum:g}]" if maximum is not None else (f"{exclusive_maximum:g})" if exclusive_maximum is not None else None)
    if low and high:
        return f"in {low}, {high}"
    if low:
        return f"{'>=' if low[0] == '[' else '>'} {low[1:]}"
    if high:
        return f"{'<=' if high[-1] == ']' else '<'} {high[:-1]}"
    return ""


def check_number(
    name: str, value: Any, *, minimum: float | None = None, exclusive_minimum: float | None = None,
    maximum: float | None = None, exclusive_maximum: float | None = None, integer: bool = False,
    allow_inf: bool = False,
) -> Any:
    """``value`` if it is a real number (an integer when ``integer``), finite (unless
    ``allow_inf``) and inside the given bounds; otherwise ``ValueError`` naming ``name``.

    Returns ``value`` itself (not converted), so callers that store it keep exactly the
    number they were given."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, Real):
        raise ValueError(f"{name} must be a number, got {value!r}")
    if math.isnan(value) or (math.isinf(value) and not allow_inf):
        raise ValueError(f"{name} must be {'a number, not NaN' if allow_inf else 'a finite number'}, got {value!r}")
    if integer and not isinstance(value, Integral) and not (math.isfinite(value) and float(value).is_integer()):
        raise ValueError(f"{name} must be an integer, got {value!r}")
    ok = ((minimum is None or value >= minimum) and (exclusive_minimum is None or value > exclusive_minimum)
          and (maximum is None or value <= maximum) and (exclusive_maximum is None or value < exclusive_maximum))
    if not ok:
        raise ValueError(f"{name} must be {_range_text(minimum, exclusive_minimum, maximum, exclusive_maximum)}, got {value!r}")
    return value


def check_array(name: str, values: Any, *, minimum: float | None = None, maximum: float | None = None,
                ndim: int | None = None) -> np.ndarray:
    """``values`` as a float array if every entry is finite (and inside ``[minimum,
    maximum]`` when given); otherwise ``ValueError`` naming ``name`` and the first bad
    entry. Checked before linear algebra: ``np.linalg.pinv`` of a matrix holding ``inf``
    does not return (its SVD never converges)."""
    arr = np.asarray(values, dtype=float)
    if ndim is not None and arr.ndim != ndim:
        raise ValueError(f"{name} must have {ndim} dimensions, got shape {arr.shape}")
    bad = ~np.isfinite(arr)
    if minimum is not None:
        bad |= arr < minimum
    if maximum is not None:
        bad |= arr > maximum
    if np.any(bad):
        where = tuple(int(i) for i in np.argwhere(bad)[0])
        bounds = _range_text(minimum, None, maximum, None)
        what = f"finite and {bounds}" if bounds else "finite"
        raise ValueError(f"{name} must be {what}, got {float(arr[where])!r} at index {where}")
    return arr


# Doublings allowed when a root-finder brackets its root: 2^1100 exceeds the largest
# float, so a loop that has not bracketed by then never will (its function is NaN or
# constant), and must fail instead of spinning.
MAX_DOUBLINGS = 1100


def bracket_upper(name: str, still_below: Any, start: float = 1.0) -> float:
    """Smallest ``start·2^k`` at which ``still_below(x)`` is false: the upper end of a
    root-finder's bracket. Raises ``ValueError`` naming ``name`` instead of looping
    forever when no such finite ``x`` exists."""
    hi = float(start)
    for _ in range(MAX_DOUBLINGS):
        if not still_below(hi):
            return hi
        hi *= 2.0
        if not math.isfinite(hi):
            break
    raise ValueError(f"{name}: no finite bracket for the root (searched up to {start:g}·2^{MAX_DOUBLINGS})")
