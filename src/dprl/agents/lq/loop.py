"""The episode loop of OFU-RL / Private-OFU-RL (Chowdhury, Zhou, Shroff 2021, Algorithm 1),
compiled (Numba): per episode, the same steps as :class:`~dprl.agents.lq.ofu.OFUAgent`
(``act`` then ``observe``) driven by :func:`dprl.agents.lq.episodes.run_episodes`, with the same
kernels (:func:`~dprl.agents.lq.ofu.plan_step`, :func:`~dprl.agents.lq.ofu.user_statistics`,
:func:`~dprl.envs.lq.rollout_into`, :func:`~dprl.envs.lq.policy_cost_one`).

The Regularizer's state is updated in place in its own arrays (the ``TreeCounter`` nodes of
a :class:`~dprl.privacy.regularizer.CentralRegularizer`, the sums of a
:class:`~dprl.privacy.regularizer.NonPrivateRegularizer`), so the Python objects stay the
single state; :func:`_release_central` and :func:`_observe_central` reproduce their
``release``/``observe`` (same floating-point operations, noise from the calibration's σ's).

Random streams, read inside the kernels in the order of the plain loop (NumPy generators
passed to Numba produce the same numbers): per episode the oracle's
``agent_rng.standard_normal((N-1, (n+d)n))`` then ``agent_rng.random(N-1)``, the
environment's ``env_rng.standard_normal((H, n))`` then ``env_rng.random(H)``, and the
counters' ``noise_rng.standard_normal((p, p))`` (B1, symmetrised) then
``noise_rng.standard_normal((p, n))`` (B2). The oracle test is ``tests/lq/test_compiled_loop.py``.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from dprl.agents.lq.ofu import plan_step, user_statistics
from dprl.envs.lq import ball_noise_into, policy_cost_one, rollout_into
from dprl.privacy.kernels import feed_tree, finish_into, gaussian_into, trailing_zeros
from dprl.runner.kernel_cache import drop_stale_closure

# Scalars carried across blocks: cumulative exact and sampled regret, last episode's regret and β.
CUM_REGRET, CUM_SAMPLED, LAST_REGRET, LAST_BETA = range(4)
# Counts carried across blocks.
N_FALLBACK, N_CLIPPED, N_REPAIRED, N_NOT_PD, LAST_FEASIBLE = range(5)


@njit(cache=True)
def _release_central(
    gram_suffix: np.ndarray, target_suffix: np.ndarray, t: int, p: int, q: int, shift: float, lam_min: float,
) -> tuple[np.ndarray, np.ndarray, bool, bool]:
    """``CentralRegularizer.release`` after ``t`` users (line 3 of Algorithm 1): ``V_k = T_{1,k} + ηI``
    (symmetrised, eigenvalues floored at ``λ_min`` off the good event: ``Regularizer._finish``)
    and ``U_k = T_{2,k}``; returns ``(V_k, U_k, repaired, not_pd)``."""
    gram = np.zeros((p, p))
    target = np.zeros((p, q))
    if t > 0:
        level = trailing_zeros(t)  # the release is the suffix sum at the lowest set bit of t
        for i in range(p):
            for j in range(p):
                gram[i, j] = gram_suffix[level, i * p + j]
            for j in range(q):
                target[i, j] = target_suffix[level, i * q + j]
    for i in range(p):
        for j in range(p):
            gram[i, j] = gram[i, j] + (shift if i == j else 0.0)
    repaired, not_pd = finish_into(gram, lam_min)
    return gram, target, repaired, not_pd


@njit(cache=True)
def _observe_central(
    gram: np.ndarray, cross: np.ndarray, t: int, noisy: bool, sigma_gram: float, sigma_target: float,
    gram_exact: np.ndarray, gram_suffix: np.ndarray, target_exact: np.ndarray, target_suffix: np.ndarray,
    rng: np.random.Generator, drawn: np.ndarray,
) -> None:
    """``CentralRegularizer.observe`` of user ``t`` (1-based): B1 gets ``Σ z zᵀ`` with symmetric
    Gaussian node noise (``GaussianNoise.sample(symmetric=True)``: the upper triangle of a
    ``(p, p)`` draw, mirrored), then B2 gets ``Σ z xᵀ`` with i.i.d. node noise. The noise is
    scaled by :func:`~dprl.privacy.kernels.gaussian_into`, which records the σ's it drew with
    in ``drawn`` (rows: B1, B2; the regularizer's ``drawn``, what the job accounts from)."""
    p, q = cross.shape
    noise_g = np.zeros(p * p)
    noise_t = np.zeros(p * q)
    if noisy:
        z = np.empty(p * p)
        for c in range(p * p):
            z[c] = rng.standard_normal()
        gaussian_into(z, sigma_gram, p, noise_g, drawn, 0)
    feed_tree(gram_exact, gram_suffix, t, gram.ravel(), noise_g, noisy)
    if noisy:
        z = np.empty(p * q)
        for c in range(p * q):
            z[c] = rng.standard_normal()
        gaussian_into(z, sigma_target, 0, noise_t, drawn, 1)
    feed_tree(target_exact, target_suffix, t, cross.ravel(), noise_t, noisy)


@njit(cache=True)
def audit_releases(
    gram: np.ndarray, cross: np.ndarray, runs: int, episodes: int, levels: int, noisy: bool, sigma_gram: float,
    sigma_target: float, shift: float, lam_min: float, with_gram: bool, with_target: bool,
    rng: np.random.Generator, drawn: np.ndarray, out: np.ndarray,
) -> None:
    """The privacy audit's mechanism through the loop's own kernels: ``runs`` independent
    runs of the central regularizer (tree counters of ``levels`` levels), each fed user 1's
    ``(gram, cross)`` then null users up to ``episodes``, released after every user by
    :func:`_release_central` exactly as :func:`run_block` releases and fed by
    :func:`_observe_central` exactly as it observes (same noise kernel, same ``drawn``
    record). ``out[r]``: per release, ``V_k``'s upper triangle (``with_gram``) then ``U_k``
    flattened (``with_target``)."""
    p, q = cross.shape
    g_exact, g_suffix = np.zeros((levels, p * p)), np.zeros((levels, p * p))
    t_exact, t_suffix = np.zeros((levels, p * q)), np.zeros((levels, p * q))
    zero_g, zero_t = np.zeros((p, p)), np.zeros((p, q))
    for r in range(runs):
        g_exact[:, :] = 0.0
        g_suffix[:, :] = 0.0
        t_exact[:, :] = 0.0
        t_suffix[:, :] = 0.0
        col = 0
        for t in range(1, episodes + 1):
            if t == 1:
                _observe_central(gram, cross, t, noisy, sigma_gram, sigma_target, g_exact, g_suffix, t_exact, t_suffix,
                                 rng, drawn)
            else:
                _observe_central(zero_g, zero_t, t, noisy, sigma_gram, sigma_target, g_exact, g_suffix, t_exact,
                                 t_suffix, rng, drawn)
            v, u, _, _ = _release_central(g_suffix, t_suffix, t, p, q, shift, lam_min)
            if with_gram:
                for i in range(p):
                    for j in range(i, p):
                        out[r, col] = v[i, j]
                        col += 1
            if with_target:
                for i in range(p):
                    for j in range(q):
                        out[r, col] = u[i, j]
                        col += 1


@njit(cache=True)
def _givens_add_rows(rfac: np.ndarray, rows: np.ndarray) -> None:
    """Add rows ``[z | x]`` to the triangular factor ``[R | c]`` (``p × (p+n)``) of the ridge least
    squares problem ``[Z; √λ I] Θ = [X; 0]`` by Givens rotations (a QR update, independent
    of the regularizer's normal equations; claim C4)."""
    p = rfac.shape[0]
    w = rfac.shape[1]
    for h in range(rows.shape[0]):
        v = rows[h].copy()
        for i in range(p):
            if v[i] == 0.0:
                continue
            rad = math.hypot(rfac[i, i], v[i])
            c, s = rfac[i, i] / rad, v[i] / rad
            for j in range(i, w):
                top = rfac[i, j]
                rfac[i, j] = c * top + s * v[j]
                v[j] = c * v[j] - s * top


@njit(cache=True)
def run_block(
    k0: int, k1: int, private: bool, noisy: bool,
    gram_sum: np.ndarray, target_sum: np.ndarray, lam: float,
    gram_exact: np.ndarray, gram_suffix: np.ndarray, target_exact: np.ndarray, target_suffix: np.ndarray,
    sigma_gram: float, sigma_target: float, shift: float, lam_min: float, lam_max: float, nu: float,
    a: np.ndarray, b: np.ndarray, q: np.ndarray, r: np.ndarray, x1: np.ndarray, noise_radius: float,
    w_true: np.ndarray, optimal: float,
    n_candidates: int, alpha: float, gamma: float, clip: bool, w_agent: np.ndarray,
    agent_rng: np.random.Generator, env_rng: np.random.Generator, noise_rng: np.random.Generator, drawn: np.ndarray,
    horizon: int, check_ridge: bool, ridge: np.ndarray, ridge_before_last: np.ndarray,
    sums: np.ndarray, counts: np.ndarray, theta_hat_last: np.ndarray, theta_tilde_last: np.ndarray,
) -> None:
    """Episodes ``k0+1 .. k1`` (``k0`` users fed so far) of Algorithm 1.

    ``private``: the regularizer is the central one (tree counters ``*_exact``/``*_suffix``,
    flattened to ``(levels, p·p)`` and ``(levels, p·n)``; ``noisy`` unless built without
    noise; the σ's the noise is drawn with recorded in ``drawn``, the regularizer's);
    otherwise ridge (``gram_sum``, ``target_sum``, ``H_k = λI``). Accumulates into
    ``sums``/``counts`` (indices above) and keeps the last episode's ``Θ̂``, ``Θ̃``; with
    ``check_ridge`` also the QR factor ``ridge`` of all episodes and its copy before the
    last one."""
    n = a.shape[0]
    d = b.shape[1]
    p = n + d
    noise = np.empty((horizon, n))
    xs = np.empty((horizon + 1, n))
    us = np.empty((horizon, d))
    rows = np.empty((horizon, p + n))
    for k in range(k0 + 1, k1 + 1):
        t = k - 1  # users fed so far
        # line 3: the released (V_k, U_k)
        if private:
            gram, target, repaired, not_pd = _release_central(gram_suffix, target_suffix, t, p, n, shift, lam_min)
            counts[N_REPAIRED] += repaired
            counts[N_NOT_PD] += not_pd
            g_min, g_max, g_nu = lam_min, lam_max, nu
        else:
            gram = np.empty((p, p))
            for i in range(p):
                for j in range(p):
                    gram[i, j] = gram_sum[i, j] + (lam if i == j else 0.0)
            target = target_sum.copy()
            g_min, g_max, g_nu = lam, lam, 0.0
        # lines 4-5: Θ̂_k (eq. 7), β_k (eq. 8), optimistic Θ̃_k and its gains (eq. 9)
        theta_hat, beta, theta_tilde, gains, n_feasible, fallback = plan_step(
            gram, target, g_min, g_max, g_nu, n, noise_radius, alpha, q, r, x1, w_agent, horizon, n_candidates,
            agent_rng)
        # lines 6-8: play u_h = K_h(Θ̃_k) x_h in the true system
        ball_noise_into(env_rng, noise_radius, noise)
        cost = rollout_into(a, b, q, r, x1, gains, noise, xs, us)
        # line 9: send the episode's statistics to the counters
        gram_k, cross_k, clipped = user_statistics(xs, us, clip, gamma)
        counts[N_CLIPPED] += clipped
        if private:
            _observe_central(gram_k, cross_k, k, noisy, sigma_gram, sigma_target, gram_exact, gram_suffix,
                             target_exact, target_suffix, noise_rng, drawn)
        else:
            gram_sum += gram_k
            target_sum += cross_k
        if check_ridge:
            if k == k1:
                ridge_before_last[:, :] = ridge
            for h in range(horizon):
                for i in range(n):
                    rows[h, i] = xs[h, i]
                    rows[h, p + i] = xs[h + 1, i]
                for i in range(d):
                    rows[h, n + i] = us[h, i]
            _givens_add_rows(ridge, rows)
        # exact regret of π_k (eq. 6) and the sampled one
        regret = policy_cost_one(a, b, q, r, gains, w_true, x1) - optimal
        sums[CUM_REGRET] += regret
        sums[CUM_SAMPLED] += cost - optimal
        counts[N_FALLBACK] += fallback
        if k == k1:
            sums[LAST_REGRET] = regret
            sums[LAST_BETA] = beta
            counts[LAST_FEASIBLE] = n_feasible
            theta_hat_last[:, :] = theta_hat
            theta_tilde_last[:, :] = theta_tilde


# Numba's cache checks only the file that defines a function: after an edit of, say, the
# oracle, a cached caller would still run the old oracle. The kernels of this module and of
# the modules it imports are flushed when a file they may call into changes
# (runner/kernel_cache.py derives those files from the import closure).
drop_stale_closure(__name__)
