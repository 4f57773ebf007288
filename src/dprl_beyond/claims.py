"""The later papers' regret claims, declared through dprl's entry-point group ``dprl.claims``
(rows in the claims table's section "beyond the four papers", never counted in the four
papers' totals).

Each regret bound is judged by the rule dprl applies to any tabular algorithm on the
Figure 1 family hard at T (claim V9 of Vietri et al. 2020, which every ε-JDP algorithm
meets from below by Theorem 6): a log-log slope of regret at T whose 95% interval lies in
[0.4, 0.6] on the tuned family, measurably below uniform play, only a decade past the
algorithm's measured onset (else "not reached"), a seed that never learns fails the row.
On a family tuned to T, √T from above is what both bounds give: the √(SAH³T) against
√(SAH²T) difference is in H, which the family's fixed H does not resolve, so the claims
read the rate, not the H power. The rows are V9's rows of the algorithm, restated with the
later paper's statement; an algorithm the run did not put in ``tabular_hard`` gets one
inconclusive row saying so.

L3 (Qiao & Wang 2023) is DP-UCBVI's "privacy for free": its regret Õ(√(SAH²T) + S²AH³/ε)
(abstract of arXiv 2212.04680) is the non-private minimax rate for ε > ε* = S^1.5 A^0.5 H²/√T.
It reads ``beyond_free`` (an ε sweep of DP-UCBVI beside UCBVI-Bernstein, its non-private
planner): per checkpoint T, the ε_c(T) where the seed-paired privacy cost equals the
non-private regret, whose log-log slope in T the threshold puts at −1/2 (:func:`free_rows`).
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd

from dprl.analysis.base import Claim, ClaimResult, PlantedBug, Tables, Verdict
from dprl.analysis.claims.tabular import CLAIMS as TABULAR_CLAIMS
from dprl.analysis.claims.tabular import V9_ROWS
from dprl.analysis.selection import privacy_cost
from dprl.analysis.stats import Estimate, bootstrap_seed_rows, loglog_slope

# the paper module's declaration, not the registry's (which loads this module)
_RATE = next(c for c in TABULAR_CLAIMS if c.id == "V9")
# the experiments that run the later algorithms on the Figure 1 family hard at T (config.yaml); V9's
# family rows (gap scale >= 10, the T inside the regime, below uniform play) read them instead of tabular_hard
BEYOND_HARD = ("beyond_hard", "beyond_hard_dp")
_RATE_HERE = dataclasses.replace(_RATE, reads=BEYOND_HARD[:1], optional=BEYOND_HARD[1:],
                                 rows=dataclasses.replace(V9_ROWS, tables=BEYOND_HARD))


def _rate_rows(algorithm: str, label: str):
    """``compute`` of a later paper's regret claim: V9's rows of ``algorithm``."""

    def compute(tables: Tables) -> list[ClaimResult]:
        rows = [r for r in _RATE_HERE.evaluate(tables) if r.algorithm == algorithm]
        if rows:
            return rows
        return [ClaimResult(verdict="inconclusive", algorithm=algorithm,
                            note=f"{label} is not among the algorithms of {' or '.join(BEYOND_HARD)} in this run: add "
                                 f"{{name: {algorithm}}} to its algorithms in config.yaml")]

    return compute


_WHY = "the rows are claim V9's rule applied to this algorithm (tuned family, regime, below uniform play)"
_NON_LEARNER = PlantedBug(
    "V9's rule finds the algorithm's regret growing like T (a non-learner: V9's plug-in rows of a plug-in at uniform "
    "play in real jobs, tests/tabular/test_non_learners.py): the later claim's row is not reproduced",
    "tests/core/test_beyond_claims.py::test_the_later_regret_claims_are_v9s_rule_on_their_algorithm")
_PLANTED_IN_JOBS = PlantedBug(
    "in real beyond_hard jobs, Private-UCB-VI planted as uniform play (its bonus's ι at 1e30, every Q̃ at H; its "
    "declared burn-in still the correct one's): past its no-escape horizon L1's row is not reproduced, and the "
    "correct plug-in's is reproduced",
    "tests/beyond/test_later_non_learners.py::test_l1_is_reproduced_and_a_planted_non_learner_is_not")
_PLANTED_IN_JOBS_DP = PlantedBug(
    "in real beyond_hard jobs, DP-UCBVI planted as uniform play (its bonus's ι at 1e30 in the built agent, compiled "
    "kernel included: every Q̄ at its cap, the clamp never ends; its declared burn-in still the correct one's): at T = "
    "5e5, past its no-escape horizon, L2's row is not reproduced and cannot escape to not reached, while the correct "
    "DP-UCBVI's clamp ends and its regime is reached",
    "tests/beyond/test_later_non_learners.py::test_l2_a_planted_non_learner_is_not_reproduced_and_cannot_escape_to_not_reached")
# the figure that draws the later algorithms (src/dprl/analysis/figures/beyond.py)
_FIGURE = "beyond_regret_comparison"


def _rate_claim(cid: str, paper: str, statement: str, algorithm: str, label: str,
                in_jobs: tuple[PlantedBug, ...] = ()) -> Claim:
    """A later paper's regret claim about ``algorithm``, judged by V9's rule (module docstring)."""
    return Claim(id=cid, paper=paper, beyond=True, statement=statement, reads=_RATE_HERE.reads, optional=_RATE_HERE.optional,
                 metric=_RATE.metric, expected=_RATE.expected, compute=_rate_rows(algorithm, label), why_code=_WHY,
                 figure=_FIGURE, kind=_RATE.kind, planted_bugs=(_NON_LEARNER, *in_jobs))


_LATER_RATES = (
    _rate_claim("L1", "Chowdhury & Zhou 2022 (AAAI), Private-UCB-VI",
                "Private-UCB-VI's regret is Õ(√(SAH³T) + S²AH³/ε) under ε-JDP: on the Figure 1 family hard at T it "
                "grows like √T", "private_ucb_vi", "Private-UCB-VI", in_jobs=(_PLANTED_IN_JOBS,)),
    _rate_claim("L2", "Qiao & Wang 2023 (AISTATS), DP-UCBVI",
                "DP-UCBVI's regret is Õ(√(SAH²T) + S²AH³/ε) under ε-JDP: on the Figure 1 family hard at T it grows "
                "like √T", "dp_ucbvi", "DP-UCBVI", in_jobs=(_PLANTED_IN_JOBS_DP,)),
)


# ------------------------------------------------------------------------------ L3
# Qiao & Wang 2023: regret Õ(√(SAH²T) + S²AH³/ε), the non-private minimax rate for
# ε > ε* = S^1.5 A^0.5 H² / √T (T = K·H steps): privacy is free once the privacy term is
# below the √T term, a threshold that falls like T^{-1/2}.

FREE_TABLE = "beyond_free"
FREE_ALGORITHM = "dp_ucbvi"
FREE_SLOPE = -0.5  # the threshold's T-dependence: ε* ∝ T^{-1/2}
FREE_FIT_DECADES = 1.0  # the checkpoints of the last decade, [T_max/10, T_max]
FREE_MIN_T = 3  # checkpoints with a crossover a slope needs
FREE_REPORT_EPS = (10.0, 1.0)  # the cost ratios the row reports at the largest T
# the minimax rate the threshold presumes: a non-private regret whose slope's interval lies
# wholly below this does not grow like √T on the instance, so ε_c ∝ T^{-1/2} is not predicted
FREE_SQRT_FLOOR = 0.4


def printed_threshold(S: int, A: int, H: int, episodes: float) -> float:
    """The paper's ε* = S^1.5 A^0.5 H² / √T with T = K·H steps (abstract of arXiv 2212.04680;
    its order only: Õ hides log factors and constants)."""
    return float(S ** 1.5 * A ** 0.5 * H ** 2 / np.sqrt(episodes * H))


def crossover(eps: np.ndarray, ratio: np.ndarray) -> float:
    """The ε where the cost ratio ``ratio`` (over ascending ``eps``) falls through 1 for the
    last time: log-log interpolation between the last ε with ratio >= 1 and the next (linear
    in the ratio when the next is not positive: a paired cost below zero). NaN when the ratio
    is below 1 at every ε, or at least 1 at the largest (no crossing inside the sweep)."""
    above = np.flatnonzero(ratio >= 1.0)
    if above.size == 0 or above[-1] == ratio.size - 1 or not np.all(np.isfinite(ratio)):
        return float("nan")
    i = int(above[-1])
    hi, lo = float(ratio[i]), float(ratio[i + 1])
    f = np.log(hi) / (np.log(hi) - np.log(lo)) if lo > 0 else (hi - 1.0) / (hi - lo)
    x0, x1 = np.log(eps[i]), np.log(eps[i + 1])
    return float(np.exp(x0 + f * (x1 - x0)))


@dataclasses.dataclass(frozen=True)
class FreeCube:
    """The seed-paired costs of one environment's sweep, on the checkpoints of its fit range:
    ``cost[seed, ε, T]`` (private minus non-private regret of the same seed) and
    ``baseline[seed, T]`` (the non-private regret)."""

    eps: np.ndarray
    episodes: np.ndarray
    seeds: np.ndarray
    cost: np.ndarray
    baseline: np.ndarray

    @classmethod
    def of(cls, costs: pd.DataFrame) -> FreeCube:
        T = float(costs["episode"].max())
        fit = costs[costs["episode"] >= T / 10 ** FREE_FIT_DECADES]
        cost = fit.pivot_table(index="seed", columns=["epsilon", "episode"], values="cost", aggfunc="mean").dropna(axis=1)
        base = fit.pivot_table(index="seed", columns="episode", values="regret_baseline", aggfunc="mean")
        eps = np.array(sorted(set(cost.columns.get_level_values(0))), float)
        episodes = np.array(sorted(set(cost.columns.get_level_values(1)) & set(base.columns)), float)
        seeds = cost.index.intersection(base.index).to_numpy()
        cube = np.array([[cost.loc[seeds, (e, t)].to_numpy(float) if (e, t) in cost.columns else
                          np.full(seeds.size, np.nan) for t in episodes] for e in eps]).transpose(2, 0, 1)
        return cls(eps, episodes, seeds, cube, base.loc[seeds, episodes].to_numpy(float))

    def ratio(self, idx: np.ndarray) -> np.ndarray:
        """The seed-paired mean cost over the mean non-private regret, ``[ε, T]``, of seeds ``idx``."""
        return self.cost[idx].mean(axis=0) / self.baseline[idx].mean(axis=0)[None, :]

    def crossovers(self, idx: np.ndarray) -> np.ndarray:
        """ε_c(T) of the seeds ``idx`` at each checkpoint (NaN where the ratio does not cross)."""
        r = self.ratio(idx)
        return np.array([crossover(self.eps, r[:, j]) for j in range(self.episodes.size)])

    def slope(self, idx: np.ndarray) -> float:
        """Least-squares slope of log ε_c against log T over the checkpoints with a crossover."""
        return loglog_slope(self.episodes, self.crossovers(idx))  # NaN crossovers dropped there

    def term_slope(self, idx: np.ndarray) -> float:
        """Slope of log(ε_c·R̄) against log T, R̄ the mean non-private regret: the privacy term's
        own T-dependence (ε_c·R̄ is the cost at ε = 1 of a cost ∝ 1/ε), which S²AH³/ε puts at
        a polylog of T."""
        return loglog_slope(self.episodes, self.crossovers(idx) * self.baseline[idx].mean(axis=0))

    def baseline_slope(self, idx: np.ndarray) -> float:
        """Log-log slope of the mean non-private regret over the fit range."""
        return loglog_slope(self.episodes, self.baseline[idx].mean(axis=0))


def verdict_free(est: Estimate) -> Verdict:
    """Reproduced when the slope's interval contains −1/2 and excludes 0, not reproduced when
    it excludes −1/2, inconclusive otherwise (it holds both)."""
    if not (np.isfinite(est.low) and np.isfinite(est.high)) or est.n < 2:
        return "inconclusive"
    if not est.contains(FREE_SLOPE):
        return "not reproduced"
    return "inconclusive" if est.contains(0.0) else "reproduced"


def _fmt_eps(x: float) -> str:
    return f"{x:.3g}" if np.isfinite(x) else "none"


def _free_row(env: str, costs: pd.DataFrame, S: int, A: int, H: int) -> ClaimResult:
    """The row of one environment's sweep (the rule: :func:`free_rows`)."""
    cube = FreeCube.of(costs)
    every = np.arange(cube.seeds.size)
    found = cube.crossovers(every)
    kept, left = cube.episodes[np.isfinite(found)], cube.episodes[~np.isfinite(found)]
    T = float(cube.episodes.max())
    star = printed_threshold(S, A, H, T)
    r_last = cube.ratio(every)[:, -1]
    at = {e: (float(r_last[np.flatnonzero(cube.eps == e)[0]]) if (cube.eps == e).any() else float("nan"))
          for e in FREE_REPORT_EPS}
    base = bootstrap_seed_rows(every, lambda idx: cube.baseline_slope(idx.astype(int)))
    note = (f"{env}: ε_c(T), where the seed-paired mean cost over the non-private regret crosses 1 (log-log in ε over "
            f"{', '.join(f'{e:g}' for e in cube.eps)}), at {kept.size} of the {cube.episodes.size} checkpoints of "
            f"[T/{10 ** FREE_FIT_DECADES:g}, T], T = {T:.3g} episodes, {cube.seeds.size} seeds"
            + (f" (no crossing inside the sweep at T = {', '.join(f'{t:.3g}' for t in left)}: left out)" if left.size else "")
            + f"; slope of log ε_c vs log T (bootstrap over seeds jointly), paper: {FREE_SLOPE:g}"
            f"; measured ε_c at T: {_fmt_eps(float(found[-1]))} against the printed ε* = S^1.5 A^0.5 H²/√(KH) = "
            f"{star:.3g}" + (f" (ratio {found[-1] / star:.3g})" if np.isfinite(found[-1]) else "")
            + "".join(f"; cost ratio at ε = {e:g}, T: {v:.3g}" if np.isfinite(v) else f"; ε = {e:g} not in the sweep"
                      for e, v in at.items())
            + f"; non-private regret's slope over the fit range {base.value:.2f} [{base.low:.2f}, {base.high:.2f}]")
    if kept.size < FREE_MIN_T:
        return ClaimResult.inconclusive(note + f" [fewer than {FREE_MIN_T} checkpoints with a crossover]",
                                        calibration="tight", epsilon=float(cube.eps.min()), algorithm=FREE_ALGORITHM)
    est = bootstrap_seed_rows(every, lambda idx: cube.slope(idx.astype(int)))
    term = bootstrap_seed_rows(every, lambda idx: cube.term_slope(idx.astype(int)))
    note += (f"; slope of log(ε_c·R) vs log T, R the non-private regret (the privacy term's own T-dependence, a "
             f"polylog by the bound) {term.value:.2f} [{term.low:.2f}, {term.high:.2f}]")
    verdict = verdict_free(est)
    if verdict != "inconclusive" and np.isfinite(base.high) and base.high < FREE_SQRT_FLOOR:
        note += (f" [the non-private regret does not grow like √T here (slope interval below {FREE_SQRT_FLOOR:g}): the "
                 f"threshold's T^-1/2 presumes the minimax rate; the rule alone: {verdict}]")
        verdict = "inconclusive"
    return ClaimResult.from_estimate(est, verdict=verdict, calibration="tight", note=note,
                                     epsilon=float(cube.eps.min()), algorithm=FREE_ALGORITHM)


