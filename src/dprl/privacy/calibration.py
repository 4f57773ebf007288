"""Noise calibration and high-probability noise bounds (``src/dprl/README.md``, "Calibration:
``paper`` and ``tight``").

``paper`` routes (as printed by the papers) and ``tight`` routes (same guarantee, less
noise or a narrower width) live side by side so that every agent can pick per job, and
so that experiments can show how much the ``tight`` route saves.

One meaning of the two names (:data:`dprl.privacy.setting.CALIBRATIONS`) in every paper, always under the paper's own neighbouring
relation, :data:`NEIGHBOURING_RELATION` (one user *replaced* by another; ``src/dprl/README.md``,
"Neighbouring relation"):

- ``paper``: the paper's printed route (zCDP, or basic composition), with its printed
  sensitivities wherever they hold under replacement and replacement sensitivities where
  the printed ones are null-user (add/remove) bounds; its printed confidence constants.
- ``tight``: the same (ε, δ) guarantee by exact accounting: every Gaussian release one
  user's replacement touches composes into one Gaussian mechanism (μ² adds up), and σ
  solves the analytic Gaussian mechanism (Balle & Wang 2018) for that μ, with sensitivities
  valid under replacement; the confidence widths use exact quantiles of the noise actually
  added (:func:`tight_noise_bounds`, :func:`laplace_sum_tail`) at the paper's failure
  probabilities.
"""

from __future__ import annotations

import functools
import math

import numpy as np

from dprl.checks import bracket_upper, check_array, check_number

NEIGHBOURING_RELATION = "replacement"  # every paper's, for both calibrations (module docstring)

# SciPy submodules are imported inside the functions that use them: a job process that
# only needs a Laplace scale should not pay ~0.5 s of scipy.stats import at start-up.


# --------------------------------------------------------------------------- Laplace


def laplace_tree_scale(epsilon: float, levels: int, l1_sensitivity: float = 1.0) -> float:
    """Per-node Laplace scale making a tree counter ε-DP: ``b = L·Δ1/ε``.

    Every element lies in at most ``L`` nodes, so one user changes at most ``L`` node sums
    by at most ``Δ1`` in ℓ1 each; basic composition of ``L`` Laplace mechanisms.
    """
    _check_eps(epsilon)
    check_number("levels", levels, minimum=1, integer=True)
    check_number("l1_sensitivity", l1_sensitivity, exclusive_minimum=0.0)
    return levels * l1_sensitivity / epsilon


# Largest number of Laplace terms whose tail we compute: the exact formula below costs
# O(k) per evaluation; beyond this the quantile search would take seconds per call.
LAPLACE_SUM_MAX_TERMS = 1_000_000


def laplace_sum_logsf(z: float, n_terms: int) -> float:
    """Exact ``ln P(Σ_{i<=k} Lap(1) > z)`` for every ``z`` and ``k`` (no quadrature).

    The sum is ``G1 - G2`` with ``G1, G2 ~ Gamma(k, 1)`` independent. Conditioning on ``G2``
    and expanding ``P(G1 > x) = e^{-x} Σ_{i<k} x^i/i!`` gives, for ``z >= 0``, the finite sum
    of positive terms

        ``P(G1 - G2 > z) = Σ_{m=0}^{k-1} Pois(m; z) · P(NB(k, 1/2) <= k-1-m)``

    (``Pois`` the Poisson pmf with mean ``z``, ``NB(k, 1/2)`` the failures before the k-th
    success). With no cancellation, evaluating it in log space (``logsumexp``, the
    negative-binomial CDF accumulated with ``logaddexp``) keeps ~1e-12 relative accuracy
    however deep the tail and however many terms (the earlier Gamma-difference quadrature
    missed the integrand's peak and silently returned 0 from about 200 terms on).
    """
    from scipy import special

    k = _laplace_terms(n_terms)
    if z < 0:
        return float(np.log1p(-math.exp(laplace_sum_logsf(-z, k))))
    m = np.arange(k)
    j = k - 1 - m  # P(NB <= j) = Σ_{i<=j} C(i+k-1, i) 2^{-(i+k)}
    i = np.arange(k)
    log_pmf_nb = special.gammaln(i + k) - special.gammaln(i + 1) - special.gammaln(k) - (i + k) * math.log(2.0)
    log_cdf_nb = np.logaddexp.accumulate(log_pmf_nb)[j]
    if z == 0:
        log_pois = np.where(m == 0, 0.0, -np.inf)
    else:
        log_pois = m * math.log(z) - z - special.gammaln(m + 1)
    return float(special.logsumexp(log_pois + log_cdf_nb))


