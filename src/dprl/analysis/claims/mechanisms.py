"""Claims M1-M3 of the shared privacy mechanisms (``src/dprl/README.md``)."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

import numpy as np
import pandas as pd

from dprl.analysis.audit_power import gaussian_inflation, laplace_inflation, power_note
from dprl.analysis.base import Claim, ClaimResult, Group, PlantedBug, RegimeCheck, Rows, Tables
from dprl.analysis.selection import final_rows
from dprl.analysis.stats import Estimate, bootstrap_ci, verdict_at_least, verdict_worst_at_most
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
    """M1: every mechanism's audited ε_lb is at most its claimed ε, one row per calibration;
    the deliberately broken variants (``audit_broken``, when run) show the audit can fail."""
    df = tables["audit"]
    df = df[df["broken"] == "none"]
    broken = tables["audit_broken"] if "audit_broken" in tables else None
    extra = ""
    if broken is not None and not broken.empty:
        b = broken[broken["broken"] != "none"]
        extra = f"; deliberately broken variants detected (audit failed) in {int((~b['passed'].astype(bool)).sum())}/{len(b)} audits"
    out = []
    for calib, g in df.groupby("calibration"):
        ratio = (g["eps_lb"].clip(lower=0) / g["claimed_epsilon"]).to_numpy()
        n_fail = int((~g["passed"].astype(bool)).sum())
        power = power_note(g, ("mechanism", "noise_scale", "env.T", "claimed_epsilon", "claimed_delta"), m1_detectable_by_mechanism, "runs")
        out.append(ClaimResult.from_estimate(
            bootstrap_ci(ratio), verdict="reproduced" if n_fail == 0 else "not reproduced", calibration=str(calib),
            note=f"mean of max(ε_lb,0)/ε over {len(g)} audits ({g['mechanism'].nunique()} mechanisms × ε grid × seeds, "
            f"{int(g['runs'].iloc[0])} runs per input and phase); {n_fail} audits with ε_lb > ε; "
            f"largest ε_lb/ε = {float((g['eps_lb'] / g['claimed_epsilon']).max()):.3f}" + extra + f". {power}",
            epsilon=g["epsilon"].min(),
        ))
    return out


def last_counts(df: pd.DataFrame) -> pd.DataFrame:
    """Each counter's rows at its last step ``t = T`` (a coverage there holds for every t <= T)."""
    return final_rows(df, step="t")


def m2_cells(g: pd.DataFrame) -> tuple[tuple[str, str], pd.Series]:
    """One calibration's mechanism × privacy cells: the worst (lowest mean coverage of its
    ``coverage_<calibration>``) and every cell's mean coverage."""
    means = g.groupby(["alg_label", "privacy_label"])[f"coverage_{g['calibration'].iloc[0]}"].mean()
    return means.idxmin(), means


def m2_coverage(g: pd.DataFrame, check: RegimeCheck) -> Estimate:
    """M2: the coverage of the worst cell, its interval over the cell's counters (bootstrap)."""
    col = f"coverage_{g['calibration'].iloc[0]}"
    return bootstrap_ci(g.set_index(["alg_label", "privacy_label"]).loc[m2_cells(g)[0]][col].to_numpy())


def m2_rule(grp: Group) -> Callable[[Estimate], str]:
    """At least the stated 1 − β (β of the group's counters)."""
    return partial(verdict_at_least, threshold=1 - float(grp.rows["beta"].iloc[0]))


def _m2_note(grp: Group) -> str:
    g, calib = grp.rows, grp.key["calibration"]
    worst, means = m2_cells(g)
    loose = float(np.median(g[f"bound_{calib}"] / g["err_q"]))
    return (f"fraction of counters whose error stayed below the {calib} bound at every t <= T (worst of "
            f"{len(means)} mechanism × privacy cells: {worst[0]}, {worst[1]}); required >= "
            f"{1 - float(g['beta'].iloc[0]):g}; median bound / empirical (1-β)-quantile of the error = {loose:.2f}")


# M2: per calibration, the coverage of its stated (1 − β) error bound in the worst mechanism ×
# privacy cell (every t <= T: the union bound over t)
M2_ROWS = Rows(select=last_counts, by=("calibration",), statistic=m2_coverage, rule=m2_rule, rule_of_group=True,
               note=_m2_note, empty="no counter errors recorded")  # a claim never drops out of the table silently


