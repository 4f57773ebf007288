"""Job functions of the mechanism experiments: tree-counter error against the papers'
bounds (``counter_error``) and statistical audits (``audit``)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from dprl.privacy import calibration as cal
from dprl.privacy.audit import AuditResult, Statistic, audit, gaussian_llr, laplace_llr, nodes_from_releases
from dprl.privacy.broken import break_noise
from dprl.privacy.noise import GaussianNoise, LaplaceNoise, Noise
from dprl.privacy.setting import PrivacySetting
from dprl.privacy.tree_counter import TreeCounter, nodes_in_release, tree_levels
from dprl.runner.checkpoints import log_checkpoints
from dprl.runner.job import JobContext


def counter_noise(algorithm: str, privacy: PrivacySetting, levels: int) -> Noise:
    """Per-node noise of a tree counter with sensitivity 1 per element.

    ``laplace_tree``: ``b = L/ε`` under both calibrations (basic composition of ``L`` Laplace
    mechanisms is exact for pure DP, so there is nothing to tighten; only the error bound
    differs). Gaussian counters: ``paper`` = zCDP route (``L`` compositions of
    ``Δ²/(2σ²)``-zCDP, ``ε = ρ + 2 sqrt(ρ ln 1/δ)``); ``tight`` = exact analytic Gaussian
    calibration of the composed ``sqrt(L)``-sensitivity mechanism (``src/dprl/README.md``).
    """
    eps = privacy.epsilon
    if algorithm == "laplace_tree":
        return LaplaceNoise(cal.laplace_tree_scale(eps, levels, 1.0))
    delta = privacy.delta
    if privacy.calibration == "paper":
        return GaussianNoise(cal.gaussian_sigma_zcdp(eps, delta, 1.0, compositions=levels))
    return GaussianNoise(cal.gaussian_sigma_tight(eps, delta, 1.0, compositions=levels))


def _scale(noise: Noise) -> float:
    return noise.scale if isinstance(noise, LaplaceNoise) else noise.sigma


def error_bounds(algorithm: str, noise: Noise, T: int, t: np.ndarray, dim: int, beta: float, epsilon: float) -> tuple[np.ndarray, np.ndarray]:
    """Bounds holding simultaneously for all ``t <= T`` with probability ``1 - β``.

    Paper: Vietri et al. (2020) Sec. 2.3 ``(4/ε) ln(1/β) log(T)^{5/2}`` (natural log: the
    smaller reading, so the check is the stricter one); Laurent–Massart (vectors) and the
    ``σ sqrt(m)(4 sqrt(p) + sqrt(8 ln(1/β)))`` operator-norm bound (matrices) of Chowdhury
    et al. (2021) / Zhou (2022) with ``m = L`` and a union bound over ``T`` (``β/T``).
    Tight: the exact tail of the noise actually in the release at ``t`` (``popcount(t)``
    nodes), union-bounded over ``T``.
    """
    levels = tree_levels(T)
    nodes = np.array([nodes_in_release(int(x)) for x in t])
    b = beta / T
    s = _scale(noise)
    if algorithm == "laplace_tree":
        paper = np.full(t.shape, 4.0 / epsilon * math.log(1.0 / beta) * math.log(T) ** 2.5)
        tight = np.array([cal.laplace_sum_tail(s, int(k), b) for k in nodes])
    elif algorithm == "gaussian_tree_vector":
        paper = np.full(t.shape, cal.laurent_massart_norm_bound(s * math.sqrt(levels), dim, b))
        tight = np.array([cal.chi2_norm_bound(s * math.sqrt(k), dim, b) for k in nodes])
    else:
        paper = np.full(t.shape, cal.symmetric_gaussian_norm_bound_paper(s * math.sqrt(levels), dim, b))
        tight = np.array([cal.symmetric_gaussian_norm_bound_tight(s * math.sqrt(k), dim, b) for k in nodes])
    return paper, tight


def _stream_shape(algorithm: str, n: int, dim: int) -> tuple[int, ...]:
    return {"laplace_tree": (n,), "gaussian_tree_vector": (n, dim)}.get(algorithm, (n, dim, dim))


def _draw_stream(algorithm: str, rng: np.random.Generator, n: int, dim: int, rate: float) -> np.ndarray:
    """One element per counter, sensitivity 1: Bernoulli entries in [0,1] (scalar),
    ``u/sqrt(dim)`` with ``u ∈ {0,1}^dim`` (vector, ℓ2 norm <= 1), ``x xᵀ`` of such ``x``
    (matrix, Frobenius norm <= 1)."""
    if algorithm == "laplace_tree":
        return (rng.random(n) < rate).astype(float)
    x = (rng.random((n, dim)) < rate).astype(float) / math.sqrt(dim)
    return x if algorithm == "gaussian_tree_vector" else x[:, :, None] * x[:, None, :]


def _error(algorithm: str, diff: np.ndarray) -> np.ndarray:
    if algorithm == "laplace_tree":
        return np.abs(diff)
    if algorithm == "gaussian_tree_vector":
        return np.linalg.norm(diff, axis=-1)
    return np.abs(np.linalg.eigvalsh(diff)).max(axis=-1)  # operator norm of a symmetric matrix


# A Frobenius norm this far below a bound is below it for the operator norm eigvalsh
# computes too (||A||₂ <= ||A||_F; both are computed to ~1e-15 relative)
_SCREEN_MARGIN = 1e-9


def _screened_error(algorithm: str, diff: np.ndarray, bound: float) -> np.ndarray:
    """:func:`_error` wherever it can reach ``bound``, and an upper bound on it below ``bound``
    elsewhere, so ``_screened_error(...) <= b`` equals ``_error(...) <= b`` for every
    ``b >= bound``. For matrices: the Frobenius norm bounds the operator norm from above, so
    only counters whose Frobenius norm is within ``_SCREEN_MARGIN`` of ``bound`` need
    ``eigvalsh``. Between checkpoints the job reads the error only through these comparisons;
    ``eigvalsh`` of all 2000 3×3 matrices at every step took 8.6 of a matrix job's 10 s."""
    if algorithm != "gaussian_tree_matrix":
        return _error(algorithm, diff)
    err = np.sqrt(np.einsum("nij,nij->n", diff, diff))
    near = err * (1.0 + _SCREEN_MARGIN) > bound
    if near.any():
        err[near] = _error(algorithm, diff[near])
    return err


