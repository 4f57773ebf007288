"""Z6 on the linear-mixture family hard at K (experiment ``linmix_hard_ldp``): the gap scale
of ``hard_linear_horizon``, uniform play's regret, and the two orderings (LDP above JDP at
the same ε; the LDP regret growing as ε shrinks), each shown able to fail."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from dprl.analysis.aggregate import aggregate
from dprl.analysis.claims import evaluate
from dprl.analysis.claims.linmix import CLAIMS, z6
from dprl.config.load import ConfigError, load_config
from dprl.envs.linear_mixture import hard_linear_gap, hard_linear_uniform_regret, make_hard_linear
from dprl.experiments.run import run_job

CLAIM = {c.id: c for c in CLAIMS}
JDP, LDP = "private_linopt_vi", "ldp_linopt_vi"


@pytest.mark.parametrize("d", [2, 3, 5])
@pytest.mark.parametrize("scale", [1.0, 100.0])
def test_uniform_regret_is_uniform_plays_exact_regret(d, scale):
    """``hard_linear_uniform_regret`` (H = 2) against the instance's exact values: V*(x1)
    minus the value of the uniform policy, per episode, times K."""
    K = 100000
    env = make_hard_linear(d, 2, K, np.random.default_rng(d), scale)
    uniform = np.full((env.horizon, env.S, env.A), 1.0 / env.A)
    per_episode = env.optimal_values()[0, env.s1] - env.policy_value(uniform)
    gap = hard_linear_gap(2, K, scale)
    assert gap == pytest.approx(scale * hard_linear_gap(2, K))
    assert K * per_episode == pytest.approx(hard_linear_uniform_regret(d, K, gap), rel=1e-9)


def test_a_gap_scale_that_breaks_the_probabilities_is_refused_before_any_job():
    """(d − 1)·Δ <= δ = 1/H: at K = 1000 a scale of 100 gives (d − 1)Δ = 0.79 > 0.5; the error
    names the key and the smallest valid K."""
    exp = {"linmix_hard_ldp": {"kind": "linmix_hard", "algorithms": [{"name": JDP}],
                               "environments": [{"name": "hard_linear_horizon", "d": 3, "H": 2, "K": 1000, "gap_scale": 100}],
                               "privacy": {"epsilon": [3000.0], "delta": [1e-5], "calibration": ["tight"]},
                               "seeds": {"count": 1}}}
    with pytest.raises(ConfigError, match=r"linmix_hard_ldp.*K.*gap_scale = 100: needs K >= 2500"):
        load_config({"experiments": exp})
    with pytest.raises(ValueError, match="gap_scale > 0"):
        make_hard_linear(3, 2, 1000, np.random.default_rng(0), 0.0)


def _rows(shares: dict, seeds: int = 8, K: int = 1_000_000, need: float = 7.6e5, noise: float = 0.03) -> pd.DataFrame:
    """Final rows of linmix_hard_ldp: (algorithm, ε) -> regret / uniform play's, per seed
    (a seed effect shared by every algorithm, as the seed's μ is, plus its own noise)."""
    rng = np.random.default_rng(0)
    seed_effect = 1 + 0.05 * rng.standard_normal(seeds)
    uniform = hard_linear_uniform_regret(3, K, hard_linear_gap(2, K, 100.0))
    rows = []
    for (alg, eps), share in shares.items():
        for seed in range(seeds):
            rows.append({"algorithm": alg, "alg_label": alg, "calibration": "tight", "epsilon": eps, "delta": 1e-5,
                         "privacy_label": f"tight{eps}", "env_label": "hard", "seed": seed, "episode": K, "K": K, "d": 3,
                         "H": 2, "gap_scale": 100.0, "uniform_regret": uniform, "horizon_needed": need,
                         "regret": uniform * share * seed_effect[seed] * (1 + noise * rng.standard_normal())})
    return pd.DataFrame(rows)


MEASURED = {(JDP, 3000.0): 0.49, (LDP, 3000.0): 0.94, (JDP, 10000.0): 0.48, (LDP, 10000.0): 0.87}


def _hard_rows(df: pd.DataFrame) -> dict[str, object]:
    """Z6's hard-family rows keyed "jdp ε" (LDP minus JDP at ε) and "eps lo-hi" (LDP across ε)."""
    return {(f"jdp {r.epsilon:g}" if " minus private_" in r.note else f"eps {r.epsilon:g}"): r for r in _only_hard(df)}


def _only_hard(df: pd.DataFrame) -> list:
    """Z6's rows from linmix_hard_ldp alone (the gapped rows read linmix_ldp)."""
    return [r for r in z6({"linmix_ldp": _gapped_stub(), "linmix_hard_ldp": df}) if r.note.startswith("linmix_hard_ldp")]


def test_z6_on_the_hard_family_reproduces_the_measured_shares():
    rows = _hard_rows(_rows(MEASURED))
    assert set(rows) == {"jdp 3000", "jdp 10000", "eps 3000"}
    for r in rows.values():
        assert r.verdict == "reproduced" and r.regime == "reached", r.note
    assert "regret / uniform play's: LDP 0.9" in rows["jdp 3000"].note


def test_z6_hard_flips_when_ldp_is_no_worse_than_jdp():
    """Planted bugs: LDP and JDP swapped (the local randomiser's noise given to the central
    learner) -> not reproduced; an LDP learner that reads exact statistics while reporting ε
    (its regret that of the central learner) -> a tie, inconclusive (a tie cannot be rejected)."""
    swapped = _hard_rows(_rows({(JDP, e): MEASURED[(LDP, e)] for e in (3000.0, 10000.0)}
                                | {(LDP, e): MEASURED[(JDP, e)] for e in (3000.0, 10000.0)}))
    assert swapped["jdp 3000"].verdict == "not reproduced"
    tie = _hard_rows(_rows({**MEASURED, (LDP, 3000.0): 0.49, (LDP, 10000.0): 0.48}, noise=0.0))
    assert tie["jdp 3000"].verdict != "reproduced", tie["jdp 3000"].note


def test_z6_hard_flips_when_the_ldp_noise_ignores_epsilon():
    """Planted bug: the local randomiser calibrated at one ε whatever the job's (its regret the
    same at every ε): the "grows as ε shrinks" row is not reproduced."""
    flat = _hard_rows(_rows({**MEASURED, (LDP, 10000.0): MEASURED[(LDP, 3000.0)]}, noise=0.0))
    assert flat["eps 3000"].verdict != "reproduced", flat["eps 3000"].note
    assert flat["jdp 3000"].verdict == "reproduced"
    inverted = _hard_rows(_rows({**MEASURED, (LDP, 3000.0): 0.80, (LDP, 10000.0): 0.95}))
    assert inverted["eps 3000"].verdict == "not reproduced"


def test_z6_hard_outside_the_regime_is_inconclusive():
    """At a K below the LDP learner's 10·T*, the orderings are measured but not judged."""
    df = _rows(MEASURED, need=2.5e6)
    rows = [r for r in evaluate(CLAIM["Z6"], {"linmix_ldp": _gapped_stub(), "linmix_hard_ldp": df})
            if r["note"].startswith("linmix_hard_ldp")]
    assert rows and all(r["verdict"] == "inconclusive" and r["regime"] == "not reached" for r in rows)
    assert all(r["horizon_needed"] == 2.5e6 for r in rows)


def _gapped_stub() -> pd.DataFrame:
    """A minimal linmix_ldp table (the claim's required experiment), one seed per algorithm."""
    rows = [{"algorithm": a, "alg_label": a, "calibration": "tight", "epsilon": 1000.0, "delta": 1e-5, "privacy_label": "p",
             "env_label": "mixture", "seed": 0, "episode": ep, "T": 2 * ep, "regret": float(ep) ** 0.5,
             "burn_in_episodes": 1.0, "horizon_needed": 10.0, "onset_episode": 1.0}
            for a in (JDP, LDP) for ep in (10, 100, 1000)]
    return pd.DataFrame(rows)


def test_the_hard_ldp_jobs_record_what_z6_reads(tmp_path):
    """Real jobs of a small linmix_hard_ldp (K = 3000, the smallest K a gap scale of 100
    allows at d = 3 is 2500): every row carries K, the gap scale, the scaled gap and uniform
    play's regret, and Z6 returns its three hard-family rows with a verdict computed."""
    cfg = load_config({"experiments": {"linmix_hard_ldp": {
        "kind": "linmix_hard", "algorithms": [{"name": JDP}, {"name": LDP}],
        "environments": [{"name": "hard_linear_horizon", "d": 3, "H": 2, "K": 3000, "gap_scale": 100}],
        "privacy": {"epsilon": [3000.0, 10000.0], "delta": [1e-5], "calibration": ["tight"]},
        "settings": {"checkpoints": 4}, "seeds": {"count": 2}}}})
    paths = []
    for key, job in cfg.jobs.items():
        path = tmp_path / key
        path.parent.mkdir(parents=True, exist_ok=True)
        run_job(job.spec, path, job.labels)
        paths.append(path)
    df = aggregate(paths)
    last = df.groupby(["alg_label", "privacy_label", "seed"]).tail(1)
    assert (last["gap_scale"] == 100.0).all() and (last["K"] == 3000).all()
    np.testing.assert_allclose(last["gap"], 100 * np.sqrt(1 / (2 * 3000)) / (4 * np.sqrt(2)))
    np.testing.assert_allclose(last["uniform_regret"], 3000 * 2 * last["gap"])
    rows = _only_hard(df)
    assert len(rows) == 3 and all(r.verdict in ("reproduced", "inconclusive", "not reproduced") for r in rows)
