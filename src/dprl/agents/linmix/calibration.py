"""Zhou (2022) privatizer calibrations: noise scales and the Assumption-2 constants
``(λ_min, λ_max, ν)`` for the central (Section 6.1) and local (Remark 6.9) privatizers,
``paper`` and ``tight`` routes, returned as :class:`RegularizerCalibration` (one for the
transition regression ``p`` and one for the reward regression ``r``).

Privacy unit: one user = one episode, contributing one element to each of the ``4H``
streams (``Gram_p``, ``target_p``, ``Gram_r``, ``target_r`` at every step ``h``).

Tree levels: the statistic released at the start of episode ``k`` is the prefix over
``1..k-1``, so only releases after at most ``K-1`` elements are ever used. Over that
stream each element lies in at most ``bit_length(K-1) = ceil(log2 K) = m`` released nodes
and every release sums at most ``m`` nodes: the paper's ``m`` (Lemma 6.1) is exactly the
number of levels that matter (for ``K = 1`` nothing is ever released; we use ``m = 1``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from dprl.envs.linear_mixture import KnownFeatures
from dprl.privacy.calibration import (
    NEIGHBOURING_RELATION,
    composed_epsilon,
    gaussian_sigma_tight,
    symmetric_gaussian_norm_bound_paper,
    tight_noise_bounds,
    zcdp_rho,
)
from dprl.privacy.regularizer import RegularizerCalibration, shifted_calibration
from dprl.privacy.setting import PrivacySetting


@dataclass(frozen=True)
class Sensitivities:
    """ℓ2 sensitivities of one user's element in the four per-step streams."""

    gram_p: float
    target_p: float
    gram_r: float
    target_r: float

    def as_array(self) -> np.ndarray:
        return np.array([self.gram_p, self.target_p, self.gram_r, self.target_r])


@dataclass(frozen=True)
class LinOptCalibration:
    """Everything the agent needs from a calibration, plus the accounting behind it."""

    p: RegularizerCalibration
    r: RegularizerCalibration
    sensitivities: Sensitivities  # the ones the σ's were computed from
    sigmas: np.ndarray  # (4,) σ_{p,1}, σ_{p,2}, σ_{r,1}, σ_{r,2}
    m: int  # nodes per element / per release (central) or 1 (local)
    sum_terms: int  # noise terms in one release, bounded: m (central) or K-1 (local)
    replacement: Sensitivities  # the features' replacement sensitivities (the paper's relation)
    horizon: int
    delta: float
    relation: str = NEIGHBOURING_RELATION  # the relation the σ's were calibrated for (both routes)

    @property
    def accounted_epsilon(self) -> float:
        """The job's accounted ε, as for the LQ calibration: exact ε (at the nominal δ) of
        all ``4H`` streams under *replacement* sensitivities, by μ-GDP composition:
        ``μ² = m H Σ_c Δ_c²/σ_c²``. At most the nominal ε for both routes (tested); above it
        for ``variant="printed"`` at large ε."""
        mu = math.sqrt(self.m * self.horizon * float(np.sum((self.replacement.as_array() / self.sigmas) ** 2)))
        return composed_epsilon(mu, self.delta)

    @property
    def accounted_delta(self) -> float:
        """The δ at which :attr:`accounted_epsilon` is accounted: the nominal δ."""
        return self.delta

    def result_columns(self) -> dict[str, float]:
        """What a regret job records next to its results: the transition regression's
        regularizer (``θ_p``, whose radius ``β_p`` sets the regret's rate;
        :meth:`RegularizerCalibration.result_columns`, named as in the LQ paper) and the tree
        levels ``m``; the accounted ε is the runner's ``accounted_epsilon``."""
        return {**self.p.result_columns(), "tree_levels": self.m}


def tree_depth(K: int) -> int:
    """``m = ceil(log2 K)`` (Lemma 6.1) = ``bit_length(K-1)``; at least 1."""
    return max(1, int(K - 1).bit_length())


def paper_sensitivities(d1: int, H: int) -> Sensitivities:
    """As printed (proof of Theorem 6.4): ``Δ_{p,1} = d1 H²``, ``Δ_{p,2} = sqrt(d1) H²``,
    ``Δ_{r,1} = Δ_{r,2} = 1``."""
    return Sensitivities(d1 * H**2, math.sqrt(d1) * H**2, 1.0, 1.0)


