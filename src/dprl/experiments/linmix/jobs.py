"""Job functions of the Zhou (2022) experiments."""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd

from dprl.agents.linmix.calibration import LinOptCalibration, linopt_calibration
from dprl.agents.linmix.regime import regime_columns
from dprl.agents.linmix.build import ALGORITHMS, build_agent, privatizers
from dprl.agents.linmix.episodes import run_episodes
from dprl.agents.regime import onset_episode
from dprl.envs.linear_mixture import KnownFeatures, make_env, make_mixture
from dprl.privacy.audit import audit
from dprl.privacy.regularizer import RegularizedStats, RegularizerCalibration
from dprl.runner.checkpoints import log_checkpoints
from dprl.runner.job import JobContext, stable_hash

PAIRED_OVER = ("S", "A")  # spread_mixture instances are paired across these (Z4) and nested in A (Z5)


def paired_key(ctx: JobContext) -> np.random.SeedSequence:
    """The key of a ``spread_mixture`` instance: the environment's parameters *except*
    ``S`` and ``A``, and the seed, so that one seed's instances share ``θ``, the cluster-level
    kernels and the rows they have in common across ``S`` and ``A``
    (:func:`~dprl.envs.linear_mixture.make_spread_mixture`)."""
    rest = {k: v for k, v in ctx.spec.environment.items() if k not in PAIRED_OVER}
    return np.random.SeedSequence(stable_hash(["env-paired", rest]), spawn_key=(int(ctx.spec.seed),))


def make_job_env(ctx: JobContext):
    """The job's instance (``mixture``, ``hard_linear``, ``tabular_as_linear`` from the
    environment stream; ``spread_mixture`` from :func:`paired_key`)."""
    env_params = {k: v for k, v in ctx.spec.environment.items() if k != "name"}
    return make_env(ctx.spec.environment["name"], env_params, ctx.env_rng, paired_key(ctx))


def run_regret(ctx: JobContext) -> pd.DataFrame:
    """Cumulative exact regret at log-spaced checkpoints (``linmix_regret``, ``_states``,
    ``_actions``, ``_ldp``)."""
    spec = ctx.spec
    env = make_job_env(ctx)
    K = int(ctx.settings.get("episodes", 2000))
    alg = {k: v for k, v in spec.algorithm.items() if k != "name"}
    built = build_agent(spec.algorithm["name"], alg, spec.privacy, env, K, ctx.agent_rng, ctx.noise_rng)
    df = run_episodes(built, env, K, ctx.env_rng, log_checkpoints(K, int(ctx.settings.get("checkpoints", 30))), ctx.progress)
    df["S"], df["A"], df["d1"], df["d2"], df["H"] = env.S, env.A, env.d1, env.d2, env.horizon
    # the non-private agents' transition regularizer is the ridge λ I
    for col, v in (built.calibration.result_columns() if built.calibration
                   else {"lam_min": built.agent.reg_p.bounds.lam_min}).items():
        df[col] = v
    # regime (agents/linmix/regime.py): predicted burn-in from this job's radii and instance,
    # and the onset measured post hoc from the checkpointed cumulative regret
    scheme = ALGORITHMS[spec.algorithm["name"]][1]
    for col, v in regime_columns(env, K, float(alg.get("alpha", 0.05)), scheme, spec.privacy, float(alg.get("lam", 1.0))).items():
        df[col] = v
    df["onset_episode"] = onset_episode(df["episode"].to_numpy(), df["regret"].to_numpy())
    return df


# ------------------------------------------------------------------------------ audits


def _audit_features(d: int, H: int) -> KnownFeatures:
    """A tiny mixture (d1 = d2 = d) whose public features fix the sensitivities."""
    return make_mixture(max(d, 1), 2, d, d, H, np.random.default_rng(0)).features()


def neighbouring_statistics(feat: KnownFeatures, first: bool) -> tuple[np.ndarray, ...]:
    """User 1's per-step statistics in the hardest neighbouring pair for these features.

    ``first=True``: ``V ≡ H`` so ``ϕ = c`` (every coordinate at its maximum ``H``), target
    ``H``; reward feature ``e_1`` with reward 1. ``first=False``: ``V ≡ 0`` (``ϕ = 0``), and
    ``e_2`` with reward 1 (``e_1`` with reward 0 if ``d2 = 1``). The differences attain the
    replacement sensitivities ``d1 H²``, ``sqrt(d1) H²``, ``sqrt 2``, ``sqrt 2``.
    """
    H, d1, d2 = feat.horizon, feat.d1, feat.d2
    phi = np.full(d1, float(H)) if first else np.zeros(d1)
    y = float(H) if first else 0.0
    e = np.zeros(d2)
    rew = 1.0
    if first or d2 == 1:
        e[0] = 1.0
        rew = 1.0 if first else 0.0
    else:
        e[1] = 1.0
    gp = np.broadcast_to(np.outer(phi, phi), (H, d1, d1))
    tp = np.broadcast_to((phi * y)[:, None], (H, d1, 1))
    gr = np.broadcast_to(np.outer(e, e), (H, d2, d2))
    tr = np.broadcast_to((e * rew)[:, None], (H, d2, 1))
    return gp, tp, gr, tr