def free_rows(tables: Tables) -> list[ClaimResult]:
    """L3's rows, one per environment of ``beyond_free``: at each checkpoint T of the last
    decade, the crossover ε_c(T) where DP-UCBVI's seed-paired mean privacy cost (regret minus
    UCBVI-Bernstein's of the same seed) equals the non-private regret (:func:`crossover`); the
    slope of log ε_c on log T with a 95% bootstrap interval over seeds resampled jointly
    (:func:`dprl.analysis.stats.bootstrap_seed_rows`), judged by :func:`verdict_free` against
    the threshold's T^{-1/2}. Fewer than :data:`FREE_MIN_T` checkpoints with a crossover:
    inconclusive. A non-private regret that does not grow like √T over the fit range (its
    slope's interval below :data:`FREE_SQRT_FLOOR`: a gapped instance past its burn-in, whose
    regret grows like log T) makes a verdict inconclusive: the threshold's T^{-1/2} is the
    minimax √T term's against the privacy term, a prediction on instances where the √T term
    is what the non-private learner pays."""
    df = tables[FREE_TABLE]
    costs = privacy_cost(df)
    costs = costs[(costs["algorithm"] == FREE_ALGORITHM) & np.isfinite(costs["epsilon"].astype(float))]
    if costs.empty:
        return [ClaimResult.inconclusive(f"{FREE_TABLE} has no {FREE_ALGORITHM} run paired with its non-private "
                                         "baseline", calibration="tight", algorithm=FREE_ALGORITHM)]
    out = []
    for env, g in costs.groupby("env_label", sort=True):
        if g["epsilon"].nunique() < 2:
            out.append(ClaimResult.inconclusive(f"{env}: fewer than two ε in the sweep", calibration="tight",
                                                algorithm=FREE_ALGORITHM))
            continue
        S, A, H = (int(g[f"env.{p}"].iloc[0]) for p in ("S", "A", "H"))
        out.append(_free_row(str(env), g, S, A, H))
    return out


