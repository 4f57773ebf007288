"""`dprl validate` prints, per private setting of a rate experiment, the regime it will reach at
its configured horizon (`analysis/predicted_regime.py`), from the burn-in its jobs record,
computed before they run.

- Editing a horizon below the one a setting needs flips its printed regime to "not reached".
- The prediction is the jobs' own: on the committed default run (`paper_figures/tables`), the
  predicted T* at each job's horizon is its recorded `burn_in_episodes`, the fixed point without
  the margin its `horizon_needed`; and no group predicted "reached" was measured otherwise by its
  paper's regime function (the margin is the largest measured-over-predicted burn-in so far).
"""

from __future__ import annotations

import copy
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from dprl.agents.regime import burn_in_episodes as fixed_point
from dprl.analysis.claims.tabular import regime as tabular_regime
from dprl.analysis.predicted_regime import job_burn_in, no_escape_share, reached, setting_regimes
from dprl.analysis.regime import ONSET_DECADES
from dprl.cli import main
from dprl.config.load import load_config_file, read_config

TABLES = Path("paper_figures/tables")


@pytest.fixture(scope="module")
def default():
    return load_config_file("config.yaml", "default").experiments


def _section(out: str, experiment: str) -> list[str]:
    """The regime lines ``dprl validate`` printed under ``experiment``'s line."""
    lines = out.splitlines()
    start = next(i for i, line in enumerate(lines) if line.split()[:1] == [experiment])
    rest = lines[start + 1:]
    return rest[:next((i for i, line in enumerate(rest) if not line.startswith(" ")), len(rest))]


def _validate(path: Path, capsys) -> str:
    capsys.readouterr()
    assert main(["validate", "--config", str(path), "--preset", "default"]) == 0
    return capsys.readouterr().out


def _reached_setting(default, horizon_in_settings: bool):
    """The first experiment of ``default`` with a setting predicted "reached" whose horizon is
    the ``episodes`` setting (else an environment parameter), and that setting."""
    for name, exp in default.items():
        specs = [j.spec for j in exp.jobs]
        if not specs or ("episodes" in specs[0].settings) != horizon_in_settings:
            continue
        reached = [r for r in setting_regimes(specs) if r.reached]
        if reached:
            return name, reached[0]
    pytest.fail("no setting of the default preset is predicted inside its regime")


@pytest.mark.parametrize("horizon_in_settings", [True, False], ids=["episodes setting", "environment T"])
def test_validate_regime_flips_when_the_horizon_is_edited_below_the_needed_one(default, tmp_path, capsys,
                                                                               horizon_in_settings):
    name, setting = _reached_setting(default, horizon_in_settings)
    raw = read_config(str(Path("config.yaml").resolve()))  # its preset files named from the copy's folder too
    raw["experiments"] = {name: raw["experiments"][name]}  # one experiment: validate stays quick
    original = tmp_path / "original.yaml"
    original.write_text(yaml.safe_dump(raw))
    label = setting.text().partition(":")[0]  # "eps=10" (and "delta=...")
    before = [line for line in _section(_validate(original, capsys), name) if f"{label}: " in line]
    assert before and f"{label}: reached (needs " in before[0], before

    edited = copy.deepcopy(raw)
    exp = edited["experiments"][name]
    shorter = max(int(setting.needed / 2), 1)  # half the needed horizon: outside by the criterion
    if horizon_in_settings:
        exp["settings"]["episodes"] = shorter
    else:  # the family tuned to its horizon: every environment at the shorter T (K)
        key = setting.symbol
        exp["environments"] = [{**e, key: max(shorter, _smallest_valid(e))} for e in exp["environments"] if key in e]
    path = tmp_path / "edited.yaml"
    path.write_text(yaml.safe_dump(edited))
    after = [line for line in _section(_validate(path, capsys), name) if f"{label}: " in line]
    assert after and f"{label}: not reached" in after[0] and f"largest {setting.symbol} " in after[0], after


def _smallest_valid(env: dict) -> int:
    """The smallest T the family hard at T accepts (its gap gap_scale·sqrt(n·m/T) at most 1/2)."""
    return math.ceil(4 * float(env.get("gap_scale", 1.0)) ** 2 * env.get("n", 2) * env.get("m", 1))


