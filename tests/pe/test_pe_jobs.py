"""Job functions, config declarations and claims of the policy-evaluation experiments."""

from __future__ import annotations

import copy

import numpy as np
import pandas as pd
import pytest

from dprl.analysis.claims import evaluate
from dprl.analysis.claims.pe import CLAIMS
from dprl.config.load import ConfigError, load_config
from dprl.experiments.pe import jobs
from dprl.experiments.registry import get_kind
from dprl.runner.job import JobContext, JobSpec

P1 = {"epsilon": 1.0, "delta": 0.1, "calibration": "paper"}


def spec(kind, alg, env, privacy, seed=0, settings=None, alg_params=None, env_params=None):
    k = get_kind(kind)
    a = {"name": alg, **{n: p.default for n, p in k.algorithms[alg].params.items()}, **(alg_params or {})}
    e = {"name": env, **{n: p.default for n, p in k.environments[env].params.items()}, **(env_params or {})}
    s = {n: p.default for n, p in k.settings.items()}
    s.update(settings or {})
    return JobSpec(kind, kind, a, e, privacy, s, seed)


SMALL = {"m_max": 300, "points_per_decade": 2}


@pytest.mark.parametrize("alg, priv", [("dp_lsw", P1), ("dp_lsl", P1), ("gs_dp_lsl", P1), ("lsl", None)])
def test_batch_job_is_deterministic(alg, priv):
    s = spec("pe_batch", alg, "chain", priv, settings=SMALL)
    a, b = jobs.run_batch(JobContext(s)), jobs.run_batch(JobContext(s))
    pd.testing.assert_frame_equal(a, b)
    assert set(a["features"]) == {"identity", "pairs"} and len(a) == 2 * len(jobs.batch_sizes(10, 300, 2))
    assert np.all(np.isfinite(a["rmse"]))


def test_lambda_and_audit_jobs_are_deterministic():
    s = spec("pe_lambda", "dp_lsl", "chain", P1, settings={"m_max": 1000, "c_points": 2, "p_points": 3})
    pd.testing.assert_frame_equal(jobs.run_lambda(JobContext(s)), jobs.run_lambda(JobContext(s)))
    s = spec("pe_audit", "dp_lsl", "adversarial", {"epsilon": 10.0, "delta": 1e-3, "calibration": "paper"},
             settings={"runs": 2000})
    a = jobs.run_audit(JobContext(s))
    pd.testing.assert_frame_equal(a, jobs.run_audit(JobContext(s)))
    assert {"mechanism", "variant", "pair", "eps_lb", "eps_exact", "passed", "accounted_epsilon"} <= set(a.columns)
    assert set(a["variant"]) == {"correct", "local_sensitivity", "inverted_beta", "old_k_cap"}
    assert set(a["pair"]) == set(jobs.AUDIT_PAIRS) and set(a["d"]) == {2}
    assert (a.loc[a["variant"] == "correct", "accounted_epsilon"] == 10.0).all()


@pytest.mark.parametrize("alg", ["lsw", "dp_lsw", "dp_lsl", "gs_dp_lsl"])
def test_batch_rows_record_the_accounted_epsilon(alg):
    """Smooth-sensitivity estimators: the nominal ε (NRS07). GS-DP-LSL: the analytic Gaussian ε
    at μ = Δ/σ, which is ε_G(a, δ) for its σ = Δ/a. Non-private rows: NaN."""
    from dprl.privacy.calibration import composed_epsilon
    from dprl.privacy.smooth_sensitivity import smooth_gaussian_constants

    df = jobs.run_batch(JobContext(spec("pe_batch", alg, "chain", None if alg == "lsw" else P1, settings=SMALL)))
    acc = df["accounted_epsilon"].to_numpy()
    if alg == "lsw":
        assert np.isnan(acc).all()
    elif alg == "gs_dp_lsl":
        for d, e in zip(df["d"], acc):
            a = smooth_gaussian_constants(1.0, 0.1, int(d)).a
            assert e == pytest.approx(composed_epsilon(a, 0.1), rel=1e-9) and e < 1.0
    else:
        assert np.all(acc == 1.0)
    s = spec("pe_batch", alg, "chain", None if alg == "lsw" else P1, settings=SMALL)
    before = jobs.job_accounted_epsilon(s)  # for validation, without running the job
    assert (before is None) if alg == "lsw" else before == pytest.approx(float(np.max(acc)), rel=1e-12)


