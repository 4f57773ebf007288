"""What a new user meets writing a tabular plug-in from the documentation alone (docs/plugins.md): a preset they did
not ask for must not block the one they did, a private plug-in that does not release through
dprl's counters is refused by the audit before any job and its rows say its privacy is
self-declared, every plug-in row names the plug-in, its declared colour is drawn, and a
broken factory or policy is reported with the key, the entry point and the first line of
the error. The plug-ins are planted in a temporary site directory (``plugin_site``)."""

from __future__ import annotations

import shlex
import sys

import pandas as pd
import pytest

from dprl.config import load
from dprl.config.load import ConfigError, load_config
from dprl.experiments import registry
from dprl.runner.job import JobContext
from plugin_site import install_dist

PLANTED = '''
import numpy as np
from dprl.agents.protocol import BuiltAgent
from dprl.experiments.base import Algorithm, Param


class Uniform:
    """Plays action 0 everywhere (a valid, non-learning tabular step agent)."""

    def __init__(self, env, as_float=False):
        self.pi = np.zeros((env.H, env.S), dtype=float if as_float else np.int64)

    def policy(self):
        return self.pi

    def observe(self, states, actions, rewards):
        pass


class SelfCalibration:
    """A calibration stated by the plug-in itself (no dprl noise objects on its agent)."""

    def __init__(self, privacy):
        self.accounted_epsilon = privacy.epsilon


def build_uniform(params, privacy, env, n_episodes, agent_rng, noise_rng):
    return BuiltAgent(Uniform(env), None)


def build_self_declared(params, privacy, env, n_episodes, agent_rng, noise_rng):
    return BuiltAgent(Uniform(env), SelfCalibration(privacy))


def build_raises(params, privacy, env, n_episodes, agent_rng, noise_rng):
    raise RuntimeError("the bonus table needs S >= 4\\nsecond line of detail")


def build_float_policy(params, privacy, env, n_episodes, agent_rng, noise_rng):
    return BuiltAgent(Uniform(env, as_float=True), None)


SLOW = Algorithm("slow_walker", "none", {}, setting="tabular", factory="planted_plugins:build_uniform",
                 label="Slow Walker", colour="#17becf")
SELF_DECLARED = Algorithm("self_declared", "pure", {"beta": Param(0.05)}, setting="tabular",
                          factory="planted_plugins:build_self_declared", label="Self Declared", colour="#e377c2",
                          baseline="ubev")
RAISES = Algorithm("raises_at_build", "pure", {}, setting="tabular", factory="planted_plugins:build_raises",
                   label="Raises", colour="#7f7f7f", baseline="ubev")
RAISES_NONPRIVATE = Algorithm("raises_nonprivate", "none", {}, setting="tabular", factory="planted_plugins:build_raises",
                              label="Raises Too", colour="#8c564b")
FLOAT_POLICY = Algorithm("float_policy", "none", {}, setting="tabular", factory="planted_plugins:build_float_policy",
                         label="Float Policy", colour="#bcbd22")
'''

ENTRY_POINTS = {"slow_walker": "planted_plugins:SLOW", "self_declared": "planted_plugins:SELF_DECLARED",
                "raises_at_build": "planted_plugins:RAISES",
                "raises_nonprivate": "planted_plugins:RAISES_NONPRIVATE", "float_policy": "planted_plugins:FLOAT_POLICY"}


@pytest.fixture
def site(tmp_path, monkeypatch):
    """A site directory holding the planted plug-ins as ``pip install`` leaves a package."""
    site = tmp_path / "site"
    site.mkdir()
    (site / "planted_plugins.py").write_text(PLANTED)
    install_dist(site, "planted-plugins", "0.3", ENTRY_POINTS)
    monkeypatch.syspath_prepend(str(site))
    registry.refresh()
    yield site
    sys.modules.pop("planted_plugins", None)
    registry.refresh()


def _config(algs: list[dict], kind: str = "tabular_regret", eps: float = 1.0) -> dict:
    return {"experiments": {"mine": {
        "kind": kind, "algorithms": algs, "environments": [{"name": "riverswim", "S": 3, "H": 3}],
        "privacy": {"epsilon": [eps], "calibration": ["tight"]}, "settings": {"episodes": 300, "checkpoints": 5},
        "seeds": {"count": 1}}}}


