"""Sensitivity under the papers' neighbouring relation: *replacement* of one user by another
(``src/dprl/README.md``, "Neighbouring relations: replacement"), for streams that several counters share.

When two Gaussian counters are fed by the same user vector ``z`` (the LQ paper's
``Σ_h z zᵀ`` and ``Σ_h z x_{h+1}ᵀ``), the privacy loss of the pair is a Gaussian mechanism
with ``μ² = L · max_{pairs} [ w_G (||ΔG||_F/Δ_G)² + w_C (||ΔC||_F/Δ_C)² ]`` where
``w = (Δ/σ)²``. The maximum over *replacement* pairs is larger than over null-user pairs
(``w_G + w_C``): both counters move together.
"""

from __future__ import annotations

import math

from dprl.checks import check_number


def gram_cross_replacement_weight(w_gram: float, w_cross: float) -> float:
    """``max`` over replacement pairs of ``w_G (||ΔG||/Δ_G)² + w_C (||ΔC||/Δ_C)²`` for one
    step with ``G = z zᵀ``, ``C = z xᵀ``, ``||z|| <= c`` (``Δ_G = c²``), ``||x|| <= 1``
    (``Δ_C = c``).

    With ``||z|| = ||z'|| = c``, ``t = cos∠(z, z')`` and unit ``x' = -sign(t) x``:
    ``(||zzᵀ - z'z'ᵀ||/c²)² = 2(1 - t²)`` and ``(||zxᵀ - z'x'ᵀ||/c)² = 2 + 2|t|``; shorter
    vectors never do better (checked numerically in the tests). Maximising
    ``2 w_G (1 - t²) + 2 w_C (1 + t)`` over ``t ∈ [0, 1]``: ``t* = w_C / (2 w_G)``, giving
    ``2 w_G + 2 w_C + w_C²/(2 w_G)`` (``4.5`` for equal weights, against ``2`` for a null
    user), or ``4 w_C`` when ``t* >= 1``. A user's ``H`` steps add up by Minkowski's
    inequality, so the same factor bounds a whole episode in units of ``Δ = H c²``, ``H c``.
    """
    check_number("w_gram", w_gram, minimum=0.0)
    check_number("w_cross", w_cross, minimum=0.0)
    if w_gram == 0:
        return 4.0 * w_cross
    t = w_cross / (2.0 * w_gram)
    if t >= 1.0:
        return 4.0 * w_cross
    return 2.0 * w_gram + 2.0 * w_cross + w_cross**2 / (2.0 * w_gram)


GRAM_ALONE = 2.0  # max (||zzᵀ - z'z'ᵀ||_F / c²)²: orthogonal z, z' of norm c
CROSS_ALONE = 4.0  # max (||zxᵀ - z'x'ᵀ||_F / c)²: z' = z, x' = -x
NULL_USER_JOINT = 2.0  # what a null-user relation would give for the pair (w_G = w_C = 1)
JOINT = gram_cross_replacement_weight(1.0, 1.0)  # 4.5
JOINT_SIGMA_FACTOR = math.sqrt(JOINT / NULL_USER_JOINT)  # 1.5: σ growth that keeps μ
