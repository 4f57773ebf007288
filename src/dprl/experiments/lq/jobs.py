"""Job functions of the LQ experiments: one ``JobContext`` in, one tidy table out."""

from __future__ import annotations

import dataclasses

import pandas as pd

from dprl.agents.lq.privacy import audit_counters, audit_system, drawn_calibration, held_calibration
from dprl.agents.protocol import BuiltAgent
from dprl.agents.lq.regime import horizon_needed, predicted_onset
from dprl.agents.regime import onset_episode
from dprl.agents.lq.build import build_agent
from dprl.agents.lq.episodes import run_episodes
from dprl.agents.plugin import run_lq_episodes
from dprl.experiments.plugins import build_plugin, plugin_calibration, plugin_of
from dprl.envs.lq import LQSystem, double_integrator, random_system
from dprl.runner.checkpoints import log_checkpoints
from dprl.privacy.audit import AuditResult
from dprl.privacy.setting import PrivacySetting
from dprl.runner.job import JobContext


def make_system(env: dict, ctx: JobContext) -> LQSystem:
    """The job's system; a random one is drawn from the environment stream (same for every
    algorithm and privacy level at a given seed)."""
    name = env["name"]
    common = dict(c_a=float(env["c_a"]), c_b=float(env["c_b"]), noise_radius=float(env["noise_radius"]))
    if name == "random_lq":
        return random_system(int(env["n"]), int(env["d"]), int(env["horizon"]), ctx.rng("env", "instance"), **common)
    if name == "double_integrator":
        return double_integrator(int(env["horizon"]), tau=float(env["tau"]), **common)
    raise ValueError(f"unknown LQ environment {name!r}")


def build_job_agent(ctx: JobContext) -> tuple[LQSystem, BuiltAgent]:
    """The job's system and its agent, built and not run (what the job runs, and what
    :mod:`dprl.experiments.accounting` reads the noise of before any job runs)."""
    spec = ctx.spec
    system = make_system(spec.environment, ctx)
    alg = spec.algorithm
    plugin = plugin_of(spec)
    if plugin is not None:
        return system, build_plugin(plugin, ctx, system, int(ctx.settings["episodes"]),
                                    ctx.noise_rng if spec.privacy is not None else None)
    return system, build_agent(alg["name"], alg, spec.privacy, system, int(ctx.settings["episodes"]), ctx.agent_rng,
                               ctx.noise_rng)


def run_regret(ctx: JobContext) -> pd.DataFrame:
    """``lq_regret`` / ``lq_oracle``: cumulative exact regret at log-spaced checkpoints."""
    spec = ctx.spec
    episodes = int(ctx.settings["episodes"])
    alg = spec.algorithm
    system, built = build_job_agent(ctx)
    if plugin_of(spec) is not None:
        return _regret_plugin(ctx, system, built)
    df = run_episodes(built, system, episodes, ctx.env_rng, log_checkpoints(episodes, int(ctx.settings["checkpoints"])),
                      ctx.progress, check_ridge=alg["name"] == "ofu_rl")
    # accounted from the σ's the compiled loop drew with; refused (NoiseScaleError) if they differ from the agent's calibration
    ctx.record_accounting(drawn_calibration(built))
    # src/dprl/README.md, "Regimes": where per-episode regret leaves its burn-in level (NaN: not within K)
    df["onset_episode"] = onset_episode(df["episode"].to_numpy(), df["regret"].to_numpy())
    # OFU-RL: H_k = λI, so λ_min is its regularizer's ridge λ
    for col, v in (built.calibration.result_columns() if built.calibration
                   else {"lam_min": built.agent.regularizer.bounds.lam_min}).items():
        df[col] = v
    if built.calibration is not None:  # agents/lq/regime.py: predicted onset from the Λ the agent holds
        df["burn_in_episodes"] = predicted_onset(built.calibration.regularizer.lam_min)
        df["horizon_needed"] = horizon_needed(spec.privacy, system.horizon, system.gamma, system.n, system.d,
                                              float(alg["alpha"]))
    last = df.iloc[-1]
    ctx.log.info("K=%d regret=%.4g repaired=%d not_pd=%d clipped=%d oracle_fallbacks=%d onset=%s burn-in=%s", episodes,
                 last["regret"], last["n_repaired"], last["n_not_pd"], last["n_clipped"], last["n_oracle_fallback"],
                 last["onset_episode"], last.get("burn_in_episodes", "n/a"))
    return df