def test_common_random_numbers_across_algorithms_and_privacy():
    """Every algorithm and ε of a seed evaluates the same batch: the DP job's noiseless error
    equals the non-private job's error; a different seed gives a different batch."""
    lsw = jobs.run_batch(JobContext(spec("pe_batch", "lsw", "chain", None, settings=SMALL)))
    for eps in (0.1, 1.0):
        dp = jobs.run_batch(JobContext(spec("pe_batch", "dp_lsw", "chain", {**P1, "epsilon": eps}, settings=SMALL)))
        np.testing.assert_array_equal(dp["rmse_np"].to_numpy(), lsw["rmse"].to_numpy())
    other = jobs.run_batch(JobContext(spec("pe_batch", "lsw", "chain", None, seed=1, settings=SMALL)))
    assert not np.array_equal(other["rmse"].to_numpy(), lsw["rmse"].to_numpy())


def test_private_jobs_reject_the_tight_calibration():
    s = spec("pe_batch", "dp_lsw", "chain", {**P1, "calibration": "tight"}, settings=SMALL)
    with pytest.raises(ValueError, match="single calibration"):
        jobs.run_batch(JobContext(s))


def test_batch_sizes_grid():
    np.testing.assert_array_equal(jobs.batch_sizes(10, 10000, 1), [10, 100, 1000, 10000])
    assert jobs.batch_sizes(5, 5, 3).tolist() == [5]
    with pytest.raises(ValueError, match="m_max"):
        jobs.batch_sizes(100, 10, 3)


BASE = {"experiments": {"pe_batch": {
    "algorithms": [{"name": "lsw"}, {"name": "dp_lsl", "c": 1.0, "p": 0.5}],
    "environments": [{"name": "chain"}],
    "privacy": {"epsilon": [1.0], "delta": [0.1], "calibration": ["paper"]},
    "seeds": {"count": 2},
}}}


@pytest.mark.parametrize("where, value, msg", [
    (["environments", 0, "n_states"], 2, r"n_states: must be >= 3"),
    (["environments", 0, "gamma"], 1.0, r"gamma: must be <= 0.999"),
    (["environments", 0, "p_right"], 0.0, r"p_right: must be > 0"),
    (["environments", 0, "max_len"], 0, r"max_len: must be >= 1"),
    (["algorithms", 1, "c"], 0.0, r"c: must be > 0"),
    (["algorithms", 1, "p"], -0.5, r"p: must be >= 0"),
    (["settings"], {"m_min": 0}, r"m_min: must be >= 1"),
    (["settings"], {"features": "tiles"}, r"features: 'tiles' is not allowed"),
])
def test_config_rejects_bad_values(where, value, msg):
    cfg = copy.deepcopy(BASE)
    node = cfg["experiments"]["pe_batch"]
    for key in where[:-1]:
        node = node[key]
    node[where[-1]] = value
    with pytest.raises(ConfigError, match=msg):
        load_config(cfg, "default")


def test_config_expands_private_and_nonprivate_jobs():
    cfg = load_config(copy.deepcopy(BASE), "default")
    assert len(cfg.experiments["pe_batch"].jobs) == 4  # (lsw + dp_lsl at one (ε, δ)) × 2 seeds


# ------------------------------------------------------------------- claims on synthetic tables