def run_counter_error(ctx: JobContext) -> pd.DataFrame:
    alg, env, st = ctx.spec.algorithm["name"], ctx.spec.environment, ctx.settings
    T, n, dim, beta = env["T"], env["counters"], env["dim"], st["beta"]
    levels = tree_levels(T)
    noise = counter_noise(alg, ctx.spec.privacy, levels)
    shape = _stream_shape(alg, n, dim)
    counter = TreeCounter(shape, T, noise, ctx.noise_rng, symmetric=alg == "gaussian_tree_matrix")
    exact = np.zeros(shape)
    ts = np.arange(1, T + 1)
    paper_b, tight_b = error_bounds(alg, noise, T, ts, dim, beta, ctx.spec.epsilon)
    checkpoints = set(log_checkpoints(T, st["checkpoints"]).tolist())
    ok_paper = np.ones(n, dtype=bool)  # bound held at every t so far ("simultaneously for all t")
    ok_tight = np.ones(n, dtype=bool)
    rows = []
    env_rng = ctx.env_rng
    for t in ts:
        x = _draw_stream(alg, env_rng, n, dim, env["rate"])
        exact += x
        counter.update(x)
        diff = counter.release() - exact
        # the exact error at a checkpoint (its statistics); elsewhere only the coverage reads it
        err = _error(alg, diff) if t in checkpoints else _screened_error(alg, diff, min(paper_b[t - 1], tight_b[t - 1]))
        ok_paper &= err <= paper_b[t - 1]
        ok_tight &= err <= tight_b[t - 1]
        if t in checkpoints:
            rows.append({
                "t": int(t), "nodes": nodes_in_release(int(t)), "tree_levels": levels, "noise_scale": _scale(noise),
                "bound_paper": paper_b[t - 1], "bound_tight": tight_b[t - 1],
                "err_mean": float(err.mean()), "err_q": float(np.quantile(err, 1 - beta)), "err_max": float(err.max()),
                "coverage_paper": float(ok_paper.mean()), "coverage_tight": float(ok_tight.mean()),
                "beta": beta, "counters": n,
            })
            ctx.progress(int(t), T, unit="steps")
    return pd.DataFrame(rows)


def _release_view(alg: str, rel: np.ndarray, dim: int) -> np.ndarray:
    """``(n, *shape)`` releases -> ``(n, k)`` audited coordinates (upper triangles of matrices:
    the lower ones are their mirror)."""
    if alg == "gaussian_tree_matrix":
        iu = np.triu_indices(dim)
        rel = rel[:, iu[0], iu[1]]
    return rel.reshape(len(rel), -1)


