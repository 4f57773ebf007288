"""Power of the privacy audits: the smallest ε inflation an audit detects at its run count
(``src/dprl/README.md``, "Privacy audits", item 6).

An audit (:mod:`dprl.privacy.audit`) reports ``ε_lb = ln((p_low − δ)/q_high)`` with
Clopper–Pearson bounds from ``n`` runs per input, so even a perfectly chosen rejection
region cannot certify more than some fraction of the true ε: a mechanism whose ε is a
little above its claim passes. :func:`detectable_inflation` computes, for an audited pair
whose optimal (likelihood-ratio) statistic has a known distribution, the factor ``F``
such that a mechanism whose true ε on that pair is ``F ×`` the claimed ε yields
``ε_lb > ε_claimed`` when the audit's counts equal their expectations (detection with
probability about 1/2). The real audit picks its threshold on separate noisy runs and so
reaches a little less (PUCB's printed-ε' episode pair at 2e5 runs: expected ε_lb 1.35,
audited 1.24-1.28); tests check that real audits pass at 0.75 F and fail at 1.3 F.

Audited pairs:

- :class:`GaussianPair`: outputs differing by a shift of ``μ`` noise standard deviations in
  the likelihood-ratio direction (Gaussian tree counters, the Regularizer's counters, the
  smooth-sensitivity output perturbation with equal noise on both inputs); a bug that
  scales the noise by ``1/f`` makes it ``f·μ``, of exact ε ``ε(f·μ, δ)`` (Gaussian-DP profile).
- :class:`LaplacePair`: independent Laplace coordinates, coordinate ``i`` shifted by
  ``u_i`` noise scales (Laplace tree counters; PUCB's counters); noise scaled by ``1/f``
  gives ``f·u_i`` and the exact (pure) ε ``f·Σ u_i``.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np

from dprl.privacy.audit import _eps_lb
from dprl.privacy.calibration import composed_epsilon

# Bins of the discretised Laplace privacy-loss distribution over [-ε, ε].
_LAPLACE_BINS = 4000


@dataclass(frozen=True)
class GaussianPair:
    """Two Gaussian outputs ``mu`` noise standard deviations apart (in the LLR direction)."""

    mu: float

    def epsilon(self, f: float, delta: float) -> float:
        return composed_epsilon(f * self.mu, delta)

    def tails(self, f: float) -> tuple[np.ndarray, np.ndarray]:
        """``P_D[s > c]``, ``P_D'[s > c]`` on a grid of thresholds ``c`` of the projection
        ``s`` (``N(fμ, 1)`` under D, ``N(0, 1)`` under D')."""
        from scipy import special

        m = f * self.mu
        c = np.linspace(-4.0, m + 12.0, 1601)
        return special.ndtr(m - c), special.ndtr(-c)


@dataclass(frozen=True)
class LaplacePair:
    """Independent Laplace coordinates, coordinate ``i`` shifted by ``u[i]`` scales."""

    u: tuple[float, ...]

    def epsilon(self, f: float, delta: float) -> float:
        return f * float(sum(self.u))

    def tails(self, f: float) -> tuple[np.ndarray, np.ndarray]:
        """Upper tails of the privacy loss ``ln p_D/p_D'`` under D and D' on its grid."""
        return _laplace_loss_tails(tuple(f * x for x in self.u))


@functools.lru_cache(maxsize=256)
def _laplace_loss_tails(u: tuple[float, ...]) -> tuple[np.ndarray, np.ndarray]:
    """Distribution of ``Σ_i l_i``, ``l_i = (|y_i − u_i| − |y_i|)`` for ``y_i ~ Lap(0, 1)``
    (the privacy loss of a Laplace shift by ``u_i``), discretised on a grid of step
    ``h = Σu / _LAPLACE_BINS`` and convolved. One term: atoms ``P(l = u) = 1/2`` (``y <= 0``)
    and ``P(l = −u) = e^{−u}/2`` (``y >= u``), density ``e^{−(u−l)/2}/4`` on ``(−u, u)``.
    Under D' the loss has law ``e^{−l} dP_D`` (change of measure)."""
    from scipy import special

    total = float(sum(u))
    h = total / _LAPLACE_BINS
    terms: dict[float, int] = {}
    for ui in u:  # equal shifts (the usual case) are composed by one FFT power
        terms[ui] = terms.get(ui, 0) + 1
    span = sum(c * int(round(ui / h)) for ui, c in terms.items())
    size = 2 * span + 1
    nfft = 1 << (size - 1).bit_length()
    spectrum = np.ones(nfft // 2 + 1, dtype=complex)
    for ui, count in terms.items():
        k = max(int(round(ui / h)), 1)
        pts = np.linspace(-ui, ui, 2 * k + 1)  # the term's support points, spacing ≈ h
        mids = np.linspace(-ui, ui, 4 * k + 1)[1:-1:2]  # bin edges between them
        # continuous part: ∫_{-u}^{x} e^{-(u-l)/2}/4 dl = (e^{-(u-x)/2} - e^{-u})/2 per bin
        one = np.diff(0.5 * np.exp(-(ui - np.concatenate([[-ui], mids, [ui]])) / 2.0))
        one[0] += math.exp(-ui) / 2.0  # atom at -u (y >= u)
        one[-1] += 0.5  # atom at +u (y <= 0)
        idx = np.round(pts / h).astype(int)
        term = np.zeros(idx[-1] - idx[0] + 1)
        np.add.at(term, idx - idx[0], one)
        spectrum *= np.fft.rfft(term, nfft) ** count
    dist = np.clip(np.fft.irfft(spectrum, nfft)[:size], 0.0, None)
    loss = (np.arange(size) - span) * h
    p0 = dist / dist.sum()
    with np.errstate(divide="ignore"):
        log_p1 = np.log(p0) - loss
    p1 = np.exp(log_p1 - special.logsumexp(log_p1))
    # P[loss >= value] for each grid value (regions {loss > c} between grid points)
    sf0 = np.cumsum(p0[::-1])[::-1]
    sf1 = np.cumsum(p1[::-1])[::-1]
    return sf0, sf1


def expected_eps_lb(pair: GaussianPair | LaplacePair, f: float, n: int, delta: float, alpha: float) -> float:
    """``ε_lb`` of the audit when its counts equal their expectations, maximised over the
    thresholds of the optimal statistic and both orders of the pair."""
    sf0, sf1 = pair.tails(f)
    best = -math.inf
    for a, b in ((sf0, sf1), (1 - sf1, 1 - sf0)):
        # thresholds with at least one expected count (else the bound is -inf), thinned to
        # at most ~1000 evenly spread ones: Clopper–Pearson quantiles are the cost
        ok = np.flatnonzero(n * a >= 1)
        if ok.size == 0:
            continue
        ok = ok[np.unique(np.linspace(0, ok.size - 1, min(ok.size, 1000)).astype(int))]
        best = max(best, float(np.max(_eps_lb(n * a[ok], n * b[ok], n, delta, alpha))))
    return best


@functools.lru_cache(maxsize=1024)
def detectable_inflation(
    pair: GaussianPair | LaplacePair, claimed_epsilon: float, delta: float, n: int, alpha: float = 1e-3,
) -> float:
    """Smallest ``F`` such that an audit with ``n`` runs per input and phase, at
    Clopper–Pearson level ``α``, detects (``ε_lb > ε_claimed`` at expected counts) a
    mechanism whose exact ε on the audited ``pair`` is ``F · ε_claimed``.

    The mechanism is inflated by scaling its noise by ``1/f`` (the pair's shift becomes
    ``f`` times larger); ``f`` is found by bisection, ``F = ε_pair(f)/ε_claimed``. Returns
    ``inf`` when no inflation up to ``f = 100`` is detected.
    """
    if not (claimed_epsilon > 0 and n >= 1):
        raise ValueError(f"need claimed_epsilon > 0 and n >= 1, got {claimed_epsilon}, {n}")

    def detected(f: float) -> bool:
        return expected_eps_lb(pair, f, n, delta, alpha) > claimed_epsilon

    lo, hi = 1e-2, 1e2
    if not detected(hi):
        return math.inf
    if detected(lo):
        return pair.epsilon(lo, delta) / claimed_epsilon
    for _ in range(16):  # geometric bisection to a relative width of ~1e-3 in f
        mid = math.sqrt(lo * hi)
        lo, hi = (lo, mid) if detected(mid) else (mid, hi)
    return pair.epsilon(hi, delta) / claimed_epsilon
