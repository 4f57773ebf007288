"""The sensitivity constants of the authors' published code (maziarg/PrivateRL, ``Evaluator.py``:
``DPLSW``, ``DPLSL``, ``SmoothBound_LSL``; the commit that says the ICML results are
reproduced, and HEAD), as estimators of this package. Never run by an experiment's
estimates: only judged, as the "as published" row of claim B1, by the exact check of
:mod:`dprl.agents.pe.exact` (``src/dprl/README.md``, "Two calibrations": the papers'
printed constants get rows of their own).

- DP-LSW: ``σ_X = (F_max/a) ||(Γ^{1/2}Φ)^+||_2 sqrt(Ψ_X)`` (the operator norm), with ``Ψ_X``
  computed on ``diag(√ρ)`` in place of ``Γ = diag(ρ)``: their ``GammaSqrt = Gamma_w`` aliases
  the matrix whose diagonal is then square-rooted in place. ``√ρ >= ρ`` for ``ρ <= 1``, so
  the slip only inflates ``Ψ_X``.
- DP-LSL: ``σ_X = 2 F_max ||Φ||_2 sqrt(Ψ_X) / (a (λ - ||ρ||_∞||Φ||_2²))`` with
  ``c_λ = ||Φ||_2 ||ρ||_∞ / sqrt(2λ)``, and ``λ = ||ρ||_∞||Φ||_F² + c m^p`` (their
  ``getminLambda`` keeps the Frobenius norm), i.e. the operator norm in the three places
  where the paper's formula has ``||Φ||_F``.

Their ``ρ`` (uniform over all states, the absorbing one included) is theirs, not a constant
of the bound: these classes take the task's ``ρ`` like every estimator here.
"""

from __future__ import annotations

import numpy as np

from dprl.agents.pe.estimators import DPLSL, DPLSW


class PublishedDPLSW(DPLSW):
    """DP-LSW with the authors' published constants (operator norm, ``Ψ_X`` on ``√ρ``)."""

    def __init__(self, phi: np.ndarray, rho: np.ndarray, f_max: float, epsilon: float, delta: float) -> None:
        super().__init__(phi, rho, f_max, epsilon, delta, calibration="tight")
        self.calibration = "as published"
        self.psi_weights = np.sqrt(self.rho)


class PublishedDPLSL(DPLSL):
    """DP-LSL with the authors' published constants (``||Φ||_2`` in the numerator, in ``c_λ``
    and in the offset ``λ - ||ρ||_∞||Φ||_2²``)."""

    def __init__(self, phi: np.ndarray, rho: np.ndarray, c: float, p: float, f_max: float,
                 epsilon: float, delta: float, smooth: bool = True) -> None:
        super().__init__(phi, rho, c, p, f_max, epsilon, delta, smooth=smooth, calibration="tight")
        self.calibration = "as published"
        self.offset = float(self.rho.max()) * self.sens_norm**2
