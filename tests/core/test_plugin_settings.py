"""Plug-ins of the LQ and linear-mixture settings (``dprl.experiments.registry``,
``agents/plugin.py``): a private plug-in that holds dprl's Regularizers (here the
Private-OFU-RL and Private-LinOpt-PO agents behind the step protocols, as a researcher
would wrap their own) joins ``lq_regret`` and ``linmix_regret``/``linmix_hard``; its jobs
run through the generic runners on the job's own streams and give exactly the numbers
the built-in agent gives on those streams; it is accounted from the noise it holds, gets
its own claim rows (C2, C3; Z2, Z3, Z7), reported apart, and its declared baseline is
checked."""

from __future__ import annotations

import sys

import pandas as pd
import pytest

from dprl.config.load import ConfigError, load_config
from dprl.experiments import registry
from dprl.experiments.accounting import accounted_epsilon
from dprl.runner.job import JobContext, JobSpec
from plugin_site import install_dist

MIRRORS = '''
from dprl.agents.linmix.build import build_agent as build_linopt
from dprl.agents.lq.build import build_agent as build_ofu
from dprl.agents.protocol import BuiltAgent
from dprl.experiments.base import Algorithm, Param
from step_agents import StepLinOpt, StepOFU


def lq(params, privacy, env, n_episodes, agent_rng, noise_rng):
    built = build_ofu("private_ofu_rl", params, privacy, env, n_episodes, agent_rng, noise_rng)
    return BuiltAgent(StepOFU(built.agent), built.calibration)


def linmix(params, privacy, env, n_episodes, agent_rng, noise_rng):
    built = build_linopt("private_linopt_po", params, privacy, env, n_episodes, agent_rng, noise_rng)
    return BuiltAgent(StepLinOpt(built.agent), built.calibration)


def leaky_lq(params, privacy, env, n_episodes, agent_rng, noise_rng):
    # Private-OFU-RL's calibration stated, half its σ's held: accounted at more than ε
    import dataclasses
    from dprl.agents.lq.build import private_regularizer

    built = build_ofu("private_ofu_rl", params, privacy, env, n_episodes, agent_rng, noise_rng)
    cal = built.calibration
    half = dataclasses.replace(cal.regularizer, sigma_gram=cal.regularizer.sigma_gram / 2,
                               sigma_target=cal.regularizer.sigma_target / 2)
    built.agent.regularizer = private_regularizer(dataclasses.replace(cal, regularizer=half), env.n + env.d, env.n,
                                                  n_episodes, noise_rng)
    return BuiltAgent(StepOFU(built.agent), cal)


MY_LQ = Algorithm("my_lq", "approx", {"n_candidates": Param(8, minimum=1), "alpha": Param(0.1, exclusive_minimum=0.0)},
                  setting="lq", factory="mirror_plugins:lq", label="My-LQ", colour="#8c564b", baseline="ofu_rl")
MY_LINMIX = Algorithm("my_linmix", "approx", {"alpha": Param(0.05, exclusive_minimum=0.0), "eta_scale": Param(1.0)},
                      setting="linmix", factory="mirror_plugins:linmix", label="My-LinMix", colour="#e377c2",
                      baseline="oppo")
LEAKY_LQ = Algorithm("leaky_lq", "approx", dict(MY_LQ.params), setting="lq", factory="mirror_plugins:leaky_lq",
                     label="Leaky-LQ", colour="#7f7f7f")
BAD_BASELINE = Algorithm("bad_baseline", "approx", {}, setting="lq", factory="mirror_plugins:lq", baseline="ucrl_vtr")
'''


@pytest.fixture
def site(tmp_path, monkeypatch):
    site = tmp_path / "site"
    site.mkdir()
    (site / "mirror_plugins.py").write_text(MIRRORS)
    install_dist(site, "mirror-plugins", "1.0", {"my_lq": "mirror_plugins:MY_LQ", "my_linmix": "mirror_plugins:MY_LINMIX",
                                                 "bad_baseline": "mirror_plugins:BAD_BASELINE",
                                                 "leaky_lq": "mirror_plugins:LEAKY_LQ"})
    monkeypatch.syspath_prepend(str(site))
    registry.refresh()
    yield site
    sys.modules.pop("mirror_plugins", None)
    registry.refresh()


TIGHT = {"epsilon": 10.0, "delta": 1e-3, "calibration": "tight"}


