"""Job functions of the tabular experiments (one tidy table per job)."""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy.stats import trim_mean

from dprl.agents.plugin import run_tabular_episodes
from dprl.agents.protocol import BuiltAgent
from dprl.agents.tabular import calibration as cal
from dprl.agents.tabular.build import build_agent
from dprl.agents.tabular.episodes import run_episodes
from dprl.agents.tabular.regime import ONSET_DECADES, job_burn_in
from dprl.agents.tabular.statistics import PrivateStats
from dprl.agents.regime import burn_in_episodes as fixed_point
from dprl.agents.tabular.private_bai import dp_successive_elimination, lemma8_bound, se_calibration
from dprl.agents.tabular.privacy import (
    audit_counter, audit_episode, counters_only_env, drawn_calibration, private_stats, ran_calibration,
)
from dprl.envs.bandit import mab
from dprl.envs.tabular import TabularMDP, hard_gap, make_tabular_env
from dprl.experiments.base import load_ref
from dprl.experiments.plugins import build_plugin, plugin_calibration, plugin_of
from dprl.runner.job import JobContext, JobSpec, stable_hash
from dprl.runner.checkpoints import log_checkpoints


def job_horizon(ctx: JobContext) -> int:
    """The job's episodes: the ``episodes`` setting, or the horizon ``T`` of a family tuned
    to it (``tabular_hard``: one job per ``T``, no ``episodes`` setting)."""
    return int(ctx.settings["episodes"]) if "episodes" in ctx.settings else int(ctx.spec.environment["T"])


def _instance_rng(ctx: JobContext) -> np.random.Generator:
    """The stream the instance is drawn from: the labelled env stream, or for a family tuned
    to ``T`` a stream keyed by the family's parameters without ``T`` (and the seed), so a
    seed has the same instance at every ``T`` and the regret-vs-T curves pair by seed."""
    if "episodes" in ctx.settings:
        return ctx.rng("env", "instance")
    family = {k: v for k, v in ctx.spec.environment.items() if k != "T"}
    seq = np.random.SeedSequence(entropy=stable_hash(["env", family, "instance"]), spawn_key=(int(ctx.spec.seed),))
    return np.random.default_rng(seq)


def instance(ctx: JobContext) -> TabularMDP:
    """The job's MDP. Instance generation uses a labelled env stream, transitions the main
    one: both keyed by (environment, seed) only, so every algorithm and ε sees the same MDP and
    uniforms (and ``dprl validate``'s burn-in prediction, ``tabular/regime.py``, the job's own)."""
    return make_tabular_env(ctx.spec.environment["name"], ctx.spec.environment, _instance_rng(ctx))


def build_job_agent(ctx: JobContext) -> tuple[TabularMDP, BuiltAgent]:
    """The job's instance and its agent for :func:`job_horizon` episodes, built and not run
    (what the job runs, and what :mod:`dprl.experiments.accounting` reads the noise of
    before any job runs)."""
    spec = ctx.spec
    alg = spec.algorithm
    env = instance(ctx)
    noise_rng = ctx.noise_rng if spec.privacy is not None else None
    plugin = plugin_of(spec)
    if plugin is not None:
        return env, build_plugin(plugin, ctx, env, job_horizon(ctx), noise_rng)
    return env, build_agent(alg["name"], alg, spec.privacy, env, job_horizon(ctx), ctx.agent_rng, noise_rng)