_SQRT_K_PRIVATIZER = PlantedBug(
    "a Privatizer whose error grows like √K (the local model's E in place of the central one's polylog): the privacy "
    "term grows like √T, the crossover does not fall with T, the slope interval excludes −1/2: not reproduced "
    "(synthetic tables built to that consequence; the correct case, cost ∝ 1/ε and non-private regret ∝ √T, is "
    "reproduced)",
    "tests/core/test_beyond_free.py::test_a_privatizer_error_growing_like_sqrt_k_flips_l3")

FREE_CLAIM = Claim(
    id="L3", paper="Qiao & Wang 2023 (AISTATS), DP-UCBVI", beyond=True,
    statement="DP-UCBVI's privacy is free for ε > ε* = S^1.5 A^0.5 H²/√T: the ε where its privacy cost equals the "
              "non-private regret falls like T^{-1/2}",
    reads=(FREE_TABLE,), metric="slope of log ε_c(T) vs log T, last decade",
    expected=f"CI contains {FREE_SLOPE:g}, excludes 0", compute=free_rows,
    why_code="a fit across groups: a crossover in ε per checkpoint, then a slope across checkpoints, bootstrapped "
             "over seeds jointly", planted_bugs=(_SQRT_K_PRIVATIZER,))


CLAIMS = (*_LATER_RATES, FREE_CLAIM)
