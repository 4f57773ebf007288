"""Claims Z2-Z6 compute the verdicts their statements imply on synthetic tables."""

import numpy as np
import pandas as pd

from dprl.analysis.claims.linmix import CLAIMS, z2, z3, z4, z6


def _table(curves: dict, seeds: int = 8, noise: float = 0.02, extra=None) -> pd.DataFrame:
    """curves: (algorithm, calibration, epsilon) -> f(T)."""
    rng = np.random.default_rng(0)
    rows = []
    for (alg, calib, eps), f in curves.items():
        for seed in range(seeds):
            for ep in np.unique(np.geomspace(1, 10000, 25).astype(int)):
                T = 2 * ep
                rows.append({"algorithm": alg, "alg_label": alg, "calibration": calib, "epsilon": eps, "delta": 1e-5,
                             "privacy_label": f"{calib}{eps}", "env_label": "mixture", "seed": seed, "episode": ep, "T": T,
                             "regret": f(T) * (1 + noise * rng.standard_normal()), **(extra or {})})
    return pd.DataFrame(rows)


def test_z2_sqrt_reproduced_linear_not():
    df = _table({("ucrl_vtr", "none", np.inf): np.sqrt, ("private_linopt_vi", "tight", 1.0): lambda T: 0.5 * T})
    res = {r.calibration: r.verdict for r in z2({"linmix_regret": df})}
    assert res == {"none": "reproduced", "tight": "not reproduced"}


def test_z3_recovers_eps_exponent():
    curves = {("ucrl_vtr", "none", np.inf): np.sqrt}
    for eps in (1.0, 10.0, 100.0):
        curves[("private_linopt_vi", "tight", eps)] = lambda T, e=eps: np.sqrt(T) * (1 + 5 / np.sqrt(e))
    res = z3({"linmix_regret": _table(curves, noise=0.001)})
    eps_row = res[0]
    assert abs(eps_row.measured + 0.5) < 0.05 and eps_row.verdict == "reproduced"
    assert res[1].verdict == "inconclusive"  # one δ only


def test_z4_flat_in_S_and_growing_in_S():
    frames = []
    for S in (10, 30, 100, 300):
        frames.append(_table({("private_linopt_vi", "tight", 1.0): lambda T: np.sqrt(T)}, extra={"S": S, "d1": 2, "d2": 2}))
    flat = pd.concat(frames)
    assert z4({"linmix_states": flat})[0].verdict == "reproduced"
    grow = flat.copy()
    grow["regret"] *= np.log(grow["S"])
    assert z4({"linmix_states": grow})[0].verdict == "not reproduced"


def test_z6_ldp_larger_and_faster():
    df = _table({("private_linopt_vi", "tight", 1.0): np.sqrt, ("ldp_linopt_vi", "tight", 1.0): lambda T: T ** 0.8})
    assert z6({"linmix_ldp": df})[0].verdict == "reproduced"
    df2 = _table({("private_linopt_vi", "tight", 1.0): lambda T: T ** 0.8, ("ldp_linopt_vi", "tight", 1.0): np.sqrt})
    assert z6({"linmix_ldp": df2})[0].verdict == "not reproduced"


def test_claim_ids():
    assert [c.id for c in CLAIMS] == ["Z1", "Z2", "Z3", "Z4", "Z5", "Z6"]