def _audit_table(fail_correct: bool, detect: bool) -> pd.DataFrame:
    rows = []
    for alg, variants in (("dp_lsw", ("correct", "local_sensitivity")), ("dp_lsl", ("correct", "old_k_cap"))):
        for variant in variants:
            for pair, m, cx, cy in (("return_change", 1, 1, 1), ("count_2_to_1", 2, 2, 1)):
                broken_pair = variant != "correct" and pair == "count_2_to_1"
                lb = 0.2 if variant == "correct" else (2.4 if broken_pair and detect else 0.3)
                if fail_correct and variant == "correct" and alg == "dp_lsl":
                    lb = 1.3
                rows.append({"epsilon": 1.0, "delta": 0.1, "algorithm": alg, "variant": variant, "pair": pair,
                             "mechanism": alg if variant == "correct" else f"{alg}:{variant}", "m": m, "d": 2,
                             "count_x": cx, "count_x_prime": cy, "eps_lb": lb, "passed": lb <= 1.0,
                             "eps_exact": 4.0 if broken_pair else 1.5, "runs": 1000})
    return pd.DataFrame(rows)


@pytest.mark.parametrize("fail_correct, detect, verdict", [
    (False, True, "reproduced"), (True, True, "not reproduced"), (False, False, "inconclusive"),
])
def test_b1_verdicts(fail_correct, detect, verdict):
    claim = next(c for c in CLAIMS if c.id == "B1")
    (row,) = evaluate(claim, {"pe_audit": _audit_table(fail_correct, detect)})
    assert row["verdict"] == verdict
    assert "count_2_to_1 (m=2, counts 2->1, d=2)" in row["note"]  # the row names the pairs audited
    assert "replacement" in row["note"]


def _batch_table(lsl_better: bool) -> pd.DataFrame:
    rng = np.random.default_rng(0)
    rows = []
    for seed in range(8):
        for m in (10, 20, 50, 100, 1000):
            for alg, base in (("dp_lsw", 100.0), ("dp_lsl", 10.0 if lsl_better else 1000.0)):
                rows.append({"seed": seed, "algorithm": alg, "epsilon": 1.0, "features": "identity", "m": m,
                             "rmse": base * m**-0.5 * np.exp(rng.normal(0, 0.1)), "rmse_np": 0.01,
                             "sigma": base / m, "alg.c": 1.0, "alg.p": 0.5})
    return pd.DataFrame(rows)


@pytest.mark.parametrize("lsl_better, verdict", [(True, "reproduced"), (False, "not reproduced")])
def test_b3_verdicts(lsl_better, verdict):
    claim = next(c for c in CLAIMS if c.id == "B3")
    (row,) = evaluate(claim, {"pe_batch": _batch_table(lsl_better)})
    assert row["verdict"] == verdict, row["note"]


def test_b2_detects_a_slope_other_than_minus_one():
    claim = next(c for c in CLAIMS if c.id == "B2")
    df = _batch_table(True)
    (row,) = evaluate(claim, {"pe_batch": df})
    assert row["verdict"] == "reproduced" and row["measured"] == pytest.approx(-1.0)
    df.loc[df["algorithm"] == "dp_lsw", "sigma"] = 100.0 / np.sqrt(df.loc[df["algorithm"] == "dp_lsw", "m"])
    (row,) = evaluate(claim, {"pe_batch": df})
    assert row["verdict"] == "not reproduced" and row["measured"] == pytest.approx(-0.5)


def _lambda_table(u_shape: bool) -> pd.DataFrame:
    rng = np.random.default_rng(1)
    rows = []
    for seed in range(8):
        for c in (1.0, 10.0):
            for p in (0.0, 0.5, 1.0):
                rmse = (1.0 + 4 * (p - 0.5) ** 2) if u_shape else (3.0 - 2 * p)
                rows.append({"seed": seed, "epsilon": 1.0, "m": 1000, "c": c, "p": p, "rmse_zero": 1.4,
                             "rmse": rmse * c**0.1 * np.exp(rng.normal(0, 0.02))})
    return pd.DataFrame(rows)


@pytest.mark.parametrize("u_shape, verdict", [(True, "reproduced"), (False, "not reproduced")])
def test_b5_verdicts(u_shape, verdict):
    claim = next(c for c in CLAIMS if c.id == "B5")
    (row,) = evaluate(claim, {"pe_lambda": _lambda_table(u_shape)})
    assert row["verdict"] == verdict, row["note"]