def replacement_sensitivities(feat: KnownFeatures) -> Sensitivities:
    """Valid ℓ2 sensitivities when one user is *replaced* (the paper's neighbouring
    relation), computed from the known features only (never from data).

    For vectors ``a, b`` with ``||a||, ||b|| <= B``: ``||aaᵀ - bbᵀ||_F² = |a|⁴ + |b|⁴ -
    2(a·b)² <= 2B⁴`` and ``||a y - b y'|| <= 2BY``; if all entries are non-negative,
    ``(a·b) >= 0`` gives ``||a y - b y'|| <= sqrt(2) B Y`` and entries in ``[0, c_i]`` give the
    coordinate bounds ``||c||²`` (Gram) and ``||c|| Y`` (target). We take the smaller valid
    bound. The printed ``Δ_{r,1} = Δ_{r,2} = 1`` are add/remove sensitivities; under
    replacement they can be ``sqrt 2`` (one-hot ``φ``), which is why ``tight`` uses these.
    """
    H = feat.horizon
    abs_mass = np.abs(feat.psi).sum(axis=3)  # (S, A, d1): |ϕ_i| <= H * abs_mass
    B_p = H * float(np.linalg.norm(abs_mass, axis=-1).max())
    gram_p, target_p = math.sqrt(2.0) * B_p**2, 2.0 * B_p * H
    if feat.psi.min() >= 0:
        c = H * abs_mass.max(axis=(0, 1))  # ϕ_i ∈ [0, c_i]
        cn = float(np.linalg.norm(c))
        gram_p, target_p = min(gram_p, cn**2), min(math.sqrt(2.0) * B_p * H, cn * H)
    B_r = float(np.linalg.norm(feat.phi_r, axis=-1).max())
    gram_r = math.sqrt(2.0) * B_r**2
    target_r = (math.sqrt(2.0) if feat.phi_r.min() >= 0 else 2.0) * B_r  # rewards in [0, 1]
    if feat.phi_r.min() >= 0:
        c = feat.phi_r.max(axis=(0, 1))
        gram_r = min(gram_r, float(np.linalg.norm(c)) ** 2)
    return Sensitivities(gram_p, target_p, gram_r, target_r)


def _constants(
    sigma_gram: float, sigma_target: float, terms: int, dim: int, dim_paper: int, K: int, H: int, alpha: float, calibration: str
) -> RegularizerCalibration:
    """Assumption-2 constants (proof of Theorem 6.5): the released Gram noise is a sum of
    at most ``terms`` symmetric Gaussian matrices, the target noise a sum of ``terms``
    Gaussian vectors; union bound over ``k <= K``, ``h <= H`` at ``α/(8KH)`` and ``α/(4KH)``.
    Shift ``2Σ`` gives ``λ_min = Σ``, ``λ_max = 3Σ``, ``ν = ||z|| / sqrt(Σ)``
    (:func:`~dprl.privacy.regularizer.shifted_calibration`, shared with the LQ paper)."""
    if calibration == "paper":
        s_g = sigma_gram * math.sqrt(terms)
        s_t = sigma_target * math.sqrt(terms)
        # Σ = σ sqrt(m) (4 sqrt(d) + sqrt(8 ln(8KH/α))); ||z|| <= sqrt(m) σ (sqrt(d1) + sqrt(2 ln(4KH/α)))
        big = symmetric_gaussian_norm_bound_paper(s_g, dim_paper, alpha / (8 * K * H))
        z = s_t * (math.sqrt(dim) + math.sqrt(2.0 * math.log(4 * K * H / alpha)))
    else:
        # tight: same failure probabilities, exact χ² quantiles and the sharper symmetric
        # bound (privacy/calibration.py); the constants only widen/narrow β, not privacy.
        big, z = tight_noise_bounds(sigma_gram, sigma_target, terms, dim, dim, alpha / (8 * K * H), alpha / (4 * K * H))
    return shifted_calibration(sigma_gram, sigma_target, big, z)


VARIANTS = ("corrected", "printed")
# Replacement weight of one step's four streams, each normalised by its own worst case: the
# pair (ϕ = c, y = H; e_1, r = 1) against (ϕ = 0; e_2, r = 1) attains all four at once
# (agents/linmix/privacy.neighbouring_statistics, d2 >= 2), so 4 is the joint worst case there
# (the LQ pair's streams cannot peak together: its weight is JOINT = 4.5 < 2 + 4).
STREAMS_PER_STEP = 4.0


