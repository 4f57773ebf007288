"""Claims C1-C4 of Chowdhury, Zhou, Shroff (2021), evaluated on the LQ experiments' tables."""

from __future__ import annotations

import numpy as np
import pandas as pd

from dprl.analysis.audit_power import gaussian_power_note
from dprl.analysis.printed import as_run, printed_row, printed_rows
from dprl.analysis.base import KINDS, Claim, ClaimResult, PlantedBug, Tables, overall_regime
from dprl.analysis.stats import (
    EXPONENT_TOL, LINEAR_SLOPE, PAPER_EXPONENT_TOL, SQRT_RATE_WINDOW, bootstrap_ci, paired_slope_by_seed, per_seed_note,
    sqrt_sigma_exponent, verdict_exponent, verdict_near, verdict_sqrt_rate,
)
from dprl.analysis.regime import ONSET_DECADES, measured_regime, median_onset, onset_regime
from dprl.analysis.selection import builtin_or_plugin, final_rows, present_tables, privacy_costs
from dprl.experiments.registry import declared, plugins

PAPER = "lq"
CENTRE_EPS, CENTRE_DELTA = 1.0, 1e-3
SLOPE_WINDOW = 32  # C2 fits the log-log slope on checkpoints k >= K/32 (the last 1.5 decades)
RIDGE_TOL = 1e-8  # C4: relative difference allowed for floating-point round-off


# The calibration column of C1's rows (src/dprl/README.md, "Claims"): the paper's σ's as
# printed, then this package's two calibrations.
C1_LABELS = {"printed": "printed: σ² = 8LΔ² ln(2/δ)/ε²", "paper": "package, corrected: zCDP solved exactly, σ ×1.5",
             "tight": "package: tight"}


def c1(tables: Tables) -> list[ClaimResult]:
    df = tables["lq_audit"]
    out = []
    rows = as_run(df)
    for (alg, calib), g in rows.groupby([builtin_or_plugin(rows), "calibration"]):
        ratio = (g["eps_lb"].clip(lower=0) / g["claimed_epsilon"]).to_numpy()
        who = "" if not alg else (f"{declared('algorithms', 'display')[alg]}: the counters its agent "
                                               "holds are audited; that its policy reads only their releases is the "
                                               "plug-in's to show; ")
        est = bootstrap_ci(ratio)
        n_fail = int((~g["passed"].astype(bool)).sum())
        over = int((g["eps_exact"] > g["claimed_epsilon"] * (1 + 1e-9)).sum())
        verdict = "reproduced" if n_fail == 0 and over == 0 else "not reproduced"
        out.append(ClaimResult(
            est.value, est.low, est.high, verdict, C1_LABELS.get(str(calib), str(calib)),
            f"{who}relation: replacement (Definition 2; worst replacement pairs, exact ε under replacement); "
            f"mean of max(ε_lb, 0)/ε over {len(g)} audits (the Gram and target counters, the paper's 𝓑₁ and 𝓑₂, "
            f"at their claimed guarantee, the pair at (ε, δ); "
            f"ε ∈ {sorted(float(e) for e in g['epsilon'].unique())}, {int(g['runs'].iloc[0])} runs per input and phase); "
            f"{n_fail} audits with ε_lb > ε; largest ε_lb/ε = {float((g['eps_lb'] / g['claimed_epsilon']).max()):.3f}; "
            f"exact ε (Gaussian-DP profile) above the claim in {over}/{len(g)}. That the policy reads only released "
            f"statistics is structural and tested (tests/lq/test_agent.py); "
            + gaussian_power_note(g, "claimed_epsilon", "claimed_delta", "runs"),
            epsilon=float(g["epsilon"].min()), algorithm=alg or None,
        ))
    if len(printed := printed_rows(df)):
        out.append(printed_row(printed, C1_LABELS["printed"]))
    return out


def _median(df: pd.DataFrame, col: str) -> float:
    return float(df[col].median()) if col in df and len(df) else float("nan")