def test_plugins_join_the_kinds_of_their_setting_and_a_wrong_baseline_is_refused(site):
    joined = {k.name for k in registry.kinds().values() if "my_lq" in k.algorithms}
    assert joined == {"lq_regret", "lq_audit"}
    assert {k.name for k in registry.kinds().values() if "my_linmix" in k.algorithms} == {
        "linmix_regret", "linmix_hard", "linmix_audit"}
    why = registry.plugin_problems()["bad_baseline"]
    assert "mirror-plugins 1.0" in why and "baseline 'ucrl_vtr'" in why and "not a non-private algorithm of the lq" in why
    cfg = {"experiments": {"mine": {"kind": "lq_regret", "algorithms": [{"name": "bad_baseline"}],
                                    "environments": [{"name": "random_lq"}], "privacy": {"epsilon": [1.0], "delta": [1e-3]},
                                    "settings": {"episodes": 10}, "seeds": {"count": 1}}}}
    with pytest.raises(ConfigError, match="bad_baseline.*baseline 'ucrl_vtr'"):
        load_config(cfg, "default")


def _spec(kind, alg, env, privacy, settings, seed=0):
    decl = registry.get_kind(kind).algorithms[alg]
    from dprl.privacy.setting import PrivacySetting
    return JobSpec(kind, kind, {"name": alg, **decl.defaults()}, env, privacy and PrivacySetting(**privacy), settings, seed)


def test_an_lq_plugin_job_is_the_builtin_agent_on_the_jobs_streams(site):
    from dprl.agents.lq.build import build_agent
    from dprl.agents.lq.episodes import run_episodes
    from dprl.experiments.lq.jobs import make_system
    from dprl.runner.checkpoints import log_checkpoints

    env = {"name": "random_lq", "n": 2, "d": 1, "horizon": 5, "c_a": 0.8, "c_b": 0.6, "noise_radius": 0.05}
    spec = _spec("lq_regret", "my_lq", env, TIGHT, {"episodes": 200, "checkpoints": 8})
    run = registry.job_function(registry.get_kind("lq_regret"))
    ctx = JobContext(spec)
    df = run(ctx)
    assert df.equals(run(JobContext(spec)))  # deterministic
    ref = JobContext(spec)  # the same streams, the built-in agent, the compiled loop
    system = make_system(env, ref)
    built = build_agent("private_ofu_rl", {"n_candidates": 8, "alpha": 0.1}, spec.privacy, system, 200, ref.agent_rng,
                        ref.noise_rng)
    want = run_episodes(built, system, 200, ref.env_rng, log_checkpoints(200, 8))
    pd.testing.assert_series_equal(df["regret"], want["regret"], rtol=1e-10)
    # accounted from the σ's its Regularizer holds: the built-in's ε, at most the nominal one
    assert accounted_epsilon(spec) == pytest.approx(ctx.accounted_epsilon) and accounted_epsilon(spec) <= 10.0
    assert df["burn_in_episodes"].isna().all()


def test_a_linmix_plugin_job_is_the_builtin_agent_on_the_jobs_streams(site):
    from dprl.agents.linmix.build import build_agent
    from dprl.agents.linmix.episodes import run_episodes
    from dprl.experiments.linmix.jobs import make_job_env
    from dprl.runner.checkpoints import log_checkpoints

    env = {"name": "mixture", "S": 6, "A": 3, "d1": 2, "d2": 2, "H": 2, "concentration": 0.5}
    spec = _spec("linmix_regret", "my_linmix", env, TIGHT, {"episodes": 120, "checkpoints": 6})
    df = registry.job_function(registry.get_kind("linmix_regret"))(JobContext(spec))
    ref = JobContext(spec)
    mdp = make_job_env(ref)
    built = build_agent("private_linopt_po", {"alpha": 0.05, "eta_scale": 1.0}, spec.privacy, mdp, 120, ref.agent_rng,
                        ref.noise_rng)
    want = run_episodes(built, mdp, 120, ref.env_rng, log_checkpoints(120, 6))
    pd.testing.assert_series_equal(df["regret"], want["regret"], rtol=1e-10)
    assert accounted_epsilon(spec) <= 10.0


def _table(kind, alg, envs, privacies, settings, seeds, run_env=None):
    from dprl.analysis.aggregate import identity_columns

    frames = []
    run = registry.job_function(registry.get_kind(kind))
    for e_label, env in envs.items():
        for p_label, priv in privacies.items():
            for seed in seeds:
                spec = _spec(kind, alg, env, priv, settings, seed)
                labels = {"alg_label": alg, "env_label": e_label, "privacy_label": p_label}
                frames.append(run(JobContext(spec)).assign(**identity_columns({"spec": spec.to_dict(), "labels": labels})))
    return pd.concat(frames, ignore_index=True)