def test_a_plugin_over_the_limits_of_another_preset_warns_there_and_runs_in_the_one_asked_for(site, caplog, monkeypatch):
    """A plug-in is budgeted at PLUGIN_SLOWDOWN× the compiled loop in every preset: a full
    run over ``limits.job_hours`` must not block ``--preset smoke``; it is a warning naming
    the preset, the experiment and the override that leaves the plug-in out of it."""
    cfg = _config([{"name": "pucb"}, {"name": "slow_walker"}])
    cfg["experiments"]["mine"]["presets"] = {"full": {"settings": {"episodes": 10**10}}}
    monkeypatch.setattr(load, "_WARNED", set())  # logged once per process
    with caplog.at_level("WARNING", logger="dprl.config.load"):
        jobs = load_config(cfg, "smoke").experiments["mine"].jobs
        load_config(cfg, "smoke")  # `dprl validate` loads the config more than once: warned once
    assert {j.spec.algorithm["name"] for j in jobs} == {"pucb", "slow_walker"}
    warned = [r.getMessage() for r in caplog.records]
    assert len(warned) == 1 and "preset 'full'" in warned[0] and "experiment 'mine'" in warned[0]
    assert "experiments.mine.presets.full.algorithms: [{name: pucb}]" in warned[0]
    with pytest.raises(ConfigError, match=r"presets\.full\.settings.*limits\.job_hours.*presets\.full\.algorithms: \[\{name: pucb\}\]"):
        load_config(cfg, "full")
    # the override the warning names makes the full preset valid
    cfg["experiments"]["mine"]["presets"]["full"]["algorithms"] = [{"name": "pucb"}]
    assert {j.spec.algorithm["name"] for j in load_config(cfg, "full").experiments["mine"].jobs} == {"pucb"}


def _problems(cfg: dict, preset: str = "default") -> list[str]:
    from dprl.experiments.accounting import check_accounting

    return check_accounting((preset, name, job.spec) for name, exp in load_config(cfg, preset).experiments.items()
                            for job in exp.jobs)


def test_a_plugin_not_on_dprls_counters_is_refused_by_the_audit_before_any_job(site):
    """``tabular_audit`` examines dprl's tree counters: a private plug-in whose agent holds
    none (no ``source`` that is a PrivateStats) is refused at validation with the reason,
    not at run time; in a regret experiment its self-declared calibration is accepted."""
    audit = {"experiments": {"mine": {"kind": "tabular_audit", "algorithms": [{"name": "self_declared"}],
                                      "environments": [{"name": "pucb_counters"}], "privacy": {"epsilon": [1.0]},
                                      "settings": {"runs": 1000}, "seeds": {"count": 1}}}}
    problems = _problems(audit)
    assert problems and all("experiments.mine.algorithms: name=self_declared" in p and "tabular_audit cannot examine it" in p
                            and "PrivateStats" in p and "self-declared" in p for p in problems)
    assert _problems(_config([{"name": "self_declared"}])) == []


def test_a_plugin_whose_factory_raises_is_refused_naming_key_entry_point_and_first_line(site):
    from dprl.config.privacy_check import check_privacy_accounting

    raw = _config([{"name": "raises_at_build"}])
    with pytest.raises(ConfigError) as err:
        check_privacy_accounting(raw, "default")
    text = str(err.value)
    assert "experiments.mine.algorithms" in text and "'raises_at_build'" in text
    assert "plug-in entry point raises_at_build = planted_plugins:RAISES (group dprl.algorithms, package planted-plugins 0.3)" in text
    assert "factory planted_plugins:build_raises raised RuntimeError: the bonus table needs S >= 4" in text
    assert "second line" not in text and "Traceback" not in text
    # a non-private plug-in has no accounting to run, but validation builds it all the same
    with pytest.raises(ConfigError) as err:
        check_privacy_accounting(_config([{"name": "ubev"}, {"name": "raises_nonprivate"}]), "default")
    text = str(err.value)
    assert "experiments.mine.algorithms" in text and "name=raises_nonprivate" in text and "RuntimeError: the bonus table needs S >= 4" in text
    check_privacy_accounting(_config([{"name": "ubev"}, {"name": "slow_walker"}]), "default")  # one that builds passes