def _centre(df: pd.DataFrame) -> pd.Series:
    nonpriv = df["calibration"] == "none"
    centre = np.isclose(df["epsilon"], CENTRE_EPS) & np.isclose(df["delta"].fillna(-1), CENTRE_DELTA)
    return nonpriv | centre


# lq_regime: high ε and long K, inside the regime; lq_regime_eps10 (`default`): ε = 10 to
# K = 1e7 (C2 only: no OFU-RL runs); lq_regime_long (`full` only): the paper calibration at
# ε <= 5 to K = 4e8, inside the regime and where C3's exponents are its calibration's
# (config.yaml), with OFU-RL at the same K for C3's pairs
REGRET_TABLES = ("lq_regret", "lq_regime", "lq_regime_eps10", "lq_regime_long")
COST_TABLES = ("lq_regret", "lq_regime", "lq_regime_long")


def _regret_tables(tables: Tables) -> list[tuple[str, pd.DataFrame]]:
    return present_tables(tables, REGRET_TABLES)


def c2(tables: Tables) -> list[ClaimResult]:
    out = []
    for name, df in _regret_tables(tables):
        if name == "lq_regret":  # its ε/δ grids serve C3; C2 reads its centre setting
            df = df[_centre(df)]
        for (env, alg, calib, eps, delta), g in df.groupby(
                ["env_label", "algorithm", "calibration", "epsilon", df["delta"].fillna(-1)]):
            k_max = int(g["episode"].max())
            # a plug-in's burn-in is not predicted: its measured onset alone decides
            regime, need, start, regime_note = (measured_regime(g, k_max) if alg in plugins() else _regime(g, k_max))
            tail = g[g["episode"] >= start]
            est = paired_slope_by_seed(tail, "episode", "regret")
            who = declared("algorithms", "display")[alg]
            label = who if calib == "none" else f"{who} (ε={eps:g}, δ={delta:g})"
            out.append(ClaimResult(
                est.value, est.low, est.high, verdict_sqrt_rate(est), "n/a" if calib == "none" else str(calib),
                f"{name}: {label} on {env}: log-log slope of the seed-mean cumulative exact regret vs k over "
                f"k ∈ [{int(start)}, {k_max}], t interval over {est.n} seeds ({per_seed_note(est)}); "
                f"median ||Θ̂_K − Θ*||_F = {_median(g.loc[g['episode'] == k_max], 'theta_hat_error'):.3g}, "
                f"λ_min = {_median(g, 'lam_min'):.3g}{regime_note}",
                regime, need, float("nan") if calib == "none" else float(eps), algorithm=alg,
            ))
    return out


def _regime(g: pd.DataFrame, k_max: int) -> tuple[str, float, float, str]:
    """Regime of one setting (``agents/lq/regime.py``) and where its slope is fitted.

    Private: reached when ``K`` is :data:`ONSET_DECADES` past the burn-in, the later of the
    predicted onset ``T* = 270Λ`` and the measured one (median over seeds; a run without a
    measured onset is not reached); the slope is then fitted from ``max(K/32, onset)``.
    Non-private: ``n/a``, fitted from ``K/32``."""
    start = k_max / SLOPE_WINDOW
    if "burn_in_episodes" not in g or g["burn_in_episodes"].isna().all():
        return "n/a", float("nan"), start, ""
    t_star = float(g["burn_in_episodes"].max())
    onset = median_onset(g)
    # the jobs' fixed point K >= 10·T*(K) (Λ, hence T*, grows with the K it is computed for)
    planned = float(g["horizon_needed"].max()) if "horizon_needed" in g else float("nan")
    regime, need, _ = onset_regime(k_max, t_star, onset, planned)
    if np.isfinite(onset):
        start = max(start, onset)
    note = (f"; regime: predicted onset T* = 270Λ = {t_star:.3g} episodes, measured onset (per-episode regret "
            f"halved) {'not within K' if not np.isfinite(onset) else f'at k = {onset:.3g}'} (median over seeds); "
            f"needs K >= {10**ONSET_DECADES:g}·max(T*, onset)")
    return regime, need, start, note


