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


# Where a printed row's note turns from the accounting to the audit details (the README
# headline quotes the part before it: analysis/readme_table.py).
AUDIT_DETAILS = "; audited at"


def printed_rows(df: pd.DataFrame) -> pd.DataFrame:
    """The rows of the agent built with the printed constants (none in tables from before
    the ``constants`` column existed)."""
    return df[df["constants"] == "printed"] if "constants" in df else df.iloc[:0]


def exact_ratios(printed: pd.DataFrame) -> pd.Series:
    """Exact ε under replacement over the nominal ε, per ε of the ``printed_epsilon`` grid."""
    grid = printed.groupby("printed_epsilon")["eps_exact"].max()
    return grid / grid.index.to_numpy(float)


def _audited(printed: pd.DataFrame) -> pd.DataFrame:
    """The printed rows that were audited (the accounting-only rows have no ``eps_lb``)."""
    return printed[printed["eps_lb"].notna()] if "eps_lb" in printed else printed.iloc[:0]


def printed_row(printed: pd.DataFrame, label: str) -> ClaimResult:
    """The row of a privacy theorem under the paper's printed constants (shared by C1 and
    Z1): the audits at the audit's ε and the exact ε under replacement over the grid of
    ``printed_epsilon``; not reproduced when an audit fails or an exact ε exceeds its ε."""
    audited = _audited(printed)
    ratios = exact_ratios(printed)
    over = ratios[ratios > 1 + 1e-9]
    held = ratios[ratios <= 1 + 1e-9]
    fails = int((~audited["passed"].astype(bool)).sum()) if len(audited) else 0
    worst = float(ratios.max())
    where = (f"exact ε/ε under replacement over ε ∈ {{{', '.join(f'{e:g}' for e in ratios.index)}}}: "
             + ", ".join(f"{r:.3g}" for r in ratios)
             + (f"; private up to ε = {held.index.max():g}" if len(held) else "")
             + (f", not private from ε = {over.index.min():g} on this grid" if len(over) else ", private at every ε of the grid"))
    aud = (f"{AUDIT_DETAILS} ε = {', '.join(f'{e:g}' for e in sorted(audited['epsilon'].unique()))}: max ε_lb/ε = "
           f"{float((audited['eps_lb'] / audited['claimed_epsilon']).max()):.3g} ({fails} failed, "
           f"{int(audited['runs'].min())} runs)") if len(audited) else ""
    verdict = "not reproduced" if len(over) or fails else "reproduced"
    return ClaimResult.point(worst, verdict=verdict, calibration=label,
                             note=f"the paper's constants exactly as printed, judged under its replacement relation: {where}{aud}",
                             epsilon=float(over.index.min()) if len(over) else float(ratios.index.max()))


def draw_printed(ax, printed: pd.DataFrame, claim: str) -> None:
    """One panel of the audit figure of ``claim`` for its printed row: the exact ε under
    replacement of the agent built with the printed constants, over ε, relative to the
    nominal ε (above 1: not private), with the audited ε_lb/ε where it was audited."""
    from dprl.analysis import plotting as P

    if printed.empty:
        P.empty_panel(ax, "no printed-constant rows in this preset")
        return
    ratios = exact_ratios(printed)
    eps, ratio = ratios.index.to_numpy(float), ratios.to_numpy(float)
    over = ratio > 1 + 1e-9
    ax.plot(eps, ratio, color="0.4", lw=1.0, zorder=1)
    ax.scatter(eps[~over], ratio[~over], marker="o", color="#009E73", zorder=3, label="exact ε ≤ nominal ε (private)")
    ax.scatter(eps[over], ratio[over], marker="X", s=60, color="#D55E00", zorder=3, label="exact ε > nominal ε (not private)")
    audited = _audited(printed)
    positive = audited[audited["eps_lb"] > 0]
    if len(positive):
        ax.scatter(positive["printed_epsilon"], positive["eps_lb"] / positive["claimed_epsilon"], marker="^", color="0.2",
                   zorder=4, label="audited ε_lb / ε")
    if len(audited) > len(positive):  # a log axis cannot show ε_lb <= 0: said under the x label
        P.note(ax, f"audited ε_lb <= 0 at ε = {', '.join(f'{e:g}' for e in sorted(set(audited['printed_epsilon']) - set(positive['printed_epsilon'])))}")
    ax.axhline(1.0, color="0.2", ls="--", lw=1.0, label="nominal ε")
    P.finish_axes(ax, title=f"{claim}, the paper's constants as printed (replacement)", xlabel="nominal ε",
                  ylabel="ε / nominal ε")
