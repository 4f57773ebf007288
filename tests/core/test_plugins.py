"""Plug-in algorithms (entry-point group ``dprl.algorithms``): the worked example of
``tests/plugin_example`` installed into a temporary site directory (its package and a
dist-info with the entry points of its ``pyproject.toml``, which is what ``pip install``
leaves), then validated, run, accounted and drawn exactly like a built-in; broken, leaky
and misplaced plug-ins are refused before any job runs."""

from __future__ import annotations

import sys

import numpy as np
import pandas as pd
import pytest

from dprl.config.load import ConfigError, load_config
from dprl.experiments import registry
from dprl.experiments.accounting import accounted_epsilon, check_accounting
from dprl.runner.job import JobContext
from plugin_site import install_dist, install_example

LEAKY = '''
from dprl.agents.protocol import BuiltAgent
from dprl.agents.tabular.statistics import PrivateStats
from dprl.experiments.base import Algorithm, Param
from dprl_example_plugin.agent import HoeffdingUCBVI

LEAKY = Algorithm("leaky_ucbvi", "pure", {"beta": Param(0.05)}, setting="tabular", factory="leaky_plugin:build",
                  label="Leaky-UCBVI", colour="#8c564b")
NOT_AN_ALGORITHM = 42


def build(params, privacy, env, n_episodes, agent_rng, noise_rng):
    # half the Laplace scale PUCB's calibration asks for: accounted at 2 ε
    source = PrivateStats(env.S, env.A, env.H, n_episodes, privacy, params["beta"], noise_rng, noise_multiplier=0.5)
    return BuiltAgent(HoeffdingUCBVI(source, params["beta"], 1.0, env.n_actions), source.calibration())
'''


@pytest.fixture
def site(tmp_path, monkeypatch):
    """A site directory holding the example plug-in, a leaky one, and two broken entry points."""
    site = tmp_path / "site"
    site.mkdir()
    install_example(site)
    (site / "leaky_plugin.py").write_text(LEAKY)
    install_dist(site, "leaky-plugin", "0.2", {"leaky_ucbvi": "leaky_plugin:LEAKY", "not_an_algorithm": "leaky_plugin:NOT_AN_ALGORITHM",
                                               "missing_module": "no_such_module:ALG"})
    monkeypatch.syspath_prepend(str(site))
    registry.refresh()
    yield site
    for mod in [m for m in sys.modules if m.startswith(("dprl_example_plugin", "leaky_plugin"))]:
        sys.modules.pop(mod)
    registry.refresh()


def _config(alg: dict, kind: str = "tabular_regret", env: dict | None = None, eps: float = 1.0) -> dict:
    return {"experiments": {"mine": {
        "kind": kind, "algorithms": [alg], "environments": [env or {"name": "riverswim", "S": 3, "H": 3}],
        "privacy": {"epsilon": [eps], "calibration": ["tight"]}, "settings": {"episodes": 300, "checkpoints": 5},
        "seeds": {"count": 2}}}}


def _jobs(cfg: dict):
    return load_config(cfg, "default").experiments["mine"].jobs


def test_the_config_names_a_plugin_like_a_builtin(site):
    jobs = _jobs(_config({"name": "hoeffding_ucbvi", "bonus_scale": [0.5, 1.0]}))
    assert len(jobs) == 4 and jobs[0].spec.algorithm == {"name": "hoeffding_ucbvi", "beta": 0.05, "bonus_scale": 0.5}
    with pytest.raises(ConfigError, match=r"algorithms\[0\]\.bonus_scale: must be > 0"):
        _jobs(_config({"name": "hoeffding_ucbvi", "bonus_scale": -1.0}))
    with pytest.raises(ConfigError, match=r"algorithms\[0\]\.bonsu_scale: unknown parameter.*did you mean 'bonus_scale'"):
        _jobs(_config({"name": "hoeffding_ucbvi", "bonsu_scale": 1.0}))
    with pytest.raises(ConfigError, match=r"unknown algorithm 'hoeffding_ucbiv'.*did you mean 'hoeffding_ucbvi'.*dprl\.algorithms"):
        _jobs(_config({"name": "hoeffding_ucbiv"}))
    # the plug-in joins every kind of its setting that runs plug-ins, and no other
    open_kinds = {k.name for k in registry.kinds().values() if "hoeffding_ucbvi" in k.algorithms}
    assert open_kinds == {"tabular_regret", "tabular_pac", "tabular_hard", "tabular_scaling", "tabular_audit"}
    with pytest.raises(ConfigError, match=r"plug-in algorithm 'hoeffding_ucbvi' \(setting 'tabular'\) does not run in experiment kind 'lq_regret'"):
        _jobs({"experiments": {"mine": {"kind": "lq_regret", "algorithms": [{"name": "hoeffding_ucbvi"}],
                                        "environments": [{"name": "double_integrator"}], "seeds": {"count": 1}}}})


