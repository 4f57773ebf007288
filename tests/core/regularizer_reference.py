"""Reference for ``Regularizer._finish`` (``src/dprl/privacy/regularizer.py``) as it was before
the Gershgorin screen: eigh of every released Gram matrix. ``tests/core/test_regularizer.py``
checks the screened one gives the same bits; ``tests/benchmarks/test_bench_mechanisms.py``
times both."""

import numpy as np


def finish_with_eigh_everywhere(gram: np.ndarray, lam_min: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Symmetrised ``gram`` with its spectrum floored at ``lam_min`` where it falls below,
    and the repaired and not-positive-definite flags."""
    gram = 0.5 * (gram + np.swapaxes(gram, -1, -2))
    eigval, eigvec = np.linalg.eigh(gram)
    low = eigval[..., 0]
    repaired = low < lam_min * (1.0 - 1e-12)
    not_pd = low <= 0.0
    if repaired.any():
        floored = np.maximum(eigval, lam_min)
        fixed = (eigvec * floored[..., None, :]) @ np.swapaxes(eigvec, -1, -2)
        gram = np.where(repaired[..., None, None], fixed, gram)
    return gram, repaired, not_pd