def _simulate_plugin(ctx: JobContext, alpha: float | None) -> tuple[TabularMDP, dict, pd.DataFrame]:
    """A plug-in's run (:func:`dprl.agents.plugin.run_tabular_episodes`). The regime columns
    are PUCB's where the plug-in provides their parts, else NaN: the measured end of its
    burn-in (``onset_episode``) from an agent attribute ``last_clamped_episode`` (the last
    1-based episode a watched optimistic value was still at its cap; PUCB's compiled loop
    records the same), and its predicted burn-in and the horizon its rate needs from its
    declared ``Algorithm.burn_in``. Without a prediction its measured onset alone decides its
    rows (``analysis/regime.plugin_regime``)."""
    T = job_horizon(ctx)
    plugin = plugin_of(ctx.spec)
    env, built = build_job_agent(ctx)
    df = run_tabular_episodes(built, env, T, ctx.env_rng, log_checkpoints(T, int(ctx.settings["checkpoints"])),
                              ctx.progress, alpha=alpha)
    ran_calibration(built)  # a plug-in on dprl's counters: they drew the noise they hold (else raises)
    ctx.record_accounting(plugin_calibration(built, ctx.spec))
    nan = float("nan")
    info = {"optimal_value": env.optimal_value, "e_eps": nan, "t_exploit_possible": nan, "first_untie_predicted": nan,
            "burn_in_episodes": nan, "horizon_needed": nan, "onset_episode": nan, "first_untie_episode": nan,
            "all_tied_episodes": nan}
    clamped = getattr(built.agent, "last_clamped_episode", None)
    if clamped is not None:
        info["onset_episode"] = float(clamped + 1) if clamped < T else nan
    if plugin.burn_in:
        params = {k: v for k, v in ctx.spec.algorithm.items() if k != "name"}
        predict = load_ref(plugin.burn_in)
        info["first_untie_predicted"], info["burn_in_episodes"] = predict(params, ctx.spec.privacy, env, T)
        # the horizon its rate needs: smallest T with T >= 10^ONSET_DECADES·T*(T), as PUCB's
        info["horizon_needed"] = fixed_point(lambda k: predict(params, ctx.spec.privacy, env, k)[1], 10**ONSET_DECADES)
    return env, info, df


def _simulate(ctx: JobContext, alpha: float | None = None) -> tuple[TabularMDP, dict, pd.DataFrame]:
    """Run the job's episodes (:func:`job_horizon`); per-episode gaps and returns are
    summarised online at the log-spaced checkpoints (memory independent of the number of
    episodes)."""
    if plugin_of(ctx.spec) is not None:
        return _simulate_plugin(ctx, alpha)
    spec = ctx.spec
    alg = spec.algorithm
    T = job_horizon(ctx)
    env, built = build_job_agent(ctx)
    agent = built.agent
    df = run_episodes(built, env, T, ctx.env_rng, log_checkpoints(T, int(ctx.settings["checkpoints"])), ctx.progress,
                      alpha=alpha)
    info = {"optimal_value": env.optimal_value}
    # the scale the compiled loop drew with, checked against the one accounted before the run (else raises)
    ctx.record_accounting(ran_calibration(built))
    if spec.privacy is not None:
        info["e_eps"] = built.calibration.e_used(T)  # E_T, the bound of the last episode's release
        info["t_exploit_possible"] = cal.first_exploit_episode(spec.privacy, env.S, env.A, env.H, T, alg["beta"],
                                                               alg["l1_per_step"])
    else:
        info["e_eps"], info["t_exploit_possible"] = 0.0, 1.0
    # regime (src/dprl/README.md, "Regimes"): the predicted burn-in T* (every watched Q̃⁺ below H
    # under uniform play) and its measured end, the first episode after the last one in which a
    # watched pair was still clamped at H (NaN: still clamped at the end of the run)
    consts = (alg["beta"], alg["bonus_scale"], alg.get("l1_per_step"))  # None for UBEV: no counters to calibrate
    info["first_untie_predicted"], info["burn_in_episodes"] = job_burn_in(env, spec.privacy, T, *consts)
    # the horizon a rate needs: smallest T with T >= 10^ONSET_DECADES·T*(T) (E, hence T*, grows with T)
    info["horizon_needed"] = fixed_point(lambda k: job_burn_in(env, spec.privacy, k, *consts)[1], 10**ONSET_DECADES)
    clamped = agent.last_clamped_episode
    info["onset_episode"] = float(clamped + 1) if clamped < T else float("nan")
    last = agent.last_all_tied_episode
    info["first_untie_episode"] = float(last + 1) if last < T else float("nan")
    info["all_tied_episodes"] = agent.all_tied_episodes
    return env, info, df


