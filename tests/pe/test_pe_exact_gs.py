"""Finding F4: B4's baseline (the paper's: the smooth mechanism's constant ``a`` at the
global sensitivity) against a global-sensitivity Gaussian calibrated exactly."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy.stats import norm

from dprl.analysis.claims.pe import exact_gs_sigma, f4
from dprl.privacy.smooth_sensitivity import smooth_gaussian_constants

EPS, DELTA, DIM, SENS = 1.0, 0.1, 3, 2.0


def _table(ratio_lsl: float) -> pd.DataFrame:
    a = smooth_gaussian_constants(EPS, DELTA, DIM).a
    gs = SENS / a
    exact = float(exact_gs_sigma(pd.DataFrame({"epsilon": [EPS], "delta": [DELTA], "d": [DIM], "sigma": [gs]}))[0])
    rows = []
    for seed in range(4):
        for m in (10, 100):
            base = {"seed": seed, "epsilon": EPS, "delta": DELTA, "d": DIM, "features": "identity", "m": m,
                    "alg.c": 1.0, "alg.p": 0.5}
            rows.append({**base, "algorithm": "gs_dp_lsl", "sigma": gs})
            rows.append({**base, "algorithm": "dp_lsl", "sigma": ratio_lsl * exact * (1 + 0.01 * seed)})
    return pd.DataFrame(rows)


def test_exact_sigma_is_the_analytic_gaussian_at_the_baselines_sensitivity():
    """Independent check (Balle & Wang 2018, Theorem 8): δ(ε) of the Gaussian mechanism
    with sensitivity Δ and the returned σ equals δ; the paper's baseline is noisier."""
    a = smooth_gaussian_constants(EPS, DELTA, DIM).a
    sigma = float(exact_gs_sigma(pd.DataFrame({"epsilon": [EPS], "delta": [DELTA], "d": [DIM], "sigma": [SENS / a]}))[0])
    mu = SENS / sigma
    delta = norm.cdf(-EPS / mu + mu / 2) - np.exp(EPS) * norm.cdf(-EPS / mu - mu / 2)
    assert delta == pytest.approx(DELTA, rel=1e-6)
    assert SENS / a > 5 * sigma  # the smooth mechanism's a costs a large factor at ε = 1


@pytest.mark.parametrize("ratio, verdict", [(1.5, "reproduced"), (0.5, "not reproduced")])
def test_f4_verdict_follows_the_ratio(ratio, verdict):
    (row,) = f4({"pe_batch": _table(ratio)})
    assert row.verdict == verdict
    assert row.measured == pytest.approx(ratio, rel=0.05)