def test_plugins_get_their_own_claim_rows_reported_apart(site):
    """C2 and C3 (LQ), Z2, Z3 and Z7 (linear mixture) give the plug-ins rows of their own,
    marked 'plug-in'; the papers' rows are the built-ins' alone."""
    from dprl.analysis.base import SOURCES
    from dprl.analysis.claims import claims_table

    lq_env = {"random_lq": {"name": "random_lq", "n": 2, "d": 1, "horizon": 4, "c_a": 0.8, "c_b": 0.6, "noise_radius": 0.05}}
    from dprl.analysis.claims.lq import CENTRE_DELTA, CENTRE_EPS

    # C2 reads the centre setting of lq_regret, C3 its ε grid
    lq_priv = {f"e{e:g}": {"epsilon": e, "delta": CENTRE_DELTA, "calibration": "tight"}
               for e in (CENTRE_EPS, 10 * CENTRE_EPS, 100 * CENTRE_EPS)}
    lq_set = {"episodes": 400, "checkpoints": 5}  # long enough that OFU-RL learns while the private runs still play u ≡ 0: positive costs
    lq = pd.concat([_table("lq_regret", "my_lq", lq_env, lq_priv, lq_set, range(2)),
                    _table("lq_regret", "ofu_rl", lq_env, {"np": None}, lq_set, range(2))], ignore_index=True)
    mix_env = {"mixture": {"name": "mixture", "S": 5, "A": 2, "d1": 2, "d2": 2, "H": 2, "concentration": 0.5}}
    mix_priv = {f"e{e:g}": {"epsilon": e, "delta": 1e-3, "calibration": "tight"} for e in (0.1, 1.0)}
    mix_set = {"episodes": 60, "checkpoints": 5}
    mix = pd.concat([_table("linmix_regret", "my_linmix", mix_env, mix_priv, mix_set, range(2)),
                     _table("linmix_regret", "oppo", mix_env, {"np": None}, mix_set, range(2))], ignore_index=True)
    hard_env = {f"K{k}": {"name": "hard_linear_horizon", "d": 2, "H": 2, "K": k} for k in (40, 160)}
    hard = _table("linmix_hard", "my_linmix", hard_env, {"e10": TIGHT}, {"checkpoints": 3}, range(2))
    claims = claims_table({"lq_regret": lq, "linmix_regret": mix, "linmix_hard": hard}, papers=("lq", "linmix"))
    mine = claims[claims["source"] == SOURCES[2]]
    assert {"C2", "C3", "Z2", "Z3", "Z7"} <= set(mine["claim"])
    assert mine.loc[mine["claim"] == "Z2", "note"].str.contains("My-LinMix").all()
    assert mine.loc[mine["claim"] == "C2", "note"].str.contains("My-LQ").all()
    # a plug-in's rates on fixed instances are judged past its measured onset only: these short
    # runs have none, so whatever the slope says the rows are inconclusive with the horizon needed
    rates = mine[mine["claim"].isin(["C2", "Z2"])]
    assert (rates["regime"] == "not reached").all() and (rates["verdict"] == "inconclusive").all()
    assert rates["note"].str.contains("measured onset only").all()
    # every rate the plug-in was measured on is judged by its measured onset (never n/a with a verdict)
    fitted = mine[mine["claim"].isin(["C3", "Z3", "Z7"]) & mine["measured"].notna()]
    assert {"C3", "Z7"} <= set(fitted["claim"]) and (fitted["regime"] != "n/a").all()
    # each row under its claim's statement about any algorithm of the setting, naming the plug-in
    assert mine["statement"].str.contains("My-L").all() and not mine["statement"].str.contains("Private-").any()
    assert (fitted.loc[fitted["regime"] == "not reached", "verdict"] == "inconclusive").all()
    # the papers' own rows are the built-ins': OFU-RL's C2 row and OPPO's Z2 row, nothing of the plug-ins
    paper = claims[claims["source"] == SOURCES[0]]
    assert not paper["note"].str.contains("My-L").any()
    assert (paper.loc[paper["claim"] == "C2", "note"].str.contains("OFU-RL on random_lq")).any()
    _figures_show_the_plugins({"lq_regret": lq, "linmix_regret": mix})