def run_regret(ctx: JobContext) -> pd.DataFrame:
    """Cumulative exact regret ``Σ_t (ρ* − ρ^{π_t})`` and sampled return at log-spaced
    checkpoints (``tabular_regret``, ``tabular_scaling``)."""
    env, info, df = _simulate(ctx)
    return df.assign(S=env.S, A=env.A, H=env.H, **info)


def run_hard(ctx: JobContext) -> pd.DataFrame:
    """Cumulative exact regret on the Figure 1 instance tuned to the job's horizon ``T``
    (``envs.tabular.lowerbound_horizon``), run for exactly ``T`` episodes
    (``tabular_hard``). ``I`` is drawn from a stream keyed by the family's parameters
    without ``T`` (and the seed), so a seed has the same ``I`` at every ``T`` and the
    regret-vs-T curves pair by seed; the environment uniforms stay keyed by the instance."""
    e = ctx.spec.environment
    env, info, df = _simulate(ctx)  # T episodes on the family's instance (_horizon, _instance_rng)
    gap = hard_gap(int(e["n"]), int(e["m"]), int(e["T"]), float(e["gap_scale"]))
    return df.assign(S=env.S, A=env.A, H=env.H, T=int(e["T"]), gap=gap, **info)


def run_pac(ctx: JobContext) -> pd.DataFrame:
    """Number of α-suboptimal episodes (``ρ* − ρ^{π_t} > α``) on a Figure 1 instance with
    ``α = H α' / (4n)``: the smallest loss of a policy wrong in one initial state is
    ``H α'/(2n)``, so an episode is α-suboptimal exactly when its policy is wrong somewhere."""
    e = ctx.spec.environment
    alpha = e["H"] * e["gap"] / (4 * e["n"])
    env, info, df = _simulate(ctx, alpha)
    return pd.DataFrame({
        "episode": df["episode"], "alpha": alpha, "n_subopt": df["n_subopt"], "regret": df["regret"],
        "S": env.S, "A": env.A, "H": env.H, **info,
    })


# A run in which the Laplace noise eliminates the best arm (probability <= β) leaves arms of
# equal means that never separate, and runs to ``max_epochs`` (2^41 pulls): one such run
# dominates the mean of 2000. Lemma 8 bounds the mean, so its ratio reads the plain mean; the
# ε-exponent of the pulls (V6) is fitted to the mean of the central 80% of runs.
PULLS_TRIM = 0.1


def run_private_mab(ctx: JobContext) -> pd.DataFrame:
    """Mean pulls of the α-suboptimal arms by the ε-DP BAI algorithm over ``runs``
    independent runs, per α, against Lemma 8's ``ln(1/(4β))/(24εα)``, and their
    ``PULLS_TRIM``-trimmed mean (``scipy.stats.trim_mean``)."""
    spec = ctx.spec
    eps, beta = spec.epsilon, float(spec.algorithm["beta"])
    runs = int(ctx.settings["runs"])
    ctx.record_accounting(se_calibration(eps))  # the Laplace scale every run adds
    rows = []
    alphas = list(ctx.settings["alphas"])
    for i, alpha in enumerate(alphas):
        bandit = mab(ctx.rng("env", f"instance-{alpha}"), spec.environment["k"], alpha, spec.environment["best_mean"])
        env_rng, noise_rng = ctx.rng("env", f"pulls-{alpha}"), ctx.rng("noise", f"bai-{alpha}")
        sub = bandit.gaps() > 0
        pulls, ok = np.empty(runs), np.empty(runs)
        for r in range(runs):
            res = dp_successive_elimination(bandit, eps, beta, env_rng, noise_rng)
            pulls[r] = res.pulls[sub].mean()
            ok[r] = res.chosen == bandit.best_arm
        ctx.progress(i + 1, len(alphas), unit="alphas")
        rows.append({"alpha": alpha, "mean_pulls_subopt": pulls.mean(), "min_run_pulls_subopt": pulls.min(),
                     "trimmed_mean_pulls_subopt": trim_mean(pulls, PULLS_TRIM),
                     "success_rate": ok.mean(), "lemma8_bound": lemma8_bound(eps, alpha, beta), "runs": runs})
    return pd.DataFrame(rows)


