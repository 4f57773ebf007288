"""Job functions of the mechanism experiments: tree-counter error against the papers'
bounds (``counter_error``) and statistical audits (``audit``)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from dprl.privacy import calibration as cal
from dprl.privacy.audit import audit
from dprl.privacy.broken import break_noise
from dprl.privacy.noise import GaussianNoise, LaplaceNoise, Noise
from dprl.privacy.tree_counter import TreeCounter, nodes_in_release, tree_levels
from dprl.runner.job import JobContext


def counter_noise(algorithm: str, privacy: dict, levels: int) -> Noise:
    """Per-node noise of a tree counter with sensitivity 1 per element.

    ``laplace_tree``: ``b = L/ε`` under both calibrations (basic composition of ``L`` Laplace
    mechanisms is exact for pure DP, so there is nothing to tighten; only the error bound
    differs). Gaussian counters: ``paper`` = zCDP route (``L`` compositions of
    ``Δ²/(2σ²)``-zCDP, ``ε = ρ + 2 sqrt(ρ ln 1/δ)``); ``tight`` = exact analytic Gaussian
    calibration of the composed ``sqrt(L)``-sensitivity mechanism (``mechanisms.md``).
    """
    eps = privacy["epsilon"]
    if algorithm == "laplace_tree":
        return LaplaceNoise(cal.laplace_tree_scale(eps, levels, 1.0))
    delta = privacy["delta"]
    if privacy["calibration"] == "paper":
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
    checkpoints = set(np.unique(np.geomspace(1, T, st["checkpoints"]).round().astype(int)).tolist())
    ok_paper = np.ones(n, dtype=bool)  # bound held at every t so far ("simultaneously for all t")
    ok_tight = np.ones(n, dtype=bool)
    rows = []
    env_rng = ctx.env_rng
    for t in ts:
        x = _draw_stream(alg, env_rng, n, dim, env["rate"])
        exact += x
        counter.update(x)
        err = _error(alg, counter.release() - exact)
        ok_paper &= err <= paper_b[t - 1]
        ok_tight &= err <= tight_b[t - 1]
        if t in checkpoints:
            rows.append({
                "t": int(t), "nodes": nodes_in_release(int(t)), "levels": levels, "noise_scale": _scale(noise),
                "bound_paper": paper_b[t - 1], "bound_tight": tight_b[t - 1],
                "err_mean": float(err.mean()), "err_q": float(np.quantile(err, 1 - beta)), "err_max": float(err.max()),
                "coverage_paper": float(ok_paper.mean()), "coverage_tight": float(ok_tight.mean()),
                "beta": beta, "counters": n,
            })
            ctx.progress(int(t), T, unit="steps")
    return pd.DataFrame(rows)


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
            r = counter.release()
            if symmetric:
                iu = np.triu_indices(dim)
                r = r[:, iu[0], iu[1]]
            outs.append(r.reshape(n, -1).copy())
        return np.concatenate(outs, axis=1)

    return sample


def neighbouring_streams(alg: str, T: int, dim: int) -> tuple[np.ndarray, np.ndarray]:
    """``D``: all-zero stream; ``D'``: the element at ``t = 1`` changed maximally (it lies in
    ``L`` nodes, the most any element does): 1 (scalar), a unit basis vector, ``e_1 e_1ᵀ``."""
    shape = {"laplace_tree": (T,), "gaussian_tree_vector": (T, dim)}.get(alg, (T, dim, dim))
    d0 = np.zeros(shape)
    d1 = d0.copy()
    d1[(0,) + (0,) * (len(shape) - 1)] = 1.0
    return d0, d1


def run_audit(ctx: JobContext) -> pd.DataFrame:
    alg = ctx.spec.algorithm["name"]
    broken = ctx.spec.algorithm["broken"]
    T, dim = ctx.spec.environment["T"], ctx.spec.environment["dim"]
    priv = ctx.spec.privacy
    noise = counter_noise(alg, priv, tree_levels(T))
    mech_noise = break_noise(noise, broken)
    d0, d1 = neighbouring_streams(alg, T, dim)
    delta = priv["delta"] or 0.0
    res = audit(_audit_sampler(alg, mech_noise, T, dim), d0, d1, priv["epsilon"], delta,
                n=ctx.settings["runs"], rng=ctx.noise_rng, alpha=ctx.settings["alpha"])
    ctx.progress(1, 1, unit="audits")
    return pd.DataFrame([{
        "mechanism": alg, "broken": broken, "claimed_epsilon": priv["epsilon"], "claimed_delta": delta,
        "noise_scale": _scale(noise), "eps_lb": res.eps_lb, "passed": res.passed, "statistic": res.statistic,
        "p": res.p, "q": res.q, "runs": res.n,
    }])