@pytest.mark.parametrize("name, why", [
    ("not_an_algorithm", r"is a int, not a dprl\.experiments\.base\.Algorithm"),
    ("missing_module", r"failed to load: ModuleNotFoundError"),
])
def test_a_broken_plugin_is_refused_naming_its_entry_point_and_package(site, name, why):
    with pytest.raises(ConfigError, match=rf"algorithm '{name}' cannot run: plug-in entry point {name} = \S+ "
                                          rf"\(group dprl\.algorithms, package leaky-plugin 0\.2\) {why}"):
        _jobs(_config({"name": name}))
    assert len(_jobs(_config({"name": "hoeffding_ucbvi"}))) == 2  # configs that do not name it still run


def test_a_plugin_job_is_deterministic_exact_and_accounted_from_its_own_noise(site):
    garnet = {"name": "garnet", "S": 4, "A": 2, "H": 3, "branching": 2}
    spec = _jobs(_config({"name": "hoeffding_ucbvi"}, env=garnet))[0].spec
    run = registry.job_function(registry.get_kind(spec.kind))
    a, b = JobContext(spec), JobContext(spec)
    da, db = run(a), run(b)
    pd.testing.assert_frame_equal(da, db)
    assert list(da["episode"]) == sorted(da["episode"]) and da["episode"].iloc[-1] == 300
    assert np.all(np.diff(da["regret"]) >= -1e-12) and np.isfinite(da["regret"]).all()
    # accounted from the counters its built agent holds (PUCB's calibration at ε = 1)
    assert a.accounted_epsilon == pytest.approx(1.0) and accounted_epsilon(spec) == pytest.approx(1.0)
    assert check_accounting([("default", "mine", spec)]) == []
    other = _jobs(_config({"name": "hoeffding_ucbvi"}, env=garnet))[1].spec  # seed 1: its own instance and streams
    assert not run(JobContext(other))["regret"].equals(da["regret"])


def test_a_plugin_accounted_above_its_nominal_epsilon_is_refused(site):
    spec = _jobs(_config({"name": "leaky_ucbvi"}))[0].spec
    problems = check_accounting([("default", "mine", spec)])
    assert len(problems) == 1 and "leaky_ucbvi" in problems[0] and "is 2 > 1" in problems[0]


def test_the_generic_runner_gives_the_compiled_loops_numbers_on_the_builtin_agent():
    """PUCB and UBEV follow the tabular step protocol: run step by step through the plug-in
    runner, they give the compiled loop's table (same streams, exact regret)."""
    from dprl.agents.plugin import run_tabular_episodes
    from dprl.agents.tabular.build import build_agent
    from dprl.agents.tabular.episodes import run_episodes
    from dprl.envs.tabular import garnet
    from dprl.experiments.tabular.spec import PUCB, UBEV
    from dprl.privacy.setting import PrivacySetting

    env = garnet(np.random.default_rng(0), S=4, A=2, H=3, branching=2)
    marks = np.array([1, 10, 100, 400])
    for decl, privacy in ((UBEV, None), (PUCB, PrivacySetting(epsilon=10.0, calibration="tight"))):
        tables = []
        for runner in (run_episodes, run_tabular_episodes):
            built = build_agent(decl.name, decl.defaults(), privacy, env, 400, np.random.default_rng(1), np.random.default_rng(2))
            tables.append(runner(built, env, 400, np.random.default_rng(3), marks, alpha=0.1))
        pd.testing.assert_frame_equal(tables[0], tables[1], rtol=1e-12, atol=1e-12)


