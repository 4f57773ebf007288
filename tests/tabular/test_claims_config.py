
import numpy as np
import pandas as pd
import pytest

from dprl.analysis.claims import tabular as claims
from dprl.config.load import ConfigError, load_config

CLAIM = {c.id: c for c in claims.CLAIMS}  # each claim, evaluated through its declaration


def _regret_table(power: float, cost_power_eps: float = -1.0) -> pd.DataFrame:
    rows = []
    rng = np.random.default_rng(0)
    for seed in range(8):
        for T in np.geomspace(100, 10**5, 12).round():
            base = 5 * T**power * (1 + 0.02 * rng.standard_normal())
            rows.append(dict(algorithm="ubev", env_label="g", alg_label="ubev", privacy_label="nonprivate", calibration="none",
                             epsilon=np.inf, seed=seed, episode=T, regret=base, t_exploit_possible=1.0))
            for eps in (1.0, 10.0):
                rows.append(dict(algorithm="pucb", env_label="g", alg_label="pucb", privacy_label=f"eps{eps}", calibration="tight",
                                 epsilon=eps, seed=seed, episode=T, regret=base + 100 * eps**cost_power_eps * np.log(T),
                                 t_exploit_possible=10.0))
    return pd.DataFrame(rows)


def test_v2_verdict_follows_the_slope():
    assert {r.verdict for r in CLAIM["V2"].evaluate({"tabular_regret": _regret_table(0.5)})} == {"reproduced"}
    assert {r.verdict for r in CLAIM["V2"].evaluate({"tabular_regret": _regret_table(1.0)})} == {"not reproduced"}


def test_v3_exponent_in_epsilon():
    res = CLAIM["V3"].evaluate({"tabular_regret": _regret_table(0.5, -1.0)})
    eps_rows = [r for r in res if "exponent" in r.note]
    assert eps_rows and eps_rows[0].measured == pytest.approx(-1.0, abs=0.05) and eps_rows[0].verdict == "reproduced"
    res = CLAIM["V3"].evaluate({"tabular_regret": _regret_table(0.5, -0.2)})
    assert [r for r in res if "exponent" in r.note][0].verdict == "not reproduced"


def test_v1_fails_when_an_audit_fails():
    ok = pd.DataFrame(dict(algorithm=["pucb"] * 2, calibration=["tight"] * 2, epsilon=[1.0, 1.0], mechanism=["counter", "episode"], claimed_epsilon=[0.1, 1.0],
                           eps_lb=[0.05, 0.5], passed=[True, True], expected_pass=[True, True], runs=[1000, 1000]))
    assert claims.v1({"tabular_audit": ok})[0].verdict == "reproduced"
    bad = ok.assign(eps_lb=[0.05, 1.5], passed=[True, False])
    assert claims.v1({"tabular_audit": bad})[0].verdict == "not reproduced"


def _scaling(power: float) -> pd.DataFrame:
    rows = []
    for seed in range(8):
        for S in (3, 6, 12):
            for alg, extra in (("ubev", 0.0), ("pucb", 10 * S**power * (1 + 0.01 * seed))):
                rows.append(dict(algorithm=alg, env_label=f"garnet_S{S}", alg_label=alg, privacy_label="x",
                                 calibration="tight" if alg == "pucb" else "none", epsilon=10.0 if alg == "pucb" else np.inf,
                                 seed=seed, episode=1000, regret=100 + extra, S=S))
    return pd.DataFrame(rows)


def test_v7_exponent_window():
    assert CLAIM["V7"].evaluate({"tabular_scaling": _scaling(1.5)})[0].verdict == "reproduced"
    assert CLAIM["V7"].evaluate({"tabular_scaling": _scaling(3.0)})[0].verdict == "not reproduced"


def _with_burn_in(df: pd.DataFrame, needs: dict[int, float]) -> pd.DataFrame:
    """Regime columns: S's PUCB runs need ``needs[S]`` episodes (the run has 1000)."""
    df = df.copy()
    pucb = df["algorithm"] == "pucb"
    df["burn_in_episodes"] = np.where(pucb, df["S"].map(needs) / 10, np.nan)
    df["horizon_needed"] = np.where(pucb, df["S"].map(needs), np.nan)
    df["onset_episode"] = np.where(pucb, df["S"].map(needs) / 20, np.nan)
    return df


def test_v7_on_garnet_fits_the_s_inside_their_regime():
    """At ε = 1 one T holds the small S inside and not the large ones (full's garnet grid):
    the fit leaves the large S out, so their burn-in's cost cannot pass for a rate; with
    fewer than two S inside, the row is outside its regime (inconclusive, not refuted)."""
    df = _scaling(1.5)
    df.loc[(df["algorithm"] == "pucb") & (df["S"] == 12), "regret"] *= 1e3  # still in its burn-in: linear regret
    row = CLAIM["V7"].evaluate({"tabular_scaling": _with_burn_in(df, {3: 100, 6: 100, 12: 1e5})})[0]
    assert (row.verdict, row.regime) == ("reproduced", "reached") and "S ∈ {12} left out" in row.note
    assert row.measured == pytest.approx(1.5, abs=0.05)
    # the same table without regime columns fits every S: the burn-in's cost refutes it
    assert CLAIM["V7"].evaluate({"tabular_scaling": df})[0].verdict == "not reproduced"
    outside = CLAIM["V7"].evaluate({"tabular_scaling": _with_burn_in(df, {3: 1e5, 6: 1e5, 12: 1e5})})[0]
    assert (outside.regime, outside.horizon_needed) == ("not reached", 1e5)
    judged = outside.outside_regime_is_inconclusive()
    assert judged.verdict == "inconclusive" and "would be not reproduced" in judged.note


def _config(env_params: dict) -> dict:
    return {"experiments": {"tabular_regret": {
        "algorithms": [{"name": "ubev"}],
        "environments": [{"name": "riverswim", **env_params}],
        "seeds": {"count": 1},
    }}}


def test_config_rejects_bad_sizes():
    load_config(_config({"S": 4, "H": 3}), "default")
    with pytest.raises(ConfigError, match="H"):
        load_config(_config({"H": 0}), "default")
    with pytest.raises(ConfigError, match="S"):
        load_config(_config({"S": 1}), "default")

