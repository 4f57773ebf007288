"""Regime of a results table (src/dprl/README.md, "Regimes"): the median over seeds of the onset
each job recorded (:func:`dprl.agents.regime.onset_episode`)."""

from __future__ import annotations

import pandas as pd


def median_onset(g: pd.DataFrame) -> float:
    """Median over seeds of a table's recorded ``onset_episode`` (one value per job);
    ``NaN`` if the column is missing or a majority of seeds never left the burn-in."""
    if "onset_episode" not in g:
        return float("nan")
    per_seed = g.groupby("seed")["onset_episode"].first()
    return float(per_seed.median()) if per_seed.notna().mean() > 0.5 else float("nan")