def privacy_cost(df: pd.DataFrame) -> pd.DataFrame:
    """Per (env, seed, private algorithm and setting): final regret minus the same seed's
    regret of the algorithm's declared baseline (Private-OFU-RL: OFU-RL; a plug-in: the one it
    names; common random numbers: same system and noise), with ``log_inv_delta`` = ln(1/δ)
    for C3's δ fit."""
    cost = privacy_costs(final_rows(df), ["env_label", "seed"])
    cost["log_inv_delta"] = np.log(1.0 / cost["delta"])
    return cost.dropna(subset=["cost"])


def _exponent_rows(name: str, cost: pd.DataFrame, x: str, fixed: str, expected: float, wrong: float, what: str,
                   package: bool) -> list[ClaimResult]:
    """One row per (env, calibration): the fitted exponent of the privacy cost in ``x`` at the
    value of ``fixed`` that has the most ``x`` values in this table. ``package=False``: the
    paper calibration's rows, judged against the paper's exponent ``expected`` and required
    to exclude ``wrong`` (:func:`verdict_exponent`); ``package=True``: the other
    calibrations' rows, judged against the exponent their own σ's predict (a finding of this
    package, not the paper's statement)."""
    out = []
    for (alg, env, calib), g in cost.groupby(["algorithm", "env_label", "calibration"]):
        plugin = alg in plugins()
        # a plug-in's rows are judged by the paper's statement (C3), at any calibration
        if (package and plugin) or (not plugin and (calib == "paper") == package):
            continue
        who = declared("algorithms", "display")[alg]
        if plugin:
            env = f"{who} on {env}"
        counts = g.groupby(fixed)[x].nunique()
        fixed_value = float(counts.idxmax())
        g = g[np.isclose(g[fixed], fixed_value)]
        grid = sorted(g[x].unique())
        where = f"{name}: {env}: {what} at {fixed}={fixed_value:g}"
        if len(grid) < 3:
            out.append(ClaimResult(np.nan, np.nan, np.nan, "inconclusive", str(calib),
                                   f"{where}: grid has {len(grid)} point(s) in this preset; need >= 3",
                                   epsilon=float(g["epsilon"].min()), algorithm=alg))
            continue
        means = g.groupby(x)["cost"].mean()
        shift = g.groupby(x)["lam_min"].median() if "lam_min" in g else pd.Series(dtype=float)
        est = paired_slope_by_seed(g, x, "cost")
        # the exponent this calibration predicts: the paper's derivation (privacy term ∝ sqrt(σ))
        # applied to the σ's actually used (agents/lq/regime.py: sigma_exponents)
        pred = sqrt_sigma_exponent(g.groupby(x)["sigma_gram"].median() if "sigma_gram" in g else pd.Series(dtype=float))
        if package:
            verdict = verdict_near(est, pred, width_limit=2.0)  # a CI wider than 2: too little data
            rule = f"expected {pred:+.3f} for the σ's of this calibration (the paper's zCDP route gives {expected:+g})"
        else:
            verdict = verdict_exponent(est, expected, wrong)
            rule = (f"the paper's exponent {expected:+g}, which the CI (± {PAPER_EXPONENT_TOL:g}) must contain while "
                    f"excluding {wrong:+g}; this calibration's σ's give {pred:+.3f}")
        k_fin = int(g["episode"].max())
        points = [_regime(gs, k_fin) for _, gs in g.groupby(x)]
        regime, need = overall_regime([r[:2] for r in points])
        out.append(ClaimResult(
            est.value, est.low, est.high, verdict, str(calib),
            f"{where}: fitted exponent of the seed-mean privacy cost (Regret_private − Regret_OFU at K={k_fin}, "
            f"paired by seed) over {[round(float(v), 3) for v in grid]}; {rule}; mean costs "
            f"{[round(float(v), 2) for v in means.to_numpy()]}; λ_min = Λ (regularizer scale; the shift is 2Λ) "
            f"{[float(f'{v:.3g}') for v in shift.to_numpy()]}; non-positive means are dropped from the fit; CI over {est.n} seeds; "
            f"regime: {'every grid point past max(T*, 10·onset)' if regime == 'reached' else f'needs K >= {need:.3g}'}",
            regime, need, float(g["epsilon"].min()), algorithm=alg,
        ))
    return out


