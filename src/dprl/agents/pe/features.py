"""Features and state weights of the policy-evaluation experiments (Balle et al. 2016, "Setting" and
"Environment"): identity features (``d = N``), aggregation of adjacent pairs of states
(``d = ceil(N/2)``), and weights ``ρ`` uniform over non-absorbing states, fixed before any
data is seen (so they carry no privacy cost)."""

from __future__ import annotations

import numpy as np

FEATURES = ("identity", "pairs")


def feature_matrix(kind: str, n_states: int) -> np.ndarray:
    """``Φ ∈ R^{N×d}``: ``identity`` (``φ(s) = e_s``) or ``pairs`` (``φ(s) = e_{⌊s/2⌋}``)."""
    if n_states < 1:
        raise ValueError(f"n_states must be >= 1, got {n_states}")
    if kind == "identity":
        return np.eye(n_states)
    if kind == "pairs":
        d = (n_states + 1) // 2
        phi = np.zeros((n_states, d))
        phi[np.arange(n_states), np.arange(n_states) // 2] = 1.0
        return phi
    raise ValueError(f"unknown feature map {kind!r}; choose one of {FEATURES}")


def uniform_weights(n_states: int, absorbing: int) -> np.ndarray:
    """``ρ`` uniform over the non-absorbing states (``ρ(absorbing) = 0``)."""
    rho = np.full(n_states, 1.0 / (n_states - 1))
    rho[absorbing] = 0.0
    return rho


def weighted_rmse(values: np.ndarray, estimate: np.ndarray, rho: np.ndarray) -> np.ndarray:
    """``||V - V̂||_ρ = sqrt(Σ_s ρ(s) (V(s) - V̂(s))²)`` over the last axis."""
    return np.sqrt(np.sum(rho * (values - estimate) ** 2, axis=-1))
