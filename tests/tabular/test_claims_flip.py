"""Each tabular claim's acceptance rule can fail: a synthetic table that honours the claim
gives "reproduced", the same table with one plausible bug planted gives "not reproduced",
both inside the regime, through the registry (:func:`dprl.analysis.claims.evaluate`)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from dprl.analysis.claims import evaluate
from dprl.analysis.claims import tabular as tc

CLAIM = {c.id: c for c in tc.CLAIMS}
T = 1e7
KS = np.unique(np.geomspace(10, T, 40).round())  # checkpoints; the regime's fit runs over [T/10, T]
STEPS = np.diff(KS, prepend=0.0)


def _curve(alg: str, calib: str, eps: float, seed: int, regret: np.ndarray, burn_in: float) -> pd.DataFrame:
    """One job's regret checkpoints, with its predicted burn-in and its measured end (half of it)."""
    return pd.DataFrame(
        {
            "algorithm": alg,
            "calibration": calib,
            "epsilon": eps,
            "seed": seed,
            "episode": KS,
            "regret": regret,
            "burn_in_episodes": burn_in,
            "onset_episode": burn_in / 2,
            "env_label": "garnet",
            "alg_label": alg,
            "privacy_label": f"{calib}_{eps:g}",
        }
    )


def _walk(rng: np.random.Generator) -> np.ndarray:
    """Random-walk part of a cumulative regret at the checkpoints (unit variance per episode)."""
    return np.cumsum(rng.standard_normal(KS.size) * np.sqrt(STEPS))


def _verdict(claim: str, tables: dict, key: str) -> dict:
    rows = [r for r in evaluate(CLAIM[claim], tables) if key in r["note"]]
    assert len(rows) == 1, [r["note"] for r in rows]
    return rows[0]


# ------------------------------------------------------------------------------ V5


def _pac_table(noise_free: bool, seeds: int = 4) -> pd.DataFrame:
    """PUCB's α-suboptimal episodes on the hard instances: each (α, ε) point's count stops
    at ``N`` well before ``T/10`` (uncensored), ``N ∝ 1/(αε)``; ``noise_free``: ``N ∝ 1/α``."""
    rng = np.random.default_rng(0)
    Tp = 1_000_000
    ks = np.unique(np.geomspace(1, Tp, 30).round())
    rows = []
    for a in (0.1, 0.2):
        for e in (1.0, 10.0):
            n_final = 5.0 / a if noise_free else 50.0 / (a * e)
            for seed in range(seeds):
                n = np.minimum(ks, n_final) * (1 + 0.05 * rng.standard_normal())
                rows.append(
                    pd.DataFrame(
                        {
                            "algorithm": "pucb",
                            "calibration": "tight",
                            "alpha": a,
                            "epsilon": e,
                            "seed": seed,
                            "episode": ks,
                            "n_subopt": n,
                            "S": 4,
                            "A": 2,
                            "H": 2,
                            "burn_in_episodes": 1e4 / e,
                            "env_label": "lowerbound",
                            "alg_label": "pucb",
                            "privacy_label": f"a{a:g}_e{e:g}",
                        }
                    )
                )
    return pd.concat(rows, ignore_index=True)


def test_v5_fails_when_counts_ignore_epsilon():
    """Planted bug: PUCB's Laplace noise is missing, so its α-suboptimal counts do not depend on ε."""
    ok = _verdict("V5", {"tabular_pac": _pac_table(False)}, "α-suboptimal")
    assert ok["regime"] == "reached" and "no point censored" in ok["note"]
    assert ok["verdict"] == "reproduced" and ok["measured"] == pytest.approx(1.0, abs=0.1)
    bad = _verdict("V5", {"tabular_pac": _pac_table(True)}, "α-suboptimal")
    assert bad["regime"] == "reached" and "no point censored" in bad["note"]
    # only α moves the count: ln 2² / (ln 2² + ln 10²) ≈ 0.08 over this (α, ε) grid
    assert bad["verdict"] == "not reproduced" and bad["measured"] < 0.2


# ------------------------------------------------------------------------------ F1