def test_the_runner_refuses_a_policy_of_the_wrong_shape_or_action():
    from dprl.agents.plugin import run_tabular_episodes
    from dprl.agents.protocol import BuiltAgent
    from dprl.envs.tabular import riverswim

    env = riverswim(3, 2)

    class Bad:
        def __init__(self, pi):
            self.pi = pi

        def policy(self):
            return self.pi

        def observe(self, *trajectory):
            pass

    for pi, match in ((np.zeros((3, 2), dtype=int), r"episode 1: policy\(\) must return an \(H, S\) = \(2, 3\)"),
                      (np.full((2, 3), 5), "outside a state's available actions")):
        with pytest.raises(ValueError, match=match):
            run_tabular_episodes(BuiltAgent(Bad(pi), None), env, 10, np.random.default_rng(0), np.array([10]))


def test_figures_show_a_plugin_with_its_own_name_and_colour(site):
    from dprl.analysis import plotting as P

    assert P.algorithm_name("hoeffding_ucbvi") == "Hoeffding UCB-VI (example plug-in)" and P.algorithm_color("hoeffding_ucbvi") == "#9467bd"
    assert P.series_label("hoeffding_ucbvi", 1.0, "tight") == "Hoeffding UCB-VI (example plug-in) ε=1 (tight)"



def test_claims_for_any_algorithm_of_the_setting_get_plugin_rows_reported_apart(site):
    """V8 (Theorem 6 bounds every ε-JDP algorithm) and V9 (the two-sided √T exponent on the
    family hard at T) give the plug-in its own rows, marked 'plug-in' and not counted among
    the papers' claims."""
    from dprl.analysis.aggregate import identity_columns
    from dprl.analysis.base import SOURCES, findings, paper_claims
    from dprl.analysis.claims import claims_table, to_markdown
    from dprl.experiments.tabular.jobs import run_hard
    from dprl.privacy.setting import PrivacySetting
    from dprl.runner.job import JobSpec

    def job(name: str, T: int, seed: int) -> pd.DataFrame:
        priv = PrivacySetting(epsilon=10.0, calibration="tight")
        env = {"name": "lowerbound_horizon", "n": 2, "m": 1, "H": 2, "T": T, "gap_scale": 10.0}  # V9 reads gap scales >= 10
        alg = {"name": name, **registry.get_kind("tabular_hard").algorithms[name].defaults()}
        spec = JobSpec("tabular_hard", "tabular_hard", alg, env, priv, {"checkpoints": 4}, seed)
        labels = {"alg_label": name, "env_label": f"lbh_T{T}", "privacy_label": "eps10"}
        return run_hard(JobContext(spec)).assign(**identity_columns({"spec": spec.to_dict(), "labels": labels}))

    table = pd.concat([job(a, T, s) for a in ("pucb", "hoeffding_ucbvi") for T in (1000, 2000, 4000) for s in range(3)],
                      ignore_index=True)
    claims = claims_table({"tabular_hard": table}, papers=("tabular",))
    hard = claims[claims["claim"].isin(["V8", "V9"])]
    mine = hard[hard["source"] == SOURCES[2]]
    assert sorted(mine["claim"]) == ["V8", "V9"] and mine["note"].str.contains("Hoeffding UCB-VI").all()
    assert mine.loc[mine["claim"] == "V9", "note"].str.contains("no burn-in is predicted").all()
    # V9's rate is judged by the plug-in's measured onsets (V8's lower bound holds at every T: no regime)
    assert list(mine["regime"]) == ["n/a", "not reached"] and mine["verdict"].iloc[1] == "inconclusive"
    assert mine["statement"].str.contains("the regret of Hoeffding UCB-VI").all()
    # without PUCB, the paper's V8 row still stands (inconclusive), beside the plug-in's
    alone = claims_table({"tabular_hard": table[table["algorithm"] == "hoeffding_ucbvi"]}, papers=("tabular",))
    v8 = alone[alone["claim"] == "V8"]
    assert list(v8["source"]) == [SOURCES[0], SOURCES[2]] and v8["verdict"].iloc[0] == "inconclusive"
    assert (hard.loc[hard["source"] == SOURCES[0], "note"].str.contains("PUCB")).all()
    assert len(paper_claims(hard)) == 2 and len(findings(hard)) == 2
    assert "rows measure installed plug-in algorithms: each sits under the claim it tests" in to_markdown(claims)