def _audit_sampler(alg: str, noise: Noise, T: int, dim: int):
    """``sample(stream, n, rng)``: ``n`` runs of the counter on ``stream``; output the ``T``
    releases flattened (upper triangles for matrices)."""
    symmetric = alg == "gaussian_tree_matrix"

    def sample(stream: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
        shape = (n, *stream.shape[1:])
        counter = TreeCounter(shape, T, noise, rng, symmetric=symmetric)
        outs = []
        for t in range(T):
            counter.update(np.broadcast_to(stream[t], shape))
            outs.append(_release_view(alg, counter.release(), dim).copy())
        return np.concatenate(outs, axis=1)

    return sample


def tree_llr_statistics(alg: str, noise: Noise, d0: np.ndarray, d1: np.ndarray, dim: int) -> dict[str, Statistic]:
    """The exact log-likelihood ratio of the two streams under the *claimed* node noise,
    as an extra audit statistic (the optimal test: Neyman–Pearson).

    The audited output (``_audit_sampler``) is the ``T`` releases; they are an invertible
    linear map of the tree's node values, whose noises are independent, so the statistic
    maps releases back to nodes (:func:`nodes_from_releases`) and sums the per-node
    Laplace or Gaussian log-ratios around the exact node values of ``d0`` and ``d1``."""
    T = len(d0)

    def exact_nodes(stream: np.ndarray) -> np.ndarray:
        rel = np.stack([_release_view(alg, np.cumsum(stream, axis=0)[t][None], dim)[0] for t in range(T)])
        return nodes_from_releases(rel[None])[0].ravel()

    mu0, mu1 = exact_nodes(d0), exact_nodes(d1)
    if isinstance(noise, LaplaceNoise):
        name, llr = "laplace-llr", laplace_llr(mu0, mu1, noise.scale)
    else:
        name, llr = "gaussian-llr", gaussian_llr(mu0, mu1, noise.sigma)

    def statistic(y: np.ndarray) -> np.ndarray:
        return llr(nodes_from_releases(y.reshape(len(y), T, -1)).reshape(len(y), -1))

    return {name: statistic}


def neighbouring_streams(alg: str, T: int, dim: int) -> tuple[np.ndarray, np.ndarray]:
    """``D``: all-zero stream; ``D'``: the element at ``t = 1`` changed maximally (it lies in
    ``L`` nodes, the most any element does): 1 (scalar), a unit basis vector, ``e_1 e_1ᵀ``."""
    shape = {"laplace_tree": (T,), "gaussian_tree_vector": (T, dim)}.get(alg, (T, dim, dim))
    d0 = np.zeros(shape)
    d1 = d0.copy()
    d1[(0,) + (0,) * (len(shape) - 1)] = 1.0
    return d0, d1


def audit_tree_counter(
    alg: str, privacy: PrivacySetting, broken: str, T: int, dim: int, n: int, rng: np.random.Generator, alpha: float = 1e-3
) -> tuple[AuditResult, Noise]:
    """Audit one tree counter (possibly a deliberately broken variant) on the neighbouring
    streams, with the exact likelihood ratio of the *claimed* noise among the statistics
    (the auditor knows only the claim). Returns the result and the claimed node noise."""
    noise = counter_noise(alg, privacy, tree_levels(T))
    d0, d1 = neighbouring_streams(alg, T, dim)
    res = audit(_audit_sampler(alg, break_noise(noise, broken), T, dim), d0, d1, privacy.epsilon,
                privacy.delta or 0.0, n=n, rng=rng, alpha=alpha,
                statistics=tree_llr_statistics(alg, noise, d0, d1, dim))
    return res, noise


def pair_epsilon(alg: str, noise: Noise, T: int, delta: float) -> float:
    """Exact ε of the audited pair (``neighbouring_streams``: one element in all ``L`` nodes,
    changed by 1): ``L/b`` for Laplace (the ℓ1 sum), ``ε(μ = sqrt(L)/σ, δ)`` of the Gaussian-DP
    profile for Gaussian noise. ``tight`` calibrates it to the claim exactly; ``paper``
    (zCDP route) leaves it below the claim."""
    levels = tree_levels(T)
    if isinstance(noise, LaplaceNoise):
        return levels / noise.scale
    return cal.composed_epsilon(cal.tree_counter_mu(noise.sigma, 1.0, levels), delta)


def run_audit(ctx: JobContext) -> pd.DataFrame:
    alg = ctx.spec.algorithm["name"]
    broken = ctx.spec.algorithm["broken"]
    T, dim = ctx.spec.environment["T"], ctx.spec.environment["dim"]
    priv = ctx.spec.privacy
    delta = priv.delta or 0.0
    res, noise = audit_tree_counter(alg, priv, broken, T, dim, ctx.settings["runs"], ctx.noise_rng, ctx.settings["alpha"])
    ctx.progress(1, 1, unit="audits")
    return pd.DataFrame([{
        "mechanism": alg, "broken": broken, **res.columns(),
        "noise_scale": _scale(noise), "p": res.p, "q": res.q, "tree_levels": tree_levels(T),
        "pair_epsilon": pair_epsilon(alg, noise, T, delta),
    }])
