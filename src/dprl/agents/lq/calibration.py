"""Noise and confidence constants of Private-OFU-RL (Chowdhury, Zhou, Shroff 2021, Sec. IV),
``paper`` and ``tight``, returned as a :class:`~dprl.privacy.regularizer.RegularizerCalibration`
for the shared :class:`~dprl.privacy.regularizer.CentralRegularizer`. The two names mean
what they mean in every paper (:mod:`dprl.privacy.calibration`); the good-event constants
``(η, λ_min, λ_max, ν)`` come from :func:`~dprl.privacy.regularizer.shifted_calibration` and
the ``tight`` noise bounds from :func:`~dprl.privacy.calibration.tight_noise_bounds`, both
shared with the linear-mixture Privatizer.

Neighbouring relation. Definition 2 of the paper replaces one user by another. The
paper's sensitivities ``Δ1 = H(1+γ)²`` (counter B1, stream ``Σ_h z zᵀ``) and
``Δ2 = H(1+γ)`` (B2, stream ``Σ_h z x_{h+1}ᵀ``) are the largest Frobenius norms of one
user's contribution (Lemma 2: ``||z|| <= 1+γ``, ``||x|| <= 1``): they bound the change when
a user is replaced by a *null* user. Both counters are fed by the same ``z``, so under
replacement the pair moves together: the worst case of ``(||ΔG||/Δ1)² + (||ΔC||/Δ2)²`` is
``4.5`` (``z′`` at 60° to ``z``, ``x′ = −x``; :mod:`dprl.privacy.replacement`), not the
``2`` the printed σ's assume (each counter (ε/2, δ/2) with its own Δ). Both calibrations
are therefore calibrated for ``4.5``: ``paper`` multiplies the printed σ's by
``sqrt(4.5/2) = 1.5`` (which restores the printed zCDP budget ``ρ`` for the pair), and
``tight`` solves the analytic Gaussian mechanism for ``μ² = 4.5 L Δ_i²/σ_i²``. The
null-user calibrations (``relation="null_user"``, the previous behaviour) remain available
only as audited variants for the tests, where exact accounting under replacement must
reject them (``tight``: 1.5–1.8× the nominal ε; ``paper``: above it from ε ≈ 5). The agent clips ``z``
and ``x_{h+1}`` to these norms before sending its statistics, so the sensitivity bound
holds for every trajectory, not only under Lemma 2.

Tree depth. The paper's ``m = ceil(log2 K)`` undercounts the nodes containing an episode by
one when ``K`` is a power of two (and is 0 for ``K = 1``); we use the exact number of tree
levels ``L = floor(log2 K) + 1`` (``>= m``, so more noise, never less) in both calibrations.
That counts the nodes of all ``K`` episodes; the agent only ever uses releases after at most
``K - 1`` of them, for which ``m = bit_length(K - 1)`` levels suffice (the linear-mixture
calibration, ``dprl.agents.linmix.calibration.tree_depth``, counts that way). The LQ route
keeps ``L``: one level more than needed when ``K`` is a power of two, a conservative choice
left as it is so that its tables do not change.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from dprl.privacy.calibration import (
    NEIGHBOURING_RELATION,
    composed_epsilon,
    gaussian_sigma_tight,
    symmetric_gaussian_norm_bound_paper,
    tight_noise_bounds,
    zcdp_rho,
)
from dprl.privacy.regularizer import RegularizerCalibration, shifted_calibration
from dprl.privacy.replacement import CROSS_ALONE, GRAM_ALONE, JOINT, NULL_USER_JOINT, gram_cross_replacement_weight
from dprl.privacy.setting import PrivacySetting
from dprl.privacy.tree_counter import tree_levels


RELATIONS = (NEIGHBOURING_RELATION, "null_user")  # the paper's (Definition 2), and an audited broken variant


@dataclass(frozen=True)
class PrivateOFUCalibration:
    """Everything a Private-OFU-RL job needs to know about its noise (plus accounting)."""

    regularizer: RegularizerCalibration
    calibration: str
    epsilon: float
    delta: float
    levels: int  # L: nodes per episode in the tree (composition count per counter)
    sens_gram: float  # Δ1
    sens_target: float  # Δ2
    relation: str = NEIGHBOURING_RELATION  # the relation the σ's were calibrated for

    def result_columns(self) -> dict[str, float]:
        """What a regret job records next to its results (:meth:`RegularizerCalibration.result_columns`
        and the tree levels per episode); the accounted ε is the runner's ``accounted_epsilon``."""
        return {**self.regularizer.result_columns(), "tree_levels": self.levels}

    @property
    def weights(self) -> tuple[float, float]:
        """``(L Δ1²/σ1², L Δ2²/σ2²)``: each counter's μ² per unit of squared change."""
        r = self.regularizer
        return self.levels * (self.sens_gram / r.sigma_gram) ** 2, self.levels * (self.sens_target / r.sigma_target) ** 2

    def mu(self, which: str) -> float:
        """μ-GDP of counter ``gram`` or ``target`` alone, or of the pair (``joint``), under
        *replacement* (Definition 2; :mod:`dprl.privacy.replacement`)."""
        w1, w2 = self.weights
        return math.sqrt({
            "gram": GRAM_ALONE * w1,
            "target": CROSS_ALONE * w2,
            "joint": gram_cross_replacement_weight(w1, w2),
        }[which])

    def exact_epsilon(self, which: str, delta: float) -> float:
        """Exact ε at ``delta`` of ``gram``/``target``/``joint`` under replacement, from
        the Gaussian-DP profile (μ² adds up under composition)."""
        return composed_epsilon(self.mu(which), delta)

    @property
    def accounted_epsilon(self) -> float:
        """The job's accounted ε: exact ε of both counters at the nominal δ under
        replacement. At most the nominal ε for both calibrations (tested)."""
        return self.exact_epsilon("joint", self.delta)

    @property
    def accounted_delta(self) -> float:
        """The δ at which :attr:`accounted_epsilon` is accounted: the nominal δ."""
        return self.delta

    def claimed(self, which: str) -> tuple[float, float]:
        """The (ε, δ) this calibration claims for ``gram``/``target``/``joint``: the pair is
        (ε, δ) (Theorem 2); a single counter claims its exact ε at δ/2 under replacement
        (with the 4.5 calibration the pair, not each counter, gets the budget)."""
        if which == "joint":
            return self.epsilon, self.delta
        return self.exact_epsilon(which, self.delta / 2.0), self.delta / 2.0