def laplace_sum_sf(z: float, n_terms: int) -> float:
    """Exact ``P(Σ_{i<=k} Lap(1) > z)`` (:func:`laplace_sum_logsf`; underflows to 0 only
    where the probability is below the smallest float)."""
    return math.exp(laplace_sum_logsf(z, n_terms))


def laplace_sum_tail(scale: float, n_terms: int, beta: float) -> float:
    """Exact ``x`` with ``P(|Σ_{i<=k} Lap(b)| > x) = β``.

    This is the ``tight`` replacement of PUCB's ``E_ε`` per counter and release (before a
    union bound over counters and episodes): the noise in a release is exactly a sum of
    ``k = popcount(t) <= L`` i.i.d. Laplace node noises, whose tail we compute exactly
    (:func:`laplace_sum_logsf`) instead of bounding it.

    Raises ``ValueError`` where the value cannot be computed accurately: more than
    ``LAPLACE_SUM_MAX_TERMS`` terms, or a root whose tail probability misses ``β/2`` by more
    than 1e-9 relative (checked on every call, never returned silently).
    """
    check_number("beta", beta, exclusive_minimum=0.0, exclusive_maximum=1.0)
    check_number("Laplace scale", scale, exclusive_minimum=0.0)
    return scale * _laplace_sum_quantile(_laplace_terms(n_terms), float(beta))


def _laplace_terms(n_terms: int) -> int:
    k = max(int(n_terms), 1)
    if k > LAPLACE_SUM_MAX_TERMS:
        raise ValueError(
            f"laplace sum tail: {k} terms exceed the {LAPLACE_SUM_MAX_TERMS} for which the exact formula is evaluated"
        )
    return k


@functools.lru_cache(maxsize=4096)
def _laplace_sum_quantile(k: int, beta: float) -> float:
    from scipy import optimize

    log_target = math.log(beta / 2.0)  # two tails, symmetric
    if k == 1:
        return math.log(1.0 / beta)  # P(|Lap(1)| > z) = e^{-z}
    hi = bracket_upper("laplace sum tail", lambda x: laplace_sum_logsf(x, k) > log_target, max(1.0, math.log(1.0 / beta) * 2))
    z = optimize.brentq(lambda x: laplace_sum_logsf(x, k) - log_target, 0.0, hi, xtol=1e-12, rtol=1e-13)
    err = laplace_sum_logsf(z, k) - log_target
    if not (math.isfinite(z) and abs(err) <= 1e-9):
        raise ValueError(f"laplace sum tail: no accurate quantile for k={k}, beta={beta} (log-tail error {err:.3g})")
    return z


# --------------------------------------------------------------------------- Gaussian


def zcdp_to_dp(rho: float, delta: float) -> float:
    """ε of a ρ-zCDP mechanism at δ by the papers' route: ``ε = ρ + 2 sqrt(ρ ln(1/δ))``."""
    _check_delta(delta)
    return rho + 2.0 * math.sqrt(rho * math.log(1.0 / delta))


def zcdp_rho(epsilon: float, delta: float) -> float:
    """Largest ρ with ``ρ + 2 sqrt(ρ ln(1/δ)) <= ε``: the papers' zCDP-to-DP conversion
    (Bun & Steinke 2016, Prop. 1.3) solved exactly for ρ. Printed closed forms that drop
    the ρ term are only valid for small ε."""
    _check_eps(epsilon)
    _check_delta(delta)
    log_inv = math.log(1.0 / delta)
    return (math.sqrt(log_inv + epsilon) - math.sqrt(log_inv)) ** 2


