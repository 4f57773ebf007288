"""Noise and confidence constants of Private-OFU-RL (Chowdhury, Zhou, Shroff 2021, Sec. IV),
``paper`` and ``tight``, returned as a :class:`~dprl.privacy.regularizer.RegularizerCalibration`
for the shared :class:`~dprl.privacy.regularizer.CentralRegularizer`.

Neighbouring relation. The paper's sensitivities ``Δ1 = H(1+γ)²`` (counter B1, stream
``Σ_h z zᵀ``) and ``Δ2 = H(1+γ)`` (B2, stream ``Σ_h z x_{h+1}ᵀ``) are the largest Frobenius
norms of one user's contribution (Lemma 2: ``||z|| <= 1+γ``, ``||x|| <= 1``). They bound the
change of a P-sum when one user's statistics are replaced by those of a null user (zero
statistics), which is the relation our audits use. (Replacing one real user by another
may change ``Σ zzᵀ`` by up to ``√2 Δ1`` and ``Σ z xᵀ`` by up to ``2Δ2``; we keep the paper's
constants in both calibrations so that they compare like with like, and say so in the
report.) The agent clips ``z`` and ``x_{h+1}`` to these norms before sending its
statistics, so the sensitivity bound holds for every trajectory, not only under Lemma 2.

Tree depth. The paper's ``m = ceil(log2 K)`` undercounts the nodes containing an episode by
one when ``K`` is a power of two (and is 0 for ``K = 1``); we use the exact number of tree
levels ``L = floor(log2 K) + 1`` (``>= m``, so more noise, never less) in both calibrations.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from dprl.privacy.calibration import (
    chi2_norm_bound,
    composed_epsilon,
    gaussian_sigma_tight,
    symmetric_gaussian_norm_bound_paper,
    symmetric_gaussian_norm_bound_tight,
    tree_counter_mu,
)
from dprl.privacy.regularizer import RegularizerCalibration
from dprl.privacy.tree_counter import tree_levels


@dataclass(frozen=True)
class LQPrivacyCalibration:
    """Everything a Private-OFU-RL job needs to know about its noise (plus accounting)."""

    regularizer: RegularizerCalibration
    calibration: str
    epsilon: float
    delta: float
    levels: int  # L: nodes per episode in the tree (composition count per counter)
    sens_gram: float  # Δ1
    sens_target: float  # Δ2

    @property
    def mu_gram(self) -> float:
        return tree_counter_mu(self.regularizer.sigma_gram, self.sens_gram, self.levels)

    @property
    def mu_target(self) -> float:
        return tree_counter_mu(self.regularizer.sigma_target, self.sens_target, self.levels)

    def exact_epsilon(self, which: str, delta: float) -> float:
        """Exact ε at ``delta`` of counter ``gram``/``target`` or of both (``joint``),
        from the Gaussian-DP profile (μ² adds up under composition)."""
        mu = {"gram": self.mu_gram, "target": self.mu_target, "joint": math.hypot(self.mu_gram, self.mu_target)}[which]
        return composed_epsilon(mu, delta)

    def claimed(self, which: str) -> tuple[float, float]:
        """The (ε, δ) guarantee this calibration claims for ``gram``/``target``/``joint``.

        ``paper``: each counter (ε/2, δ/2), jointly (ε, δ) (Theorem 2's proof).
        ``tight``: jointly (ε, δ) exactly; each counter alone is then μ/√2-GDP, whose
        exact ε at δ/2 is what it claims (smaller than ε but not necessarily ε/2)."""
        if which == "joint":
            return self.epsilon, self.delta
        if self.calibration == "paper":
            return self.epsilon / 2.0, self.delta / 2.0
        return self.exact_epsilon(which, self.delta / 2.0), self.delta / 2.0


def sensitivities(horizon: int, gamma: float) -> tuple[float, float]:
    """``Δ1 = H(1+γ)²``, ``Δ2 = H(1+γ)`` (proof of Theorem 2)."""
    return horizon * (1.0 + gamma) ** 2, horizon * (1.0 + gamma)


def private_ofu_calibration(
    epsilon: float, delta: float, calibration: str, episodes: int, horizon: int, gamma: float, n: int, d: int, alpha: float
) -> LQPrivacyCalibration:
    """Noise scales ``σ1, σ2`` and good-event constants ``(η, λ_min, λ_max, ν)``.

    ``paper`` (Sec. IV-A and proof of Theorem 3): ``σ_i² = 8 L Δ_i² ln(2/δ)/ε²``,
    ``Λ = σ1 √L (4√(n+d) + √(8 ln(4K/α)))``, ``η = 2Λ``, ``λ_min = Λ``, ``λ_max = 3Λ``,
    ``ν = σ2 √(L/Λ) (√(2n(n+d)) + √(4 ln(2K/α)))``.

    ``tight``: σ by the exact (analytic) Gaussian mechanism over both counters jointly:
    the two counters are ``2L`` Gaussian mechanisms on the same user, μ² adds up, and
    giving each counter half of ``μ(ε,δ)²`` (``σ_i = √(2L) Δ_i / μ(ε, δ)``) makes the pair
    exactly (ε, δ)-DP; the billboard lemma then gives (ε, δ)-JDP as in Theorem 2.
    ``Λ`` and the noise-norm bound in ``ν`` are replaced by valid bounds at the *same*
    failure probabilities (``α/(2K)`` each, so the union bound of Theorem 3 is unchanged):
    ``Λ`` by :func:`symmetric_gaussian_norm_bound_tight` (min of the Frobenius/χ² bound and
    the paper's) and ``||L_k||_F`` by the exact χ² quantile with ``n(n+d)`` degrees of
    freedom instead of Laurent–Massart. The release after ``k-1`` episodes sums at most
    ``L`` nodes, so per-entry noise variance is at most ``L σ²`` in both routes.
    """
    if calibration not in ("paper", "tight"):
        raise ValueError(f"calibration must be 'paper' or 'tight', got {calibration!r}")
    if not 0 < alpha <= 1:
        raise ValueError(f"confidence level alpha must lie in (0, 1], got {alpha}")
    levels = tree_levels(episodes)
    p = n + d
    d1, d2 = sensitivities(horizon, gamma)
    if calibration == "paper":
        scale = math.sqrt(8.0 * levels * math.log(2.0 / delta)) / epsilon
        sigma1, sigma2 = scale * d1, scale * d2
        # Lemma 4 with t = σ√(2 ln(4K/α)) fails w.p. 2·α/(4K) = α/(2K).
        lam = symmetric_gaussian_norm_bound_paper(sigma1 * math.sqrt(levels), p, alpha / (4.0 * episodes))
        frob = sigma2 * math.sqrt(levels) * (math.sqrt(2.0 * n * p) + math.sqrt(4.0 * math.log(2.0 * episodes / alpha)))
    else:
        sigma1 = gaussian_sigma_tight(epsilon, delta, d1, compositions=2 * levels)
        sigma2 = gaussian_sigma_tight(epsilon, delta, d2, compositions=2 * levels)
        # the paper bound fails w.p. <= 2β, the χ² bound w.p. <= β: β = α/(4K) keeps α/(2K).
        lam = symmetric_gaussian_norm_bound_tight(sigma1 * math.sqrt(levels), p, alpha / (4.0 * episodes))
        frob = chi2_norm_bound(sigma2 * math.sqrt(levels), n * p, alpha / (2.0 * episodes))
    # H_k = N_k + 2Λ I with ||N_k|| <= Λ gives Λ I ⪯ H_k ⪯ 3Λ I and ||L_k||_{H_k^{-1}} <= ||L_k||_F/√Λ.
    reg = RegularizerCalibration(
        sigma_gram=sigma1, sigma_target=sigma2, shift=2.0 * lam, lam_min=lam, lam_max=3.0 * lam, nu=frob / math.sqrt(lam)
    )
    return LQPrivacyCalibration(reg, calibration, float(epsilon), float(delta), levels, d1, d2)

