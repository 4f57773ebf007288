"""Claims C1-C4 of Chowdhury, Zhou, Shroff (2021), evaluated on the LQ experiments' tables.

C2, C3, C4 and the finding F2 are declared rows (:class:`~dprl.analysis.base.Rows`); C1, an
audit, keeps code of its own."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from functools import partial

import numpy as np
import pandas as pd

from dprl.analysis.audit_power import gaussian_power_note
from dprl.analysis.base import (
    KINDS, NOT_LEARNED, Claim, ClaimResult, Group, PlantedBug, RegimeCheck, Rows, Tables, overall_regime,
)
from dprl.analysis.burn_in import burn_in_margin
from dprl.analysis.learning import any_not_learned, judged_seeds, seed_note, seed_states
from dprl.analysis.printed import as_run, printed_row, printed_rows
from dprl.analysis.regime import (
    ONSET_DECADES, measured_regime, median_onset, no_escape_horizon, onset_regime, plugin_regime,
)
from dprl.analysis.selection import builtin_or_plugin, privacy_cost
from dprl.analysis.stats import (
    EXPONENT_TOL, LINEAR_SLOPE, PAPER_EXPONENT_TOL, SQRT_RATE_WINDOW, Estimate, bootstrap_ci, paired_slope_by_seed,
    per_seed_note, sqrt_sigma_exponent, verdict_exponent, verdict_near, verdict_sqrt_rate, verdict_worst_at_most,
)
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
    """C1 (Theorem 1, (ε, δ)-JDP): the audits of the Gram and target counters (𝓑₁, 𝓑₂), one
    row per calibration (a plug-in's apart), and the row of the printed constants."""
    df = tables["lq_audit"]
    out = []
    rows = as_run(df)
    for (alg, calib), g in rows.groupby([builtin_or_plugin(rows), "calibration"]):
        ratio = (g["eps_lb"].clip(lower=0) / g["claimed_epsilon"]).to_numpy()
        who = "" if not alg else (f"{declared('algorithms', 'display')[alg]}: the counters its agent "
                                               "holds are audited; that its policy reads only their releases is the "
                                               "plug-in's to show; ")
        n_fail = int((~g["passed"].astype(bool)).sum())
        over = int((g["eps_exact"] > g["claimed_epsilon"] * (1 + 1e-9)).sum())
        # an audit's verdict: no audit failed and no exact ε above the claim (the mean ratio is reported only)
        verdict = "reproduced" if n_fail == 0 and over == 0 else "not reproduced"
        out.append(ClaimResult.from_estimate(
            bootstrap_ci(ratio), verdict=verdict, calibration=C1_LABELS.get(str(calib), str(calib)),
            note=f"{who}relation: replacement (Definition 2; worst replacement pairs, exact ε under replacement); "
            f"mean of max(ε_lb, 0)/ε over {len(g)} audits (the Gram and target counters, the paper's 𝓑₁ and 𝓑₂, "
            f"at their claimed guarantee, the pair at (ε, δ); "
            f"ε ∈ {sorted(float(e) for e in g['epsilon'].unique())}, {int(g['runs'].iloc[0])} runs per input and phase); "
            f"{n_fail} audits with ε_lb > ε; largest ε_lb/ε = {float((g['eps_lb'] / g['claimed_epsilon']).max()):.3f}; "
            f"exact ε (Gaussian-DP profile) above the claim in {over}/{len(g)}. That the policy reads only released "
            f"statistics is structural and tested (tests/lq/test_agent.py); "
            + gaussian_power_note(g, "claimed_epsilon", "claimed_delta", "runs"),
            epsilon=g["epsilon"].min(), algorithm=alg or None,
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
# (docs/experiments.md), with OFU-RL at the same K for C3's pairs
REGRET_TABLES = ("lq_regret", "lq_regime", "lq_regime_eps10", "lq_regime_long")
COST_TABLES = ("lq_regret", "lq_regime", "lq_regime_long")


def settings(df: pd.DataFrame) -> pd.DataFrame:
    """A regret table's rows, with ``delta_key``: δ, or −1 for a non-private run (its δ is
    empty), so that every setting is a group."""
    return df.assign(delta_key=df["delta"].fillna(-1))


def c2_seed_states(g: pd.DataFrame) -> pd.Series:
    """Each seed's own regime (:func:`dprl.analysis.learning.seed_states`) where the theory
    predicts a burn-in (a built-in's private runs); empty otherwise: without a prediction no
    seed is excused as still in its burn-in (OFU-RL leaves it within tens of episodes, a
    plug-in's is not predicted), so every seed is judged."""
    if "burn_in_episodes" not in g or g["burn_in_episodes"].isna().all():
        return pd.Series(dtype=object)
    return seed_states(g, str(g["algorithm"].iloc[0]))


def c2_regime(g: pd.DataFrame) -> RegimeCheck:
    """C2's regime of one setting: a built-in's :func:`_regime`, and not learned when any seed
    ran past the horizon the theory gives it without ending its own burn-in (a seed stuck in
    its burn-in refutes √K whatever the others do); a plug-in's burn-in is not predicted, so
    its measured onset alone decides."""
    k_max = int(g["episode"].max())
    if g["algorithm"].iloc[0] in plugins():
        return measured_regime(g, k_max)
    check = _regime(g, k_max)
    states = c2_seed_states(g)
    note = check.note + seed_note(states)
    if any_not_learned(states) and not check.not_learned:
        return RegimeCheck(NOT_LEARNED, fit_start=check.fit_start, note=note)
    return dataclasses.replace(check, note=note)


def slope_from_fit_start(g: pd.DataFrame, check: RegimeCheck) -> Estimate:
    """The seed-paired log-log slope of the cumulative regret from the regime's fit start,
    its per-seed slopes those of the seeds inside their own regime (:func:`c2_seed_states`:
    a seed still in its burn-in is left out of the linear-seed rule of
    :func:`~dprl.analysis.stats.verdict_sqrt_rate`; the mean and interval keep every seed)."""
    est = paired_slope_by_seed(g[g["episode"] >= check.fit_start], "episode", "regret")
    return judged_seeds(est, c2_seed_states(g))


def _c2_note(grp: Group) -> str:
    g, k = grp.rows, grp.key
    k_max = int(g["episode"].max())
    who = declared("algorithms", "display")[k["algorithm"]]
    label = who if k["calibration"] == "none" else f"{who} (ε={k['epsilon']:g}, δ={k['delta_key']:g})"
    # every seed's slope, including those the per-seed rule leaves out (the regime's note names them)
    every = paired_slope_by_seed(g[g["episode"] >= grp.check.fit_start], "episode", "regret")
    return (f"{grp.table}: {label} on {k['env_label']}: log-log slope of the seed-mean cumulative exact regret vs k over "
            f"k ∈ [{int(grp.check.fit_start)}, {k_max}], t interval over {grp.est.n} seeds ({per_seed_note(every)}); "
            f"median ||Θ̂_K − Θ*||_F = {_median(g.loc[g['episode'] == k_max], 'theta_hat_error'):.3g}, "
            f"λ_min = {_median(g, 'lam_min'):.3g}")


# C2 (Theorem 2, regret Õ(√K)): per table and setting, the seed-paired log-log slope of the
# cumulative regret over the rate window, two-sided against 1/2; lq_regret's ε/δ grids serve
# C3, so C2 reads its centre setting
C2_ROWS = Rows(select=settings, table_select={"lq_regret": lambda df: settings(df[_centre(df)])},
               by=("env_label", "algorithm", "calibration", "epsilon", "delta_key"), regime=c2_regime,
               statistic=slope_from_fit_start, rule=verdict_sqrt_rate, note=_c2_note,
               calibration=lambda grp: "n/a" if grp.key["calibration"] == "none" else str(grp.key["calibration"]),
               empty="no regret curves to fit")  # a claim never drops out of the table silently


def _regime(g: pd.DataFrame, k_max: int) -> RegimeCheck:
    """Regime of one setting (``agents/lq/regime.py``) and where its slope is fitted.

    Private: reached when ``K`` is :data:`ONSET_DECADES` past the burn-in, the later of the
    predicted onset ``T* = 270Λ`` and the measured one (median over seeds); a run without a
    measured onset is not reached, unless it ran past the horizon the theory gives
    (:func:`~dprl.analysis.regime.no_escape_horizon`: ``10·T*`` times Private-OFU-RL's
    measured margin), where it did not learn (:data:`~dprl.analysis.base.NOT_LEARNED`: not
    reproduced). The slope is fitted from ``max(K/32, onset)``. Non-private: ``n/a``, fitted
    from ``K/32``. A plug-in (no predicted burn-in): its
    measured onset alone (:func:`~dprl.analysis.regime.plugin_regime`), so that C3's fit of
    a plug-in still in its burn-in is not reached, with the horizon it needs."""
    if (check := plugin_regime(g, k_max)) is not None:
        return check
    start = k_max / SLOPE_WINDOW
    if "burn_in_episodes" not in g or g["burn_in_episodes"].isna().all():
        return RegimeCheck("n/a", fit_start=start)
    t_star = float(g["burn_in_episodes"].max())
    onset = median_onset(g)
    # the jobs' fixed point K >= 10·T*(K) (Λ, hence T*, grows with the K it is computed for)
    planned = float(g["horizon_needed"].max()) if "horizon_needed" in g else float("nan")
    algorithm = str(g["algorithm"].iloc[0]) if "algorithm" in g else None  # None: no no-escape horizon
    state, need, _ = onset_regime(k_max, t_star, onset, planned, algorithm=algorithm)
    if np.isfinite(onset):
        start = max(start, onset)
    note = (f"; regime: predicted onset T* = 270Λ = {t_star:.3g} episodes, measured onset (per-episode regret "
            f"halved) {'not within K' if not np.isfinite(onset) else f'at k = {onset:.3g}'} (median over seeds); "
            f"needs K >= {10**ONSET_DECADES:g}·max(T*, onset)"
            + (f"; no onset by K, past the horizon the theory gives ({no_escape_horizon(t_star, algorithm):.3g} = "
               f"{10**ONSET_DECADES:g}·T*·{burn_in_margin(algorithm):g}, the measured margin)" if state == NOT_LEARNED else ""))
    return RegimeCheck(state, need, start, note)


def with_log_inv_delta(cost: pd.DataFrame) -> pd.DataFrame:
    """A privacy cost (:func:`dprl.analysis.selection.privacy_cost`) ready for C3's fits:
    with ``log_inv_delta`` = ln(1/δ), the variable of the δ fit, and without the rows whose
    cost is undefined (NaN)."""
    return cost.assign(log_inv_delta=np.log(1.0 / cost["delta"])).dropna(subset=["cost"])


# C3's exponents and the nearest wrong ones a plausible bug gives: −1/4 in ε (σ ∝ ε^(-1/2)),
# 0 in ln(1/δ) (δ ignored)
C3_EPS, C3_EPS_WRONG, C3_DELTA, C3_DELTA_WRONG = -0.5, -0.25, 0.25, 0.0
# C3's and F2's two fits, in row order: the variable, then (the paper's exponent, the wrong
# one, the variable held fixed, its name in a note)
FITS = {"epsilon": (C3_EPS, C3_EPS_WRONG, "delta", "ε"),
        "log_inv_delta": (C3_DELTA, C3_DELTA_WRONG, "epsilon", "ln(1/δ)")}
MIN_GRID = 3  # grid points an exponent is fitted over


def _cost(df: pd.DataFrame) -> pd.DataFrame:
    return with_log_inv_delta(privacy_cost(df, final=True))


def no_cost(df: pd.DataFrame) -> str | None:
    """Why a table gives C3 and F2 nothing to fit: no private run paired with its OFU-RL run."""
    return "no private runs paired with OFU-RL runs" if _cost(df).empty else None


def paper_statement(cost: pd.DataFrame) -> pd.Series:
    """C3's rows: the paper calibration's, and a plug-in's at any calibration (judged by the
    paper's statement)."""
    return cost["algorithm"].isin(list(plugins())) | (cost["calibration"] == "paper")


def own_sigmas(cost: pd.DataFrame) -> pd.Series:
    """F2's rows: a built-in's other calibrations, judged by the exponents their own σ's predict."""
    return ~cost["algorithm"].isin(list(plugins())) & (cost["calibration"] != "paper")


def exponent_fits(family: Callable[[pd.DataFrame], pd.Series]) -> Callable[[pd.DataFrame], pd.DataFrame]:
    """The selection of C3's (or F2's) fits from a table: the privacy cost of the runs of
    ``family``, once per fit of :data:`FITS` (column ``fit``), each (algorithm, instance,
    calibration) at the value of the fixed variable with the most grid points (``fixed_at``)."""
    def select(df: pd.DataFrame) -> pd.DataFrame:
        cost = _cost(df)
        cost = cost[family(cost)]
        parts = []
        for x, (_, _, fixed, _) in FITS.items():
            for _, g in cost.groupby(["algorithm", "env_label", "calibration"]):
                at = float(g.groupby(fixed)[x].nunique().idxmax())
                parts.append(g[np.isclose(g[fixed], at)].assign(fit=x, fixed_at=at))
        return pd.concat(parts, ignore_index=True) if parts else cost.assign(fit="", fixed_at=np.nan)
    return select


def _grid(g: pd.DataFrame) -> list[float]:
    return sorted(g[g["fit"].iloc[0]].unique())


def exponent_regime(g: pd.DataFrame) -> RegimeCheck:
    """A fit's regime: that of every grid point (:func:`_regime` at the fit's K); ``n/a`` for
    a grid too short to fit."""
    if len(_grid(g)) < MIN_GRID:
        return RegimeCheck()
    k_fin = int(g["episode"].max())
    return overall_regime([_regime(gs, k_fin) for _, gs in g.groupby(g["fit"].iloc[0])])


def cost_exponent(g: pd.DataFrame, check: RegimeCheck) -> Estimate:
    """The fitted exponent of the seed-mean privacy cost in the fit's variable, paired by seed
    (non-positive means dropped); nothing on a grid too short to fit."""
    return paired_slope_by_seed(g, g["fit"].iloc[0], "cost") if len(_grid(g)) >= MIN_GRID else Estimate.empty()


def predicted_exponent(g: pd.DataFrame) -> float:
    """The exponent a calibration predicts: the paper's derivation (privacy term ∝ sqrt(σ))
    applied to the σ's actually used (agents/lq/regime.py: sigma_exponents)."""
    x = g["fit"].iloc[0]
    return sqrt_sigma_exponent(g.groupby(x)["sigma_gram"].median() if "sigma_gram" in g else pd.Series(dtype=float))


def paper_exponent_rule(grp: Group) -> Callable[[Estimate], str]:
    """C3: the paper's exponent, excluding the nearest wrong one."""
    target, wrong, _, _ = FITS[grp.key["fit"]]
    return partial(verdict_exponent, target=target, wrong=wrong)


def own_sigma_rule(grp: Group) -> Callable[[Estimate], str]:
    """F2: the exponent the calibration's own σ's predict (a CI wider than 2: too little data)."""
    return partial(verdict_near, target=predicted_exponent(grp.rows), width_limit=2.0)


def _fit_note(grp: Group, rule: str) -> str:
    g, k = grp.rows, grp.key
    x = k["fit"]
    env = k["env_label"]
    if k["algorithm"] in plugins():
        env = f"{declared('algorithms', 'display')[k['algorithm']]} on {env}"
    where = f"{grp.table}: {env}: {FITS[x][3]} at {FITS[x][2]}={g['fixed_at'].iloc[0]:g}"
    grid = _grid(g)
    if len(grid) < MIN_GRID:
        return f"{where}: grid has {len(grid)} point(s) in this preset; need >= {MIN_GRID}"
    means = g.groupby(x)["cost"].mean()
    shift = g.groupby(x)["lam_min"].median() if "lam_min" in g else pd.Series(dtype=float)
    check = grp.check
    return (f"{where}: fitted exponent of the seed-mean privacy cost (Regret_private − Regret_OFU at "
            f"K={int(g['episode'].max())}, paired by seed) over {[round(float(v), 3) for v in grid]}; {rule}; mean costs "
            f"{[round(float(v), 2) for v in means.to_numpy()]}; λ_min = Λ (regularizer scale; the shift is 2Λ) "
            f"{[float(f'{v:.3g}') for v in shift.to_numpy()]}; non-positive means are dropped from the fit; CI over "
            f"{grp.est.n} seeds; regime: "
            f"{'every grid point past max(T*, 10·onset)' if check.reached else f'needs K >= {check.horizon_needed:.3g}'}")


def _c3_note(grp: Group) -> str:
    target, wrong, _, _ = FITS[grp.key["fit"]]
    return _fit_note(grp, f"the paper's exponent {target:+g}, which the CI (± {PAPER_EXPONENT_TOL:g}) must contain while "
                          f"excluding {wrong:+g}; this calibration's σ's give {predicted_exponent(grp.rows):+.3f}")


def _f2_note(grp: Group) -> str:
    return _fit_note(grp, f"expected {predicted_exponent(grp.rows):+.3f} for the σ's of this calibration (the paper's "
                          f"zCDP route gives {FITS[grp.key['fit']][0]:+g})")


_FIT_BY = ("fit", "algorithm", "env_label", "calibration")

# C3 (Theorem 2's privacy term, ∝ ε^(-1/2) ln(1/δ)^(1/4)) on the paper calibration's rows,
# against the paper's −1/2 and +1/4: per table, its ε fits, then its ln(1/δ) fits
C3_ROWS = Rows(select=exponent_fits(paper_statement), by=_FIT_BY, regime=exponent_regime, statistic=cost_exponent,
               rule=paper_exponent_rule, rule_of_group=True, note=_c3_note, unmeasured=no_cost,
               empty="no paper-calibration runs paired with OFU-RL runs")
# F2 (a finding): the tight calibration's privacy cost follows the exponents its own σ's
# predict (analytic Gaussian: not the paper's −1/2 and +1/4)
F2_ROWS = Rows(select=exponent_fits(own_sigmas), by=_FIT_BY, regime=exponent_regime, statistic=cost_exponent,
               rule=own_sigma_rule, rule_of_group=True, note=_f2_note, unmeasured=no_cost,
               empty="no non-paper-calibration runs paired with OFU-RL runs")


def ridge_checkpoints(df: pd.DataFrame) -> pd.DataFrame:
    """The checkpoints of a table's OFU-RL jobs that recorded the ridge comparison."""
    return df[df["ridge_gap"].notna()] if "ridge_gap" in df else df.iloc[:0]


def ridge_gap_range(g: pd.DataFrame, check: RegimeCheck) -> Estimate:
    """C4, deterministic: the largest relative difference to ridge (the worst checkpoint
    decides), the interval the range [min, max] over the checkpoints."""
    gaps = g["ridge_gap"]
    return Estimate(float(gaps.max()), float(gaps.min()), float(gaps.max()), len(gaps))


def _c4_note(grp: Group) -> str:
    return (f"largest relative Frobenius difference between Θ̂_k = V_k⁻¹U_k of the changing-regularizer code with "
            f"H_k = λI, L_k = 0 and an independent ridge solution (least squares on [Z; √λ I]) over {grp.est.n} "
            f"checkpoints of all OFU-RL jobs (interval = [min, max]); tolerance {RIDGE_TOL:g} for round-off")


# C4: with H_k = λI, L_k = 0 the changing-regularizer estimate Θ̂_k = V_k⁻¹U_k is the ridge
# estimate; one row pools every OFU-RL checkpoint of both tables
C4_ROWS = Rows(select=ridge_checkpoints, by=(), stack=True, statistic=ridge_gap_range, calibration="n/a",
               rule=partial(verdict_worst_at_most, threshold=RIDGE_TOL), note=_c4_note, epsilon=lambda grp: float("nan"),
               empty="no OFU-RL run recorded the ridge comparison")


_JOBS = "tests/lq/test_jobs.py"

CLAIMS = [
    Claim(id="C1", paper=PAPER,
          statement="Private-OFU-RL is (ε,δ)-JDP: its counters pass the privacy audit; the policy reads only released statistics.",
          plugin_statement="{algorithm} is (ε,δ)-JDP: the counters it holds pass the privacy audit (that its policy reads "
                           "only their releases is the plug-in's to show).",
          reads=("lq_audit",), metric="audited ε_lb / claimed ε of the Gram counter, the target counter and the pair",
          expected="<= 1 for every audit", compute=c1, figure="lq_audit",
          why_code="an audit: the verdict counts failed audits and exact ε above the claim (the mean ratio is only "
                   "reported), and the printed constants add a row of their own",
          planted_bugs=(
              PlantedBug("Private-OFU-RL's σ_gram and σ_target cut 10x in the built agent: the audit fails",
                         "tests/core/test_held_noise.py::test_noise_cut_10x_in_the_built_agent_flips_the_audit_and_the_accounting"),
              PlantedBug("a tenth of the noise in the compiled path the audit job draws through (the σ the loop's "
                         "noise kernel is given, or the noise inside the kernel, which the σ report cannot see)",
                         "tests/lq/test_noise_path.py::test_a_tenth_of_the_noise_in_the_compiled_audit_path_flips_c1"),
              PlantedBug("a plug-in holding half of Private-OFU-RL's σ's",
                         "tests/core/test_plugin_settings.py::test_audits_examine_the_noise_a_plugin_holds_and_the_accounting_reads_it"),
              PlantedBug("one counter's audit above its ε", f"{_JOBS}::test_c1_and_c4_fail_when_they_should"),
          )),
    # √K is the rate of every LQ instance, not only of a worst case: the regret lower bound
    # Ω(√(d_u² d_x K)) of Simchowitz & Foster (2020) is local minimax, i.e. it holds on a small
    # neighbourhood of any (A, B). So C2 is tested two-sided on random_lq and the double
    # integrator: log K, a saturating curve and linear regret all fail it.
    Claim(id="C2", paper=PAPER,
          statement="Regret grows like √K for OFU-RL and for Private-OFU-RL (the local minimax rate of every LQ "
                    "instance: Simchowitz & Foster 2020), two-sided.",
          plugin_statement="Regret grows like √K for {algorithm} (the local minimax rate of every LQ instance: "
                           "Simchowitz & Foster 2020), two-sided.",
          reads=("lq_regret",), optional=REGRET_TABLES[1:], metric="log-log slope of cumulative regret vs K",
          expected=f"CI inside [{SQRT_RATE_WINDOW[0]:g}, {SQRT_RATE_WINDOW[1]:g}]; no seed >= {LINEAR_SLOPE:g}",
          rows=C2_ROWS, figure="lq_regret_loglog", kind=KINDS[0],
          planted_bugs=(
              PlantedBug("a saturating regret (k^0.15), and one seed with linear regret", f"{_JOBS}::test_c2_is_two_sided"),
              PlantedBug("Private-OFU-RL's regret linear in K inside its regime",
                         f"{_JOBS}::test_c2_separates_sqrt_k_from_linear_regret"),
              PlantedBug("a controller that keeps its first gain for ever, and one that never updates its estimate, "
                         "planted in the compiled loop of real OFU-RL and Private-OFU-RL jobs (ε = 1e6, K = 12,000: "
                         "past 10·T*·margin without an onset, so not learned, not 'not reached')",
                         "tests/lq/test_non_learners.py::test_a_controller_that_does_not_learn_is_not_reproduced"),
              PlantedBug("a no-escape rule that fires before the horizon the theory gives: a correct run stopped "
                         "before its predicted burn-in must stay inconclusive with the horizon it needs",
                         "tests/lq/test_non_learners.py::"
                         "test_a_correct_run_stopped_before_its_burn_in_is_inconclusive_with_the_horizon_it_needs"),
          )),
    Claim(id="C3", paper=PAPER,
          statement="The privacy cost Regret_private − Regret_OFU at fixed K scales like ε^(-1/2) and like ln(1/δ)^(1/4).",
          plugin_statement="The privacy cost Regret_{algorithm} − Regret_{baseline} at fixed K scales like ε^(-1/2) and like "
                           "ln(1/δ)^(1/4).",
          reads=("lq_regret",), optional=COST_TABLES[1:],
          metric="fitted exponent of the privacy cost vs ε and vs ln(1/δ) (paper calibration)",
          expected=f"−1/2 in ε (excluding −1/4), +1/4 in ln 1/δ (excluding 0), each ± {PAPER_EXPONENT_TOL:g}",
          rows=C3_ROWS, figure="lq_privacy_cost",
          planted_bugs=(
              PlantedBug("a privacy cost ∝ ε^-1/4 (the nearest wrong exponent)",
                         f"{_JOBS}::test_c3_recovers_the_exponents_and_rejects_wrong_ones"),
              PlantedBug("a calibration that ignores δ: cost flat in ln(1/δ)",
                         f"{_JOBS}::test_lq_regime_long_serves_c2_and_c3_and_a_planted_cost_bug_flips_its_c3_rows"),
          )),
    Claim(id="C4", paper=PAPER,
          statement="With H_k = λI the changing-regularizer estimator reduces to the standard ridge estimate.",
          reads=("lq_regret",), optional=("lq_oracle",), metric="relative difference to the ridge solution",
          expected=f"0 (<= {RIDGE_TOL:g})", rows=C4_ROWS,
          planted_bugs=(
              PlantedBug("the changing-regularizer estimate 1e-3 away from ridge", f"{_JOBS}::test_c1_and_c4_fail_when_they_should"),
          )),
    Claim(id="F2", paper=PAPER,
          statement="Package finding: under the tight calibration the privacy cost follows the exponents of "
                    "sqrt(σ) for its own σ's, not the paper's −1/2 and +1/4",
          reads=("lq_regret",), optional=COST_TABLES[1:],
          metric="fitted exponent of the privacy cost vs ε and vs ln(1/δ) (tight calibration)",
          expected=f"½ × the slope of log σ for the tight σ's, ± {EXPONENT_TOL:g}",
          rows=F2_ROWS, figure="lq_privacy_cost", finding=True,
          planted_bugs=(
              PlantedBug("a tight privacy cost ∝ ε^-1 where its σ's predict a shallower exponent",
                         f"{_JOBS}::test_c3_recovers_the_exponents_and_rejects_wrong_ones"),
          )),
]