def _figures_show_the_plugins(tables) -> None:
    """The regret and privacy-cost figures of both settings draw the plug-in under its own
    name, and pass the figure check."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from dprl.analysis.figure_check import check_figure
    from dprl.analysis.figures import linmix as linmix_figures
    from dprl.analysis.figures import lq as lq_figures

    for draw, name in ((lq_figures.regret_loglog, "My-LQ"), (lq_figures.privacy_cost, "My-LQ"),
                       (linmix_figures.regret_loglog, "My-LinMix"),
                       # this short run's LinOpt-PO plays OPPO's uniform policy throughout (zero cost): drawn empty
                       (linmix_figures.privacy_cost_fig, None)):
        fig = draw(tables)
        labels = [t.get_text() for ax in fig.axes for leg in [ax.get_legend(), *fig.legends] if leg for t in leg.get_texts()]
        titles = [ax.get_title() for ax in fig.axes]
        assert name is None or any(name in x for x in labels + titles), (draw.__name__, labels, titles)
        assert check_figure(fig) == [], draw.__name__
        plt.close(fig)


def test_audits_examine_the_noise_a_plugin_holds_and_the_accounting_reads_it(site):
    """lq_audit and linmix_audit audit the counters / Privatizer a plug-in's agent exposes
    (``regularizer``; ``reg_p``, ``reg_r``); C1 and Z1 give them rows of their own. A plug-in
    stating Private-OFU-RL's calibration while holding half its σ's is accounted from the
    σ's it holds (above ε: refused before any job runs) and its C1 row is not reproduced."""
    from dprl.analysis.aggregate import identity_columns
    from dprl.analysis.base import SOURCES
    from dprl.analysis.claims import claims_table
    from dprl.experiments.accounting import check_accounting

    lq_regret = _spec("lq_regret", "leaky_lq", {"name": "random_lq", "n": 2, "d": 1, "horizon": 5, "c_a": 0.8, "c_b": 0.6,
                                                "noise_radius": 0.05}, TIGHT, {"episodes": 50, "checkpoints": 4})
    assert accounted_epsilon(lq_regret) > 1.5 * TIGHT["epsilon"]
    assert "not private at the nominal epsilon" in check_accounting([("default", "mine", lq_regret)])[0]
    # the job records the same held σ's (what the runner refuses to write), not the stated ones
    ctx = JobContext(lq_regret)
    registry.job_function(registry.get_kind("lq_regret"))(ctx)
    assert ctx.accounted_epsilon == pytest.approx(accounted_epsilon(lq_regret))

    def audited(kind, alg, env, runs):
        spec = _spec(kind, alg, env, TIGHT, {"runs": runs, **({"confidence": 1e-3} if kind == "lq_audit" else {"alpha": 1e-3}),
                                             "printed_epsilons": [1.0]})
        rows = registry.job_function(registry.get_kind(kind))(JobContext(spec))
        labels = {"alg_label": alg, "env_label": env["name"], "privacy_label": "e10"}
        return rows.assign(**identity_columns({"spec": spec.to_dict(), "labels": labels}))

    stream = {"name": "audit_stream", "n": 1, "d": 1, "horizon": 2, "gamma": 1.0, "episodes": 4}
    lq = pd.concat([audited("lq_audit", a, stream, 2000) for a in ("my_lq", "leaky_lq")], ignore_index=True)
    mine_lq, leaky = lq[lq["algorithm"] == "my_lq"], lq[lq["algorithm"] == "leaky_lq"]
    assert (mine_lq["eps_exact"] <= mine_lq["claimed_epsilon"] * (1 + 1e-9)).all()
    assert (leaky["eps_exact"] > leaky["claimed_epsilon"]).any()
    users = {"name": "neighbouring_users", "K": 3, "d": 1, "H": 1}
    mix = audited("linmix_audit", "my_linmix", users, 2000)
    assert list(mix["mechanism"]) == ["central_privatizer"] and (mix["eps_exact"] <= 10.0 * (1 + 1e-9)).all()
    claims = claims_table({"lq_audit": lq, "linmix_audit": mix}, papers=("lq", "linmix"))
    mine = claims[claims["source"] == SOURCES[2]].set_index("claim")
    verdicts = {("Leaky" if "Leaky-LQ" in n else "My"): v for n, v in zip(mine.loc[["C1"], "note"], mine.loc[["C1"], "verdict"])}
    assert verdicts == {"My": "reproduced", "Leaky": "not reproduced"}
    assert mine.loc["Z1", "verdict"] == "reproduced" and "My-LinMix" in mine.loc["Z1", "note"]


def test_a_plugins_regime_is_its_measured_onset():
    """No burn-in is predicted for a plug-in: reached a decade past the median onset over
    seeds, the fit starting there; no onset in most seeds: not reached."""
    import numpy as np

    from dprl.analysis.regime import measured_regime

    g = pd.DataFrame({"seed": [0, 1, 2], "onset_episode": [100.0, 120.0, np.nan]})
    check = measured_regime(g, 2000)
    assert (check.state, check.fit_start) == ("reached", 110.0) and np.isnan(check.horizon_needed)  # median over the seeds with one
    late = measured_regime(g, 1000)
    assert (late.state, late.horizon_needed) == ("not reached", 1100.0)
    none = measured_regime(g.assign(onset_episode=np.nan), 1000)
    assert (none.state, none.horizon_needed) == ("not reached", 10000.0)