def _regret_table(names: list[str], eps: list[float]) -> pd.DataFrame:
    """The aggregated ``tabular_regret`` table of ``names`` on RiverSwim (300 episodes, two
    seeds) at the tight ``eps``, run through the kind's job function."""
    from dprl.analysis.aggregate import identity_columns

    cfg = _config({"name": names[0]})
    cfg["experiments"]["mine"]["algorithms"] = [{"name": n} for n in names]
    cfg["experiments"]["mine"]["privacy"]["epsilon"] = eps
    frames = []
    for job in _jobs(cfg):
        rows = registry.job_function(registry.get_kind("tabular_regret"))(JobContext(job.spec))
        labels = {"alg_label": job.spec.algorithm["name"], "env_label": "riverswim",
                  "privacy_label": "np" if job.spec.privacy is None else f"eps{job.spec.epsilon:g}"}
        frames.append(rows.assign(**identity_columns({"spec": job.spec.to_dict(), "labels": labels})))
    return pd.concat(frames, ignore_index=True)


def test_v3_measures_a_plugins_privacy_cost_against_the_baseline_it_declares(site):
    """The example declares UBEV its baseline: V3 gives it its own rows (cost slope in T,
    exponent in ε), reported apart; PUCB's paper rows are unchanged by its presence."""
    from dprl.analysis.base import SOURCES
    from dprl.analysis.claims import claims_table
    from dprl.analysis.selection import privacy_costs

    table = _regret_table
    df = table(["ubev", "pucb", "hoeffding_ucbvi"], [1.0, 10.0])
    cost = privacy_costs(df, ["env_label", "seed", "episode"])
    assert set(cost["algorithm"]) == {"pucb", "hoeffding_ucbvi"} and set(cost["baseline"]) == {"ubev"}
    claims = claims_table({"tabular_regret": df}, papers=("tabular",))
    v3 = claims[claims["claim"] == "V3"]
    mine = v3[v3["source"] == SOURCES[2]]
    assert len(mine) == 2 and mine["note"].str.contains("Hoeffding UCB-VI").all()
    alone = claims_table({"tabular_regret": df[df["algorithm"] != "hoeffding_ucbvi"]}, papers=("tabular",))
    pd.testing.assert_frame_equal(v3[v3["source"] == SOURCES[0]].reset_index(drop=True),
                                  alone[alone["claim"] == "V3"].reset_index(drop=True))


def test_a_plugin_in_its_burn_in_is_not_reached_under_the_claim_it_tests_and_not_counted(site):
    """The example's 300 episodes on RiverSwim end inside its burn-in (no onset measured): V3's
    rows of it (cost slope in T, exponent in ε) are judged by its measured onset, ``not
    reached`` and inconclusive with the horizon they need (they were ``n/a`` with a verdict);
    they follow PUCB's V3 rows under V3's statement naming Hoeffding UCB-VI and its baseline, in
    claims.csv, claims.md and the HTML report, never among the package's findings, and the
    papers' totals are those of the table without the plug-in."""
    from dprl.analysis.base import SOURCES, claim_verdicts, paper_claims, verdict_totals
    from dprl.analysis.claims import claims_table, to_markdown
    from dprl.analysis.report_table import claims_html

    df = _regret_table(["ubev", "pucb", "hoeffding_ucbvi"], [1.0, 10.0])
    assert df.loc[df["algorithm"] == "hoeffding_ucbvi", "onset_episode"].isna().all()  # still in its burn-in at T = 300
    claims = claims_table({"tabular_regret": df}, papers=("tabular",))
    v3 = claims[claims["claim"] == "V3"].reset_index(drop=True)
    mine = v3[v3["source"] == SOURCES[2]]
    assert len(mine) == 2 and list(v3["source"]) == [SOURCES[0]] * (len(v3) - 2) + [SOURCES[2]] * 2  # after the paper's
    assert (mine["regime"] == "not reached").all() and (mine["verdict"] == "inconclusive").all()
    assert (mine["horizon_needed"] >= 10 * 300).all() and mine["note"].str.contains("measured outside its regime").all()
    assert mine["note"].str.contains("measured onset").all()
    statement = "the privacy cost Regret_Hoeffding UCB-VI (example plug-in) − Regret_UBEV is lower order in T and scales like 1/ε"
    assert (mine["statement"] == statement).all() and not mine["statement"].str.contains("PUCB").any()
    assert (v3.loc[v3["source"] == SOURCES[0], "statement"].str.contains("Regret_PUCB")).all()
    # claims.csv: V3's plug-in rows right after its paper rows, before the next claim's
    at = claims.index[claims["source"] == SOURCES[2]]
    assert list(claims.loc[at[0] - 1:at[-1] + 1, "claim"]) == ["V3"] * (len(at) + 1) + [claims.loc[at[-1] + 1, "claim"]]
    # not counted: the papers' totals are the table's without the plug-in
    alone = claims_table({"tabular_regret": df[df["algorithm"] != "hoeffding_ucbvi"]}, papers=("tabular",))
    assert verdict_totals(paper_claims(claims)) == verdict_totals(paper_claims(alone))
    assert claim_verdicts(paper_claims(claims)) == claim_verdicts(paper_claims(alone))
    text = to_markdown(claims)
    assert text.splitlines()[0].startswith(to_markdown(alone).splitlines()[0].split(";")[0])
    body, found = text.split("## Package findings")
    assert statement in body and "Hoeffding UCB-VI" not in found and "| V3 (plug-in) |" in body
    assert body.index("| **V3** |") < body.index("| **V3** (plug-in, not counted) |") < body.index("| **V5** |")
    html = claims_html(claims)
    assert html.index(statement) < html.index("Package findings: measured by this package")


