"""Where LinOpt's regret rate applies (src/dprl/README.md, "Regimes"): the burn-in horizon ``T*``
of a job, predicted from its own confidence radii and its instance's value gaps.

Derivation. LinOpt's optimistic value is ``Q_h = clip(Q̂_h + Γ_p + Γ_r, 0, c_h)`` with the
ceiling ``c_h = H − h + 1`` (Algorithm 1 line 10) and the bonuses ``Γ_p = β_p ||ϕ||_{Λ_p⁻¹}``,
``Γ_r = β_r ||φ||_{Λ_r⁻¹}`` (``linopt.confidence_radii``). Both radii are fixed for a
job (they use its ``K``, and for the private agents the shift ``λ_min``, ``λ_max = 3λ_min``
and ``ν`` of its calibration). After ``k`` episodes the data add about ``k`` to ``Λ`` along
the features that are played, so ``||ϕ||_{Λ⁻¹}`` and ``||φ||_{Λ⁻¹}`` are about
``1/sqrt(k)`` (scale-free in the feature) and the total bonus at step ``h`` is about
``b_h/sqrt(k)`` with ``b_h = β_p + β_r`` (``b_H = β_r``: ``ϕ = ψ V_{H+1} = 0`` at the last
step). While the bonus exceeds the value gap between the ceiling and the best suboptimal
action, ``g_h(s) = c_h − max_{a: Q*_h(s,a) < V*_h(s)} Q*_h(s,a)``, that action's optimistic
value is clipped at ``c_h`` as well as the optimal one's: every action ties and the
tie-break plays uniformly, whatever ε (regret linear). The greedy policy can prefer the
optimal action at ``(h, s)`` once ``b_h/sqrt(k) <= g_h(s)``, i.e. after ``b_h²/g_h(s)²``
episodes. The burn-in ends (the onset: per-episode regret below half its initial level)
once the pairs carrying most of the uniform policy's regret have done so; we average over
them with the regret as weight:

    ``T* = C · Σ_{h,s} w_h(s) b_h² / g_h(s)²``,  ``w_h(s)``: the uniform policy's share of
    regret at ``(h, s)`` (:func:`uniform_regret_shares`).

``C`` is empirical (this package's instances): on the default ``mixture`` (S=10, A=3,
d1=d2=2, H=2) the measured onset (per-episode regret below half its initial level,
:func:`dprl.agents.regime.onset_episode`) is 2.5–5.2 times ``Σ w b²/g²`` over seeds
0–3 at ε = 1000 (K = 2e5) and seeds 0–2 at ε = 100 (K = 1e5, ``tight``), the same ratio
per seed at both ε (2.76/2.80, 5.20/4.99, 2.50/2.51): the formula carries the dependence
on ε, the constant the instance's. ``C = 3.3`` is the geometric mean of the ratios.
LinOpt-PO has a second, K-dependent burn-in that this formula does not carry: its
mirror-descent step ``η = sqrt(2 log|A|/(H² K))`` moves the policy by ``η·ΔQ`` per episode,
so its measured onset grows like ``sqrt(K)`` (OPPO on ``spread_mixture``: about 1e4 at
K = 3e4 and 1.9e4 at K = 1.2e5, against ``T*`` ≈ 500); the claims therefore also require
the measured onset before ``K/10``.

Privacy enters through ``β``: ``sqrt(d1 λ_max)`` with ``λ_max ∝ σ ∝ 1/μ(ε, δ)``, so ``T*``
grows like ``1/μ(ε, δ)`` (like ``1/ε`` for small ε, ``1/sqrt(ε)`` for large ε). On the
default instance (seed medians at K = 6e5, ``tight``, δ = 1e-5): ``T*`` = 4.3e3 (ε = 1000),
1.4e4 (100), 6.7e4 (10), 4.8e5 (1); measured the seed-mean curves reaching their
rate near 2e4, 7e4, 3–4e5 and 2e6, about 4.5 times these onsets at every ε.

A decade-long slope window needs the onset before ``K/10``: a Z2/Z3 setting is in its
regime when ``K >= RATE_DECADE · T*(K)`` (:func:`horizon_needed`, a fixed point because
``β`` grows like ``sqrt(log K)``) and the measured onset is at most ``K/10``.
"""

from __future__ import annotations

import numpy as np

from dprl.agents.linmix.calibration import linopt_calibration
from dprl.agents.linmix.linopt import confidence_radii
from dprl.agents.regime import burn_in_episodes as fixed_point
from dprl.privacy.setting import PrivacySetting
from dprl.envs.linear_mixture import KnownFeatures, LinearMixtureMDP
from dprl.privacy.regularizer import GoodEventBounds

BURN_IN_CONSTANT = 3.3  # C above: measured onset / Σ w b²/g² on the default mixture (geometric mean)
RATE_DECADE = 10.0  # the slope window is the last decade of K: the onset must precede K/10
GAP_TOL = 1e-9


