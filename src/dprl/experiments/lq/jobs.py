"""Job functions of the LQ experiments: one ``JobContext`` in, one tidy table out."""

from __future__ import annotations

import pandas as pd

from dprl.agents.lq.privacy import audit_counters, audit_system, held_calibration
from dprl.agents.protocol import BuiltAgent
from dprl.agents.lq.regime import private_ofu_burn_in
from dprl.agents.regime import onset_episode
from dprl.agents.lq.build import build_agent
from dprl.agents.lq.episodes import run_episodes
from dprl.envs.lq import LQSystem, double_integrator, random_system
from dprl.runner.checkpoints import log_checkpoints
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
    return system, build_agent(alg["name"], alg, spec.privacy, system, int(ctx.settings["episodes"]), ctx.agent_rng,
                               ctx.noise_rng)


def run_regret(ctx: JobContext) -> pd.DataFrame:
    """``lq_regret`` / ``lq_oracle``: cumulative exact regret at log-spaced checkpoints."""
    spec = ctx.spec
    episodes = int(ctx.settings["episodes"])
    alg = spec.algorithm
    system, built = build_job_agent(ctx)
    ctx.record_accounting(held_calibration(built))  # the noise the agent runs with
    df = run_episodes(built, system, episodes, ctx.env_rng, log_checkpoints(episodes, int(ctx.settings["checkpoints"])),
                      ctx.progress, check_ridge=alg["name"] == "ofu_rl")
    # src/dprl/README.md, "Regimes": where per-episode regret leaves its burn-in level (NaN: not within K)
    df["onset_episode"] = onset_episode(df["episode"].to_numpy(), df["regret"].to_numpy())
    # OFU-RL: H_k = λI, so λ_min is its regularizer's ridge λ
    for col, v in (built.calibration.result_columns() if built.calibration
                   else {"lam_min": built.agent.regularizer.bounds.lam_min}).items():
        df[col] = v
    if built.calibration is not None:  # predicted horizon of the √K regime (agents/lq/regime.py)
        df["burn_in_episodes"] = private_ofu_burn_in(spec.privacy, system.horizon, system.gamma,
                                                     system.n, system.d, float(alg["alpha"]))
    last = df.iloc[-1]
    ctx.log.info("K=%d regret=%.4g repaired=%d not_pd=%d clipped=%d oracle_fallbacks=%d onset=%s burn-in=%s", episodes,
                 last["regret"], last["n_repaired"], last["n_not_pd"], last["n_clipped"], last["n_oracle_fallback"],
                 last["onset_episode"], last.get("burn_in_episodes", "n/a"))
    return df


def run_audit(ctx: JobContext) -> pd.DataFrame:
    """``lq_audit``: audited ε lower bounds of B1, B2 and the pair on their worst
    *replacement* pairs (Definition 2), with their claimed (ε, δ) and the exact ε of each
    mechanism under replacement from its Gaussian-DP profile."""
    spec = ctx.spec
    env, priv = spec.environment, spec.privacy
    if priv is None or priv.delta is None:
        raise ValueError("lq_audit audits an (epsilon, delta) mechanism: give epsilon and delta")
    system = audit_system(int(env["n"]), int(env["d"]), int(env["horizon"]), float(env["gamma"]))
    # the agent whose counters are audited (one oracle candidate: the audit never plans)
    built = build_agent("private_ofu_rl", {"alpha": spec.algorithm["alpha"], "n_candidates": 1}, priv, system,
                        int(env["episodes"]), ctx.agent_rng, ctx.noise_rng)
    results = audit_counters(built, int(ctx.settings["runs"]), ctx.noise_rng, float(ctx.settings["confidence"]))
    cal = held_calibration(built)
    rows = []
    for mech, res in results.items():
        which = {"B1": "gram", "B2": "target", "joint": "joint"}[mech]
        rows.append({
            "mechanism": mech,
            **res.columns(),
            "eps_exact": cal.exact_epsilon(which, res.delta),  # under replacement (Definition 2)
            "relation": cal.relation,
            "sigma": {"gram": cal.regularizer.sigma_gram, "target": cal.regularizer.sigma_target}.get(which, float("nan")),
        })
        ctx.log.info("audit %s: claimed eps=%.4g delta=%.3g eps_lb=%.4g (%s) exact eps=%.4g", mech, res.epsilon,
                     res.delta, res.eps_lb, "pass" if res.passed else "FAIL", rows[-1]["eps_exact"])
    ctx.progress(1, 1, unit="audits")
    return pd.DataFrame(rows)