def _scaled(cal: LinOptCalibration, sigma_scale: float) -> tuple[RegularizerCalibration, RegularizerCalibration]:
    """The (p, r) calibrations with every σ scaled (``sigma_scale < 1``: a deliberately
    broken variant for tests)."""
    return tuple(dataclasses.replace(c, sigma_gram=c.sigma_gram * sigma_scale, sigma_target=c.sigma_target * sigma_scale)
                 for c in (cal.p, cal.r))


def _flatten(stats: RegularizedStats, p: int) -> np.ndarray:
    """One release per run: the upper triangle of every ``V_{k,h}`` and every ``U_{k,h}``."""
    iu = np.triu_indices(p)
    n = stats.gram.shape[0]
    return np.concatenate([stats.gram[..., iu[0], iu[1]].reshape(n, -1), stats.target.reshape(n, -1)], axis=1)


def central_sampler(cal: LinOptCalibration, feat: KnownFeatures, K: int, sigma_scale: float = 1.0):
    """``sample(first, n, rng)``: ``n`` runs of the central Privatizer exactly as the agent
    builds it (:func:`~dprl.agents.linmix.build.privatizers`, ``4H`` tree counters) on
    users ``1..K-1`` (user 1 from :func:`neighbouring_statistics`, the others zero),
    returning every release the other users' policies are computed from (after 1..K-1
    users)."""
    cal_p, cal_r = _scaled(cal, sigma_scale)

    def sample(first: bool, n: int, rng: np.random.Generator) -> np.ndarray:
        gp, tp, gr, tr = neighbouring_statistics(feat, first)
        reg_p, reg_r = privatizers("central", cal_p, cal_r, feat, K, rng, batch_shape=(n,))
        outs = []
        for t in range(1, K):
            for reg, g, c in ((reg_p, gp, tp), (reg_r, gr, tr)):
                if t == 1:
                    reg.observe(np.broadcast_to(g, (n, *g.shape)), np.broadcast_to(c, (n, *c.shape)))
                else:
                    reg.observe(np.zeros((n, *g.shape)), np.zeros((n, *c.shape)))
                outs.append(_flatten(reg.release(), g.shape[-1]))
        return np.concatenate(outs, axis=1)

    return sample


def local_sampler(cal: LinOptCalibration, feat: KnownFeatures, sigma_scale: float = 1.0):
    """``sample(first, n, rng)``: ``n`` runs of one user's local randomiser (Remark 6.9),
    through the agent's :class:`LocalRegularizer` (what the server holds after her)."""
    cal_p, cal_r = _scaled(cal, sigma_scale)

    def sample(first: bool, n: int, rng: np.random.Generator) -> np.ndarray:
        gp, tp, gr, tr = neighbouring_statistics(feat, first)
        reg_p, reg_r = privatizers("local", cal_p, cal_r, feat, 2, rng, batch_shape=(n,))
        outs = []
        for reg, g, c in ((reg_p, gp, tp), (reg_r, gr, tr)):
            reg.observe(np.broadcast_to(g, (n, *g.shape)), np.broadcast_to(c, (n, *c.shape)))
            outs.append(_flatten(reg.release(), g.shape[-1]))
        return np.concatenate(outs, axis=1)

    return sample


def run_audit(ctx: JobContext) -> pd.DataFrame:
    """Audited ``ε_lb`` of the central privatizer or the local randomiser (claim Z1)."""
    spec = ctx.spec
    env = spec.environment
    K, d, H = int(env["K"]), int(env["d"]), int(env["H"])
    feat = _audit_features(d, H)
    priv = spec.privacy
    name = spec.algorithm["name"]
    scheme = "central" if name == "central_privatizer" else "local"
    # The calibration is computed for the agent's K (its m, or its K-1 noise terms); the
    # privacy of a user does not depend on how many later users there are.
    cal = linopt_calibration(priv, scheme, K, feat, alpha=0.05)
    sample = central_sampler(cal, feat, K) if scheme == "central" else local_sampler(cal, feat)
    res = audit(sample, True, False, priv.epsilon, priv.delta, n=int(ctx.settings.get("runs", 100000)), rng=ctx.noise_rng,
                alpha=float(ctx.settings.get("alpha", 1e-3)))
    ctx.progress(1, 1, unit="audits")
    return pd.DataFrame([{
        "mechanism": name,
        **res.columns(),
        "eps_exact": cal.accounted_epsilon,  # exact, under replacement
        "relation": cal.relation,
    }])
