"""At which privacy levels each regime-gated claim was measured inside its regime.

A verdict at ε = 1000 says little to someone who would deploy ε = 1. For every claim of the
papers with a private row whose rate or scaling is gated by the regime (``regime`` reached
or not reached), this reads the claims table and reports the smallest ε at which a row is
inside its regime (with that row's verdict), whether that ε is a meaningful privacy level
(:data:`MEANINGFUL`, ε ≤ 10), and for the private rows at ε ≤ 10 still in their burn-in the
horizon the cheapest of them needs. Computed from ``claims.csv`` only; no verdict of its own.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from dprl.analysis.base import paper_claims

MEANINGFUL = 10.0  # ε at or below which a privacy level is one people deploy (docs/presets.md)
COLUMNS = ["claim", "paper", "private_rows", "smallest_eps_reached", "verdicts_there", "meaningful",
           "eps_not_reached", "horizon_needed"]


def _eps(x: float) -> str:
    return f"{x:g}" if np.isfinite(x) else ""


def privacy_levels(claims: pd.DataFrame) -> pd.DataFrame:
    """One row per regime-gated claim with private rows (order of the claims table)."""
    df = paper_claims(claims)
    if not {"epsilon", "regime"} <= set(df.columns):  # a table from before these columns existed
        return pd.DataFrame(columns=COLUMNS)
    eps = pd.to_numeric(df["epsilon"], errors="coerce")
    gated = df[np.isfinite(eps) & df["regime"].isin(["reached", "not reached"])].assign(eps=eps)
    rows = []
    for claim, g in gated.groupby("claim", sort=False):
        inside = g[g["regime"] == "reached"]
        best = float(inside["eps"].min()) if len(inside) else float("nan")
        there = inside[inside["eps"] == best]
        verdicts = ", ".join(f"{n} {v}" for v, n in there["verdict"].value_counts().items())
        # the rows at a meaningful ε still in their burn-in: the cheapest horizon among them
        out = g[(g["regime"] == "not reached") & (g["eps"] <= MEANINGFUL)]
        need = pd.to_numeric(out["horizon_needed"], errors="coerce")
        cheapest = out.loc[need.idxmin()] if need.notna().any() else None
        rows.append({
            "claim": claim, "paper": g.iloc[0]["paper"], "private_rows": len(g),
            "smallest_eps_reached": best, "verdicts_there": verdicts,
            "meaningful": bool(np.isfinite(best) and best <= MEANINGFUL),
            "eps_not_reached": float(cheapest["eps"]) if cheapest is not None else float("nan"),
            "horizon_needed": float(cheapest["horizon_needed"]) if cheapest is not None else float("nan"),
        })
    return pd.DataFrame(rows, columns=COLUMNS)


def headline(levels: pd.DataFrame) -> str:
    """One sentence for the README: which claims were measured inside their regime at ε ≤ 10."""
    if levels.empty:
        return ""
    yes = levels[levels["meaningful"]]
    no = levels[~levels["meaningful"]]
    text = (f"Inside their regime at a privacy level of ε ≤ {MEANINGFUL:g}: {len(yes)} of the {len(levels)} claims whose "
            "private rows are gated by a regime")
    if len(yes):
        text += " (" + ", ".join(f"{r.claim} from ε = {_eps(r.smallest_eps_reached)}" for r in yes.itertuples()) + ")"
    if len(no):
        text += f"; not at ε ≤ {MEANINGFUL:g}: " + ", ".join(
            f"{r.claim} (" + (f"inside from ε = {_eps(r.smallest_eps_reached)}; " if np.isfinite(r.smallest_eps_reached) else "")
            + (f"at ε = {_eps(r.eps_not_reached)} needs a horizon of {r.horizon_needed:.2g}" if np.isfinite(r.horizon_needed)
               else f"no row at ε ≤ {MEANINGFUL:g}") + ")"
            for r in no.itertuples())
    return text + "."


def to_markdown(levels: pd.DataFrame) -> list[str]:
    """The ``claims.md`` section."""
    if levels.empty:
        return []
    lines = [
        "",
        f"## Privacy levels inside the regime (ε ≤ {MEANINGFUL:g} is the level people deploy)",
        "",
        "For every claim whose private rows are gated by a regime: the smallest ε at which a row was measured inside "
        f"it (and that row's verdict), and, for the rows at ε ≤ {MEANINGFUL:g} still in their burn-in, the horizon the "
        "cheapest of them needs (episodes, or users for policy evaluation).",
        "",
        "| claim | paper | private rows | smallest ε inside the regime | verdicts there | "
        f"inside at ε ≤ {MEANINGFUL:g} | ε ≤ {MEANINGFUL:g} not reached | horizon it needs |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in levels.itertuples(index=False):
        lines.append("| " + " | ".join([
            f"**{r.claim}**", r.paper, str(r.private_rows), _eps(r.smallest_eps_reached) or "none", r.verdicts_there,
            "yes" if r.meaningful else "**no**", _eps(r.eps_not_reached),
            f"{r.horizon_needed:.3g}" if np.isfinite(r.horizon_needed) else ""]) + " |")
    return lines
