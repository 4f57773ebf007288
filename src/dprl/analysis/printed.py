"""The rows of a privacy theorem under a paper's constants exactly as printed, shared by
C1 and Z1 (``src/dprl/README.md``, "Claims"): audit tables hold, beside the audits of the
calibrations the package runs (``constants = "as run"``), rows of an agent built with the
printed constants (``constants = "printed"``), audited at the audit's ε and accounted
exactly over the grid ``printed_epsilon``."""

from __future__ import annotations

import pandas as pd

from dprl.analysis.base import ClaimResult


def as_run(df: pd.DataFrame) -> pd.DataFrame:
    """The audits of the calibrations the package runs (all rows of tables from before the
    ``constants`` column existed)."""
    return df[df["constants"] != "printed"] if "constants" in df else df


def printed_row(printed: pd.DataFrame, label: str) -> ClaimResult:
    """The row of a privacy theorem under the paper's printed constants (shared by C1 and
    Z1): the audits at the audit's ε and the exact ε under replacement over the grid of
    ``printed_epsilon``; not reproduced when an audit fails or an exact ε exceeds its ε."""
    audited = printed[printed["eps_lb"].notna()] if "eps_lb" in printed else printed.iloc[:0]
    grid = printed.groupby("printed_epsilon")["eps_exact"].max()
    ratios = grid / grid.index.to_numpy(float)
    over = ratios[ratios > 1 + 1e-9]
    held = ratios[ratios <= 1 + 1e-9]
    fails = int((~audited["passed"].astype(bool)).sum()) if len(audited) else 0
    worst = float(ratios.max())
    where = (f"exact ε/ε under replacement over ε ∈ {{{', '.join(f'{e:g}' for e in grid.index)}}}: "
             + ", ".join(f"{r:.3g}" for r in ratios)
             + (f"; private up to ε = {held.index.max():g}" if len(held) else "")
             + (f", not private from ε = {over.index.min():g} on this grid" if len(over) else ", private at every ε of the grid"))
    aud = (f"; audited at ε = {', '.join(f'{e:g}' for e in sorted(audited['epsilon'].unique()))}: max ε_lb/ε = "
           f"{float((audited['eps_lb'] / audited['claimed_epsilon']).max()):.3g} ({fails} failed, "
           f"{int(audited['runs'].min())} runs)") if len(audited) else ""
    verdict = "not reproduced" if len(over) or fails else "reproduced"
    return ClaimResult(worst, worst, worst, verdict, label,
                       f"the paper's constants exactly as printed, judged under its replacement relation: {where}{aud}",
                       epsilon=float(over.index.min()) if len(over) else float(grid.index.max()))