def test_the_audit_examines_the_counters_a_plugin_holds_and_v1_flips_on_a_leaky_one(site):
    """tabular_audit audits a plug-in that releases through dprl's counters (its agent's
    ``source``); V1 gives it its own row, which a plug-in holding half the Laplace scale
    fails (exact ε 2ε under replacement), while the example passes."""
    from dprl.analysis.aggregate import identity_columns
    from dprl.analysis.claims import claims_table

    def audit(name: str) -> pd.DataFrame:
        cfg = {"experiments": {"mine": {
            "kind": "tabular_audit", "algorithms": [{"name": name}], "environments": [{"name": "pucb_counters", "S": 2, "A": 1, "H": 1, "T": 4}],
            "privacy": {"epsilon": [1.0], "calibration": ["tight"]}, "settings": {"runs": 2000}, "seeds": [0]}}}
        job = load_config(cfg, "default").experiments["mine"].jobs[0]
        assert check_accounting([("default", "mine", job.spec)]) == []  # audits record their own exact ε
        rows = registry.job_function(registry.get_kind("tabular_audit"))(JobContext(job.spec))
        labels = {"alg_label": name, "env_label": "counters", "privacy_label": "tight1"}
        return rows.assign(**identity_columns({"spec": job.spec.to_dict(), "labels": labels}))

    good, leaky = audit("hoeffding_ucbvi"), audit("leaky_ucbvi")
    assert list(good["mechanism"]) == ["counter", "episode_l1x2"] and (good["eps_exact"] <= 1.0 + 1e-9).all()
    np.testing.assert_allclose(leaky["eps_exact"], 2.0)
    claims = claims_table({"tabular_audit": pd.concat([good, leaky], ignore_index=True)}, papers=("tabular",))
    v1 = claims[(claims["claim"] == "V1") & (claims["source"] == "plug-in")].set_index("note")
    verdicts = {("Leaky" if "Leaky-UCBVI" in note else "example"): v for note, v in v1["verdict"].items()}
    assert verdicts == {"example": "reproduced", "Leaky": "not reproduced"}


def test_a_plugin_job_is_estimated_at_the_generic_runners_measured_slowdown(site):
    from dprl.config.estimate import PLUGIN_SLOWDOWN, STARTUP_SECONDS, estimate

    cfg = _config({"name": "hoeffding_ucbvi"})
    mine = estimate(_jobs(cfg)[0].spec)
    cfg["experiments"]["mine"]["algorithms"] = [{"name": "pucb"}]
    builtin = estimate(_jobs(cfg)[0].spec)
    assert mine.seconds - STARTUP_SECONDS == pytest.approx(PLUGIN_SLOWDOWN["tabular"] * (builtin.seconds - STARTUP_SECONDS))
    # Snakemake's runtime resource of its jobs (workflow/rules/common.smk), the built-in's unchanged
    from dprl.config.estimate import job_resources

    measured = {"mem_mb": 300, "runtime": 4, "seconds": 7.5}
    assert job_resources(measured, _jobs(_config({"name": "hoeffding_ucbvi"}))[0].spec) == {**measured, "runtime": 240}
    assert job_resources(measured, _jobs(cfg)[0].spec) == measured

