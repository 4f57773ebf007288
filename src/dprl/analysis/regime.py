"""Regime of a results table (src/dprl/README.md, "Regimes"): the median over seeds of the onset
each job recorded (:func:`dprl.agents.regime.onset_episode`)."""

from __future__ import annotations

import numpy as np
import pandas as pd

# The one regime criterion on measured onsets, every paper: a rate is fitted at least this
# many decades past the measured onset (LQ C2, policy-evaluation B2, plug-ins).
ONSET_DECADES = 1.0


def median_onset(g: pd.DataFrame) -> float:
    """Median over seeds of a table's recorded ``onset_episode`` (one value per job);
    ``NaN`` if the column is missing or a majority of seeds never left the burn-in."""
    if "onset_episode" not in g:
        return float("nan")
    per_seed = g.groupby("seed")["onset_episode"].first()
    return float(per_seed.median()) if per_seed.notna().mean() > 0.5 else float("nan")


def measured_regime(g: pd.DataFrame, k_max: float) -> tuple[str, float, float, str]:
    """Regime of an algorithm whose burn-in is not predicted (a plug-in), from its measured
    onset alone, the measured half of the built-ins' criterion: ``(regime, horizon_needed,
    fit start, note)``, reached when ``k_max`` is :data:`ONSET_DECADES` past the median onset
    (the fit then starts there); a majority of seeds without onset is not reached, needing
    that much past ``k_max`` at least."""
    onset = median_onset(g)
    span = 10**ONSET_DECADES
    if not np.isfinite(onset):
        return ("not reached", span * k_max, k_max / span,
                "; regime (measured onset only: no burn-in is predicted for a plug-in): no onset within the run")
    reached = k_max >= span * onset
    note = (f"; regime (measured onset only: no burn-in is predicted for a plug-in): onset at {onset:.3g} (median "
            f"over seeds), needs {span:g}× that")
    return ("reached", float("nan"), onset, note) if reached else ("not reached", span * onset, k_max / span, note)