def gaussian_delta(epsilon: float, mu: float) -> float:
    """Exact privacy profile of μ-GDP (Balle & Wang 2018, Theorem 8):
    ``δ(ε) = Φ(-ε/μ + μ/2) - e^ε Φ(-ε/μ - μ/2)``."""
    from scipy import special

    if mu <= 0:
        return 0.0
    # e^ε Φ(b) evaluated in log-space so large ε does not overflow.
    a = special.log_ndtr(-epsilon / mu + mu / 2.0)
    b = epsilon + special.log_ndtr(-epsilon / mu - mu / 2.0)
    return float(np.exp(a) - np.exp(b)) if a > b else 0.0


def gaussian_mu(epsilon: float, delta: float) -> float:
    """Largest μ such that μ-GDP is (ε, δ)-DP (root of ``gaussian_delta(ε, μ) = δ``)."""
    from scipy import optimize

    _check_eps(epsilon)
    _check_delta(delta)
    hi = bracket_upper("gaussian_mu", lambda m: gaussian_delta(epsilon, m) < delta)
    return optimize.brentq(lambda m: gaussian_delta(epsilon, m) - delta, 1e-12, hi, xtol=1e-14, rtol=1e-12)


def gaussian_sigma_tight(
    epsilon: float, delta: float, sensitivity: float, compositions: float = 1.0
) -> float:
    """Smallest σ such that ``compositions`` Gaussian mechanisms of ℓ2 sensitivity ``Δ``
    and scale σ are jointly (ε, δ)-DP.

    The k-fold composition of Gaussian mechanisms is exactly a Gaussian mechanism with
    sensitivity ``sqrt(k)·Δ`` (μ² adds up under GDP), so the analytic Gaussian calibration
    applies to the composed mechanism: ``σ = sqrt(k) Δ / μ(ε, δ)``. A tree counter is the
    composition of ``L`` node releases; several counters on the same users add their
    ``L·Δ_i²/σ_i²`` terms the same way.
    """
    _check_sensitivity(sensitivity, compositions)
    return math.sqrt(compositions) * sensitivity / gaussian_mu(epsilon, delta)


def gaussian_sigma_zcdp(epsilon: float, delta: float, sensitivity: float, compositions: float = 1.0) -> float:
    """σ by the zCDP route: total ρ = k Δ²/(2σ²) with ε = ρ + 2 sqrt(ρ ln(1/δ)) solved for ρ."""
    _check_sensitivity(sensitivity, compositions)
    return math.sqrt(compositions * sensitivity**2 / (2.0 * zcdp_rho(epsilon, delta)))


def tree_counter_mu(sigma: float, sensitivity: float, levels: int) -> float:
    """μ of a Gaussian tree counter: ``sqrt(L)·Δ/σ``."""
    check_number("sigma", sigma, exclusive_minimum=0.0)
    check_number("sensitivity", sensitivity, minimum=0.0)
    check_number("levels", levels, minimum=1, integer=True)
    return math.sqrt(levels) * sensitivity / sigma


def composed_epsilon(mu: float, delta: float) -> float:
    """Smallest ε at which μ-GDP satisfies (ε, δ)-DP (μ >= 0 finite: a NaN μ would make
    every ``gaussian_delta`` comparison false and report ε = 0)."""
    from scipy import optimize

    check_number("mu", mu, minimum=0.0)
    _check_delta(delta)
    if gaussian_delta(0.0, mu) <= delta:
        return 0.0
    hi = bracket_upper("composed_epsilon", lambda e: gaussian_delta(e, mu) > delta)
    return optimize.brentq(lambda e: gaussian_delta(e, mu) - delta, 0.0, hi, xtol=1e-12)


# --------------------------------------------------------------------------- noise norms


def chi2_norm_bound(sigma: float, dim: int, beta: float) -> float:
    """Exact ``1-β`` quantile of ``||N(0, σ² I_dim)||_2`` (tight route)."""
    return sigma * math.sqrt(_chi2_isf(beta, dim))


def _chi2_isf(beta: float, dof: int) -> float:
    """``scipy.stats.chi2.isf(β, dof)``, which is ``scipy.special.chdtri(dof, β)`` (the same
    number: ``chi2._isf`` calls it), without importing ``scipy.stats`` (~0.3 s CPU of a
    job's start-up)."""
    from scipy import special

    return float(special.chdtri(dof, beta))