def sensitivities(horizon: int, gamma: float) -> tuple[float, float]:
    """``Δ1 = H(1+γ)²``, ``Δ2 = H(1+γ)`` (proof of Theorem 2)."""
    return horizon * (1.0 + gamma) ** 2, horizon * (1.0 + gamma)


def private_ofu_calibration(
    privacy: PrivacySetting, episodes: int, horizon: int, gamma: float, n: int, d: int, alpha: float,
    relation: str = NEIGHBOURING_RELATION, variant: str = "corrected",
) -> PrivateOFUCalibration:
    """Noise scales ``σ1, σ2`` and good-event constants ``(η, λ_min, λ_max, ν)`` at the
    privacy setting ``privacy`` (ε, δ and the calibration) for ``episodes`` episodes.

    ``paper`` (Sec. IV-A and proof of Theorem 3): ``σ_i² = 8 L Δ_i² ln(2/δ)/ε²`` as printed,
    times ``JOINT/2 = 2.25`` under replacement (module docstring),
    ``Λ = σ1 √L (4√(n+d) + √(8 ln(4K/α)))``, ``η = 2Λ``, ``λ_min = Λ``, ``λ_max = 3Λ``,
    ``ν = σ2 √(L/Λ) (√(2n(n+d)) + √(4 ln(2K/α)))``.

    ``tight``: σ by the exact (analytic) Gaussian mechanism over both counters jointly:
    the two counters are ``2L`` Gaussian mechanisms on the same user and μ² adds up; with
    ``σ_i = Δ_i √(JOINT·L) / μ(ε, δ)`` the worst replacement pair has exactly ``μ(ε, δ)``,
    so the pair is (ε, δ)-DP; the billboard lemma then gives (ε, δ)-JDP as in Theorem 2.
    ``Λ`` and the noise-norm bound in ``ν`` are replaced by valid bounds at the *same*
    failure probabilities (``α/(2K)`` each, so the union bound of Theorem 3 is unchanged):
    ``Λ`` by :func:`symmetric_gaussian_norm_bound_tight` (min of the Frobenius/χ² bound and
    the paper's) and ``||L_k||_F`` by the exact χ² quantile with ``n(n+d)`` degrees of
    freedom instead of Laurent–Massart. The release after ``k-1`` episodes sums at most
    ``L`` nodes, so per-entry noise variance is at most ``L σ²`` in both routes: the
    bounds take the summed scale ``√L·σ``, never the per-node σ (tested by coverage).

    ``relation="null_user"`` reproduces the calibration for a null-user relation (factor
    ``2`` instead of ``4.5``); it is not private under Definition 2 and exists only as a
    variant that the accounting tests and audits must reject. ``variant="printed"`` uses the
    printed closed form of ``σ`` under ``paper`` (the zCDP conversion with ρ dropped), also
    only for those tests.
    """
    if privacy.delta is None:
        raise ValueError(f"Private-OFU-RL is (epsilon, delta)-JDP: it needs a delta, got {privacy!r}")
    epsilon, delta, calibration = privacy.epsilon, privacy.delta, privacy.calibration
    if variant not in ("corrected", "printed"):
        raise ValueError(f"variant must be 'corrected' or 'printed', got {variant!r}")
    if relation not in RELATIONS:
        raise ValueError(f"relation must be one of {RELATIONS}, got {relation!r}")
    if not 0 < alpha <= 1:
        raise ValueError(f"confidence level alpha must lie in (0, 1], got {alpha}")
    levels = tree_levels(episodes)
    p = n + d
    d1, d2 = sensitivities(horizon, gamma)
    joint = JOINT if relation == NEIGHBOURING_RELATION else NULL_USER_JOINT
    if calibration == "paper":
        if variant == "printed":
            scale = math.sqrt(8.0 * levels * math.log(2.0 / delta)) / epsilon
        else:
            # Theorem 2's route solved exactly: each counter ρ-zCDP with ρ = L Δ_i²/(2σ_i²)
            # and (ε/2, δ/2)-DP by ε/2 = ρ + 2 sqrt(ρ ln(2/δ)); the printed
            # σ² = 8 L Δ² ln(2/δ)/ε² drops the ρ term, harmless for small ε (1.6% more noise
            # at ε = 1, δ = 1e-3) but not private for large ε (accounted ε 17,000 at "ε = 1000").
            scale = math.sqrt(levels / (2.0 * zcdp_rho(epsilon / 2.0, delta / 2.0)))
        scale *= math.sqrt(joint / NULL_USER_JOINT)  # the pair's replacement sensitivity
        sigma1, sigma2 = scale * d1, scale * d2
        # Lemma 4 with t = σ√(2 ln(4K/α)) fails w.p. 2·α/(4K) = α/(2K).
        lam = symmetric_gaussian_norm_bound_paper(sigma1 * math.sqrt(levels), p, alpha / (4.0 * episodes))
        frob = sigma2 * math.sqrt(levels) * (math.sqrt(2.0 * n * p) + math.sqrt(4.0 * math.log(2.0 * episodes / alpha)))
    else:
        sigma1 = gaussian_sigma_tight(epsilon, delta, d1, compositions=joint * levels)
        sigma2 = gaussian_sigma_tight(epsilon, delta, d2, compositions=joint * levels)
        # the paper bound fails w.p. <= 2β, the χ² bound w.p. <= β: β = α/(4K) keeps α/(2K);
        # ||L_k||_F: n(n+d) entries, α/(2K) as in the paper route
        lam, frob = tight_noise_bounds(sigma1, sigma2, levels, p, n * p, alpha / (4.0 * episodes), alpha / (2.0 * episodes))
    reg = shifted_calibration(sigma1, sigma2, lam, frob)  # η = 2Λ, λ_min = Λ, λ_max = 3Λ, ν = ||L_k||_F/√Λ
    return PrivateOFUCalibration(reg, calibration, float(epsilon), float(delta), levels, d1, d2, relation)