# C3's exponents and the nearest wrong ones a plausible bug gives: −1/4 in ε (σ ∝ ε^(-1/2)),
# 0 in ln(1/δ) (δ ignored)
C3_EPS, C3_EPS_WRONG, C3_DELTA, C3_DELTA_WRONG = -0.5, -0.25, 0.25, 0.0


def _c3_rows(tables: Tables, package: bool) -> list[ClaimResult]:
    rows = []
    for name, df in _regret_tables(tables):
        if name not in COST_TABLES:
            continue
        cost = privacy_cost(df)
        if cost.empty:
            rows.append(ClaimResult(np.nan, np.nan, np.nan, "inconclusive", "n/a",
                                    f"{name}: no private runs paired with OFU-RL runs"))
            continue
        rows += _exponent_rows(name, cost, "epsilon", "delta", C3_EPS, C3_EPS_WRONG, "ε", package)
        rows += _exponent_rows(name, cost, "log_inv_delta", "epsilon", C3_DELTA, C3_DELTA_WRONG, "ln(1/δ)", package)
    return rows or [ClaimResult(np.nan, np.nan, np.nan, "inconclusive", "n/a",
                                f"no {'non-paper' if package else 'paper'}-calibration runs paired with OFU-RL runs")]


def c3(tables: Tables) -> list[ClaimResult]:
    """C3 on the paper calibration's rows, against the paper's −1/2 and +1/4."""
    return _c3_rows(tables, package=False)


def f2(tables: Tables) -> list[ClaimResult]:
    """Package finding F2: the tight calibration's privacy cost follows the exponents its own
    σ's predict (analytic Gaussian: not the paper's −1/2 and +1/4)."""
    return _c3_rows(tables, package=True)


def c4(tables: Tables) -> list[ClaimResult]:
    frames = [t for name in ("lq_regret", "lq_oracle") if (t := tables.get(name)) is not None and "ridge_gap" in t]
    gaps = pd.concat([f["ridge_gap"] for f in frames]).dropna() if frames else pd.Series(dtype=float)
    if gaps.empty:
        return [ClaimResult(np.nan, np.nan, np.nan, "inconclusive", "n/a", "no OFU-RL run recorded the ridge comparison")]
    worst = float(gaps.max())
    verdict = "reproduced" if worst <= RIDGE_TOL else "not reproduced"
    return [ClaimResult(
        worst, float(gaps.min()), worst, verdict, "n/a",
        f"largest relative Frobenius difference between Θ̂_k = V_k⁻¹U_k of the changing-regularizer code with "
        f"H_k = λI, L_k = 0 and an independent ridge solution (least squares on [Z; √λ I]) over {len(gaps)} "
        f"checkpoints of all OFU-RL jobs (interval = [min, max]); tolerance {RIDGE_TOL:g} for round-off",
    )]