def _regret_plugin(ctx: JobContext, system: LQSystem, built: BuiltAgent) -> pd.DataFrame:
    """A plug-in's ``lq_regret`` run (:func:`dprl.agents.plugin.run_lq_episodes`): the exact
    regret columns and the measured onset; Private-OFU-RL's burn-in, ridge and repair columns
    belong to its analysis and are NaN (a plug-in's regime is not predicted: its rate rows say so)."""
    episodes = int(ctx.settings["episodes"])
    df = run_lq_episodes(built, system, episodes, ctx.env_rng, log_checkpoints(episodes, int(ctx.settings["checkpoints"])),
                         ctx.progress)
    ctx.record_accounting(plugin_calibration(built, ctx.spec))
    df["onset_episode"] = onset_episode(df["episode"].to_numpy(), df["regret"].to_numpy())
    for col in ("burn_in_episodes", "horizon_needed", "lam_min", "theta_hat_error"):
        df[col] = float("nan")
    ctx.log.info("K=%d regret=%.4g onset=%s (plug-in %s)", episodes, df["regret"].iloc[-1], df["onset_episode"].iloc[-1],
                 ctx.spec.algorithm["name"])
    return df


def run_audit(ctx: JobContext) -> pd.DataFrame:
    """``lq_audit``: audited ε lower bounds of B1, B2 and the pair on their worst
    *replacement* pairs (Definition 2), with their claimed (ε, δ) and the exact ε of each
    mechanism under replacement from its Gaussian-DP profile (``constants = "as run"``), at the
    σ's the audited releases were drawn with (the episode loop's kernels,
    :func:`dprl.agents.lq.loop.audit_releases`).

    Under the ``paper`` calibration, also the constants exactly as printed
    (``constants = "printed"``, an agent built with ``printed=True``): the pair audited at
    the job's (ε, δ), and the exact ε under replacement of the pair at every ε of the
    setting ``printed_epsilons`` (accounting only, no audit: at large ε an audit has no power,
    exact accounting does)."""
    spec = ctx.spec
    env, priv = spec.environment, spec.privacy
    if priv is None or priv.delta is None:
        raise ValueError("lq_audit audits an (epsilon, delta) mechanism: give epsilon and delta")
    system = audit_system(int(env["n"]), int(env["d"]), int(env["horizon"]), float(env["gamma"]))
    runs, confidence = int(ctx.settings["runs"]), float(ctx.settings["confidence"])

    def counters(privacy: PrivacySetting, printed: bool = False) -> BuiltAgent:
        # the agent whose counters are audited (one oracle candidate: the audit never plans)
        return build_agent("private_ofu_rl", {"alpha": spec.algorithm["alpha"], "n_candidates": 1}, privacy, system,
                           int(env["episodes"]), ctx.agent_rng, ctx.noise_rng, printed=printed)

    def row(mech: str, res: AuditResult | None, cal, constants: str, privacy: PrivacySetting) -> dict:
        which = {"B1": "gram", "B2": "target", "joint": "joint"}[mech]
        eps, delta = (res.epsilon, res.delta) if res is not None else (privacy.epsilon, privacy.delta)
        out = {"mechanism": mech, "constants": constants, "printed_epsilon": privacy.epsilon,
               **(res.columns() if res is not None else {"claimed_epsilon": eps, "claimed_delta": delta}),
               "eps_exact": cal.exact_epsilon(which, delta),  # under replacement (Definition 2)
               "relation": cal.relation,
               "sigma": {"gram": cal.regularizer.sigma_gram, "target": cal.regularizer.sigma_target}.get(which, float("nan"))}
        ctx.log.info("%s %s: claimed eps=%.4g delta=%.3g eps_lb=%s exact eps=%.4g", constants, mech, eps, delta,
                     "n/a" if res is None else f"{res.eps_lb:.4g} ({'pass' if res.passed else 'FAIL'})", out["eps_exact"])
        return out

    plugin = plugin_of(spec)
    if plugin is not None:
        # a plug-in releasing through Private-OFU-RL's counters (its agent's ``regularizer``,
        # its calibration Private-OFU-RL's): the counters it holds, on the audit's pairs
        built = build_plugin(plugin, ctx, system, int(env["episodes"]), ctx.noise_rng)
        results = audit_counters(built, runs, ctx.noise_rng, confidence, system=system)
        cal = drawn_calibration(built, check=False)
        ctx.progress(1, 1, unit="audits")
        return pd.DataFrame([row(mech, res, cal, "as run", priv) for mech, res in results.items()])
    built = counters(priv)
    results = audit_counters(built, runs, ctx.noise_rng, confidence)
    # the exact ε and σ of the rows from the σ's the audited kernel drew with (not checked: the audit measures)
    cal = drawn_calibration(built, check=False)
    rows = [row(mech, res, cal, "as run", priv) for mech, res in results.items()]
    if priv.calibration == "paper":
        printed = counters(priv, printed=True)
        res = audit_counters(printed, runs, ctx.noise_rng, confidence, pairs=("joint",))["joint"]
        rows.append(row("joint", res, drawn_calibration(printed, check=False), "printed", priv))
        for eps in ctx.settings["printed_epsilons"]:
            at = dataclasses.replace(priv, epsilon=float(eps))
            rows.append(row("joint", None, held_calibration(counters(at, printed=True)), "printed", at))
    ctx.progress(1, 1, unit="audits")
    return pd.DataFrame(rows)