def _audited_plugin(ctx: JobContext) -> tuple[BuiltAgent, PrivateStats]:
    """A plug-in's agent built as the audit examines it, on the audit's counter shape, and
    the tree counters it releases through (``ValueError`` saying why, if it holds none)."""
    e = ctx.spec.environment
    built = build_plugin(plugin_of(ctx.spec), ctx, counters_only_env(e["S"], e["A"], e["H"]), e["T"], ctx.noise_rng)
    return built, private_stats(built)


def check_audited_plugin(spec: JobSpec) -> None:
    """``tabular_audit``'s check of a plug-in before any job (``ExperimentKind.plugin_check``):
    the audit examines dprl's tree counters, so a plug-in whose agent holds none (its
    privacy self-declared) is refused with the reason. Returns ``None``: the audit records
    its own exact ε."""
    try:
        _audited_plugin(JobContext(spec))
    except ValueError as err:
        raise ValueError(f"tabular_audit cannot examine it: {err}; its privacy is self-declared, "
                         "so leave it out of tabular_audit (its other experiments still run)") from None


def run_audit(ctx: JobContext) -> pd.DataFrame:
    """Audits of the counters of a built PUCB agent (:mod:`dprl.agents.tabular.privacy`):
    one counter at ``ε'``, the whole episode at ``ε`` with the algorithm's sensitivity, and
    the paper's printed ``ε/(3H)`` at ``ε`` under replacement neighbours (an agent built
    with ``l1_per_step = 1``, expected to fail when the audit has the power to see it)."""
    spec = ctx.spec
    e = spec.environment
    alg = spec.algorithm
    n = int(ctx.settings["runs"])
    rng = ctx.noise_rng
    env = counters_only_env(e["S"], e["A"], e["H"])

    if plugin_of(spec) is not None:  # a plug-in releasing through dprl's counters: the counters its agent holds
        built, stats = _audited_plugin(ctx)
        return pd.DataFrame([
            {"mechanism": m, **r.columns(), "expected_pass": True, "eps_exact": drawn_calibration(stats).accounted_epsilon,
             "l1_per_step": stats.l1_per_step}
            for m, r in (("counter", audit_counter(built, n, rng)), (f"episode_l1x{stats.l1_per_step:g}", audit_episode(built, n, rng)))
        ])

    def pucb(l1_per_step: int) -> BuiltAgent:  # the agent whose counters are audited
        return build_agent("pucb", {**alg, "l1_per_step": l1_per_step}, spec.privacy, env, e["T"], ctx.agent_rng, rng)

    l1 = int(alg["l1_per_step"])
    built = pucb(l1)
    rows = []
    res = audit_counter(built, n, rng)
    rows.append(("counter", res, True, built))
    res = audit_episode(built, n, rng)
    rows.append((f"episode_l1x{l1}", res, True, built))
    if l1 != 1:
        printed = pucb(1)
        res = audit_episode(printed, n, rng)
        rows.append(("episode_printed_eps_3H", res, False, printed))
    # eps_exact: the ε under replacement of the Laplace scale the audited draws were made with
    # (the audits draw through the compiled loop's kernel, statistics.draw_laplace, which records it;
    # the held scale unless that kernel adds other noise); the whole mechanism's, the counter
    # row's claim is the per-counter ε'
    return pd.DataFrame([
        {"mechanism": m, **r.columns(), "expected_pass": exp, "eps_exact": drawn_calibration(private_stats(b)).accounted_epsilon}
        for m, r, exp, b in rows
    ])
