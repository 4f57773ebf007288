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
from dprl.agents.pe.broken import BROKEN_VARIANTS
from dprl.agents.pe.build import EstimationTask, build_agent
from dprl.agents.pe.estimators import LSL, LSW_NORMS
from dprl.agents.pe.exact import VARIANTS, check_bound, dense_features, replacement_pairs, variant_estimators
from dprl.agents.pe.features import FEATURES, feature_matrix, uniform_weights, weighted_rmse
from dprl.agents.pe.privacy import AUDIT_PAIRS, EstimatorAccounting, audit_pair, held_calibration
from dprl.agents.pe.regime import lsl_noise_floor, lsw_regime, visit_probabilities
from dprl.envs.mrp import BatchStats, FiniteMRP, chain_mrp
from dprl.experiments.pe.spec import SMALL_CHAIN_FEATURES
from dprl.runner.checkpoints import log_checkpoints
from dprl.runner.job import JobContext, JobSpec


def batch_sizes(m_min: int, m_max: int, per_decade: int) -> np.ndarray:
    """Log-spaced integer batch sizes from ``m_min`` to ``m_max`` (both included), at least
    ``per_decade`` per decade. ``m_max`` is read as an integer rounding of the intended end
    (within 1/2), so a rounded half decade (10^6.5 -> 3162278) gives the grid of the exact one."""
    if m_max < m_min:
        raise ValueError(f"m_max ({m_max}) must be >= m_min ({m_min})")
    span = math.log10(max(m_max - 0.5, m_min) / m_min)
    n = max(int(math.ceil(per_decade * span)) + 1, 1)
    return log_checkpoints(m_max, n, start=m_min)


def make_env(env: dict) -> FiniteMRP:
    if env["name"] != "chain":
        raise ValueError(f"unknown environment {env['name']!r}")
    return chain_mrp(env["n_states"], env["p_right"], env["gamma"], env["max_len"])


def _privacy(spec: JobSpec) -> tuple[float, float]:
    """(ε, δ) of a private job, under one of the estimators' calibrations (``paper``, ``tight``)."""
    if spec.privacy is None:
        raise ValueError(f"algorithm {spec.algorithm['name']!r} needs a privacy setting")
    if spec.calibration not in LSW_NORMS:
        raise ValueError(f"the 2016 policy-evaluation estimators have the calibrations {list(LSW_NORMS)}; "
                         f"got {spec.calibration!r}")
    return spec.epsilon, float(spec.delta)