def linopt_calibration(
    privacy: PrivacySetting,
    scheme: str,
    K: int,
    feat: KnownFeatures,
    alpha: float,
    variant: str = "corrected",
) -> LinOptCalibration:
    """Central (``scheme="central"``, Section 6.1) or local (``"local"``, Remark 6.9) at the
    privacy setting ``privacy`` (ε, δ and the calibration) for ``K`` episodes.

    ``paper``: the route of Theorem 6.4: each of the ``4H`` counters is ``ρ_c``-zCDP with
    ``ρ_c = m Δ_c²/(2σ_c²)`` and must be ``(ε/(4H), δ/(4H))``-DP by
    ``ε/(4H) = ρ_c + 2 sqrt(ρ_c ln(4H/δ))``; basic composition over the ``4H`` counters.
    The printed closed form ``σ = (H Δ/ε) sqrt(32 m ln(4H/δ))`` solves that equation with
    the ``ρ_c`` term dropped, which is only valid for small ε: at H = 2, δ = 1e-5 it is
    private up to ε ≈ 189 and at "ε = 1000" its exact ε under replacement is about 3,800.
    We therefore solve the same equation exactly (:func:`zcdp_rho`; more noise than
    printed at every ε, 0.2% at ε = 1, H = 2), and use ``Δ_c = max(printed, replacement)``
    because the printed ``Δ_{r,1} = Δ_{r,2} = 1`` are add/remove sensitivities (one-hot
    reward features change by ``sqrt 2`` under replacement, the paper's relation). The
    printed constants remain as ``variant="printed"``, an audited variant that exact
    accounting must reject (tests; the config validation refuses it for jobs). The local
    version is the same with ``m = 1`` (each user's statistic is one node, released once),
    and the noise bounds use ``K-1`` summed terms instead of ``m``.

    ``tight``: one user affects ``4H`` Gaussian streams, each through at most ``m``
    (central) or 1 (local) node releases. Under μ-GDP the composition of all of them is a
    Gaussian mechanism with ``μ² = m Σ_c H Δ_c²/σ_c²``; choosing ``σ_c = Δ_c sqrt(4Hm)/μ(ε,δ)``
    makes it exactly ``(ε, δ)``-DP (Balle & Wang 2018) with replacement sensitivities
    :func:`replacement_sensitivities`. (Gram and target streams share ``ϕ``; taking each
    stream's own worst case bounds their joint worst case, so this is valid, if not
    exact.) For JDP the actions given to other users are a post-processing of these
    releases (billboard lemma), so the agent is (ε,δ)-JDP.

    Both routes mean what they mean for the LQ paper (:mod:`dprl.privacy.calibration`,
    module docstring): the paper's relation, replacement, and for ``tight`` the analytic
    Gaussian mechanism (:func:`gaussian_sigma_tight`) at the joint replacement worst case of
    all the streams one user reaches, ``Σ_c (||ΔG_c||/Δ_c)²`` per node. The LQ Gram/cross
    pair (``||z|| <= c``, ``||x|| <= 1`` in any direction) cannot reach both worst cases at
    once, so its weight is ``4.5`` (:mod:`dprl.privacy.replacement`); here each stream's own
    worst case is summed (:data:`STREAMS_PER_STEP`), which is exact whenever one pair of
    users attains them all (it does on the audit instances: tested), and otherwise an upper
    bound, at most ``sqrt(2)`` noisier per shared-vector pair than the joint worst case.
    """
    if scheme not in ("central", "local"):
        raise ValueError(f"scheme must be 'central' or 'local', got {scheme!r}")
    if privacy.delta is None:
        raise ValueError(f"the Privatizer is (epsilon, delta)-DP: it needs a delta, got {privacy!r}")
    epsilon, delta, calibration = privacy.epsilon, privacy.delta, privacy.calibration
    if variant not in VARIANTS:
        raise ValueError(f"variant must be one of {VARIANTS}, got {variant!r}")
    if K < 1:
        raise ValueError(f"K must be >= 1, got {K}")
    H, d1, d2 = feat.horizon, feat.d1, feat.d2
    m = tree_depth(K) if scheme == "central" else 1
    terms = m if scheme == "central" else max(K - 1, 1)
    if calibration == "paper" and variant == "printed":
        sens = paper_sensitivities(d1, H)
        sigmas = H * sens.as_array() / epsilon * math.sqrt(32.0 * m * math.log(4.0 * H / delta))
    elif calibration == "paper":
        printed, repl = paper_sensitivities(d1, H).as_array(), replacement_sensitivities(feat).as_array()
        sens = Sensitivities(*np.maximum(printed, repl))
        rho = zcdp_rho(epsilon / (4.0 * H), delta / (4.0 * H))
        sigmas = sens.as_array() * math.sqrt(m / (2.0 * rho))
    else:
        sens = replacement_sensitivities(feat)
        # the analytic Gaussian mechanism over every node a user reaches, as in the LQ route:
        # σ_c = Δ_c sqrt(weight · nodes)/μ(ε, δ) with weight 4 per step (STREAMS_PER_STEP)
        sigmas = gaussian_sigma_tight(epsilon, delta, sens.as_array(), compositions=STREAMS_PER_STEP * H * m)
    d = max(d1, d2)
    cal_p = _constants(sigmas[0], sigmas[1], terms, d1, d, K, H, alpha, calibration)
    cal_r = _constants(sigmas[2], sigmas[3], terms, d2, d2, K, H, alpha, calibration)
    return LinOptCalibration(cal_p, cal_r, sens, sigmas, m, terms, replacement_sensitivities(feat), H, delta)
