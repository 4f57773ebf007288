"""Regime of a results table (src/dprl/README.md, "Regimes"): the one criterion every paper's
rate claims use (:func:`onset_regime`), and the median over seeds of the burn-in end each job
measured (``onset_episode``)."""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import pandas as pd

from dprl.agents.regime import burn_in_episodes as fixed_point
from dprl.analysis.base import NOT_LEARNED, RegimeCheck
from dprl.analysis.burn_in import ONSET_DECADES, burn_in_margin
from dprl.experiments.registry import plugins

__all__ = ["ONSET_DECADES", "has_predicted_burn_in", "is_plugin", "measured_regime", "median_onset", "no_escape_horizon", "onset_regime",
           "no_escape_at", "plugin_regime", "predicted_horizon"]


def no_escape_horizon(predicted: float, algorithm: str) -> float:
    """The horizon the theory gives a correct run of ``algorithm`` to end its burn-in, and a
    decade more: ``10^ONSET_DECADES · predicted · margin`` (:func:`dprl.analysis.burn_in.burn_in_margin`:
    the largest measured-over-predicted burn-in seen on correct runs); NaN without a prediction."""
    return 10**ONSET_DECADES * predicted * burn_in_margin(algorithm) if np.isfinite(predicted) else float("nan")


def no_escape_at(t_star: Callable[[int], float], k: int, algorithm: str) -> float:
    """:func:`no_escape_horizon` of the burn-in ``t_star(k)`` predicted for a run of ``k``
    episodes; ``inf`` for a burn-in predicted never to end (``T* = inf``), NaN without a prediction."""
    t = t_star(k)
    return math.inf if t == math.inf else no_escape_horizon(t, algorithm)


def predicted_horizon(t_star: Callable[[int], float], algorithm: str, steps: int = 20) -> float:
    """The horizon at which a run's regime is reached by prediction, before it runs: the
    smallest ``K`` past :func:`no_escape_horizon` of the burn-in ``t_star(K)`` predicted for a
    run of ``K`` episodes (``K >= 10^ONSET_DECADES · T*(K) · margin``, a fixed point as the
    jobs' ``horizon_needed``, which is the same without the margin; ``inf`` beyond 1e15).
    A run that long reaches the regime by :func:`onset_regime` if its burn-in ends no later
    than the worst measured-over-predicted ratio so far, and is :data:`NOT_LEARNED` if it
    does not end. ``steps`` halvings of the bisection (:func:`~dprl.agents.regime.burn_in_episodes`):
    20 bound the result within 3e-5 of the fixed point, for a horizon printed in two digits."""
    return fixed_point(lambda k: no_escape_at(t_star, k, algorithm), 1.0, steps=steps)


def onset_regime(k_max: float, predicted: float, onset: float, planned: float = float("nan"),
                 algorithm: str | None = None) -> tuple[str, float, float]:
    """The regime criterion, stated once: ``(regime, horizon_needed, burn_in)``.

    ``predicted`` is a paper's predicted burn-in (``NaN``: none, a plug-in), ``onset`` its
    measured end, the same event (median over seeds; ``NaN``: not within the run). Reached
    when the end was measured and ``k_max >= 10^ONSET_DECADES · burn_in``, ``burn_in =
    max(predicted, onset)``. A run without a measured end is not reached, unless, given its
    ``algorithm``, it ran past :func:`no_escape_horizon`: then it is :data:`NOT_LEARNED` (a
    run that does not learn must not escape to "not reached"; one that stopped before its
    predicted burn-in stays not reached). Otherwise the horizon needed is
    ``10^ONSET_DECADES`` times the burn-in (a missing end counting as ``k_max``), and at
    least ``planned`` (a job's fixed point ``K >= 10^ONSET_DECADES · T*(K)`` when the
    prediction grows with ``K``)."""
    span = 10**ONSET_DECADES
    burn_in = max(predicted if np.isfinite(predicted) else 0.0, onset if np.isfinite(onset) else k_max)
    reached = bool(np.isfinite(onset) and k_max >= span * burn_in * (1 - 1e-9))
    if reached:
        return "reached", float("nan"), burn_in
    if algorithm is not None and not np.isfinite(onset) and k_max >= no_escape_horizon(predicted, algorithm) * (1 - 1e-9):
        return NOT_LEARNED, float("nan"), burn_in
    need = span * burn_in
    return "not reached", (max(need, planned) if np.isfinite(planned) else need), burn_in