def _regret_table(names: list[str], eps: list[float], kind: str = "tabular_regret") -> pd.DataFrame:
    """The aggregated table of ``names`` on RiverSwim (300 episodes, one seed) at the tight
    ``eps``, run through the kind's job function."""
    from dprl.analysis.aggregate import identity_columns

    cfg = _config([{"name": n} for n in names], kind)
    cfg["experiments"]["mine"]["privacy"]["epsilon"] = eps
    frames = []
    for job in load_config(cfg, "default").experiments["mine"].jobs:
        rows = registry.job_function(registry.get_kind(kind))(JobContext(job.spec))
        frames.append(rows.assign(**identity_columns({"spec": job.spec.to_dict(), "labels": job.labels})))
    return pd.concat(frames, ignore_index=True)


def test_a_private_plugins_rows_say_its_privacy_is_self_declared_when_nothing_audited_it(site):
    """No audit table has a row of the plug-in: every plug-in row says "privacy self-declared:
    not audited"; with an audit row of it (as tabular_audit gives a plug-in on dprl's
    counters) they do not; the paper's rows never do."""
    from dprl.analysis.base import SOURCES
    from dprl.analysis.claims import NOT_AUDITED, claims_table

    df = _regret_table(["ubev", "pucb", "self_declared"], [1.0, 10.0])
    claims = claims_table({"tabular_regret": df}, papers=("tabular",))
    mine = claims[claims["source"] == SOURCES[2]]
    assert len(mine) > 0 and mine["note"].str.contains(NOT_AUDITED, regex=False).all()
    assert not claims[claims["source"] != SOURCES[2]]["note"].fillna("").str.contains(NOT_AUDITED, regex=False).any()
    audited = pd.DataFrame({"algorithm": ["self_declared"], "calibration": ["tight"]})
    again = claims_table({"tabular_regret": df, "tabular_audit": audited}, papers=("tabular",))
    assert not again["note"].fillna("").str.contains(NOT_AUDITED, regex=False).any()


# the claims that give plug-in rows, by setting (docs/plugins.md)
PLUGIN_CLAIMS = {"tabular": ("V1", "V3", "V8", "V9"), "lq": ("C1", "C2", "C3"), "linmix": ("Z1", "Z2", "Z3", "Z7", "Z8")}


def _paper_labels() -> set[str]:
    """The display names of the papers' private algorithms (and mechanisms)."""
    return {a.display for k in registry.kinds().values() for a in k.algorithms.values() if a.privacy != "none" and not a.factory}


def test_every_plugin_statement_names_the_plugin_and_no_papers_algorithm(site):
    from dprl.analysis.base import SOURCES
    from dprl.analysis.claims import all_claims, claims_table, plugin_statement

    labels = _paper_labels()
    assert {"PUCB", "Private-OFU-RL", "Private-LinOpt-VI", "Private-LinOpt-PO"} <= labels
    by_id = {c.id: c for c in all_claims()}
    assert {c.id for c in all_claims() if c.plugin_statement is not None} == {i for ids in PLUGIN_CLAIMS.values() for i in ids}
    for ids in PLUGIN_CLAIMS.values():
        for cid in ids:
            text = by_id[cid].statement_for("Self Declared", "UBEV")
            assert "Self Declared" in text and not [lb for lb in labels if lb in text], (cid, text)
    for cid in PLUGIN_CLAIMS["tabular"]:  # through the rows' columns, with the planted plug-in's declaration
        text = plugin_statement(by_id[cid], "self_declared")["statement"]
        assert "Self Declared" in text and "UBEV" in text or cid != "V3"
        assert not [lb for lb in labels if lb in text], (cid, text)
    df = _regret_table(["ubev", "pucb", "self_declared"], [1.0, 10.0])
    mine = claims_table({"tabular_regret": df}, papers=("tabular",))
    mine = mine[mine["source"] == SOURCES[2]]
    assert len(mine) > 0 and mine["statement"].str.contains("Self Declared", regex=False).all()
    assert not [lb for lb in labels for s in mine["statement"] if lb in s]


def _lines_of(fig, text: str) -> list:
    """The lines of the series labelled with ``text`` (error-bar series: their data line)."""
    lines = [ln for ax in fig.axes for ln in ax.get_lines() if text in str(ln.get_label())]
    bars = [c.lines[0] for ax in fig.axes for c in ax.containers if text in str(c.get_label()) and c.lines[0] is not None]
    return lines + bars


