"""Claims Z1-Z8 and finding F3 of Zhou (2022), "Differentially private reinforcement learning
with linear function approximation" (linear mixture MDPs), computed from the aggregated tables."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial

import numpy as np
import pandas as pd

from dprl.analysis.audit_power import gaussian_power_note
from dprl.analysis.base import (
    KINDS, Claim, ClaimResult, Group, PlantedBug, RegimeCheck, Rows, Tables, Verdict, combine_verdicts, overall_regime,
)
from dprl.analysis.learning import (
    LEARNED_SAVING, any_not_learned, judged_seeds, seed_note, seed_states, share_of_uniform, verdict_below_uniform, verdict_width,
)
from dprl.analysis.printed import as_run, printed_row, printed_rows
from dprl.analysis.regime import ONSET_DECADES, is_plugin, measured_regime, median_onset, onset_regime, plugin_regime
from dprl.analysis.selection import builtin_or_plugin, final_rows, present_tables, privacy_cost
from dprl.analysis.stats import (
    EXPONENT_TOL, LINEAR_SLOPE, PAPER_EXPONENT_TOL, SQRT_RATE_WINDOW, Estimate, bootstrap_ci, group_slope,
    paired_slope_by_seed, per_seed_note, sqrt_sigma_exponent, t_interval, verdict_exponent, verdict_inside, verdict_near,
    verdict_ordering, verdict_sqrt_rate, verdict_upper,
)
from dprl.experiments.registry import declared, plugins

PAPER = "linmix"


# ------------------------------------------------------------------------------ Z1


# The calibration column of Z1's rows (src/dprl/README.md, "Claims").
Z1_LABELS = {"printed": "printed: σ = (HΔ/ε)·sqrt(32 m ln(4H/δ))",
             "paper": "package, corrected: zCDP solved exactly, replacement Δ", "tight": "package: tight"}


def z1(tables: Tables) -> list[ClaimResult]:
    df = tables["linmix_audit"]
    out = []
    rows = as_run(df)
    # the built-in mechanisms' audits give one row per calibration; each plug-in's its own rows
    for (alg, calib), g in rows.groupby([builtin_or_plugin(rows), "calibration"]):
        ratio = float((g["eps_lb"] / g["epsilon"]).max())
        acc_ok = bool((g["eps_exact"] <= g["epsilon"] * (1 + 1e-9)).all())
        ok = bool(g["passed"].astype(bool).all()) and acc_ok
        note = (f"max audited ε_lb/ε over {len(g)} audits ({', '.join(sorted(g['mechanism'].unique()))}; "
                f"{int(g['runs'].min())} runs each); exact GDP-accounted ε under replacement sensitivities "
                f"max {float((g['eps_exact'] / g['epsilon']).max()):.3f}·ε; "
                + ("planners read only released statistics (tests); " if not alg else
                   f"{declared('algorithms', 'display')[alg]}: the Privatizer it holds is audited; that its planner reads "
                   "only its releases is the plug-in's to show; ")
                + gaussian_power_note(g, "epsilon", "delta", "runs"))
        out.append(ClaimResult.point(ratio, verdict="reproduced" if ok else "not reproduced",
                                     calibration=Z1_LABELS.get(str(calib), str(calib)), note=note,
                                     epsilon=float(g["epsilon"].min()), algorithm=alg or None))
    if len(printed := printed_rows(df)):
        out.append(printed_row(printed, Z1_LABELS["printed"]))
    return out


# ------------------------------------------------------------------------------ Z2


SLOPE_DECADE = 10  # Z2 fits the last decade of K; the regime needs the onset before K/10


def _algorithm(g: pd.DataFrame) -> str | None:
    """The one algorithm of a setting (the no-escape margin is per algorithm), else ``None``."""
    algs = g["algorithm"].unique() if "algorithm" in g else ()
    return str(algs[0]) if len(algs) == 1 else None


def regime(g: pd.DataFrame, k_max: float) -> RegimeCheck:
    """Regime of one setting (``agents/linmix/regime.py``) by the one criterion
    (:func:`onset_regime`): ``reached`` when ``K`` is a decade past the later of the predicted
    burn-in ``T*`` (median over seeds) and the median measured onset; ``not learned`` (the
    row is not reproduced) when no onset was measured and ``K`` is past the horizon the
    theory gives the setting's algorithm (:func:`~dprl.analysis.regime.no_escape_horizon`);
    otherwise the horizon it needs, at least the jobs' ``horizon_needed`` (``K >= 10·T*(K)``).
    ``n/a`` without the regime columns (tables from before they existed). A plug-in's burn-in
    is not predicted: its measured onset alone (:func:`~dprl.analysis.regime.plugin_regime`;
    Z3's fits of a plug-in still in its burn-in are not reached, with the horizon they need)."""
    if (check := plugin_regime(g, k_max)) is not None:
        return check
    if "burn_in_episodes" not in g or g["burn_in_episodes"].isna().all():
        return RegimeCheck()
    per_seed = g.groupby("seed")[["burn_in_episodes", "horizon_needed"]].first()
    t_star, planned = (float(per_seed[c].median()) for c in ("burn_in_episodes", "horizon_needed"))
    onset = median_onset(g)
    state, needed, _ = onset_regime(k_max, t_star, onset, planned, algorithm=_algorithm(g))
    note = (f"; regime: predicted burn-in T* = {t_star:.3g} episodes at K = {int(k_max)} (median over seeds), "
            f"K ≥ 10·T*(K) needs {planned:.3g}, measured onset "
            f"{'not within K' if not np.isfinite(onset) else f'at k = {onset:.3g}'} (median); needs K >= "
            f"{10**ONSET_DECADES:g}·max(T*, onset)")
    return RegimeCheck(state, needed, note=note)


def _measured(g: pd.DataFrame, k_max: float) -> RegimeCheck:
    """:func:`regime` for a plug-in, from its measured onset alone (no predicted burn-in)."""
    check = measured_regime(g, k_max)
    return RegimeCheck(check.state, check.horizon_needed, note=check.note)  # Z2 fits the last decade, not from the onset


# linmix_regime_eps10 (`default`): the paper calibration's ε grid {10, 30, 100} at K = 7e6,
# where ε = 10 is inside its regime (Z3 at ε <= 10); linmix_regime_long (`full` only): the
# paper calibration at ε = 1, whose median horizon is 6.7e7 episodes. Their rows are separate
# from linmix_regret's (another K, another decade). The first table is required, the others optional.
Z2_TABLES = ("linmix_regret", "linmix_regime_eps10", "linmix_regime_long")
# Z3 and F3 read the privacy cost of every table that pairs private runs with their baseline
COST_TABLES = ("linmix_regret", "linmix_regime_eps10")
# O(√T) on a fixed instance: the CI of the last decade's slope reaches 0.6 or below, and no
# seed's own slope is linear
Z2_RULE = partial(verdict_upper, threshold=0.6)


def last_decade(df: pd.DataFrame) -> pd.DataFrame:
    """The rows of a table's last decade of K (Z2's fit), each marked with whose row it
    makes (``plugin``: ``""`` for the built-in algorithms, pooled; a plug-in's name, its own
    rows), non-private ε as ``inf`` (rows of their own)."""
    tail = df[df["episode"] >= df["episode"].max() / SLOPE_DECADE]
    return tail.assign(plugin=builtin_or_plugin(tail), epsilon=tail["epsilon"].fillna(np.inf))


def curve_slopes(g: pd.DataFrame) -> dict[str, Estimate]:
    """Each curve's (algorithm and privacy level's) slope of regret vs T, paired by seed."""
    return {f"{alg}@{priv}": paired_slope_by_seed(ga, "T", "regret")
            for (alg, priv), ga in g.groupby(["alg_label", "privacy_label"])}


def _worst_curve(slopes: dict[str, Estimate]) -> tuple[str, Estimate]:
    """The curve with the largest lower CI bound (an unmeasured one first): the one a row shows."""
    return max(slopes.items(), key=lambda kv: kv[1].low if np.isfinite(kv[1].low) else np.inf)


def curves_regime(g: pd.DataFrame) -> RegimeCheck:
    """One regime per curve, from its predicted burn-in (median over seeds; a plug-in's is
    not predicted, so its measured onset decides: :func:`_measured`); a curve still in its
    burn-in makes the row ``not reached`` (:func:`overall_regime`), with that curve's words.
    Never a seed's own onset: a seed that never learns has none, and excusing it would make
    the linear-seed rule unable to fail."""
    of = regime if not g["plugin"].iloc[0] else _measured
    curves = [of(ga, float(ga["episode"].max())) for _, ga in g.groupby(["alg_label", "privacy_label"])]
    overall = overall_regime(curves)
    note = max((c.note for c in curves if c.state == "not reached"), default=curves[0].note)
    return RegimeCheck(overall.state, overall.horizon_needed, note=note)


def curve_seed_states(g: pd.DataFrame) -> dict[str, pd.Series]:
    """Each curve's seeds in their own regime (:func:`dprl.analysis.learning.seed_states`:
    ``reached``, ``learning``, ``not learned``), keyed like :func:`curve_slopes`."""
    return {f"{alg}@{priv}": seed_states(ga, str(ga["algorithm"].iloc[0]))
            for (alg, priv), ga in g.groupby(["alg_label", "privacy_label"])}


def every_curve(grp: Group) -> Callable[[Estimate], Verdict]:
    """:data:`Z2_RULE` on every curve of the row (:func:`combine_verdicts`: one curve that
    fails fails the row), whichever curve the row shows. The linear-seed half of the rule
    judges each seed in its own regime (:func:`dprl.analysis.learning.judged_seeds`): a seed
    still in its own burn-in is outside it; one past the horizon the theory gives without
    ending its burn-in fails the row (:func:`dprl.analysis.learning.any_not_learned`)."""
    states = curve_seed_states(grp.rows)
    verdict = combine_verdicts(
        "not reproduced" if any_not_learned(states[k]) else Z2_RULE(judged_seeds(e, states[k]))
        for k, e in curve_slopes(grp.rows).items())
    return lambda est: verdict


def _z2_note(grp: Group) -> str:
    slopes, states = curve_slopes(grp.rows), curve_seed_states(grp.rows)
    desc = "; ".join(f"{k}: {e.value:.2f} [{e.low:.2f}, {e.high:.2f}] ({per_seed_note(e)}{seed_note(states[k])})"
                     for k, e in slopes.items())
    where = ("" if grp.table == Z2_TABLES[0] else f"{grp.table}: ") + (
        f"{declared('algorithms', 'display')[grp.key['plugin']]}, " if grp.key["plugin"] else "")
    label = where + ("non-private" if grp.key["calibration"] == "none" else f"ε={grp.key['epsilon']:g}")
    return (f"{label}: log-log slope of cumulative regret vs T over the last decade of T (a slope per seed, Student's t over "
            f"seeds; a seed whose own slope is >= {LINEAR_SLOPE:g} fails the row unless it is still in its own burn-in, "
            f"and a seed past the horizon the theory gives without an onset fails it); "
            f"shown: the algorithm with the largest lower CI bound ({_worst_curve(slopes)[0]}); all: {desc}")


# One row per table read (each fitted over its own last decade), built-in rows then each
# plug-in's, and (calibration, ε); the row pools the curves at that ε
Z2_ROWS = Rows(select=last_decade, by=("plugin", "calibration", "epsilon"), regime=curves_regime,
               statistic=lambda g, check: _worst_curve(curve_slopes(g))[1], rule=every_curve, rule_of_group=True,
               note=_z2_note, algorithm=lambda grp: grp.key["plugin"] or None,
               empty="no regret curves to fit")  # a claim never drops out of the table silently


# ------------------------------------------------------------------------------ Z3


@dataclass(frozen=True)
class CostFit:
    """One exponent of Z3 (F3): the privacy cost fitted across ``var`` (its values through
    ``transform``) at the most common value of ``at``, the paper's exponent and the nearest
    wrong one a plausible bug gives, and the row's words (``what`` of the fit; ``too_few``
    when the grid has one value: the main table says so)."""

    var: str
    at: str
    transform: Callable[[float], float]
    paper: float
    wrong: float
    what: str
    too_few: str


# Z3's exponents and the nearest wrong ones a plausible bug gives: −1/4 in ε (σ ∝ ε^(-1/2)),
# 0 in ln(1/δ) (δ ignored); a row's ``fit`` column is its index here (ε first)
Z3_EPS, Z3_EPS_WRONG, Z3_DELTA, Z3_DELTA_WRONG = -0.5, -0.25, 0.25, 0.0
COST_FITS = (
    CostFit("epsilon", "delta", float, Z3_EPS, Z3_EPS_WRONG,
            "log-log slope of the privacy cost (final regret minus paired non-private) vs ε at δ={at:g}",
            "only one ε at this calibration; no ε fit"),
    CostFit("delta", "epsilon", lambda d: float(np.log(1.0 / d)), Z3_DELTA, Z3_DELTA_WRONG,
            "log-log slope of the privacy cost vs ln(1/δ) at ε={at:g}, δ",
            "δ fit needs >= 2 values of δ at one ε (the full preset has them); this preset has δ={values}"),
)


def cost_fits(package: bool, main: bool = True) -> Callable[[pd.DataFrame], pd.DataFrame]:
    """The rows of Z3 (``package=False``: the paper calibration's, and a plug-in's at any
    calibration) or F3 (the other calibrations' of the built-in algorithms): the seed-paired
    privacy costs at each job's last checkpoint, once per fit (``fit``) at the most common
    value of the other variable. The main table (``linmix_regret``) keeps a fit its grid
    lacks (a row that says so); another table only the fits its grid has."""
    def select(df: pd.DataFrame) -> pd.DataFrame:
        cost = privacy_cost(df, final=True)
        plugin = cost["algorithm"].isin(plugins())
        paper = cost["calibration"] == "paper"
        cost = cost[~plugin & ~paper] if package else cost[plugin | paper]
        keys = ["algorithm", "calibration"]
        parts = []
        for i, fit in enumerate(COST_FITS):
            at = cost.groupby(keys)[fit.at].transform(lambda s: s.mode().iloc[0])
            part = cost[cost[fit.at] == at]
            if not main:
                part = part[part.groupby(keys)[fit.var].transform("nunique") >= 2]
            parts.append(part.assign(fit=i))
        return pd.concat(parts)
    return select


def _fit(g: pd.DataFrame) -> CostFit:
    return COST_FITS[int(g["fit"].iloc[0])]


def _point_regimes(g: pd.DataFrame) -> dict[float, RegimeCheck]:
    """The regime of each grid point of a fit (:func:`regime`, at the fit's largest K)."""
    var, k_max = _fit(g).var, float(g["episode"].max())
    return {x: regime(g[g[var] == x], k_max) for x in sorted(g[var].unique())}


def cost_regime(g: pd.DataFrame) -> RegimeCheck:
    """``reached`` when two or more grid points are inside their regime (the fit uses those
    only; not the all-points rule of :func:`overall_regime`), else ``not reached`` with the
    largest horizon needed (the fit uses the whole grid), ``n/a`` without regime columns or
    with one grid point (no fit)."""
    if g[_fit(g).var].nunique() < 2:
        return RegimeCheck()
    regimes = _point_regimes(g)
    inside = [x for x, r in regimes.items() if r.reached]
    state = "reached" if len(inside) >= 2 else ("not reached" if any(r.state != "n/a" for r in regimes.values()) else "n/a")
    need = float("nan") if state != "not reached" else float(np.nanmax([r.horizon_needed for r in regimes.values()]))
    return RegimeCheck(state, need, note=f"; regime per point: {', '.join(f'{x:g}: {r.state}' for x, r in regimes.items())}")


def _grid(g: pd.DataFrame, check: RegimeCheck) -> list[float]:
    """The grid points a fit uses: those inside their regime when two or more are, else all."""
    regimes = _point_regimes(g)
    return [x for x, r in regimes.items() if r.reached] if check.reached else list(regimes)


def _costs(g: pd.DataFrame, grid: list[float]) -> list[np.ndarray]:
    return [g[g[_fit(g).var] == x]["cost"].to_numpy() for x in grid]


def cost_exponent(g: pd.DataFrame, check: RegimeCheck) -> Estimate:
    """Exponent of the privacy cost in the fit's variable over its grid (:func:`_grid`)."""
    if g[_fit(g).var].nunique() < 2:
        return Estimate.empty()
    grid = _grid(g, check)
    return group_slope(list(np.log([_fit(g).transform(x) for x in grid])), _costs(g, grid))


def _sigmas(g: pd.DataFrame, grid: list[float]) -> pd.Series:
    """The median ``sigma_gram`` at each grid point (index: the fit's transformed variable)."""
    fit = _fit(g)
    sig = g[g[fit.var].isin(grid)].groupby(fit.var)["sigma_gram"].median() if "sigma_gram" in g else pd.Series(dtype=float)
    sig.index = [fit.transform(x) for x in sig.index]
    return sig


def _predicted(grp: Group) -> float:
    """The paper's derivation (privacy term ∝ ln(H/δ)^{1/4}/ε^{1/2} = sqrt(σ), Theorem 6.5)
    applied to the σ's in use; under ``tight`` σ ∝ 1/μ(ε, δ) gives −0.44…−0.30 in ε."""
    sig = _sigmas(grp.rows, _grid(grp.rows, grp.check))
    return sqrt_sigma_exponent(sig) if len(sig) >= 2 else _fit(grp.rows).paper


def _paper_statement(grp: Group) -> bool:
    """Rows judged by the paper's exponents: the paper calibration's, and a plug-in's at any."""
    return grp.key["calibration"] == "paper" or grp.key["algorithm"] in plugins()


def cost_rule(grp: Group) -> Callable[[Estimate], Verdict]:
    """The paper's statement: its exponent, excluding the nearest wrong one; a package
    finding: the exponent the calibration's own σ's predict."""
    fit = _fit(grp.rows)
    if _paper_statement(grp):
        return partial(verdict_exponent, target=fit.paper, wrong=fit.wrong)
    return partial(verdict_near, target=_predicted(grp), width_limit=2.0)


def _cost_note(grp: Group) -> str:
    g, fit, alg = grp.rows, _fit(grp.rows), grp.key["algorithm"]
    xs = sorted(g[fit.var].unique())
    if len(xs) < 2:
        return f"{alg}: " + fit.too_few.format(values=[float(x) for x in xs])
    grid, pred = _grid(g, grp.check), _predicted(grp)
    where = "" if grp.table == COST_TABLES[0] else f"{grp.table}: "
    if _paper_statement(grp):
        rule = (f"the paper's exponent {fit.paper:+g}, which the CI (± {PAPER_EXPONENT_TOL:g}) must contain while "
                f"excluding {fit.wrong:+g}; this calibration's σ's give {pred:+.3f}")
    else:
        rule = f"expected {pred:+.3f} from the σ's of this calibration (½ × slope of log σ), paper's route {fit.paper:+g}"
    sig = _sigmas(g, grid)
    sig_fit = group_slope(list(np.log(sig.to_numpy(float))), _costs(g, grid)) if len(sig) == len(grid) else None
    return (f"{where}{alg}: {fit.what.format(at=g[fit.at].iloc[0])} over {[float(x) for x in grid]} (fitted: "
            f"{'the points inside their regime' if grp.check.reached else 'the whole grid'}); {rule}"
            + (f"; exponent in σ itself {sig_fit.value:+.2f} [{sig_fit.low:+.2f}, {sig_fit.high:+.2f}] (expected +0.5)"
               if sig_fit is not None else ""))


def cost_rows(package: bool) -> Rows:
    """Z3's rows (F3's with ``package``): per table of :data:`COST_TABLES`, algorithm and
    calibration, the exponent in ε, then in ln(1/δ)."""
    return Rows(select=cost_fits(package), table_select={COST_TABLES[1]: cost_fits(package, main=False)},
                by=("algorithm", "calibration", "fit"), regime=cost_regime, statistic=cost_exponent, rule=cost_rule,
                rule_of_group=True, note=_cost_note,
                empty=f"no {'non-paper' if package else 'paper'}-calibration runs paired with non-private runs")


# ------------------------------------------------------------------------------ Z4, Z5


# Equivalence margins: half the distance from the claimed exponent to the nearest competing
# rate, so that a CI inside the margin excludes the competitor. Z4: independent of S (b = 0)
# against the tabular √S (b = 1/2); Z5: (ln|A|)^(1/2) against ln|A| (b = 1).
Z4_MARGIN = 0.25  # |exponent of regret in S| <= 0.25: at most a 1.78x change from S = 10 to 100
Z5_MARGIN = 0.25  # exponent of regret in ln|A| <= 0.5 + 0.25


def per_seed_exponent(g: pd.DataFrame, x: str, transform, y: str = "regret") -> Estimate:
    """Mean over seeds of each seed's least-squares slope of ``ln y`` against
    ``ln transform(x)`` (paired instances: one seed's instances share their draws across
    ``x``), with Student's t interval over seeds (``stats.t_interval``)."""
    slopes = []
    for _, gs in g.groupby("seed"):
        gs = gs[gs[y] > 0]  # also drops NaN
        if gs[x].nunique() >= 2:
            slopes.append(float(np.polyfit(np.log(transform(gs[x].to_numpy(float))), np.log(gs[y].to_numpy(float)), 1)[0]))
    return t_interval(slopes)


def regret_at(g: pd.DataFrame, k: float) -> float:
    """Cumulative regret of one job at episode ``k``, interpolated log-log between its
    checkpoints."""
    g = g[g["regret"] > 0].sort_values("episode")
    if g.empty:
        return float("nan")
    return float(np.exp(np.interp(np.log(k), np.log(g["episode"].to_numpy(float)), np.log(g["regret"].to_numpy(float)))))


def horizon_scaled_control(df: pd.DataFrame, x: str, horizon_of) -> pd.DataFrame:
    """Positive control built from the same paired runs: each job's regret read at the
    horizon ``K · horizon_of(x)/horizon_of(x_max)``, which grows with ``x`` by the regret
    curve's own slope (1 in the burn-in, ≈ ½ in the √T regime). An equivalence test that
    cannot reject this has no power at these seeds and this noise."""
    rows = []
    x_max = df[x].max()
    for (xv, seed), g in df.groupby([x, "seed"]):
        k = float(g["episode"].max()) * horizon_of(xv) / horizon_of(x_max)
        rows.append({x: xv, "seed": seed, "regret": regret_at(g, max(k, float(g["episode"].min())))})
    return pd.DataFrame(rows)


def is_paired(df: pd.DataFrame) -> pd.Series:
    """Rows of instances paired across S and nested in A (``spread_mixture``); the lumpable
    ``mixture`` is flat in S by construction."""
    return df["environment"] == "spread_mixture" if "environment" in df else pd.Series(False, index=df.index)


# How a note names an equivalence test's verdict (stats.verdict_inside of the margin)
EQUIVALENCE_WORDS = {"reproduced": "inside", "not reproduced": "outside", "inconclusive": "undecided"}


def with_control(test: Verdict, control: Verdict) -> Verdict:
    """Verdict of an equivalence test (:func:`~dprl.analysis.stats.verdict_inside` of the
    margin) that must fail on its positive control: when the control is not rejected too
    (``not reproduced``: outside the margin), the test could not have told the difference."""
    if test == "not reproduced":
        return "not reproduced"
    if test == "reproduced" and control == "not reproduced":
        return "reproduced"
    return "inconclusive"


def _equivalence_rows(df: pd.DataFrame, x: str, transform, horizon_of, low: float, high: float, what: str) -> list[ClaimResult]:
    out = []
    for (alg, priv, calib, paired), g in df.assign(paired=is_paired(df)).groupby(["algorithm", "privacy_label", "calibration", "paired"]):
        if g[x].nunique() < 2:
            continue
        fin = final_rows(g)
        est = per_seed_exponent(fin, x, transform)
        eq = verdict_inside(est, low, high)
        ctrl = per_seed_exponent(horizon_scaled_control(g, x, horizon_of), x, transform)
        ctrl_eq = verdict_inside(ctrl, low, high)
        verdict = with_control(eq, ctrl_eq) if paired else ("not reproduced" if eq == "not reproduced" else "inconclusive")
        check = regime(g[g[x] == g[x].max()], float(g["episode"].max()))
        if check.state == "not reached" and verdict == "reproduced":
            verdict = "inconclusive"  # all-tied play on paired instances is flat by construction
        sizes = [int(v) for v in sorted(g[x].unique())]
        fam = ("paired non-lumpable instances (spread_mixture)" if paired else
               "lumpable mixture: flat in S by construction, cannot reproduce")
        out.append(ClaimResult.from_estimate(
            est, verdict=verdict, check=check, calibration=str(calib),
            note=f"{alg} {priv}, {fam}: {what} over {x}={sizes}, per-seed fit, CI over {est.n} seeds; margin "
                 f"[{low:+g}, {high:+g}]: {EQUIVALENCE_WORDS[eq]}; positive control (same runs read at k ∝ {x}): "
                 f"{ctrl.value:+.3f} [{ctrl.low:+.3f}, {ctrl.high:+.3f}], "
                 f"{'rejected as it must be' if ctrl_eq == 'not reproduced' else 'NOT rejected: no power'}{check.note}",
            epsilon=float(g["epsilon"].min()) if calib != "none" else float("nan")))
    return out


def z4(tables: Tables) -> list[ClaimResult]:
    """Equivalence test: the exponent of final regret in S lies within ±Z4_MARGIN on instances
    paired across S, and the positive control (regret read at k ∝ S) lies outside it."""
    return _equivalence_rows(tables["linmix_states"], "S", lambda v: v, lambda v: v, -Z4_MARGIN, Z4_MARGIN,
                             "exponent b of final regret ∝ S^b")


def z5(tables: Tables) -> list[ClaimResult]:
    """One-sided equivalence: the exponent of final regret in ln|A| on nested action sets is at
    most 0.5 + Z5_MARGIN, and the positive control (regret read at k ∝ |A|) exceeds it."""
    df = tables["linmix_actions"]
    return _equivalence_rows(df[df["A"] >= 2], "A", np.log, lambda v: v, -np.inf, 0.5 + Z5_MARGIN,
                             "exponent b of final regret ∝ (ln|A|)^b (paper: b <= 0.5)")


# ------------------------------------------------------------------------------ Z6


def z6(tables: Tables) -> list[ClaimResult]:
    """Z6 on the mixture instance (``linmix_ldp``: larger and faster in T, :func:`_z6_gapped`)
    and on the family hard at K (``linmix_hard_ldp``: larger, and larger as ε shrinks,
    :func:`_z6_hard`)."""
    return _z6_gapped(tables) + _z6_hard(tables)


def _z6_gapped(tables: Tables) -> list[ClaimResult]:
    df = tables["linmix_ldp"]
    fin = final_rows(df)
    out = []
    for (calib, eps, delta), g in fin.groupby(["calibration", "epsilon", "delta"]):
        for ldp_alg in sorted(a for a in g["algorithm"].unique() if a.startswith("ldp_")):
            jdp_alg = ldp_alg.replace("ldp_", "private_")
            diff = _paired_diff(g[g["algorithm"] == ldp_alg], g[g["algorithm"] == jdp_alg])
            if diff.n == 0:
                continue
            sub = df[(df["calibration"] == calib) & (df["epsilon"] == eps) & (df["delta"] == delta)]
            sub = sub[sub["episode"] >= sub["episode"].max() / 10]
            s_ldp = paired_slope_by_seed(sub[sub["algorithm"] == ldp_alg], "T", "regret")
            s_jdp = paired_slope_by_seed(sub[sub["algorithm"] == jdp_alg], "T", "regret")
            # larger (an ordering paired by seed) and faster (disjoint slope intervals): both must hold
            v = combine_verdicts([verdict_ordering(diff), _faster(s_ldp, s_jdp)]) if diff.n >= 2 else "inconclusive"
            # "grows faster" is a rate: both curves must be past their burn-in
            curves = [regime(sub[sub["algorithm"] == a], float(sub["episode"].max())) for a in (ldp_alg, jdp_alg)]
            out.append(ClaimResult.from_estimate(
                diff, verdict=v, check=overall_regime(curves), calibration=str(calib),
                note=f"{ldp_alg} minus {jdp_alg} final regret at ε={eps:g}, δ={delta:g} (paired by seed); "
                     f"log-log slopes vs T: LDP {s_ldp.value:.2f} [{s_ldp.low:.2f}, {s_ldp.high:.2f}], "
                     f"JDP {s_jdp.value:.2f} [{s_jdp.low:.2f}, {s_jdp.high:.2f}]; reproduced needs both larger and faster"
                     + "".join(c.note for c in curves),
                epsilon=eps))
    return out


def _faster(a: Estimate, b: Estimate) -> Verdict:
    """Whether curve ``a`` grows faster than ``b`` from their slopes, fitted on different jobs
    (so not paired by seed): reproduced when ``a``'s interval lies above ``b``'s, not
    reproduced when it lies below, inconclusive when they overlap (or are not finite)."""
    if a.low > b.high:
        return "reproduced"
    return "not reproduced" if a.high < b.low else "inconclusive"


def _paired_diff(a: pd.DataFrame, b: pd.DataFrame) -> Estimate:
    """Seed mean of ``regret(a) − regret(b)`` over the seeds both have, with its bootstrap CI."""
    ra, rb = a.set_index("seed")["regret"], b.set_index("seed")["regret"]
    seeds = ra.index.intersection(rb.index)
    return bootstrap_ci((ra[seeds] - rb[seeds]).to_numpy())


def _ordering(a: pd.DataFrame, b: pd.DataFrame, calib: str, eps: float, what: str, shares: str) -> ClaimResult:
    """One ordering row of the hard family: ``regret(a) − regret(b)`` paired by seed
    (:func:`~dprl.analysis.stats.verdict_ordering`), inside the regime when both curves are
    past their predicted horizon (10·T*, the job's ``horizon_needed``) at the K compared."""
    diff = _paired_diff(a, b)
    jobs = pd.concat([a, b])
    reached = bool((jobs["K"] >= jobs["horizon_needed"]).all())
    check = RegimeCheck("reached") if reached else RegimeCheck("not reached", float(jobs["horizon_needed"].max()))
    return ClaimResult.from_estimate(
        diff, verdict=verdict_ordering(diff), check=check, calibration=calib,
        note=f"linmix_hard_ldp: {what}, paired by seed ({diff.n} seeds); {shares}; regime: both past 10·T* at this K",
        epsilon=eps)


def _share_of_uniform(g: pd.DataFrame) -> pd.Series:
    """Seed-mean regret over uniform play's, per (algorithm, ε); empty where uniform play's
    regret is not known (H != 2)."""
    if not np.isfinite(g["uniform_regret"].to_numpy(float)).all():
        return pd.Series(dtype=float)
    return g.assign(u=g["regret"] / g["uniform_regret"]).groupby(["algorithm", "epsilon"])["u"].mean()


def _z6_hard(tables: Tables) -> list[ClaimResult]:
    """Z6 on the family hard at K (``linmix_hard_ldp``: ``hard_linear_horizon`` with a gap
    scale at which a JDP learner resolves part of ``μ`` within K): at each K, (i) the LDP
    learner's regret minus the JDP learner's at the same (ε, δ), paired by seed, and (ii) the
    LDP learner's regret at each ε minus its regret at the next larger ε (the LDP regret grows
    as ε shrinks). Each is an ordering: reproduced when its CI lies above 0. "Grows faster in
    T" is not tested here: on this family every policy's regret is at most uniform play's,
    ``∝ √K``, and the LDP learner already loses ~90% of it (its width shrinks like
    ``K^(-1/4)``, the family's gap like ``K^(-1/2)``), so both curves grow like √K; the
    gapped rows test it. Liao et al.'s LDP lower bound ``dH√K/(e^ε(e^ε − 1))`` is below the
    non-private ``dH√K`` at every ε >= 1/2, so it adds no test at the ε the learner can run."""
    parts = present_tables(tables, ("linmix_hard_ldp",))
    if not parts:
        return []
    fin = final_rows(parts[0][1])
    out = []
    for (calib, delta, K, d, H, scale), g in fin.groupby(["calibration", "delta", "K", "d", "H", "gap_scale"]):
        where = (f"on the instance hard at K = {int(K):.3g} (d={int(d)} H={int(H)}, gap scale {scale:g}: "
                 f"Δ = {scale:g}·sqrt(1/(HK))/(4√2))")
        share = _share_of_uniform(g)

        def of_uniform(alg: str, eps: float, share: pd.Series = share) -> str:
            return f"{share[(alg, eps)]:.2f}" if (alg, eps) in share.index else "n/a"
        ldps = sorted(a for a in g["algorithm"].unique() if a.startswith("ldp_"))
        for ldp_alg in ldps:
            jdp_alg = ldp_alg.replace("ldp_", "private_")
            for eps in sorted(g.loc[g["algorithm"] == ldp_alg, "epsilon"].unique()):
                a = g[(g["algorithm"] == ldp_alg) & (g["epsilon"] == eps)]
                b = g[(g["algorithm"] == jdp_alg) & (g["epsilon"] == eps)]
                if b.empty:
                    continue
                out.append(_ordering(a, b, str(calib), float(eps),
                                     f"{ldp_alg} minus {jdp_alg} regret at ε={eps:g}, δ={delta:g}, {where}",
                                     f"regret / uniform play's: LDP {of_uniform(ldp_alg, eps)}, JDP "
                                     f"{of_uniform(jdp_alg, eps)}; reproduced: CI above 0 (LDP larger)"))
            epss = sorted(g.loc[g["algorithm"] == ldp_alg, "epsilon"].unique())
            for lo_eps, hi_eps in zip(epss, epss[1:]):
                a = g[(g["algorithm"] == ldp_alg) & (g["epsilon"] == lo_eps)]
                b = g[(g["algorithm"] == ldp_alg) & (g["epsilon"] == hi_eps)]
                out.append(_ordering(a, b, str(calib), float(lo_eps),
                                     f"{ldp_alg} regret at ε={lo_eps:g} minus at ε={hi_eps:g} (δ={delta:g}), {where}",
                                     f"regret / uniform play's: {of_uniform(ldp_alg, lo_eps)} at ε={lo_eps:g}, "
                                     f"{of_uniform(ldp_alg, hi_eps)} at ε={hi_eps:g}; reproduced: CI above 0 (LDP "
                                     f"regret grows as ε shrinks)"))
    return out


# ------------------------------------------------------------------------------ Z7, Z8

HARD_FAMILY = ("algorithm", "calibration", "epsilon", "env.H")
# the hard family's jobs: linmix_hard (every algorithm, K <= 1e6 and the d grid) and the
# private rows' longer K (linmix_hard_long), one family
HARD_TABLES = ("linmix_hard", "linmix_hard_long")
# the fixed-gap jobs (linmix_hard_gaps): a grid of gap scales at one K_max per algorithm, each
# job's Δ fixed over its checkpoints, and a d grid at a gap scale the learners resolve within K
GAPS_TABLES = ("linmix_hard_gaps", "linmix_hard_gaps_private")
# the worst case over the gaps is read at the checkpoints of the last WORST_SPAN-fold of K_max
# (and past the jobs' horizon_needed): 1.5 decades, over which the grid brackets the learners'
# worst gap (measured: UCRL-VTR's worst gap falls from 0.12 to 0.012 as K goes from 3e3 to 1e5)
WORST_SPAN = 30.0
Z8_TOL = 0.25  # the d-exponent of a fit over d - 1 in {1, 2, 4}: lower-order terms (log d in β) move it by ~0.2
Z8_RULE = partial(verdict_near, target=1.0, tol=Z8_TOL)  # linear in d: exponent 1 (Ω(dH√K))
# a seed's own d exponent outside 1 ± 2·Z8_TOL contradicts regret ∝ d on that seed's instances
# (committed per-seed exponents of the four algorithms: 0.87-1.11)
Z8_SEED_WINDOW = (1 - 2 * Z8_TOL, 1 + 2 * Z8_TOL)


def z8_rate(est: Estimate) -> Verdict:
    """:data:`Z8_RULE` with an interval wider than ``Z8_TOL`` inconclusive
    (:func:`~dprl.analysis.learning.verdict_width`), and a seed whose own exponent lies outside
    :data:`Z8_SEED_WINDOW` failing the row (a per-seed rule, as the linear-seed rule of the rates)."""
    lo, hi = Z8_SEED_WINDOW
    if est.n >= 2 and est.units and not all(lo <= u <= hi for u in est.units):
        return "not reproduced"
    return verdict_width(Z8_RULE, Z8_TOL)(est)


def hard_final(df: pd.DataFrame) -> pd.DataFrame:
    """A hard-family table's rows at each job's last checkpoint (its own jobs told apart within
    it), the non-private rows' ε as ``inf`` (groups of their own)."""
    fin = final_rows(df)
    return fin.assign(epsilon=fin["epsilon"].fillna(np.inf))


def no_rows(df: pd.DataFrame) -> pd.DataFrame:
    """Nothing of a table a Rows declaration reads only to hand its rule (the fixed-gap table
    read by the gap-scale-1 rows: their rule looks up the same algorithm's fixed-gap verdict)."""
    return df.iloc[:0]


def gap_rows(df: pd.DataFrame) -> pd.DataFrame:
    """Every checkpoint of the fixed-gap table, with uniform play's regret at that checkpoint
    (``uniform_at``: its regret ``K·(d−1)·Δ`` is linear in the episodes, ``Δ`` being fixed
    over a job) and non-private ε as ``inf``."""
    return df.assign(epsilon=df["epsilon"].fillna(np.inf), uniform_at=df["uniform_regret"] * df["episode"] / df["K"])


def _same_family(grp: Group, by: tuple[str, ...]) -> pd.DataFrame:
    """The fixed-gap table's rows (:func:`gap_rows`) of the group's family (``by`` of its key)."""
    df = grp.table_rows
    if "experiment" not in df or not df["experiment"].isin(GAPS_TABLES).any():
        return df.iloc[:0]
    gaps = gap_rows(df[df["experiment"].isin(GAPS_TABLES)])
    mask = np.ones(len(gaps), dtype=bool)
    for col in by:
        mask &= (gaps[col] == grp.key[col]).to_numpy()
    return gaps[mask]


def _share(final: pd.DataFrame, uniform: str = "uniform_regret") -> Estimate:
    """The final rows' regret over uniform play's (:func:`dprl.analysis.learning.share_of_uniform`);
    empty where uniform play's regret is not known (H != 2)."""
    ok = final[np.isfinite(final[uniform].to_numpy(float))]
    return share_of_uniform(ok, ok[uniform]) if len(ok) else Estimate.empty()


def _share_words(est: Estimate) -> str:
    return f"{est.value:.3f} [{est.low:.3f}, {est.high:.3f}]" if np.isfinite(est.value) else "n/a"


def tells_apart(rate: Verdict, own_share: Estimate, resolving: Verdict | None, what: str) -> tuple[Verdict, str]:
    """The verdict of a rate measured on the family tuned to K at gap scale 1, where uniform
    play's regret has the same shape (``∝ d√K``) as a learner's: it counts on its own only when
    the row's own regret sits measurably below uniform play's
    (:func:`dprl.analysis.learning.verdict_below_uniform`); otherwise only together with
    ``resolving``, the same algorithm's verdict where a learner must resolve the gap (``None``:
    not measured, so a rate that holds says nothing: inconclusive). A failed rate fails."""
    if rate == "not reproduced" or verdict_below_uniform(own_share) == "reproduced":
        return rate, ""
    words = (f"; regret / uniform play's {_share_words(own_share)}: at this gap scale the rate cannot tell a learner "
             f"from uniform play (no information gives the same {what})")
    if resolving is None:
        return ("inconclusive" if rate == "reproduced" else rate), words + ", and no fixed-gap run of this algorithm says it learns"
    return combine_verdicts([rate, resolving]), words + f"; with the fixed-gap runs' verdict ({resolving})"


def _in_regime(g: pd.DataFrame) -> pd.Series:
    """Per job: ``K`` past the predicted horizon of the rate (``horizon_needed``, 10·T* at
    the job's instance, agents/linmix/regime.py). On the family hard at K regret grows like
    √K from the first episodes on, so no onset is measured: the prediction is the criterion.
    A plug-in has no prediction: a job of its is in the regime a decade past its measured
    onset (:func:`plugin_jobs`)."""
    if is_plugin(g):
        jobs = plugin_jobs(g)
        return pd.Series([jobs[(k, d)].reached for k, d in zip(g["K"], g["d"])], index=g.index, dtype=bool)
    return g["K"] >= g["horizon_needed"]


def plugin_jobs(g: pd.DataFrame) -> dict[tuple[float, float], RegimeCheck]:
    """A plug-in's regime per job (K, d) of the hard family: its measured onset alone
    (:func:`~dprl.analysis.regime.measured_regime` at the job's K; no horizon is predicted for
    it), so that a plug-in still in its burn-in is not reached, with the horizon it needs."""
    return {(k, d): measured_regime(gj, float(k)) for (k, d), gj in g.groupby(["K", "d"])}


# the regime words of a plug-in's hard-family rows (Z7, Z8)
PLUGIN_REGIME = "regime (measured onset only: no burn-in is predicted for a plug-in): "


def _who(grp: Group) -> str:
    eps = grp.key["epsilon"]
    return grp.key["algorithm"] if not np.isfinite(eps) else f"{grp.key['algorithm']} ε={eps:g}"


def k_regime(g: pd.DataFrame) -> RegimeCheck:
    """Z7: ``reached`` when two or more K of the grid are past their jobs' ``horizon_needed``
    (the fit uses those), else ``not reached`` with the largest median horizon over K (the
    fit uses the whole grid); a plug-in's K by their measured onset (:func:`plugin_jobs`)."""
    if is_plugin(g):
        need = max((c.horizon_needed for c in plugin_jobs(g).values() if not c.reached), default=float("nan"))
        state = "reached" if g.loc[_in_regime(g), "K"].nunique() >= 2 else "not reached"
        return RegimeCheck(state, float("nan") if state == "reached" else need)
    if g["horizon_needed"].isna().all():
        return RegimeCheck()
    if g.loc[_in_regime(g), "K"].nunique() >= 2:
        return RegimeCheck("reached")
    return RegimeCheck("not reached", float(g.groupby("K")["horizon_needed"].median().max()))


def _k_fit(g: pd.DataFrame, check: RegimeCheck) -> pd.DataFrame:
    """The jobs Z7 fits: those inside the regime when it is reached, else every K."""
    return g[_in_regime(g)] if check.reached else g


def _zero_seeds(grp: Group) -> list:
    fit = _k_fit(grp.rows, grp.check)
    return sorted(set(fit.loc[fit["regret"] <= 0, "seed"]))


# A seed whose own slope of regret in K is at most this stopped paying regret on the family
# (flat, or falling as K grows): no learner does where the lower bound holds at every K, so it
# read μ or locked on a lucky action; the mirror of the linear-seed rule (LINEAR_SLOPE)
FLAT_SLOPE = 0.1


def _sqrt_rate(est: Estimate, zero: bool) -> Verdict:
    """√K two-sided (:func:`~dprl.analysis.stats.verdict_sqrt_rate`), failed by a seed with
    zero regret, or whose own slope is linear or flat (:data:`FLAT_SLOPE`)."""
    flat = est.n >= 2 and bool(est.units) and min(est.units) <= FLAT_SLOPE
    return combine_verdicts([verdict_sqrt_rate(est), "not reproduced" if zero or flat else "reproduced"])


def verdict_resolved(final: pd.DataFrame) -> Verdict:
    """Where a learner resolves the gap within K: its regret measurably below uniform play's
    (:func:`dprl.analysis.learning.verdict_below_uniform`), and on every seed (each seed is an
    instance the learner must resolve): a seed at or above ``1 − LEARNED_SAVING`` of uniform
    play's regret did not learn, a seed with zero regret read μ; either fails the row."""
    ok = final[np.isfinite(final["uniform_regret"].to_numpy(float))]
    share = ok["regret"] / ok["uniform_regret"]
    stuck = bool(((share > 1 - LEARNED_SAVING) | (ok["regret"] <= 0)).any())
    return combine_verdicts([verdict_below_uniform(_share(final)), "not reproduced" if stuck else "reproduced"])


def _z7_apart(grp: Group) -> tuple[Verdict, str]:
    """Z7 on the family tuned to K (:func:`tells_apart`): the rate, and the same algorithm's
    worst case over fixed gaps (:func:`worst_verdict`) where the fit cannot tell it from uniform play."""
    fit = _k_fit(grp.rows, grp.check)
    rate = _sqrt_rate(grp.est, bool(_zero_seeds(grp)))
    fixed = _same_family(grp, (*HARD_FAMILY, "d"))
    grids = [gk for _, gk in fixed.groupby("K") if gk["gap_scale"].nunique() >= 3]
    resolving = _worst_group(grids[-1]) if grids else None  # the longest grid
    return tells_apart(rate, _share(fit), resolving, "√K")


def sqrt_rate_unless_zero(grp: Group) -> Callable[[Estimate], Verdict]:
    """:func:`~dprl.analysis.stats.verdict_sqrt_rate`; a seed with zero regret in the fit
    fails the row whatever its slope (on this family every learner pays regret). At gap scale
    1 the rate counts only where it tells a learner from uniform play (:func:`_z7_apart`)."""
    verdict, _ = _z7_apart(grp)
    return lambda est: verdict


def _z7_note(grp: Group) -> str:
    fit, est, zero = _k_fit(grp.rows, grp.check), grp.est, _zero_seeds(grp)
    ratio = fit["regret"] / fit["dH_sqrtK"]
    lo, hi = SQRT_RATE_WINDOW
    return (f"{_who(grp)}, d={int(grp.key['d'])} H={int(grp.key['env.H'])}, Δ(K) = sqrt(1/(HK))/(4√2): log-log slope of "
            f"the regret at K vs K over K ∈ {{{', '.join(f'{int(k):.3g}' for k in sorted(fit['K'].unique()))}}} ({est.n} "
            f"seeds; {per_seed_note(est)}); two-sided: CI inside [{lo:g}, {hi:g}]; regret / (d·H·√K) = "
            f"{ratio.min():.3g}-{ratio.max():.3g} (the lower bound's shape); "
            + (PLUGIN_REGIME + "every K of the fit a decade past its measured onset" if is_plugin(grp.rows) else
               "regime: every K of the fit past 10·T* (the job's horizon_needed)" if grp.check.state != "n/a" else
               "regime n/a: no horizon recorded")
            + (f"; seed(s) {zero} with zero regret" if zero else "") + _z7_apart(grp)[1])


# UCRL-VTR's, OPPO's and Private-LinOpt-VI/PO's regret-vs-K exponent on the family hard at K
# (``hard_linear_horizon``), two-sided: each seed's log-log slope of its final regret against
# K over the K grid inside the regime, Student's t over seeds, inside SQRT_RATE_WINDOW. Every
# policy's regret on the family is at most ``K·H·(d−1)·2Δ·H ∝ √K``, so an exponent above 0.6
# means Δ is not tuned to K, one below 0.4 an algorithm beating the Ω(dH√K) lower bound (e.g.
# one that reads ``μ``). One family over the two tables (stacked), a row per (algorithm,
# calibration, ε, H, d) with two or more K.
Z7_ROWS = Rows(select=hard_final, stack=True, by=(*HARD_FAMILY, "d"), keep=lambda g: g["K"].nunique() >= 2,
               tables=(*HARD_TABLES, *GAPS_TABLES), table_select=dict.fromkeys(GAPS_TABLES, no_rows),
               regime=k_regime, statistic=lambda g, check: paired_slope_by_seed(_k_fit(g, check), "K", "regret"),
               rule=sqrt_rate_unless_zero, rule_of_group=True, note=_z7_note, kind=KINDS[0],
               empty="fewer than two K values on the hard family")


def _worst_readings(g: pd.DataFrame) -> pd.DataFrame:
    """The fixed-gap jobs' checkpoints Z7 reads the worst case at: the last ``WORST_SPAN``-fold
    of their ``K`` and past every job's ``horizon_needed`` (10·T*)."""
    k_max = float(g["K"].max())
    start = max(k_max / WORST_SPAN, float(g["horizon_needed"].max()) if g["horizon_needed"].notna().any() else 0.0)
    return g[g["episode"] >= start * (1 - 1e-9)]


def worst_case(g: pd.DataFrame) -> pd.DataFrame:
    """Per (seed, checkpoint): the largest regret over the fixed gaps (the family's worst case
    at that K, Zhou, Gu, Szepesvári 2021: the lower bound is a bound on it) and the gap scale
    that gives it."""
    r = _worst_readings(g)
    idx = r.groupby(["seed", "episode"])["regret"].idxmax()
    return r.loc[idx, ["seed", "episode", "regret", "gap_scale", "gap"]]


def worst_regime(g: pd.DataFrame) -> RegimeCheck:
    """``reached`` when two or more checkpoints are read (:func:`_worst_readings`), else ``not
    reached`` with the horizon that needs (``WORST_SPAN``·… the largest ``horizon_needed``);
    ``n/a`` for a plug-in (no burn-in predicted: the last ``WORST_SPAN``-fold is read)."""
    if g["horizon_needed"].isna().all():
        return RegimeCheck(note="; regime n/a: no burn-in is predicted (a plug-in)")
    note = "; regime: every checkpoint read is past 10·T* (the jobs' horizon_needed)"
    if _worst_readings(g)["episode"].nunique() >= 2:
        return RegimeCheck("reached", note=note)
    return RegimeCheck("not reached", float(g["horizon_needed"].max()) * WORST_SPAN, note=note)


def worst_slope(g: pd.DataFrame, check: RegimeCheck) -> Estimate:
    """Each seed's log-log slope of its worst case over the gaps (:func:`worst_case`) against
    K, Student's t over seeds."""
    return paired_slope_by_seed(worst_case(g), "episode", "regret")


def _largest_gap(g: pd.DataFrame) -> pd.DataFrame:
    """The final rows of the jobs at the grid's largest gap: where a learner resolves first."""
    fin = final_rows(g)
    return fin[fin["gap_scale"] == fin["gap_scale"].max()]


def _worst_group(g: pd.DataFrame) -> Verdict | None:
    """The worst-case verdict (:func:`worst_verdict`) of one family's fixed-gap rows, ``None``
    with fewer than three gaps (no worst case)."""
    if g["gap_scale"].nunique() < 3:
        return None
    check = worst_regime(g)
    if check.state == "not reached":
        return "inconclusive"
    return worst_verdict(worst_slope(g, check), g)


def worst_verdict(est: Estimate, g: pd.DataFrame) -> Verdict:
    """√K two-sided (:func:`~dprl.analysis.stats.verdict_sqrt_rate`: a seed's own slope >= 0.9
    fails) on the worst case over fixed gaps: a learner's grows like √K, a non-learner's like K
    (uniform play's ``K·(d−1)·Δ`` at the largest gap); and below uniform play at the largest gap
    at K (:func:`dprl.analysis.learning.verdict_below_uniform`): at a fixed gap uniform play's
    regret is linear in K and Theorem 4.1's bound grows like √K, so a learner sits below it once
    K is large enough (measured: UCRL-VTR at 0.01-0.02 of it by K = 1e5 at Δ = 0.2), on every
    seed (:func:`verdict_resolved`). A seed with zero regret or a flat worst case fails."""
    zero = bool((_worst_readings(g)["regret"] <= 0).any())
    return combine_verdicts([_sqrt_rate(est, zero), verdict_resolved(_largest_gap(g))])


def _worst_note(grp: Group) -> str:
    g, est = grp.rows, grp.est
    w = worst_case(g)
    argmax = w.groupby("episode")["gap"].median()
    return (f"{_who(grp)}, d={int(grp.key['d'])} H={int(grp.key['env.H'])}: worst case over {g['gap_scale'].nunique()} fixed "
            f"gaps Δ ∈ [{g['gap'].min():.3g}, {g['gap'].max():.3g}] (each job's Δ fixed over its K = {int(g['K'].max()):.3g} "
            f"episodes): log-log slope of the largest regret over the gaps vs K over K ∈ "
            f"[{w['episode'].min():.3g}, {w['episode'].max():.3g}] ({w['episode'].nunique()} checkpoints; {est.n} seeds; "
            f"{per_seed_note(est)}); a learner's worst case grows like √K, a non-learner's like K; two-sided: CI inside "
            f"[{SQRT_RATE_WINDOW[0]:g}, {SQRT_RATE_WINDOW[1]:g}]; worst gap (median over seeds) "
            f"{argmax.iloc[0]:.3g} at the first K read, {argmax.iloc[-1]:.3g} at the last"
            + ("" if argmax.max() < g["gap"].max() else " (the grid's largest gap: the family's worst case at those K may "
               "lie at a larger gap)")
            + f"; and regret / uniform play's at the "
            f"largest gap at K: {_share_words(_share(_largest_gap(g)))} (a learner resolves it: <= {1 - LEARNED_SAVING:g})"
            if len(w) else f"{_who(grp)}: no checkpoint read")


# Z7 as the worst case over the family (linmix_hard_gaps): per (algorithm, calibration, ε, H,
# d, K_max) with three or more fixed gaps, the largest regret over the gaps at each K read
Z7_WORST_ROWS = Rows(select=gap_rows, tables=GAPS_TABLES, stack=True, by=(*HARD_FAMILY, "d", "K"),
                     keep=lambda g: g["gap_scale"].nunique() >= 3, regime=worst_regime, statistic=worst_slope,
                     rule=lambda grp: lambda est: worst_verdict(est, grp.rows), rule_of_group=True, note=_worst_note,
                     kind=KINDS[0], empty=None)


def d_regime(g: pd.DataFrame) -> RegimeCheck:
    """Z8: ``reached`` when every job is past its ``horizon_needed`` at this K, else ``not
    reached`` with the largest; a plug-in's jobs by their measured onset (:func:`plugin_jobs`)."""
    if is_plugin(g):
        check = overall_regime(list(plugin_jobs(g).values()))
        return RegimeCheck(check.state, check.horizon_needed, note=f"; {PLUGIN_REGIME}every d a decade past its measured onset at this K")
    if g["horizon_needed"].isna().all():
        return RegimeCheck(note="; regime n/a: no horizon recorded")
    note = "; regime: every d past 10·T* at this K"
    if _in_regime(g).all():
        return RegimeCheck("reached", note=note)
    return RegimeCheck("not reached", float(g["horizon_needed"].max()), note=note)


def d_slope(g: pd.DataFrame, check: RegimeCheck) -> Estimate:
    """Each seed's log-log slope of its final regret against ``d − 1`` (the instance's
    informative action coordinates; the lower bound's ``d`` up to a constant), Student's t."""
    return paired_slope_by_seed(g.assign(informative=g["d"] - 1), "informative", "regret")


def resolving_verdict(fixed: pd.DataFrame) -> tuple[Verdict | None, str]:
    """Z8 where the learner must resolve the gap: the fixed-gap table's d grid at a gap scale
    above 1 (the largest with two or more d), at its largest K: at every d the learner's final
    regret sits measurably below uniform play's (:func:`dprl.analysis.learning.verdict_below_uniform`,
    combined over d), with the d slope there for the note. ``None`` without such a grid."""
    fin = final_rows(fixed)
    fin = fin[fin["gap_scale"] > 1]
    grids = fin.groupby(["K", "gap_scale"])["d"].nunique()
    grids = grids[grids >= 2]
    if grids.empty:
        return None, ""
    K, scale = grids.index[-1]
    g = fin[(fin["K"] == K) & (fin["gap_scale"] == scale)]
    shares = {int(d): _share(gd) for d, gd in g.groupby("d")}
    slope = d_slope(g, RegimeCheck())
    verdict = combine_verdicts(verdict_resolved(gd) for _, gd in g.groupby("d"))
    return verdict, (f"; at gap scale {scale:g}, K = {int(K):.3g} (fixed gaps) regret / uniform play's by d: "
                     + ", ".join(f"{d}: {_share_words(e)}" for d, e in shares.items())
                     + f" (a learner resolves the gap: <= {1 - LEARNED_SAVING:g}; {verdict}), d slope there "
                       f"{slope.value:.2f} [{slope.low:.2f}, {slope.high:.2f}]")


def _z8_apart(grp: Group) -> tuple[Verdict, str]:
    """Z8 on the family tuned to K: the d slope (:func:`z8_rate`), counted on its own
    only where it tells a learner from uniform play (:func:`tells_apart`), else with the same
    algorithm's resolving d grid (:func:`resolving_verdict`)."""
    rate = z8_rate(grp.est)
    resolving, words = resolving_verdict(_same_family(grp, HARD_FAMILY))
    verdict, apart = tells_apart(rate, _share(grp.rows), resolving, "∝ d − 1")
    return verdict, apart + (words if resolving is not None else "")


def z8_rule(grp: Group) -> Callable[[Estimate], Verdict]:
    verdict, _ = _z8_apart(grp)
    return lambda est: verdict


def _z8_note(grp: Group) -> str:
    g, est = grp.rows, grp.est
    ratio = g.groupby("d")["regret"].mean() / g.groupby("d")["dH_sqrtK"].mean()
    return (f"{_who(grp)}, H={int(grp.key['env.H'])}, K={int(grp.key['K']):.3g}: log-log slope of the final regret vs d − 1 "
            f"over d ∈ {{{', '.join(str(int(x)) for x in sorted(g['d'].unique()))}}} ({est.n} seeds; {per_seed_note(est)}); "
            f"expected 1 (Ω(dH√K)) within ±{Z8_TOL:g} of the CI (a CI wider than {Z8_TOL:g} cannot place it: inconclusive; "
            f"a seed's own exponent outside [{Z8_SEED_WINDOW[0]:g}, {Z8_SEED_WINDOW[1]:g}] fails the row); "
            f"regret / (d·H·√K) by d: " + ", ".join(f"{int(x)}: {r:.3g}" for x, r in ratio.items()) + _z8_apart(grp)[1])


# The regret on the hard instance grows linearly with the dimension: a row per (algorithm,
# calibration, ε, H, K) with two or more d, expected 1 ± Z8_TOL
Z8_ROWS = Rows(select=hard_final, stack=True, by=(*HARD_FAMILY, "K"), keep=lambda g: g["d"].nunique() >= 2,
               tables=(*HARD_TABLES, *GAPS_TABLES), table_select=dict.fromkeys(GAPS_TABLES, no_rows),
               regime=d_regime, statistic=d_slope, rule=z8_rule, rule_of_group=True, note=_z8_note,
               empty="fewer than two d values at one K")


NON_LEARNERS = "tests/linmix/test_non_learners.py::"  # non-learners planted in real jobs

CLAIMS = [
    Claim(id="Z1", paper=PAPER, statement="Private-LinOpt-VI/PO are (ε,δ)-JDP; the local randomiser is (ε,δ)-LDP",
          plugin_statement="{algorithm} is (ε,δ)-JDP: the Privatizer it holds passes the audit (that its planner reads "
                           "only its releases is the plug-in's to show)",
          reads=("linmix_audit",), metric="audited ε_lb / ε (tree counters of the Privatizer; local randomiser)",
          expected="<= 1", compute=z1, figure="linmix_audit",
          why_code="an audit: one row per calibration (built-in mechanisms pooled, each plug-in apart) whose audits "
                   "and exact accounting must all pass, then the printed constants' row",
          planted_bugs=(
              PlantedBug("the Privatizer's σ's cut 10x in the built agent: the audit fails",
                         "tests/core/test_held_noise.py::test_noise_cut_10x_in_the_built_agent_flips_the_audit_and_the_accounting"),
              PlantedBug("the built LDP agent's local randomiser holding a tenth of its σ",
                         "tests/linmix/test_claims_flip.py::test_z1_local_randomiser_with_a_tenth_of_its_sigma_flips"),
              PlantedBug("the local randomiser drawing a tenth of the noise its calibration states (only the audit sees it)",
                         "tests/linmix/test_claims_flip.py::test_z1_local_randomiser_drawing_a_tenth_of_its_noise_flips_by_the_audit_alone"),
              PlantedBug("a tenth of the noise in the compiled path the audit job draws through (the σ's the loop's "
                         "noise kernel is given, or the noise inside the kernel, which the σ report cannot see), "
                         "central privatizer and local randomiser",
                         "tests/linmix/test_noise_path.py::test_a_tenth_of_the_noise_in_the_compiled_audit_path_flips_z1"),
          )),
    Claim(id="Z2", paper=PAPER, statement="the regret of UCRL-VTR, OPPO, Private-LinOpt-VI and Private-LinOpt-PO is "
          "O(√T): on the mixture instances it stays below the √T envelope",
          plugin_statement="the regret of {algorithm} is O(√T): on the mixture instances it stays below the √T envelope",
          reads=Z2_TABLES[:1], optional=Z2_TABLES[1:], metric="log-log slope of regret vs T",
          expected="CI contains a value <= 0.6", rows=Z2_ROWS, figure="linmix_regret_loglog", kind=KINDS[1],
          planted_bugs=(
              PlantedBug("linear regret", "tests/linmix/test_claims.py::test_z2_sqrt_reproduced_linear_not"),
              PlantedBug("a short run still linear at K",
                         "tests/linmix/test_claims.py::test_z2_long_table_rows_are_separate_and_fitted_over_their_own_last_decade"),
              PlantedBug("non-learners in real linmix_regret jobs (UCRL-VTR, mixture, K = 1e5): uniform play, no optimism "
                         "(β = 0), wrong-sign bonus, a learner locked on its first action",
                         f"{NON_LEARNERS}test_z2_non_learners_in_real_jobs_are_not_reproduced"),
          )),
    Claim(id="Z3", paper=PAPER, statement="the privacy cost scales like ε^(-1/2) and ln(1/δ)^(1/4)",
          plugin_statement="the privacy cost Regret_{algorithm} − Regret_{baseline} scales like ε^(-1/2) and ln(1/δ)^(1/4)",
          reads=COST_TABLES[:1], optional=COST_TABLES[1:],
          metric="log-log slope of private minus non-private regret vs ε (vs ln 1/δ), paper calibration",
          expected=f"−1/2 in ε (excluding −1/4), +1/4 in ln 1/δ (excluding 0), each ± {PAPER_EXPONENT_TOL:g}",
          rows=cost_rows(package=False), figure="linmix_privacy_cost",
          planted_bugs=(
              PlantedBug("a privacy cost ∝ ε^-1/4 (the nearest wrong exponent)",
                         "tests/linmix/test_claims.py::test_z3_judges_the_paper_calibration_against_the_papers_exponent"),
              PlantedBug("the ε = 10 table's regret raised to the power 1.2",
                         "tests/linmix/test_claims.py::test_z3_reads_the_eps10_table_as_rows_of_its_own"),
              PlantedBug("a paper calibration that ignores δ: cost flat in ln(1/δ)",
                         "tests/linmix/test_claims_flip.py::test_z3_delta_exponent_flips_when_the_calibration_ignores_delta"),
          )),
    Claim(id="Z4", paper=PAPER, statement="regret does not grow with |S| at fixed d",
          reads=("linmix_states",), metric="exponent of final regret in S on instances paired across S",
          expected=f"CI within ±{Z4_MARGIN:g} (equivalence); positive control (k ∝ S) outside it", compute=z4,
          figure="linmix_states",
          why_code="an equivalence test with a positive control built from the same runs",
          planted_bugs=(
              PlantedBug("regret ∝ √S (a tabular learner)",
                         "tests/linmix/test_claims.py::test_z4_equivalence_needs_flat_paired_regret_and_a_rejected_control"),
          )),
    Claim(id="Z5", paper=PAPER, statement="LinOpt-PO regret grows at most like sqrt(log|A|)",
          reads=("linmix_actions",), metric="exponent of final regret in ln|A| on nested action sets",
          expected=f"CI upper end <= {0.5 + Z5_MARGIN:g} (one-sided equivalence); positive control (k ∝ |A|) above it",
          compute=z5, figure="linmix_actions",
          why_code="a one-sided equivalence test with a positive control built from the same runs",
          planted_bugs=(
              PlantedBug("regret ∝ (ln|A|)^1.5", "tests/linmix/test_claims.py::test_z5_one_sided_equivalence_with_control"),
          )),
    Claim(id="Z6", paper=PAPER, statement="LDP regret is larger than JDP regret at the same (ε,δ) and grows faster in T",
          reads=("linmix_ldp",), optional=("linmix_hard_ldp",), metric="LDP minus JDP final regret; log-log slopes vs T",
          expected="> 0; LDP slope > JDP slope (mixture instance); > 0, and > 0 between ε's (hard family)",
          compute=z6, figure="linmix_ldp",
          why_code="orderings between algorithms (LDP against JDP) and between ε's, paired by seed",
          planted_bugs=(
              PlantedBug("LDP and JDP curves swapped", "tests/linmix/test_claims.py::test_z6_ldp_larger_and_faster"),
              PlantedBug("a local randomiser that adds the central noise once: LDP as good as JDP (inconclusive, "
                         "not rejected: the rule cannot prove a tie)",
                         "tests/linmix/test_claims_flip.py::test_z6_ldp_as_good_as_jdp_is_inconclusive_not_reproduced"),
              PlantedBug("on the hard family: LDP and JDP swapped (not reproduced); an LDP learner as good as JDP "
                         "(a tie: inconclusive)", "tests/linmix/test_hard_ldp.py::test_z6_hard_flips_when_ldp_is_no_worse_than_jdp"),
              PlantedBug("on the hard family: the local randomiser calibrated at one ε whatever the job's (inconclusive), "
                         "or its regret falling as ε shrinks (not reproduced)",
                         "tests/linmix/test_hard_ldp.py::test_z6_hard_flips_when_the_ldp_noise_ignores_epsilon"),
          )),
    Claim(id="Z7", paper=PAPER, statement="the regret of UCRL-VTR, OPPO and Private-LinOpt-VI/PO grows like √K on the "
          "instance hard at K (lower bound Ω(dH√K) of Zhou, Gu, Szepesvári 2021; the paper's Õ(√K) upper bound)",
          plugin_statement="the regret of {algorithm} grows like √K on the instance hard at K (lower bound Ω(dH√K) of "
                           "Zhou, Gu, Szepesvári 2021)",
          reads=HARD_TABLES[:1], optional=(*HARD_TABLES[1:], *GAPS_TABLES),
          metric="log-log slope of regret at K vs K over the family (tuned to K; worst case over fixed gaps)",
          expected="CI inside [0.4, 0.6]; at gap scale 1 only with the fixed gaps' verdict or below uniform play; "
                   "worst case also below uniform play at the largest gap", rows=(Z7_ROWS, Z7_WORST_ROWS), figure="linmix_hard_regret", kind=KINDS[0],
          planted_bugs=(
              PlantedBug("regret nearly constant in K (an agent that reads μ)",
                         "tests/linmix/test_hard_family.py::test_z7_fails_for_an_agent_that_beats_the_lower_bound"),
              PlantedBug("regret flat in K in linmix_hard_long",
                         "tests/linmix/test_hard_family.py::test_z7_reads_linmix_hard_long_as_part_of_the_family"),
              PlantedBug("an agent that reads μ, inside the regime",
                         "tests/linmix/test_claims_flip.py::test_z7_in_regime_flips_for_an_agent_that_reads_mu"),
              PlantedBug("non-learners in real linmix_hard and linmix_hard_gaps jobs: uniform play, no optimism (β = 0), "
                         "wrong-sign bonus, a learner locked on its first action",
                         f"{NON_LEARNERS}test_z7_non_learners_in_real_jobs_are_not_reproduced"),
          )),
    Claim(id="Z8", paper=PAPER, statement="on the hard instance the regret grows linearly with the dimension d (Ω(dH√K))",
          plugin_statement="on the hard instance the regret of {algorithm} grows linearly with the dimension d (Ω(dH√K))",
          reads=HARD_TABLES[:1], optional=(*HARD_TABLES[1:], *GAPS_TABLES),
          metric="log-log slope of final regret vs d − 1 at one K",
          expected=f"1 ± {Z8_TOL:g} (a CI wider than {Z8_TOL:g}: inconclusive), and below uniform play at every d of "
                   "a resolving d grid (linmix_hard_gaps)", rows=Z8_ROWS, figure="linmix_hard_regret",
          planted_bugs=(
              PlantedBug("regret flat in d", "tests/linmix/test_hard_family.py::test_z8_reads_the_growth_with_d_and_fails_when_flat"),
              PlantedBug("regret flat in d, inside the regime",
                         "tests/linmix/test_claims_flip.py::test_z8_in_regime_flips_when_regret_is_flat_in_d"),
              PlantedBug("non-learners in real linmix_hard and linmix_hard_gaps jobs (d grid at gap scale 1 and 100): "
                         "uniform play, no optimism (β = 0), wrong-sign bonus, a learner locked on its first action",
                         f"{NON_LEARNERS}test_z8_non_learners_in_real_jobs_are_not_reproduced"),
          )),
    Claim(id="F3", paper=PAPER, statement="Package finding: under the tight calibration the privacy cost follows the "
          "exponents of sqrt(σ) for its own σ's, not the paper's −1/2 and +1/4",
          reads=COST_TABLES[:1], optional=COST_TABLES[1:],
          metric="log-log slope of private minus non-private regret vs ε (vs ln 1/δ), tight calibration",
          expected=f"½ × the slope of log σ for the tight σ's, ± {EXPONENT_TOL:g}", rows=cost_rows(package=True),
          figure="linmix_privacy_cost", finding=True,
          planted_bugs=(
              PlantedBug("a tight privacy cost ∝ ε^-1 where its σ's predict ε^-0.4",
                         "tests/linmix/test_claims.py::test_f3_expected_exponent_comes_from_the_sigmas_in_use"),
              PlantedBug("tight noise that ignores δ while the recorded σ follows it",
                         "tests/linmix/test_claims_flip.py::test_f3_delta_exponent_flips_when_the_cost_does_not_follow_the_recorded_sigmas"),
          )),
]