CLAIMS = [
    Claim("C1", PAPER, "Private-OFU-RL is (ε,δ)-JDP: its counters pass the privacy audit; the policy reads only released statistics.",
          ("lq_audit",), "audited ε_lb / claimed ε of the Gram counter, the target counter and the pair", "<= 1 for every audit", c1, "lq_audit"),
    # √K is the rate of every LQ instance, not only of a worst case: the regret lower bound
    # Ω(√(d_u² d_x K)) of Simchowitz & Foster (2020) is local minimax, i.e. it holds on a small
    # neighbourhood of any (A, B). So C2 is tested two-sided on random_lq and the double
    # integrator: log K, a saturating curve and linear regret all fail it.
    Claim("C2", PAPER, "Regret grows like √K for OFU-RL and for Private-OFU-RL (the local minimax rate of every LQ "
          "instance: Simchowitz & Foster 2020), two-sided.", ("lq_regret",), "log-log slope of cumulative regret vs K",
          f"CI inside [{SQRT_RATE_WINDOW[0]:g}, {SQRT_RATE_WINDOW[1]:g}]; no seed >= {LINEAR_SLOPE:g}", c2, "lq_regret_loglog",
          kind=KINDS[0]),
    Claim("C3", PAPER, "The privacy cost Regret_private − Regret_OFU at fixed K scales like ε^(-1/2) and like ln(1/δ)^(1/4).",
          ("lq_regret",), "fitted exponent of the privacy cost vs ε and vs ln(1/δ) (paper calibration)",
          f"−1/2 in ε (excluding −1/4), +1/4 in ln 1/δ (excluding 0), each ± {PAPER_EXPONENT_TOL:g}", c3,
          "lq_privacy_cost"),
    Claim("C4", PAPER, "With H_k = λI the changing-regularizer estimator reduces to the standard ridge estimate.",
          ("lq_regret",), "relative difference to the ridge solution", f"0 (<= {RIDGE_TOL:g})", c4, None),
    Claim("F2", PAPER, "Package finding: under the tight calibration the privacy cost follows the exponents of "
          "sqrt(σ) for its own σ's, not the paper's −1/2 and +1/4", ("lq_regret",),
          "fitted exponent of the privacy cost vs ε and vs ln(1/δ) (tight calibration)",
          f"½ × the slope of log σ for the tight σ's, ± {EXPONENT_TOL:g}", f2, "lq_privacy_cost", finding=True),
]

# What would flip each verdict (dprl.analysis.base.PlantedBug): the bug, and the test that
# plants it and asserts the flip through this module's rule.
PLANTED_BUGS: dict[str, tuple[PlantedBug, ...]] = {
    "C1": (
        PlantedBug("Private-OFU-RL's σ_gram and σ_target cut 10x in the built agent: the audit fails",
                   "tests/core/test_held_noise.py::test_noise_cut_10x_in_the_built_agent_flips_the_audit_and_the_accounting"),
        PlantedBug("a plug-in holding half of Private-OFU-RL's σ's",
                   "tests/core/test_plugin_settings.py::test_audits_examine_the_noise_a_plugin_holds_and_the_accounting_reads_it"),
        PlantedBug("one counter's audit above its ε", "tests/lq/test_jobs.py::test_c1_and_c4_fail_when_they_should"),
    ),
    "C2": (
        PlantedBug("a saturating regret (k^0.15), and one seed with linear regret",
                   "tests/lq/test_jobs.py::test_c2_is_two_sided"),
        PlantedBug("Private-OFU-RL's regret linear in K inside its regime",
                   "tests/lq/test_jobs.py::test_c2_separates_sqrt_k_from_linear_regret"),
    ),
    "C3": (
        PlantedBug("a privacy cost ∝ ε^-1/4 (the nearest wrong exponent)",
                   "tests/lq/test_jobs.py::test_c3_recovers_the_exponents_and_rejects_wrong_ones"),
        PlantedBug("a calibration that ignores δ: cost flat in ln(1/δ)",
                   "tests/lq/test_jobs.py::test_lq_regime_long_serves_c2_and_c3_and_a_planted_cost_bug_flips_its_c3_rows"),
    ),
    "C4": (
        PlantedBug("the changing-regularizer estimate 1e-3 away from ridge",
                   "tests/lq/test_jobs.py::test_c1_and_c4_fail_when_they_should"),
    ),
    "F2": (
        PlantedBug("a tight privacy cost ∝ ε^-1 where its σ's predict a shallower exponent",
                   "tests/lq/test_jobs.py::test_c3_recovers_the_exponents_and_rejects_wrong_ones"),
    ),
}