def test_figures_draw_a_plugin_in_its_declared_colour(site):
    """``tabular_regret_loglog`` and ``tabular_hard_regret`` colour private series by ε: a
    plug-in at ε = 10 was drawn in PUCB ε=10's colour; it is drawn in the colour it declares."""
    import matplotlib.colors as mcolors
    import matplotlib.pyplot as plt

    from dprl.analysis.aggregate import identity_columns
    from dprl.analysis.figures.tabular import hard_regret, regret_loglog
    from dprl.privacy.setting import PrivacySetting
    from dprl.runner.job import JobSpec

    colour = registry.declared("algorithms", "colour")["self_declared"]
    assert colour == "#e377c2"
    fig = regret_loglog({"tabular_regret": _regret_table(["pucb", "self_declared"], [10.0])})
    mine, pucb = _lines_of(fig, "Self Declared"), _lines_of(fig, "PUCB")
    assert mine and pucb and {mcolors.to_hex(ln.get_color()) for ln in mine} == {colour}
    assert colour not in {mcolors.to_hex(ln.get_color()) for ln in pucb}
    plt.close(fig)

    def job(name: str, T: int) -> pd.DataFrame:
        priv = PrivacySetting(epsilon=10.0, calibration="tight")
        env = {"name": "lowerbound_horizon", "n": 2, "m": 1, "H": 2, "T": T, "gap_scale": 10.0}
        alg = {"name": name, **registry.get_kind("tabular_hard").algorithms[name].defaults()}
        spec = JobSpec("tabular_hard", "tabular_hard", alg, env, priv, {"checkpoints": 4}, 0)
        labels = {"alg_label": name, "env_label": f"lbh_T{T}", "privacy_label": "eps10"}
        return registry.job_function(registry.get_kind("tabular_hard"))(JobContext(spec)).assign(
            **identity_columns({"spec": spec.to_dict(), "labels": labels}))

    table = pd.concat([job(a, T) for a in ("pucb", "self_declared") for T in (1000, 2000)], ignore_index=True)
    fig = hard_regret({"tabular_hard": table})
    mine = _lines_of(fig, "Self Declared")
    assert mine and {mcolors.to_hex(ln.get_color()) for ln in mine} == {colour}
    plt.close(fig)


def _rule_shell(rule_text: str, **values: str) -> str:
    """The shell command of a rule of ``workflow/rules/simulate.smk`` with its placeholders
    filled (as Snakemake fills them: ``{x:q}`` shell-quoted, ``{{``/``}}`` braces)."""
    import re

    parts = re.findall(r'"((?:[^"\\]|\\.)*)"', rule_text.split("shell:", 1)[1].split("\n\n", 1)[0])
    template = "".join(parts)
    return re.sub(r"\{\{|\}\}|\{([A-Za-z_.]+)(:q)?\}",
                  lambda m: m[0][0] if m[1] is None else shlex.quote(values[m[1]]) if m[2] else values[m[1]], template)


def test_a_failing_job_names_itself_its_log_and_the_error_on_the_console(site, tmp_path):
    """A float policy fails inside the job: the rule's command (run through bash as Snakemake
    runs it) prints, on the console, one line naming the job, its log and the error's first
    line; the traceback is in the log."""
    import json
    import os
    import subprocess
    from pathlib import Path

    job = load_config(_config([{"name": "float_policy"}]), "default").experiments["mine"].jobs[0]
    rules = (Path(__file__).resolve().parents[2] / "workflow" / "rules" / "simulate.smk").read_text()
    out, log = tmp_path / "jobs" / "x.csv", tmp_path / "logs" / "x.log"
    log.parent.mkdir()
    cmd = _rule_shell(rules.split("rule simulate:", 1)[1], DPRL=f"{shlex.quote(sys.executable)} -m dprl",
                      **{"params.payload": json.dumps({"spec": job.spec.to_dict(), "labels": job.labels}, default=float),
                         "output": str(out), "log": str(log)})
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run(["bash", "-c", f"set -euo pipefail; {cmd}"], env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode != 0 and not out.exists()
    console = done.stderr.strip().splitlines()
    assert len(console) == 1, done.stderr
    assert console[0].startswith(f"dprl: error: job {out} failed, log {log}: ValueError: episode 1: policy() must return")
    assert "Traceback" in log.read_text()