def test_settings_without_a_prediction_print_nothing(default):
    """Non-private jobs (UBEV's tabular_gaps in default) and kinds without a rate claim (the
    oracle sweep, policy evaluation's batch) have no regime line."""
    for name in ("tabular_gaps", "lq_oracle", "pe_batch"):
        assert setting_regimes([j.spec for j in default[name].jobs]) == [], name


def _committed_groups(default, experiment: str):
    """The committed table's private groups (algorithm, instance, privacy level) with the
    config's job specs of each seed, matched by labels, seed and the parameters the table records."""
    df = pd.read_csv(TABLES / f"{experiment}.csv")
    jobs = {(j.labels["alg_label"], j.labels["env_label"], j.labels["privacy_label"], j.spec.seed): j.spec
            for j in default[experiment].jobs if j.spec.privacy is not None}
    for key, g in df[df["calibration"] != "none"].groupby(["alg_label", "env_label", "privacy_label"]):
        last = g.sort_values("episode").groupby("seed").tail(1)
        specs = []
        for r in last.to_dict("records"):
            spec = jobs.get((*key, r["seed"]))
            recorded = {c: r[c] for c in r if c.startswith(("env.", "alg.")) and pd.notna(r[c])}
            values = {**{f"env.{k}": v for k, v in (spec.environment.items() if spec else ())},
                      **{f"alg.{k}": v for k, v in (spec.algorithm.items() if spec else ())}}
            if spec is not None and all(values.get(c) == v for c, v in recorded.items()):
                specs.append((spec, r))
        if specs:
            yield key, g, specs


@pytest.mark.parametrize("experiment", ["tabular_hard", "tabular_regret", "tabular_regret_eps1", "tabular_pac", "beyond_hard"])
def test_prediction_is_what_the_committed_run_recorded_and_never_reached_where_it_was_not(default, experiment):
    groups = list(_committed_groups(default, experiment))
    assert len(groups) >= 2, f"{experiment}: the committed table no longer matches config.yaml's default jobs"
    wrong = []
    for key, g, specs in groups:
        shares = []
        for i, (spec, row) in enumerate(specs):
            b = job_burn_in(spec)
            assert b is not None and b.horizon == row["episode"], (key, spec.seed)
            assert b.t_star(b.horizon) == pytest.approx(row["burn_in_episodes"], rel=1e-9), (key, spec.seed)
            if i == 0:  # the job's horizon_needed: the same fixed point without the margin
                assert fixed_point(b.t_star, 10**ONSET_DECADES) == pytest.approx(row["horizon_needed"], rel=1e-9), key
            shares.append(no_escape_share(spec, b))
        if reached(max(shares)) and tabular_regime(g).state != "reached":
            wrong.append((key, max(shares), tabular_regime(g).state))
    assert not wrong, f"predicted reached, measured otherwise: {wrong}"


def test_margin_decides_both_ways_on_the_committed_run(default):
    """On tabular_hard the prediction says both: ε = 0.1 outside (its privacy term dominates at
    every T run) and ε = 10 inside at T = 8e6 (V9's rows), as the committed run measured."""
    states = {}
    for key, g, specs in _committed_groups(default, "tabular_hard"):
        share = max(no_escape_share(s, job_burn_in(s)) for s, _ in specs)
        states[key] = ("reached" if reached(share) else "not reached", tabular_regime(g).state)
    assert {p for p, m in states.values() if p == m} == {"reached", "not reached"}, states
    assert np.mean([p == m for p, m in states.values()]) >= 0.8, states


@pytest.mark.parametrize("t_star, printed", [(math.inf, "not reached (needs T > 1e15, largest T 1e3)"),
                                             (math.nan, None), (5.0, "reached (needs 89 <= T 1e3)")])
def test_a_burn_in_that_never_ends_is_not_reached_and_no_prediction_prints_nothing(default, monkeypatch, t_star, printed):
    """T* = inf (a pair never unclamps) is not reached at any horizon; NaN is no prediction; a
    constant T* = 5 needs 10·5·margin (PUCB's 1.78: 89) episodes."""
    import dprl.analysis.predicted_regime as pr
    from dprl.experiments.base import BurnIn

    spec = next(j.spec for j in default["tabular_regret"].jobs if j.spec.privacy is not None)
    monkeypatch.setattr(pr, "job_burn_in", lambda s: BurnIn(1000, lambda k: t_star))
    out = setting_regimes([spec])
    assert [r.text().partition(": ")[2] for r in out] == ([] if printed is None else [printed])
