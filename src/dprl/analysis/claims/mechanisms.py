"""Claims M1-M3 of the shared privacy mechanisms (``src/dprl/README.md``)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from dprl.analysis.audit_power import gaussian_inflation, laplace_inflation, power_note
from dprl.analysis.base import Claim, ClaimResult, PlantedBug, Tables
from dprl.analysis.selection import final_rows
from dprl.analysis.stats import bootstrap_ci
from dprl.privacy.audit_power import LaplacePair
from dprl.privacy.tree_counter import tree_levels


def m1_detectable_inflation(g: pd.DataFrame) -> list[float]:
    """Per audit row: the smallest ε inflation the audit detects. The pair changes the
    element at t = 1, which lies in all ``L`` nodes, by 1 (``neighbouring_streams``): ``L``
    Laplace shifts of ``1/b``, or one Gaussian shift."""
    out = []
    for mech, scale, T, eps, delta, runs in zip(g["mechanism"], g["noise_scale"], g["env.T"], g["claimed_epsilon"],
                                                g["claimed_delta"].fillna(0.0), g["runs"]):
        if mech == "laplace_tree":
            out.append(laplace_inflation(LaplacePair((1.0 / scale,) * tree_levels(int(T))), eps, delta, runs))
        else:
            out.append(gaussian_inflation(eps, delta, runs))
    return out


def m1_detectable_by_mechanism(g: pd.DataFrame) -> dict[str, list[float]]:
    return {m: list(v) for m, v in g.assign(F=m1_detectable_inflation(g)).groupby("mechanism")["F"]}


def m1(tables: Tables) -> list[ClaimResult]:
    df = tables["audit"]
    df = df[df["broken"] == "none"]
    broken = tables.get("audit_broken")
    extra = ""
    if broken is not None and not broken.empty:
        b = broken[broken["broken"] != "none"]
        extra = f"; deliberately broken variants detected (audit failed) in {int((~b['passed'].astype(bool)).sum())}/{len(b)} audits"
    out = []
    for calib, g in df.groupby("calibration"):
        ratio = (g["eps_lb"].clip(lower=0) / g["claimed_epsilon"]).to_numpy()
        est = bootstrap_ci(ratio)
        n_fail = int((~g["passed"].astype(bool)).sum())
        verdict = "reproduced" if n_fail == 0 else "not reproduced"
        power = power_note(g, ("mechanism", "noise_scale", "env.T", "claimed_epsilon", "claimed_delta"), m1_detectable_by_mechanism, "runs")
        out.append(ClaimResult(
            est.value, est.low, est.high, verdict, str(calib),
            f"mean of max(ε_lb,0)/ε over {len(g)} audits ({g['mechanism'].nunique()} mechanisms × ε grid × seeds, "
            f"{int(g['runs'].iloc[0])} runs per input and phase); {n_fail} audits with ε_lb > ε; "
            f"largest ε_lb/ε = {float((g['eps_lb'] / g['claimed_epsilon']).max()):.3f}" + extra + f". {power}",
            epsilon=float(g["epsilon"].min()),
        ))
    return out


def m2(tables: Tables) -> list[ClaimResult]:
    df = tables["counter_error"]
    last = final_rows(df, step="t")
    out = []
    for calib, g in last.groupby("calibration"):
        col = f"coverage_{calib}"
        per_cell = g.groupby(["alg_label", "privacy_label"])
        means = per_cell[col].mean()
        worst = means.idxmin()
        cell = g.set_index(["alg_label", "privacy_label"]).loc[worst]
        est = bootstrap_ci(cell[col].to_numpy())
        beta = float(g["beta"].iloc[0])
        verdict = "reproduced" if est.high >= 1 - beta else "not reproduced"
        loose = float(np.median(g[f"bound_{calib}"] / g["err_q"]))
        out.append(ClaimResult(
            est.value, est.low, est.high, verdict, str(calib),
            f"fraction of counters whose error stayed below the {calib} bound at every t <= T (worst of "
            f"{len(means)} mechanism × privacy cells: {worst[0]}, {worst[1]}); required >= {1 - beta:g}; "
            f"median bound / empirical (1-β)-quantile of the error = {loose:.2f}",
            epsilon=float(g["epsilon"].min()),
        ))
    return out


def m3(tables: Tables) -> list[ClaimResult]:
    df = tables["counter_error"]
    last = final_rows(df, step="t")
    key = ["algorithm", "epsilon", "delta"]
    scale = last.groupby(key + ["calibration"], dropna=False)["noise_scale"].first().unstack("calibration")
    bound = last.groupby(key + ["calibration"], dropna=False).apply(
        lambda g: float(np.mean(g[f"bound_{g.name[-1]}"])), include_groups=False).unstack("calibration")
    if not {"paper", "tight"} <= set(scale.columns):
        return [ClaimResult(np.nan, np.nan, np.nan, "inconclusive", "both", "needs both calibrations at the same (ε, δ)")]
    ratio = (scale["tight"] / scale["paper"]).dropna()
    bratio = (bound["tight"] / bound["paper"]).dropna()
    verdict = "reproduced" if bool((ratio <= 1 + 1e-12).all()) else "not reproduced"
    per_alg = ratio.groupby(level="algorithm").agg(["min", "max"])
    desc = "; ".join(f"{a}: σ_tight/σ_paper in [{r['min']:.3f}, {r['max']:.3f}]" for a, r in per_alg.iterrows())
    return [ClaimResult(
        float(ratio.max()), float(ratio.min()), float(ratio.max()), verdict, "both",
        f"deterministic: range of the noise-scale ratio tight/paper over {len(ratio)} (mechanism, ε, δ) cells "
        f"(reported as measured = max, interval = [min, max]); {desc}; tight error bound / paper error bound: "
        f"median {float(bratio.median()):.3f}, range [{float(bratio.min()):.3f}, {float(bratio.max()):.3f}]",
        epsilon=float(last["epsilon"].min()),
    )]


CLAIMS = [
    Claim("M1", "mechanisms", "Every mechanism's audited ε_lb is at most its claimed ε (each calibration).",
          ("audit",), "audited ε_lb / claimed ε", "<= 1 for every audit", m1, "mechanisms_audit"),
    Claim("M2", "mechanisms", "The tree counter's error stays below each paper's stated high-probability bound with at least the stated probability.",
          ("counter_error",), "fraction of counters within the bound for all t <= T", ">= 1 - β", m2, "mechanisms_counter_error"),
    Claim("M3", "mechanisms", "The tight calibration adds no more noise than paper at the same (ε, δ), and reports by how much less.",
          ("counter_error",), "σ_tight / σ_paper", "<= 1", m3, "mechanisms_counter_error"),
]

# What would flip each verdict (dprl.analysis.base.PlantedBug): the bug, and the test that
# plants it and asserts the flip through this module's rule.
PLANTED_BUGS: dict[str, tuple[PlantedBug, ...]] = {
    "M1": (
        PlantedBug("the Laplace tree counter's scale halved while its rows still claim ε (audit job)",
                   "tests/core/test_mechanism_claims_flip.py::test_m1_flips_when_the_laplace_tree_noise_is_halved"),
    ),
    "M2": (
        PlantedBug("an error bound without the union bound over t (β for β/T), or of one node instead of the "
                   "sum of a release's nodes (counter_error jobs)", "tests/core/test_mechanism_claims_flip.py::test_m2_flips_when_the_error_bound_is_too_small"),
    ),
    "M3": (
        PlantedBug("the tight Gaussian σ composed over 2L releases instead of L (counter_error jobs)",
                   "tests/core/test_mechanism_claims_flip.py::test_m3_flips_when_the_tight_gaussian_calibration_composes_twice_as_often"),
    ),
}
