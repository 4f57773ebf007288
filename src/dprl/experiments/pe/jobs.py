"""Job functions of the policy-evaluation experiments (Balle, Gomrokchi, Precup 2016).

Randomness: the batch of trajectories comes from ``ctx.env_rng`` (keyed by environment and
seed), so for a given seed every algorithm and every ε sees the same trajectories (common
random numbers); privacy noise comes from ``ctx.noise_rng`` only. One job samples
``m_max`` trajectories once and evaluates the nested batches of its first ``m`` trajectories
for every ``m`` of the log grid (one row per feature map and ``m``).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from dprl.agents.pe.bounds import lsw_argmax_k
from dprl.agents.pe.broken import BROKEN_VARIANTS, variant_class
from dprl.agents.pe.build import EstimationTask, build_agent
from dprl.agents.pe.estimators import DPLSL, DPLSW, LSL
from dprl.agents.pe.features import FEATURES, feature_matrix, uniform_weights, weighted_rmse
from dprl.agents.pe.regime import lsl_noise_floor, lsw_regime, visit_probabilities
from dprl.envs.mrp import BatchStats, FiniteMRP, FirstVisitData, chain_mrp
from dprl.privacy.audit import audit
from dprl.privacy.setting import PrivacySetting
from dprl.privacy.smooth_sensitivity import gaussian_pair_epsilon, gaussian_release
from dprl.runner.checkpoints import log_checkpoints
from dprl.runner.job import JobContext, JobSpec


def batch_sizes(m_min: int, m_max: int, per_decade: int) -> np.ndarray:
    """Log-spaced integer batch sizes from ``m_min`` to ``m_max`` (both included)."""
    if m_max < m_min:
        raise ValueError(f"m_max ({m_max}) must be >= m_min ({m_min})")
    n = max(int(math.ceil(per_decade * math.log10(m_max / m_min))) + 1, 1)
    return log_checkpoints(m_max, n, start=m_min)


def make_env(env: dict) -> FiniteMRP:
    if env["name"] != "chain":
        raise ValueError(f"unknown environment {env['name']!r}")
    return chain_mrp(env["n_states"], env["p_right"], env["gamma"], env["max_len"])


def _privacy(spec: JobSpec) -> tuple[float, float]:
    """(ε, δ) of a private job; the 2016 paper has a single calibration."""
    if spec.privacy is None:
        raise ValueError(f"algorithm {spec.algorithm['name']!r} needs a privacy setting")
    if spec.calibration != "paper":
        raise ValueError("the 2016 policy-evaluation paper has a single calibration; use calibration: [paper]")
    return spec.epsilon, float(spec.delta)


def _evaluate(alg: dict, spec: JobSpec, phi: np.ndarray, rho: np.ndarray, f_max: float,
              stats: BatchStats, values: np.ndarray, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """Errors, noise scales and accounted ε (NaN for non-private rows) of one algorithm on the
    batches ``stats``."""
    name = alg["name"]
    nan = np.full(len(stats), np.nan)
    built = build_agent(name, alg, spec.privacy, EstimationTask(phi, rho, f_max))
    est = built.agent
    lam = est.lam(stats.m) if isinstance(est, LSL) else nan
    if built.calibration is None:  # LSW, LSL
        return {"rmse": weighted_rmse(values, est.fit(stats) @ phi.T, rho), "sigma": nan, "psi": nan, "lam": lam, "argmax_k": nan,
                "accounted_epsilon": nan}
    release, report = est.release(stats, rng)
    # the maximiser k* of DP-LSW's smooth bound (k* = 0: σ_X ∝ 1/m, claim B2); NaN for LSL
    k_star = lsw_argmax_k(stats.counts, rho, est.const.b) if name == "dp_lsw" else nan
    return {
        "rmse": weighted_rmse(values, release.values(phi), rho),
        "rmse_np": weighted_rmse(values, est.fit(stats) @ phi.T, rho),  # same batch, no noise
        "sigma": report.sigma, "psi": report.psi, "lam": lam, "argmax_k": k_star,
        # under the replacement relation: NRS07's nominal ε (smooth), analytic Gaussian ε (GS)
        "accounted_epsilon": est.accounted_epsilon(stats),
    }


def job_accounted_epsilon(spec: JobSpec) -> float | None:
    """Accounted ε of a ``pe_batch``/``pe_lambda`` job under replacement, before it runs (for
    validation): the largest ``accounted_epsilon`` its rows will record, over its feature maps
    (the GS-DP-LSL value depends on ``d`` through ``a``, not on the data or ``m``). ``None`` for
    non-private jobs."""
    if spec.privacy is None:
        return None
    alg, env, st = spec.algorithm, spec.environment, spec.settings
    n = int(env["n_states"])
    rho = uniform_weights(n, n - 1)
    feats = FEATURES if st.get("features", "both") == "both" else (st["features"],)
    empty = BatchStats(np.array([int(st["m_min"])]), np.zeros((1, n), dtype=np.int64), np.zeros((1, n)))
    out = []
    for feat in feats:
        phi = feature_matrix(feat, n)
        est = build_agent(alg["name"], {"c": 1.0, "p": 0.5, **alg}, spec.privacy, EstimationTask(phi, rho, 1.0)).agent
        out.append(float(est.accounted_epsilon(empty)[0]))
    return max(out)


def regime_columns(spec: JobSpec, mrp: FiniteMRP, phi: np.ndarray, rho: np.ndarray) -> dict[str, float]:
    """The job's regime boundaries (``agents/pe/regime.py``): DP-LSW's ``m_flat = 1/b``,
    ``m_half = 1/(b q_min)``, ``m_star`` (maximiser ``k = 0`` beyond; batch sizes m), and DP-LSL's
    noise floor ``eps_m_floor`` (in ε·m). NaN for non-private jobs."""
    if spec.privacy is None:
        return dict.fromkeys(("m_flat", "m_half", "m_star", "eps_m_floor"), np.nan)
    eps, delta = _privacy(spec)
    q = visit_probabilities(mrp)
    reg = lsw_regime(eps, delta, phi, rho, q)
    return {"m_flat": reg.m_flat, "m_half": reg.m_half, "m_star": reg.m_star,
            "eps_m_floor": lsl_noise_floor(delta, phi, rho, q, mrp.true_values(), mrp.f_max)}


def run_batch(ctx: JobContext) -> pd.DataFrame:
    """``pe_batch``: RMSE ``||V - Φθ̃||_ρ`` and ``σ_X`` vs ``m`` (Balle et al. 2016, "Experiments")."""
    spec, st = ctx.spec, ctx.settings
    mrp = make_env(spec.environment)
    sizes = batch_sizes(st["m_min"], st["m_max"], st["points_per_decade"])
    stats = mrp.sample_prefix_stats(sizes, ctx.env_rng)
    values = mrp.true_values()
    rho = uniform_weights(mrp.n_states, mrp.absorbing)
    feats = FEATURES if st["features"] == "both" else (st["features"],)
    frames = []
    for i, feat in enumerate(feats):
        phi = feature_matrix(feat, mrp.n_states)
        cols = _evaluate(spec.algorithm, spec, phi, rho, mrp.f_max, stats, values, ctx.noise_rng)
        frames.append(pd.DataFrame({"features": feat, "d": phi.shape[1], "m": sizes, **cols,
                                    **regime_columns(spec, mrp, phi, rho)}))
        ctx.progress(i + 1, len(feats), unit="feature maps")
    return pd.concat(frames, ignore_index=True)


def run_lambda(ctx: JobContext) -> pd.DataFrame:
    """``pe_lambda``: DP-LSL RMSE over ``λ = ||ρ||_∞||Φ||_F² + c·m^p`` (Balle et al. 2016, "Experiments")."""
    spec, st = ctx.spec, ctx.settings
    eps, delta = _privacy(spec)
    if st["log10_c_max"] < st["log10_c_min"] or st["p_max"] < st["p_min"]:
        raise ValueError("the c and p grids need max >= min")
    mrp = make_env(spec.environment)
    sizes = batch_sizes(st["m_min"], st["m_max"], st["points_per_decade"])
    stats = mrp.sample_prefix_stats(sizes, ctx.env_rng)
    values = mrp.true_values()
    rho = uniform_weights(mrp.n_states, mrp.absorbing)
    phi = feature_matrix(st["features"], mrp.n_states)
    regime = regime_columns(spec, mrp, phi, rho)
    cs = np.logspace(st["log10_c_min"], st["log10_c_max"], st["c_points"])
    ps = np.linspace(st["p_min"], st["p_max"], st["p_points"])
    frames = []
    for i, c in enumerate(cs):
        for p in ps:
            cols = _evaluate({"name": "dp_lsl", "c": float(c), "p": float(p)}, spec, phi, rho, mrp.f_max, stats, values, ctx.noise_rng)
            frames.append(pd.DataFrame({"features": st["features"], "c": c, "p": p, "m": sizes, **cols,
                                        "rmse_zero": weighted_rmse(values, np.zeros_like(values), rho), **regime}))
        ctx.progress(i + 1, len(cs), unit="values of c")
    return pd.concat(frames, ignore_index=True)


def _adversarial_setup(d: int) -> tuple[np.ndarray, np.ndarray]:
    """``d`` non-absorbing states with identity features and ``ρ = 1/d`` each, plus one
    absorbing state (index ``d``, zero feature row, ``ρ = 0``): ``Φ`` ``(d+1, d)``, ``ρ`` ``(d+1,)``."""
    phi = np.vstack([np.eye(d), np.zeros((1, d))])
    rho = np.append(np.full(d, 1.0 / d), 0.0)
    return phi, rho


AUDIT_PAIRS = ("return_change", "count_2_to_1", "count_1_to_0")


def adversarial_batches(pair: str, d: int, f_max: float) -> tuple[BatchStats, BatchStats]:
    """Neighbouring batches under the paper's replacement relation (one trajectory replaced by
    another), on the states of :func:`_adversarial_setup`. Every trajectory ends in the
    absorbing state; "full" trajectories visit every state.

    - ``return_change`` (``m = 1``): a full trajectory with first-visit returns 0, replaced by
      one with returns ``F_max``. Counts unchanged, so ``σ_X = σ_X'``: the largest shift of
      ``θ`` relative to the noise (the sensitivity bound is attained for DP-LSW with ``d = 1``).
    - ``count_2_to_1`` (``m = 2``): full trajectories with returns 0 and ``F_max``; the second is
      replaced by one that visits only the absorbing state. Every count drops from 2 to 1
      (measured: local-sensitivity noise doubles DP-LSW's σ here, exact ε 2.54 at δ = 0.1, d = 1).
    - ``count_1_to_0`` (``m = 1``): a full trajectory with returns ``F_max`` replaced by an
      absorbing-only one; every count drops from 1 to 0 (the largest relative change of
      DP-LSL's local sensitivity, where the old cap ``k < m`` is the local sensitivity).
    """
    n = d + 1
    full = np.ones(n, dtype=bool)
    empty = np.zeros(n, dtype=bool)
    empty[d] = True  # absorbing only
    ret = np.where(np.arange(n) < d, f_max, 0.0)
    if pair == "return_change":
        return (FirstVisitData(np.zeros((1, n)), full[None]).stats(), FirstVisitData(ret[None], full[None]).stats())
    if pair == "count_2_to_1":
        x = FirstVisitData(np.stack([np.zeros(n), ret]), np.stack([full, full]))
        y = FirstVisitData(np.zeros((2, n)), np.stack([full, empty]))
        return x.stats(), y.stats()
    if pair == "count_1_to_0":
        return (FirstVisitData(ret[None], full[None]).stats(), FirstVisitData(np.zeros((1, n)), empty[None]).stats())
    raise ValueError(f"unknown audit pair {pair!r}; choose one of {AUDIT_PAIRS}")


def pair_releases(alg: dict, variant: str, pair: str, d: int, f_max: float, epsilon: float, delta: float
                  ) -> tuple[DPLSW | DPLSL, tuple[BatchStats, BatchStats], list[np.ndarray], list[float]]:
    """The estimator (``variant`` of ``alg``), the two batches of ``pair``, and the means ``θ``
    and noise scales ``σ`` of the two releases, from the estimator's own fit and noise."""
    phi, rho = _adversarial_setup(d)
    privacy = PrivacySetting(epsilon=epsilon, delta=delta, calibration="paper")
    est = build_agent(alg["name"], alg, privacy, EstimationTask(phi, rho, f_max),
                      estimator_class=variant_class(alg["name"], variant)).agent
    batches = adversarial_batches(pair, d, f_max)
    theta = [est.fit(x)[0] for x in batches]
    sigma = [float(est.noise(x).sigma[0]) for x in batches]
    return est, batches, theta, sigma


def audit_pair(alg: dict, variant: str, pair: str, d: int, f_max: float, epsilon: float, delta: float,
               runs: int, rng: np.random.Generator, alpha: float = 1e-3) -> dict:
    """Audit one (mechanism variant, neighbouring pair): the mechanism's own fit, ``Ψ_X``, σ and
    release (:func:`~dprl.privacy.smooth_sensitivity.gaussian_release`, vectorised over runs),
    audited by :func:`dprl.privacy.audit.audit` with, besides its generic statistics, the
    log-likelihood ratio of the two Gaussians under test (the Neyman–Pearson statistic; a
    statistic fixed before the runs, so ``ε_lb`` stays a valid lower bound).

    Also returns the exact ε of the pair (:func:`gaussian_pair_epsilon`), which ``ε_lb`` cannot
    exceed beyond the audit's confidence level, and whether the pair satisfies NRS07's two
    conditions (``shift <= a·min σ``, ``|ln σ0²/σ1²| <= b``).
    """
    est, batches, theta, sigma = pair_releases(alg, variant, pair, d, f_max, epsilon, delta)
    shift = float(np.linalg.norm(theta[0] - theta[1]))

    def sample(which: int, n: int, gen: np.random.Generator) -> np.ndarray:
        return gaussian_release(theta[which], sigma[which], gen, size=n)

    def llr(y: np.ndarray) -> np.ndarray:  # ln p0(y)/p1(y) up to a constant
        return (np.sum((y - theta[1]) ** 2, axis=1) / (2 * sigma[1] ** 2)
                - np.sum((y - theta[0]) ** 2, axis=1) / (2 * sigma[0] ** 2))

    res = audit(sample, 0, 1, epsilon, delta, n=runs, rng=rng, alpha=alpha, statistics={"llr": llr})
    a, b = est.const.a, est.const.b
    log_ratio = abs(2.0 * math.log(sigma[0] / sigma[1]))
    counts = [int(x.counts[0, 0]) for x in batches]
    return {
        "pair": pair, "variant": variant, "mechanism": alg["name"] if variant == "correct" else f"{alg['name']}:{variant}",
        "d": d, "m": int(batches[0].m[0]), "count_x": counts[0], "count_x_prime": counts[1],
        "shift": shift, "sigma_x": sigma[0], "sigma_x_prime": sigma[1], "a": a, "b": b,
        "shift_over_a_sigma": shift / (a * min(sigma)), "log_var_ratio_over_b": log_ratio / b,
        "nrs07_conditions": bool(shift <= a * min(sigma) * (1 + 1e-12) and log_ratio <= b * (1 + 1e-12)),
        "eps_exact": gaussian_pair_epsilon(delta, shift, sigma[0], sigma[1], d),
        **res.columns(),
        # NRS07's ε for the correct mechanism; a broken variant has no guarantee to account
        "accounted_epsilon": epsilon if variant == "correct" else np.nan,
    }


def run_audit(ctx: JobContext) -> pd.DataFrame:
    """``pe_audit``: audited lower bound ``ε_lb`` of DP-LSW / DP-LSL output perturbation on
    neighbouring batches under the replacement relation (claim B1), for the correct mechanism
    and the negative controls of :mod:`dprl.agents.pe.broken` (local-sensitivity noise,
    inverted β, and for DP-LSL the old cap ``k < m``), on every pair of :data:`AUDIT_PAIRS`.

    Pass criterion: ``ε_lb <= ε`` (the claimed guarantee). The correct mechanism must pass on
    every pair; each negative control must fail on some pair (on count-changing pairs its
    noise scale jumps, and the exact ε of the pair, recorded as ``eps_exact``, exceeds ε).
    """
    spec, st = ctx.spec, ctx.settings
    eps, delta = _privacy(spec)
    env = spec.environment
    if env["name"] != "adversarial":
        raise ValueError(f"pe_audit runs on the 'adversarial' environment, got {env['name']!r}")
    alg = spec.algorithm
    if alg["name"] not in BROKEN_VARIANTS:
        raise ValueError(f"unknown algorithm {alg['name']!r}")
    d, f_max = int(env["d"]), float(env["f_max"])
    cells = [(pair, v) for pair in AUDIT_PAIRS for v in ("correct", *BROKEN_VARIANTS[alg["name"]])]
    rows = []
    for i, (pair, variant) in enumerate(cells):
        rows.append(audit_pair(alg, variant, pair, d, f_max, eps, delta, st["runs"], ctx.noise_rng, st["alpha"]))
        ctx.progress(i + 1, len(cells), unit="audits")
    return pd.DataFrame(rows)
