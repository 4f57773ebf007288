"""Compiled pieces of the privacy mechanisms that the compiled episode loops share."""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True)
def finish_into(m: np.ndarray, lam_min: float) -> tuple[bool, bool]:
    """:meth:`dprl.privacy.regularizer.Regularizer._finish` for one ``(d, d)`` release, in
    place: symmetrise, and if the smallest eigenvalue is below ``λ_min`` (off the good
    event) floor the spectrum at ``λ_min``. Returns ``(repaired, not_pd)``."""
    d = m.shape[0]
    sym = np.empty((d, d))
    for i in range(d):
        for j in range(d):
            sym[i, j] = 0.5 * (m[i, j] + m[j, i])
    w, v = np.linalg.eigh(sym)
    repaired = w[0] < lam_min * (1.0 - 1e-12)
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
