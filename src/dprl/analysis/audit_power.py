"""The smallest ε inflation each privacy audit detects at its run count, stated next to the
audit claims (M1, V1, C1, Z1, B1) in the claims table (``src/dprl/README.md``, "Privacy
audits", item 6; :mod:`dprl.privacy.audit_power` computes it)."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable

import numpy as np
import pandas as pd

from dprl.privacy.audit_power import GaussianPair, LaplacePair, detectable_inflation

# Clopper–Pearson level of every audit kind (their ``alpha``/``confidence`` setting
# defaults to it; the result tables do not record it).
AUDIT_ALPHA = 1e-3


def gaussian_inflation(claimed_epsilon: float, delta: float, runs: int) -> float:
    """Detectable inflation of an audit of a Gaussian mechanism. Its audited pair is a shift
    of ``μ`` noise standard deviations in the likelihood-ratio direction; inflating the
    mechanism scales ``μ``, so the family, hence the answer, does not depend on the pair's
    own μ (only on the claim, δ and the run count). Pairs whose two outputs have different
    noise scales (DP-LSW/DP-LSL count-changing pairs) are treated as the shift of the same
    exact ε: an approximation."""
    return detectable_inflation(GaussianPair(1.0), float(claimed_epsilon), float(delta), int(runs), AUDIT_ALPHA)


def laplace_inflation(pair: LaplacePair, claimed_epsilon: float, delta: float, runs: int) -> float:
    """Detectable inflation of an audit of Laplace noise on ``pair`` (its node shifts)."""
    return detectable_inflation(pair, float(claimed_epsilon), float(delta), int(runs), AUDIT_ALPHA)


def _range(values: Iterable[float]) -> str:
    v = np.asarray(list(values), float)
    lo, hi = float(np.min(v)), float(np.max(v))
    return f"{lo:.2f}×" if math.isclose(lo, hi, rel_tol=5e-3) else f"{lo:.2f}-{hi:.2f}×"


def inflation_note(values: Iterable[float] | dict[str, Iterable[float]], runs: Iterable[int]) -> str:
    """Note text: the smallest ε inflation the audits detect (range over the audits; per
    label when ``values`` is a dict) at their run counts."""
    r = sorted({int(x) for x in runs})
    if not r:
        return "smallest detectable ε inflation: no audits"
    n = f"{r[0]}" if len(r) == 1 else f"{r[0]}-{r[-1]}"
    if isinstance(values, dict):
        text = ", ".join(f"{k} {_range(v)}" for k, v in values.items())
    else:
        text = _range(values)
    return (f"smallest ε inflation the audit detects at {n} runs: {text} the claim (a mechanism whose exact ε on "
            f"the audited pair is that multiple of the claimed ε fails the audit with probability about 1/2: "
            f"likelihood-ratio test at expected counts, Clopper-Pearson α={AUDIT_ALPHA:g})")


def power_note(
    rows: pd.DataFrame, needed: tuple[str, ...], values: Callable[[pd.DataFrame], Iterable[float] | dict[str, Iterable[float]]],
    runs: str,
) -> str:
    """:func:`inflation_note` for a claim's audit rows, or a note naming the columns the
    table lacks (older result files) instead of failing the claim."""
    missing = [c for c in (*needed, runs) if c not in rows]
    if missing:
        return f"smallest detectable ε inflation not computed: the table lacks {', '.join(missing)}"
    return inflation_note(values(rows), rows[runs])


def gaussian_power_note(rows: pd.DataFrame, epsilon: str, delta: str, runs: str) -> str:
    """:func:`power_note` of audits of Gaussian mechanisms, their claimed ε, δ and run
    counts in the named columns."""
    return power_note(rows, (epsilon, delta), lambda r: list(map(gaussian_inflation, r[epsilon], r[delta], r[runs])), runs)