def _f1_table(linear: bool, seeds: int = 6) -> pd.DataFrame:
    """UBEV, and PUCB at ε = 10 under both calibrations (burn-in 1e5 tight, 5e5 paper): regret
    linear through the burn-in, then ``∝ T^0.3``; ``linear``: the paper calibration's regret
    stays UBEV's plus ``0.3·T`` past its burn-in. Every PUCB curve carries a per-episode random walk."""
    rng = np.random.default_rng(0)
    rows = []
    for seed in range(seeds):
        ubev = 10 * np.sqrt(KS)
        rows.append(_curve("ubev", "none", np.inf, seed, ubev, 10.0))
        for calib, ts in (("tight", 1e5), ("paper", 5e5)):
            if calib == "paper" and linear:
                regret = ubev + 0.3 * KS + _walk(rng)
            else:
                regret = ubev + np.where(KS < ts, 0.3 * KS, 0.3 * ts * (KS / ts) ** 0.3) + _walk(rng)
            rows.append(_curve("pucb", calib, 10.0, seed, regret, ts))
    return pd.concat(rows, ignore_index=True)


def test_f1_fails_when_paper_calibration_regret_stays_linear():
    """Planted bug: under the paper calibration PUCB's regret stays linear (UBEV's + 0.3·T) past its burn-in."""
    ok = _verdict("F1", {"tabular_regret": _f1_table(False)}, "ε=10")
    assert ok["regime"] == "reached" and "5× the tight calibration's" in ok["note"]
    assert ok["verdict"] == "reproduced" and ok["measured"] == pytest.approx(0.3, abs=0.05)
    bad = _verdict("F1", {"tabular_regret": _f1_table(True)}, "ε=10")
    # the lower-order √T term fits slopes of 0.99 whose CI ends below 1: the rule fails them
    # because each seed's own slope is above LINEAR_SLOPE (a CI-below-1 rule alone passed them)
    assert bad["regime"] == "reached" and bad["ci_high"] < 1
    assert bad["verdict"] == "not reproduced" and bad["measured"] == pytest.approx(0.99, abs=0.01)


# ------------------------------------------------------------------------------ V3


def _v3_table(cost_power: float | None, seeds: int = 6) -> pd.DataFrame:
    """UBEV and PUCB (tight, ε = 1 and 10, burn-in ``T* = 1e5/ε``) with PUCB's regret =
    UBEV's + a privacy cost linear through the burn-in, then ``0.3·T*·(1 + ln(T/T*))``
    (``cost_power`` None) or ``0.3·T*·(T/T*)^cost_power``; 1% noise per checkpoint."""
    rng = np.random.default_rng(0)
    rows = []
    for seed in range(seeds):
        ubev = 10 * np.sqrt(KS) + _walk(rng)
        rows.append(_curve("ubev", "none", np.inf, seed, ubev, 10.0))
        for e in (1.0, 10.0):
            ts = 1e5 / e
            x = np.maximum(KS / ts, 1.0)
            past = 1 + np.log(x) if cost_power is None else x**cost_power
            cost = 0.3 * np.minimum(KS, ts) * past * (1 + 0.01 * rng.standard_normal(KS.size))
            rows.append(_curve("pucb", "tight", e, seed, ubev + cost, ts))
    return pd.concat(rows, ignore_index=True)


def test_v3_slope_in_t_fails_when_the_privacy_cost_grows_like_t():
    """Planted bug: PUCB's privacy cost keeps growing like T^0.9 past its burn-in instead of ln T."""
    key = "log-log slope of the privacy cost"
    ok = _verdict("V3", {"tabular_regret": _v3_table(None)}, key)
    assert ok["regime"] == "reached" and "ε=10:" in ok["note"]
    assert ok["verdict"] == "reproduced" and ok["ci_low"] <= 0.5
    bad = _verdict("V3", {"tabular_regret": _v3_table(0.9)}, key)
    assert bad["regime"] == "reached" and "ε=10:" in bad["note"]
    assert bad["verdict"] == "not reproduced" and bad["ci_low"] > 0.5