def laurent_massart_norm_bound(sigma: float, dim: int, beta: float) -> float:
    """Laurent–Massart bound on ``||N(0, σ² I_dim)||_2`` at level β (papers' route):
    ``||g||² <= σ²(d + 2 sqrt(d ln(1/β)) + 2 ln(1/β))``."""
    log_inv = math.log(1.0 / beta)
    return sigma * math.sqrt(dim + 2.0 * math.sqrt(dim * log_inv) + 2.0 * log_inv)


def symmetric_gaussian_norm_bound_paper(sigma: float, dim: int, beta: float) -> float:
    """The papers' operator-norm bound for a symmetric Gaussian matrix with entry variance
    σ²: ``σ (4 sqrt(dim) + sqrt(8 ln(1/β)))`` (Chowdhury et al. 2021, Zhou 2022)."""
    return sigma * (4.0 * math.sqrt(dim) + math.sqrt(8.0 * math.log(1.0 / beta)))


def symmetric_gaussian_norm_bound_tight(sigma: float, dim: int, beta: float) -> float:
    """A sharper valid bound on the operator norm of a symmetric Gaussian matrix whose
    entries ``p <= q`` are i.i.d. ``N(0, σ²)``.

    ``||W||_op <= ||W||_F`` and ``||W||_F² = Σ_p W_pp² + 2 Σ_{p<q} W_pq² <= 2 σ² χ²_{dim(dim+1)/2}``,
    so the exact χ² quantile gives a valid bound. The paper's bound is also valid; the
    smaller of two data-independent valid bounds at the same β is itself valid (the
    choice does not depend on the noise), so we return the minimum.
    """
    q = dim * (dim + 1) // 2
    frob = sigma * math.sqrt(2.0 * _chi2_isf(beta, q))
    return min(frob, symmetric_gaussian_norm_bound_paper(sigma, dim, beta))


def tight_noise_bounds(
    sigma_gram: float, sigma_target: float, summed_nodes: int, gram_dim: int, target_dof: int,
    gram_failure: float, target_failure: float,
) -> tuple[float, float]:
    """The ``tight`` good-event bounds ``(Σ, ||z||)`` of a private Regularizer, for both papers
    (Chowdhury et al. ``Λ`` and ``||L_k||_F``; Zhou ``Σ`` and ``||z||``).

    A release sums at most ``summed_nodes`` independent Gaussian noise terms (tree nodes,
    or users for the local privatizer), so each entry has variance at most
    ``summed_nodes·σ²``: the bounds take the summed scale ``√(summed_nodes)·σ``, never the
    per-term σ. ``Σ`` bounds the symmetric Gram noise's operator norm
    (:func:`symmetric_gaussian_norm_bound_tight`) except with probability
    ``gram_failure``; ``||z||`` is the exact χ² quantile of the target noise with
    ``target_dof`` degrees of freedom, except with probability ``target_failure``. Callers
    pass the failure probabilities of their paper's union bound, so ``tight`` narrows the
    confidence widths at the *same* probability of leaving the good event as ``paper``.
    """
    gram = symmetric_gaussian_norm_bound_tight(sigma_gram * math.sqrt(summed_nodes), gram_dim, gram_failure)
    target = chi2_norm_bound(sigma_target * math.sqrt(summed_nodes), target_dof, target_failure)
    return gram, target


# --------------------------------------------------------------------------- checks


def _check_eps(epsilon: float) -> None:
    # finite: at ε = inf the Gaussian profile is NaN and the μ search never brackets
    check_number("epsilon", epsilon, exclusive_minimum=0.0)


def _check_sensitivity(sensitivity: float | np.ndarray, compositions: float) -> None:
    # one sensitivity or an array of them (one per released statistic); not converted, so
    # the caller's number or array is what the σ formula uses
    check_array("sensitivity", sensitivity, minimum=0.0)
    check_number("compositions", compositions, exclusive_minimum=0.0)


def _check_delta(delta: float) -> None:
    check_number("delta", delta, exclusive_minimum=0.0, exclusive_maximum=1.0)
