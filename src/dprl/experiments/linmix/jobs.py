"""Job functions of the Zhou (2022) experiments."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pandas as pd

from dprl.agents.linmix.regime import regime_columns
from dprl.agents.linmix.build import ALGORITHMS, build_agent
from dprl.agents.linmix.privacy import (
    AUDITED,
    audit_features,
    central_sampler,
    drawn_calibration,
    held_calibration,
    local_sampler,
)
from dprl.agents.linmix.episodes import run_episodes
from dprl.agents.plugin import run_linmix_episodes
from dprl.experiments.plugins import build_plugin, plugin_calibration, plugin_of
from dprl.agents.regime import onset_episode
from dprl.agents.protocol import BuiltAgent
from dprl.envs.linear_mixture import LinearMixtureMDP, hard_linear_gap, hard_linear_uniform_regret, make_env
from dprl.experiments.linmix.spec import AGENTS
from dprl.privacy.audit import audit
from dprl.privacy.regularizer import CentralRegularizer
from dprl.privacy.setting import PrivacySetting
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


def episodes(ctx: JobContext) -> int:
    """The job's episodes: the ``episodes`` setting, or the ``K`` of a family tuned to it
    (``linmix_hard``: one job per ``K``, no ``episodes`` setting)."""
    return int(ctx.settings["episodes"]) if "episodes" in ctx.settings else int(ctx.spec.environment["K"])


def family_rng(ctx: JobContext) -> np.random.Generator:
    """For a family tuned to ``K``: a stream keyed by the family's parameters without ``K``
    and ``gap_scale`` (and the seed), so a seed draws the same signs of ``μ`` at every ``K``
    and gap scale, and the regret-vs-K curves pair by seed; each seed draws its own ``μ``."""
    family = {k: v for k, v in ctx.spec.environment.items() if k not in ("K", "gap_scale")}
    return np.random.default_rng(np.random.SeedSequence(stable_hash(["env-family", family]), spawn_key=(int(ctx.spec.seed),)))


def make_job_env(ctx: JobContext):
    """The job's instance (``mixture``, ``hard_linear``, ``tabular_as_linear`` from the
    environment stream; ``spread_mixture`` from :func:`paired_key`;
    ``hard_linear_horizon`` from :func:`family_rng`)."""
    env_params = {k: v for k, v in ctx.spec.environment.items() if k != "name"}
    rng = ctx.env_rng if "episodes" in ctx.settings else family_rng(ctx)
    return make_env(ctx.spec.environment["name"], env_params, rng, paired_key(ctx))


def build_job_agent(ctx: JobContext) -> tuple[LinearMixtureMDP, BuiltAgent]:
    """The job's instance (:func:`make_job_env`) and its agent, built and not run (what the
    job runs, and what :mod:`dprl.experiments.accounting` reads the noise of before any job
    runs)."""
    spec = ctx.spec
    env = make_job_env(ctx)
    plugin = plugin_of(spec)
    if plugin is not None:
        return env, build_plugin(plugin, ctx, env, episodes(ctx), ctx.noise_rng if spec.privacy is not None else None)
    alg = {k: v for k, v in spec.algorithm.items() if k != "name"}
    return env, build_agent(spec.algorithm["name"], alg, spec.privacy, env, episodes(ctx), ctx.agent_rng, ctx.noise_rng)


def run_regret(ctx: JobContext) -> pd.DataFrame:
    """Cumulative exact regret at log-spaced checkpoints (``linmix_regret``, ``_states``,
    ``_actions``, ``_ldp``)."""
    spec = ctx.spec
    K = episodes(ctx)
    alg = {k: v for k, v in spec.algorithm.items() if k != "name"}
    env, built = build_job_agent(ctx)
    marks = log_checkpoints(K, int(ctx.settings["checkpoints"]))
    if plugin_of(spec) is not None:
        return _regret_plugin(ctx, env, built, K, marks)
    df = run_episodes(built, env, K, ctx.env_rng, marks, ctx.progress)
    # accounted from the σ's the compiled loop drew with; refused (NoiseScaleError) if they differ from the agent's calibration
    ctx.record_accounting(drawn_calibration(built))
    df["S"], df["A"], df["d1"], df["d2"], df["H"] = env.S, env.A, env.d1, env.d2, env.horizon
    # the non-private agents' transition regularizer is the ridge λ I
    for col, v in (built.calibration.result_columns() if built.calibration
                   else {"lam_min": built.agent.reg_p.bounds.lam_min}).items():
        df[col] = v
    # regime (agents/linmix/regime.py): predicted burn-in from this job's radii and instance,
    # and the onset measured post hoc from the checkpointed cumulative regret
    scheme = ALGORITHMS[spec.algorithm["name"]][1]
    for col, v in regime_columns(env, K, float(alg["alpha"]), scheme, spec.privacy, float(alg.get("lam", 1.0))).items():  # private agents have no λ: 1 as in their Z
        df[col] = v
    df["onset_episode"] = onset_episode(df["episode"].to_numpy(), df["regret"].to_numpy())
    return df


def _regret_plugin(ctx: JobContext, env: LinearMixtureMDP, built: BuiltAgent, K: int, marks) -> pd.DataFrame:
    """A plug-in's run (:func:`dprl.agents.plugin.run_linmix_episodes`, actions of a
    stochastic policy from the job's agent stream): the exact regret columns, the instance's
    sizes and the measured onset; LinOpt's radii, regularizer and burn-in columns belong to
    its analysis and are NaN (a plug-in's regime is not predicted: its rate rows say so)."""
    df = run_linmix_episodes(built, env, K, ctx.env_rng, marks, ctx.progress, action_rng=ctx.agent_rng)
    ctx.record_accounting(plugin_calibration(built, ctx.spec))
    df["S"], df["A"], df["d1"], df["d2"], df["H"] = env.S, env.A, env.d1, env.d2, env.horizon
    for col in ("lam_min", "burn_in_episodes", "horizon_needed"):
        df[col] = float("nan")
    df["onset_episode"] = onset_episode(df["episode"].to_numpy(), df["regret"].to_numpy())
    return df


def run_hard(ctx: JobContext) -> pd.DataFrame:
    """Cumulative exact regret on the instance hard at ``K`` (``hard_linear_horizon``: Zhou,
    Gu, Szepesvári 2021, ``Δ = sqrt(δ/K)/(4√2)``), run for exactly ``K`` episodes
    (``linmix_hard``); ``μ``'s signs are drawn per seed from :func:`family_rng`. Records ``K``,
    the gap ``Δ``, the lower bound's shape ``d·H·√K`` and (``H = 2``) uniform play's regret."""
    e = ctx.spec.environment
    K, d, H, scale = int(e["K"]), int(e["d"]), int(e["H"]), float(e.get("gap_scale", 1.0))
    df = run_regret(ctx)
    gap = hard_linear_gap(H, K, scale)
    uniform = hard_linear_uniform_regret(d, K, gap) if H == 2 else float("nan")
    return df.assign(K=K, d=d, gap=gap, gap_scale=scale, dH_sqrtK=d * H * math.sqrt(K), uniform_regret=uniform)


# ------------------------------------------------------------------------------ audits


def run_audit(ctx: JobContext) -> pd.DataFrame:
    """Audited ``ε_lb`` of the central privatizer or the local randomiser (claim Z1) of a
    built agent (:mod:`dprl.agents.linmix.privacy`: drawn through the episode loop's
    kernels), with its exact ε under replacement at the σ's drawn with (``constants = "as run"``). Under the ``paper`` calibration, also the constants exactly
    as printed (``constants = "printed"``): audited at the job's (ε, δ), and accounted
    exactly at every ε of the setting ``printed_epsilons`` (no audit there: at large ε an
    audit has no power, exact accounting does)."""
    spec = ctx.spec
    env = spec.environment
    K, d, H = int(env["K"]), int(env["d"]), int(env["H"])
    feat = audit_features(d, H)
    priv = spec.privacy
    name = spec.algorithm["name"]
    runs, alpha = int(ctx.settings["runs"]), float(ctx.settings["alpha"])

    def built_at(privacy: PrivacySetting, printed: bool = False) -> BuiltAgent:
        # The agent is built for K users (its m, or its K-1 noise terms); the privacy of a
        # user does not depend on how many later users there are.
        return build_agent(AUDITED[name], AGENTS[AUDITED[name]].defaults(), privacy, feat, K, ctx.agent_rng, ctx.noise_rng, printed=printed)

    def audited(built: BuiltAgent, constants: str, mechanism: str = name) -> dict:
        sample = central_sampler(built, feat) if mechanism == "central_privatizer" else local_sampler(built, feat)
        res = audit(sample, True, False, priv.epsilon, priv.delta, n=runs, rng=ctx.noise_rng, alpha=alpha)
        # the exact ε from the σ's the audited kernels drew with (not checked: the audit measures)
        cal = drawn_calibration(built, check=False)
        ctx.log.info("%s %s: eps=%.4g eps_lb=%.4g (%s) exact eps=%.4g", constants, mechanism, priv.epsilon, res.eps_lb,
                     "pass" if res.passed else "FAIL", cal.accounted_epsilon)
        return {"mechanism": mechanism, "constants": constants, "printed_epsilon": priv.epsilon, **res.columns(),
                "eps_exact": cal.accounted_epsilon,  # exact, under replacement
                "relation": cal.relation}

    plugin = plugin_of(spec)
    if plugin is not None:
        # a plug-in releasing through the Privatizer's regularizers (its agent's reg_p, reg_r):
        # the mechanism it holds, built for the audit's features (its factory gets them as env)
        built = build_plugin(plugin, ctx, feat, K, ctx.noise_rng)
        mechanism = "central_privatizer" if isinstance(built.agent.reg_p, CentralRegularizer) else "local_randomizer"
        ctx.progress(1, 1, unit="audits")
        return pd.DataFrame([audited(built, "as run", mechanism)])
    rows = [audited(built_at(priv), "as run")]
    if priv.calibration == "paper":
        rows.append(audited(built_at(priv, printed=True), "printed"))
        for eps in ctx.settings["printed_epsilons"]:
            at = dataclasses.replace(priv, epsilon=float(eps))
            cal = held_calibration(built_at(at, printed=True))
            rows.append({"mechanism": name, "constants": "printed", "printed_epsilon": at.epsilon,
                         "claimed_epsilon": at.epsilon, "claimed_delta": at.delta, "eps_exact": cal.accounted_epsilon,
                         "relation": cal.relation})
            ctx.log.info("printed %s at eps=%.4g: exact eps=%.4g", name, at.epsilon, cal.accounted_epsilon)
    ctx.progress(1, 1, unit="audits")
    return pd.DataFrame(rows)
