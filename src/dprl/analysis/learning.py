"""Did it learn? The shared checks that keep a learner which does not learn from passing, or
dodging, a rate verdict (src/dprl/README.md, "Regimes"). One helper each, for every paper:

- :func:`seed_states` and :func:`judged_seeds`: a per-seed rule (a seed whose own slope is
  linear refutes a rate) judges each seed inside that seed's own regime: a seed past the
  horizon the theory gives whose burn-in did not end fails; a seed still in its burn-in is
  outside and judged by nobody.
- :func:`share_of_uniform` and :func:`verdict_below_uniform`: on a family tuned to the horizon
  every policy's regret is at most uniform play's, which itself grows like √T; a rate measured
  there tells a learner from uniform play only where the learner must sit measurably below it.
- :func:`verdict_width`: an interval wider than the tolerance it is judged against cannot
  place an exponent, whatever its centre: inconclusive.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pandas as pd

from dprl.analysis.base import Verdict
from dprl.analysis.regime import ONSET_DECADES, no_escape_horizon
from dprl.analysis.stats import Estimate, t_interval, verdict_at_most

SEED_STATES = ("reached", "learning", "not learned", "n/a")


def seed_states(g: pd.DataFrame, algorithm: str | None = None, k: str = "episode") -> pd.Series:
    """Each seed's own regime (index: seed), by the one criterion applied to the seed alone
    (:func:`dprl.analysis.regime.onset_regime`): ``reached`` when its horizon is
    ``10^ONSET_DECADES`` past the later of its predicted burn-in (``burn_in_episodes``) and
    its own measured onset (``onset_episode``); ``not learned`` when it has no onset and ran
    past :func:`dprl.analysis.regime.no_escape_horizon`; ``learning`` otherwise (still in its
    burn-in); ``n/a`` without the regime columns (a run whose regime nobody predicts)."""
    algorithm = algorithm if algorithm is not None else str(g["algorithm"].iloc[0])
    last = g.sort_values(k).groupby("seed").tail(1).set_index("seed")
    out = {}
    for seed, r in last.iterrows():
        predicted = float(r["burn_in_episodes"]) if "burn_in_episodes" in r and pd.notna(r["burn_in_episodes"]) else np.nan
        onset = float(r["onset_episode"]) if "onset_episode" in r and pd.notna(r["onset_episode"]) else np.nan
        k_max = float(r[k])
        if not np.isfinite(predicted) and "onset_episode" not in r:
            out[seed] = "n/a"
        elif np.isfinite(onset) and k_max >= 10**ONSET_DECADES * max(onset, predicted if np.isfinite(predicted) else 0.0) * (1 - 1e-9):
            out[seed] = "reached"
        elif not np.isfinite(onset) and np.isfinite(predicted) and k_max >= no_escape_horizon(predicted, algorithm) * (1 - 1e-9):
            out[seed] = "not learned"
        else:
            out[seed] = "learning" if np.isfinite(predicted) or "onset_episode" in r else "n/a"
    return pd.Series(out, dtype=object)


def judged_seeds(est: Estimate, states: pd.Series) -> Estimate:
    """``est`` with the per-seed values (``units``) of the seeds still in their own burn-in
    (``learning``, :func:`seed_states`) left out, for the rules that read them (a linear
    seed refutes a rate). The value and interval, which the row's regime decides, are kept.
    An estimate without seed ids is returned as it is."""
    if not est.unit_ids:
        return est
    keep = [i for i, s in enumerate(est.unit_ids) if states.get(s, "n/a") != "learning"]
    return Estimate(est.value, est.low, est.high, est.n, tuple(est.units[i] for i in keep),
                    tuple(est.unit_ids[i] for i in keep))


def seed_note(states: pd.Series) -> str:
    """The row's words on its seeds' own regimes (empty when every seed is reached or n/a)."""
    learning = sorted(s for s, v in states.items() if v == "learning")
    stuck = sorted(s for s, v in states.items() if v == "not learned")
    parts = ([f"seed(s) {learning} still in their own burn-in (outside the per-seed rule)"] if learning else []) + (
        [f"seed(s) {stuck} past the horizon the theory gives with no end of their burn-in (did not learn)"] if stuck else [])
    return "; " + "; ".join(parts) if parts else ""


def any_not_learned(states: pd.Series) -> bool:
    """Whether a seed ran past the horizon the theory gives without ending its burn-in."""
    return bool((states == "not learned").any())


# A learner that resolves the gap must save at least this share of uniform play's regret:
# uniform play's own share is 1 up to its seeds' noise (tabular: 1 ± 0.001; linear mixture:
# 1 ± 0.03 at four seeds, 1a8288a), so an interval below 1 − LEARNED_SAVING is a learner's.
LEARNED_SAVING = 0.05


def share_of_uniform(final: pd.DataFrame, uniform: np.ndarray | pd.Series, value: str = "regret") -> Estimate:
    """Each seed's regret over uniform play's on the same instance and horizon (``uniform``,
    row by row), averaged over the rows of a seed, then Student's t over seeds."""
    share = pd.Series(final[value].to_numpy(float) / np.asarray(uniform, float), index=final.index)
    per_seed = share.groupby(final["seed"]).mean()
    est = t_interval(per_seed.to_numpy(float))
    return Estimate(est.value, est.low, est.high, est.n, est.units, tuple(per_seed.index)) if est.units else est


def verdict_below_uniform(est: Estimate, saving: float = LEARNED_SAVING) -> Verdict:
    """"The learner sits measurably below uniform play" (where the theory says it resolves
    the gap): :func:`~dprl.analysis.stats.verdict_at_most` of the share against ``1 − saving``
    over >= 2 seeds: ``reproduced`` when its CI ends at or below it, ``not reproduced`` when it
    starts above it (indistinguishable from no information), ``inconclusive`` otherwise."""
    return verdict_at_most(est, 1 - saving, n_min=2)


def verdict_width(rule: Callable[[Estimate], Verdict], tol: float) -> Callable[[Estimate], Verdict]:
    """``rule``, except that an interval wider than ``tol``, the tolerance it is judged
    against, is ``inconclusive`` whatever its centre (it cannot place the exponent), unless
    ``rule`` already refutes it."""

    def judged(est: Estimate) -> Verdict:
        verdict = rule(est)
        if verdict == "reproduced" and not est.high - est.low <= tol:
            return "inconclusive"
        return verdict

    judged.__doc__ = f"{getattr(rule, '__name__', 'rule')} with intervals wider than {tol:g} inconclusive"
    return judged