def _evaluate(ctx: JobContext, alg: dict, phi: np.ndarray, rho: np.ndarray, f_max: float,
              stats: BatchStats, values: np.ndarray) -> dict[str, np.ndarray]:
    """Errors, noise scales and accounted ε (NaN for non-private rows) of one algorithm on the
    batches ``stats``. A private estimator's noise scale and accounting are those of the σ its
    release drew with (``NoiseReport.drawn``, reported by
    :func:`~dprl.agents.pe.estimators.add_noise`): checked against the calibration first
    (:meth:`~dprl.agents.pe.estimators.OutputPerturbation.check_drawn`: less noise refuses
    the job, ``NoiseScaleError``), then recorded as the job's accounting (the largest over its
    batches; more noise than the calibration's is accounted as drawn, below the nominal ε)."""
    name = alg["name"]
    nan = np.full(len(stats), np.nan)
    built = build_agent(name, alg, ctx.spec.privacy, EstimationTask(phi, rho, f_max))
    est = built.agent
    lam = est.lam(stats.m) if isinstance(est, LSL) else nan
    if built.calibration is None:  # LSW, LSL
        return {"rmse": weighted_rmse(values, est.fit(stats) @ phi.T, rho), "sigma": nan, "psi": nan, "lam": lam, "argmax_k": nan,
                "accounted_epsilon": nan}
    release, report = est.release(stats, ctx.noise_rng)
    est.check_drawn(report)
    # under the replacement relation, of the σ drawn with: NRS07's ε (smooth), analytic Gaussian ε (GS)
    accounted = est.accounted_epsilon(stats, report.drawn)
    ctx.record_accounting(EstimatorAccounting(float(np.max(accounted)), float(est.const.delta)))
    # the maximiser k* of DP-LSW's smooth bound (k* = 0: σ_X ∝ 1/m, claim B2); NaN for LSL
    k_star = lsw_argmax_k(stats.counts, rho, est.const.b) if name == "dp_lsw" else nan
    return {
        "rmse": weighted_rmse(values, release.values(phi), rho),
        "rmse_np": weighted_rmse(values, est.fit(stats) @ phi.T, rho),  # same batch, no noise
        "sigma": report.drawn, "psi": report.psi, "lam": lam, "argmax_k": k_star,
        "accounted_epsilon": accounted,
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
    feats = FEATURES if st["features"] == "both" else (st["features"],)
    out = []
    for feat in feats:
        phi = feature_matrix(feat, n)
        built = build_agent(alg["name"], {"c": 1.0, "p": 0.5, **alg}, spec.privacy, EstimationTask(phi, rho, 1.0))
        out.append(held_calibration(built, int(st["m_min"])).accounted_epsilon)
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
        cols = _evaluate(ctx, spec.algorithm, phi, rho, mrp.f_max, stats, values)
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
            cols = _evaluate(ctx, {"name": "dp_lsl", "c": float(c), "p": float(p)}, phi, rho, mrp.f_max, stats, values)
            frames.append(pd.DataFrame({"features": st["features"], "c": c, "p": p, "m": sizes, **cols,
                                        "rmse_zero": weighted_rmse(values, np.zeros_like(values), rho), **regime}))
        ctx.progress(i + 1, len(cs), unit="values of c")
    return pd.concat(frames, ignore_index=True)


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
        rows.append(audit_pair(alg, variant, pair, d, f_max, eps, delta, st["runs"], ctx.noise_rng, st["alpha"],
                               calibration=spec.calibration))
        ctx.progress(i + 1, len(cells), unit="audits")
    return pd.DataFrame(rows)


def exact_features(env: dict) -> tuple[str, np.ndarray, np.ndarray]:
    """The feature map's name, ``Φ`` and ``ρ`` of a small chain (``SMALL_CHAIN_FEATURES``): the
    chain's feature maps or a dense ``d = 2`` matrix, ``ρ`` uniform over the non-absorbing
    states (the last state absorbing)."""
    feat, n = SMALL_CHAIN_FEATURES[env["name"]], int(env["N"])
    phi = dense_features(n, 2, n - 1) if feat == "dense" else feature_matrix(feat, n)
    return feat, phi, uniform_weights(n, n - 1)


def run_exact(ctx: JobContext) -> pd.DataFrame:
    """``pe_exact``: the exact check of :mod:`dprl.agents.pe.exact` (deterministic, no noise):
    for ``m = 1 .. m_max``, every replacement pair of batches on the small chain, and per bound
    variant (:data:`~dprl.agents.pe.exact.VARIANTS`) the largest true ``||θ_X - θ_X'||`` over the
    bound at ``X`` (<= 1: valid on every pair) and the worst pair's counts."""
    spec, env = ctx.spec, ctx.spec.environment
    if env["name"] not in SMALL_CHAIN_FEATURES:
        raise ValueError(f"pe_exact runs on the small chains {list(SMALL_CHAIN_FEATURES)}, got {env['name']!r}")
    feat, phi, rho = exact_features(env)
    variants = variant_estimators(spec.algorithm, phi, rho)
    # ||·||_F / ||·||_2 of the matrix whose norm the bound takes: (Γ^{1/2}Φ)^+ (DP-LSW) or Φ (DP-LSL)
    mat = variants["paper"][0].pinv if spec.algorithm["name"] == "dp_lsw" else phi
    fro_over_op = float(np.linalg.norm(mat) / np.linalg.norm(mat, 2))
    rows = []
    m_max = int(ctx.settings["m_max"])
    for m in range(1, m_max + 1):
        pairs = replacement_pairs(phi.shape[0], phi.shape[0] - 1, m)
        for variant in VARIANTS:
            est, scale = variants[variant]
            res = check_bound(est, pairs, scale)
            rows.append({"features": feat, "d": phi.shape[1], "m": m, "variant": variant,
                         "planted": variant not in ("paper", "tight", "as published"),
                         "pairs": res.pairs, "max_ratio": res.max_ratio, "max_change": res.max_change,
                         "counts_x": " ".join(map(str, res.counts_x)), "counts_x_prime": " ".join(map(str, res.counts_x_prime)),
                         "frobenius_over_operator": fro_over_op})
        ctx.progress(m, m_max, unit="batch sizes")
    return pd.DataFrame(rows)