def median_onset(g: pd.DataFrame) -> float:
    """Median over seeds of a table's recorded ``onset_episode`` (one value per job);
    ``NaN`` if the column is missing or a majority of seeds never left the burn-in."""
    if "onset_episode" not in g:
        return float("nan")
    per_seed = g.groupby("seed")["onset_episode"].first()
    return float(per_seed.median()) if per_seed.notna().mean() > 0.5 else float("nan")


def measured_regime(g: pd.DataFrame, k_max: float) -> RegimeCheck:
    """Regime of an algorithm whose burn-in is not predicted (a plug-in), from its measured
    onset alone, the measured half of the built-ins' criterion: reached when ``k_max`` is :data:`ONSET_DECADES` past the median onset
    (the fit then starts there); a majority of seeds without onset is not reached, needing
    that much past ``k_max`` at least."""
    onset = median_onset(g)
    reg, need, _ = onset_regime(k_max, float("nan"), onset)
    if not np.isfinite(onset):
        return RegimeCheck(reg, need, k_max / 10**ONSET_DECADES,
                           "; regime (measured onset only: no burn-in is predicted for a plug-in): no onset within the run")
    note = (f"; regime (measured onset only: no burn-in is predicted for a plug-in): onset at {onset:.3g} (median "
            f"over seeds), needs {10**ONSET_DECADES:g}× that")
    return RegimeCheck(reg, need, onset if reg == "reached" else k_max / 10**ONSET_DECADES, note)


def is_plugin(g: pd.DataFrame) -> bool:
    """Whether ``g`` (the rows of one group of a claim) are a plug-in's: every row's
    ``algorithm`` is an installed plug-in (``experiments/registry.plugins``), for which no
    burn-in is predicted."""
    return bool(len(g)) and "algorithm" in g and bool(g["algorithm"].isin(list(plugins())).all())


def plugin_regime(g: pd.DataFrame, k_max: float) -> RegimeCheck | None:
    """The regime criterion's half that applies to ``g``'s algorithm when it is a plug-in
    without a predicted burn-in: :func:`measured_regime` (its measured onset alone; still in
    its burn-in: ``not reached``, with the horizon it needs, never ``n/a``); ``None`` for a
    built-in, and for a plug-in whose jobs recorded the burn-in it declares
    (``Algorithm.burn_in``: a finite ``burn_in_episodes``), whose regime function applies the
    whole criterion (:func:`onset_regime` with that prediction, its no-escape horizon at
    :data:`~dprl.analysis.burn_in.DEFAULT_MARGIN`). A built-in regime function starts with
    ``if (check := plugin_regime(g, k_max)) is not None: return check``."""
    if not is_plugin(g) or has_predicted_burn_in(g):  # is_plugin: every algorithm of g is declared
        return None
    return measured_regime(g, k_max)


def has_predicted_burn_in(g: pd.DataFrame) -> bool:
    """Whether ``g``'s plug-in declares its burn-in (``Algorithm.burn_in``) and every job of
    ``g`` recorded it (a finite ``burn_in_episodes``)."""
    declared = plugins()
    return (bool(len(g)) and "burn_in_episodes" in g
            and all(declared[a].burn_in for a in g["algorithm"].unique() if a in declared)
            and bool(np.isfinite(g["burn_in_episodes"].to_numpy(dtype=float)).all()))
