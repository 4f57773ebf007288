"""Deliberately broken noise scales of DP-LSW and DP-LSL, used only as negative controls of
the B1 audit (``src/dprl/README.md``, "Privacy audits": a broken mechanism must fail
the audit). Never used by an experiment's estimates.

Each variant keeps the estimator's own fit, σ scaling and release path and overrides only
``psi`` (the smooth bound ``Ψ_X``), i.e. the place where each bug would live:

- ``local_sensitivity``: ``Ψ_X = U_0(X)``, the squared local sensitivity itself (not smooth:
  ``σ`` jumps when a visit count changes, e.g. ×2 for DP-LSW when a count drops from 2 to 1).
- ``inverted_beta``: the smoothing parameter inverted, ``b -> 1/b``; with ``b < 1`` the factor
  ``e^{-k/b}`` kills every ``k > 0`` and ``Ψ_X`` collapses to nearly ``U_0(X)``.
- ``old_k_cap`` (DP-LSL only): the maximum over ``0 <= k < m`` (the code before the fix of
  at ``m = 1`` it is the local sensitivity.
"""

from __future__ import annotations

import numpy as np

from dprl.agents.pe.bounds import lsl_log_u, lsl_psi, lsw_psi, lsw_u
from dprl.agents.pe.estimators import DPLSL, DPLSW
from dprl.envs.mrp import BatchStats

BROKEN_VARIANTS = {"dp_lsw": ("local_sensitivity", "inverted_beta"),
                   "dp_lsl": ("local_sensitivity", "inverted_beta", "old_k_cap")}


class _LocalSensitivityLSW(DPLSW):
    def psi(self, stats: BatchStats) -> np.ndarray:
        return lsw_u(stats.counts.astype(float), self.rho, np.zeros((len(stats), 1)))[:, 0]


class _InvertedBetaLSW(DPLSW):
    def psi(self, stats: BatchStats) -> np.ndarray:
        return lsw_psi(stats.counts, self.rho, 1.0 / self.const.b)


class _LocalSensitivityLSL(DPLSL):
    def psi(self, stats: BatchStats) -> np.ndarray:
        m = stats.m.astype(float)
        k0 = np.zeros((len(stats), 1))
        return np.exp(lsl_log_u(stats.counts.astype(float), m, self.rho, self.c_lam(m), k0)[:, 0])


class _InvertedBetaLSL(DPLSL):
    def psi(self, stats: BatchStats) -> np.ndarray:
        m = stats.m.astype(float)
        return lsl_psi(stats.counts, m, self.rho, self.c_lam(m), 1.0 / self.const.b)


class _OldKCapLSL(DPLSL):
    def psi(self, stats: BatchStats) -> np.ndarray:
        m = stats.m.astype(float)
        return lsl_psi(stats.counts, m, self.rho, self.c_lam(m), self.const.b, k_max=m - 1.0)


_CLASSES = {
    ("dp_lsw", "local_sensitivity"): _LocalSensitivityLSW, ("dp_lsw", "inverted_beta"): _InvertedBetaLSW,
    ("dp_lsl", "local_sensitivity"): _LocalSensitivityLSL, ("dp_lsl", "inverted_beta"): _InvertedBetaLSL,
    ("dp_lsl", "old_k_cap"): _OldKCapLSL,
}


def variant_class(name: str, variant: str) -> type[DPLSW] | type[DPLSL]:
    """The estimator class of ``name`` (``dp_lsw``/``dp_lsl``) with the named bug, or the
    correct class for ``variant = "correct"``; constructed with the correct class's arguments."""
    if variant == "correct" and name in BROKEN_VARIANTS:
        return DPLSW if name == "dp_lsw" else DPLSL
    if (name, variant) not in _CLASSES:
        raise ValueError(f"no variant {variant!r} of {name!r}; choose 'correct' or one of {BROKEN_VARIANTS.get(name, ())}")
    return _CLASSES[name, variant]