def m3_ratios(g: pd.DataFrame) -> tuple[pd.Series, pd.Series]:
    """Per (mechanism, ε, δ) cell with both calibrations: σ_tight / σ_paper, and the tight
    error bound over the paper one."""
    key = ["algorithm", "epsilon", "delta"]
    scale = g.groupby(key + ["calibration"], dropna=False)["noise_scale"].first().unstack("calibration")
    bound = g.groupby(key + ["calibration"], dropna=False).apply(
        lambda c: float(np.mean(c[f"bound_{c.name[-1]}"])), include_groups=False).unstack("calibration")
    return (scale["tight"] / scale["paper"]).dropna(), (bound["tight"] / bound["paper"]).dropna()


def m3_ratio_range(g: pd.DataFrame, check: RegimeCheck) -> Estimate:
    """M3, deterministic: the largest σ_tight / σ_paper (the noisiest cell decides), the
    interval the range [min, max] over the cells."""
    ratio = m3_ratios(g)[0]
    return Estimate(float(ratio.max()), float(ratio.min()), float(ratio.max()), len(ratio))


def _m3_note(grp: Group) -> str:
    ratio, bratio = m3_ratios(grp.rows)
    per_alg = ratio.groupby(level="algorithm").agg(["min", "max"])
    desc = "; ".join(f"{a}: σ_tight/σ_paper in [{r['min']:.3f}, {r['max']:.3f}]" for a, r in per_alg.iterrows())
    return (f"deterministic: range of the noise-scale ratio tight/paper over {len(ratio)} (mechanism, ε, δ) cells "
            f"(reported as measured = max, interval = [min, max]); {desc}; tight error bound / paper error bound: "
            f"median {float(bratio.median()):.3f}, range [{float(bratio.min()):.3f}, {float(bratio.max()):.3f}]")


# M3: one row of every (mechanism, ε, δ) cell run under both calibrations (round-off allowed)
M3_ROWS = Rows(select=last_counts, by=(), statistic=m3_ratio_range, rule=partial(verdict_worst_at_most, threshold=1 + 1e-12),
               note=_m3_note, calibration="both", keep=lambda g: {"paper", "tight"} <= set(g["calibration"]),
               empty="needs both calibrations at the same (ε, δ)")


_FLIP = "tests/core/test_mechanism_claims_flip.py"

CLAIMS = [
    Claim(id="M1", paper="mechanisms", statement="Every mechanism's audited ε_lb is at most its claimed ε (each calibration).",
          reads=("audit",), optional=("audit_broken",), metric="audited ε_lb / claimed ε", expected="<= 1 for every audit",
          compute=m1, figure="mechanisms_audit",
          why_code="an audit: the verdict counts failed audits (the mean ratio is only reported), and the broken "
                   "variants of another table join the note",
          planted_bugs=(
              PlantedBug("the Laplace tree counter's scale halved while its rows still claim ε (audit job)",
                         f"{_FLIP}::test_m1_flips_when_the_laplace_tree_noise_is_halved"),
          )),
    Claim(id="M2", paper="mechanisms",
          statement="The tree counter's error stays below each paper's stated high-probability bound with at least the stated probability.",
          reads=("counter_error",), metric="fraction of counters within the bound for all t <= T", expected=">= 1 - β",
          rows=M2_ROWS, figure="mechanisms_counter_error",
          planted_bugs=(
              PlantedBug("an error bound without the union bound over t (β for β/T), or of one node instead of the "
                         "sum of a release's nodes (counter_error jobs)", f"{_FLIP}::test_m2_flips_when_the_error_bound_is_too_small"),
          )),
    Claim(id="M3", paper="mechanisms",
          statement="The tight calibration adds no more noise than paper at the same (ε, δ), and reports by how much less.",
          reads=("counter_error",), metric="σ_tight / σ_paper", expected="<= 1", rows=M3_ROWS,
          figure="mechanisms_counter_error",
          planted_bugs=(
              PlantedBug("the tight Gaussian σ composed over 2L releases instead of L (counter_error jobs)",
                         f"{_FLIP}::test_m3_flips_when_the_tight_gaussian_calibration_composes_twice_as_often"),
          )),
]