def uniform_regret_shares(env: LinearMixtureMDP) -> np.ndarray:
    """``(H, S)``: the share of the uniform policy's per-episode regret incurred at
    ``(h, s)`` (performance difference lemma: ``V*_1(s_1) − V^unif_1(s_1) = Σ_h E_{s ~
    d^unif_h}[V*_h(s) − mean_a Q*_h(s, a)]``); the all-tied burn-in plays this policy."""
    H, S = env.horizon, env.S
    V = env.optimal_values()
    d = np.zeros(S)
    d[env.s1] = 1.0
    out = np.zeros((H, S))
    for h in range(H):
        Q = env.r + env.P @ V[h + 1]
        out[h] = d * (V[h] - Q.mean(axis=1))
        d = d @ env.P.mean(axis=1)  # next-state distribution under uniform play
    total = out.sum()
    return out / total if total > 0 else out


def ceiling_gaps(env: LinearMixtureMDP) -> np.ndarray:
    """``(H, S)``: ``g_h(s) = c_h − max_{a suboptimal} Q*_h(s, a)``, the gap between the
    clip ceiling ``c_h = H − h + 1`` and the best suboptimal action (``inf`` where every
    action is optimal)."""
    H = env.horizon
    V = env.optimal_values()
    out = np.full((H, env.S), np.inf)
    for h in range(H):
        Q = env.r + env.P @ V[h + 1]  # (S, A)
        sub = np.where(Q < V[h][:, None] - GAP_TOL, Q, -np.inf).max(axis=1)  # best suboptimal
        ok = np.isfinite(sub)
        out[h, ok] = (H - h) - sub[ok]
    return out


def radii(feat: KnownFeatures, K: int, alpha: float, scheme: str, privacy: PrivacySetting | None = None,
          lam: float = 1.0) -> tuple[float, float]:
    """``(β_p, β_r)`` a job uses (``linopt.confidence_radii`` on its calibration's
    ``λ_min, λ_max, ν`` at ``privacy``; ``scheme="none"``: ridge ``λ``)."""
    if scheme == "none":
        ridge = GoodEventBounds.ridge(lam)
        return confidence_radii(ridge, ridge, feat.d1, feat.d2, K, feat.horizon, alpha)
    if privacy is None or privacy.delta is None:
        raise ValueError(f"the {scheme} Privatizer needs a privacy setting with epsilon and delta, got {privacy!r}")
    cal = linopt_calibration(privacy, scheme, K, feat, alpha)
    return confidence_radii(cal.p, cal.r, feat.d1, feat.d2, K, feat.horizon, alpha)


def predicted_burn_in(beta_p: float, beta_r: float, gaps: np.ndarray, shares: np.ndarray,
                      constant: float = BURN_IN_CONSTANT) -> float:
    """``T* = C · Σ_{h,s} w_h(s) b_h²/g_h(s)²`` with the uniform policy's regret shares
    ``w`` (a regret-weighted mean: robust to ties between steps and to rarely visited
    states); ``b_h = β_p + β_r`` (``β_r`` at the last step)."""
    H = gaps.shape[0]
    b = np.full(H, beta_p + beta_r)
    b[-1] = beta_r
    need = (b[:, None] / gaps) ** 2  # inf gap -> 0: nothing to learn there
    w = np.asarray(shares, float).ravel()
    if not w.sum() > 0:
        return 1.0  # every policy is optimal: nothing to burn in
    return float(max(1.0, constant * np.dot(w, need.ravel()) / w.sum()))


def linopt_burn_in(env: LinearMixtureMDP, K: int, alpha: float, scheme: str, privacy: PrivacySetting | None = None,
                   lam: float = 1.0) -> float:
    """The burn-in ``T*`` of a job run for ``K`` episodes (its radii use ``K``). LinOpt-PO
    uses the same ``Q``: its mirror-descent policy stays uniform while they all tie."""
    beta = radii(env.features(), K, alpha, scheme, privacy, lam)
    return predicted_burn_in(*beta, ceiling_gaps(env), uniform_regret_shares(env))


def horizon_needed(env: LinearMixtureMDP, alpha: float, scheme: str, privacy: PrivacySetting | None = None,
                   lam: float = 1.0, factor: float = RATE_DECADE) -> float:
    """Smallest ``K`` with ``K >= factor · T*(K)``: the horizon a decade-long slope window
    needs after the burn-in (``inf`` if beyond 1e15)."""
    gaps, shares = ceiling_gaps(env), uniform_regret_shares(env)
    feat = env.features()

    def t_star(k: int) -> float:
        return predicted_burn_in(*radii(feat, k, alpha, scheme, privacy, lam), gaps, shares)

    return fixed_point(t_star, factor)


def regime_columns(env: LinearMixtureMDP, K: int, alpha: float, scheme: str, privacy: PrivacySetting | None,
                   lam: float) -> dict[str, float]:
    """What a job records: ``burn_in_episodes`` (its ``T*`` at its own ``K``) and
    ``horizon_needed`` (:func:`horizon_needed`)."""
    return {
        "burn_in_episodes": linopt_burn_in(env, K, alpha, scheme, privacy, lam),
        "horizon_needed": horizon_needed(env, alpha, scheme, privacy, lam),
    }
