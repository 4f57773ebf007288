"""Rules across the parameters of the linear-mixture environments, checked at validation
(named by the declarations in ``spec.py``). Each restates a limit enforced again where
the job builds its environment (cited per rule), so a config breaking it is refused
before any job runs instead of failing inside one.
"""

from __future__ import annotations

import math
from typing import Any

from dprl.experiments.base import Problem


def mixture(p: dict[str, Any]) -> list[Problem]:
    # envs/linear_mixture.py mixture() and spread_mixture(): every one of the d2 reward
    # clusters needs a state
    if p["S"] < p["d2"]:
        return [("S", f"the mixture needs S >= d2 (one state per reward cluster): S = {p['S']} < d2 = {p['d2']}")]
    return []


def tabular_as_linear(p: dict[str, Any]) -> list[Problem]:
    # envs/linear_mixture.py tabular_as_linear(): d1 = S²A one-hot features, capped at 4096
    d1 = p["S"] ** 2 * p["A"]
    return [("S", f"tabular_as_linear has d1 = S²·A = {d1} > 4096 features; use a smaller S or A")] if d1 > 4096 else []


def hard_linear(p: dict[str, Any]) -> list[Problem]:
    # envs/linear_mixture.py hard_linear_gap(): δ = 1/H, Δ = gap_scale·sqrt(δ/K_ref)/(4√2),
    # needs (d-1)Δ <= δ. Written again here so that validation does not import NumPy.
    delta = 1.0 / p["H"]
    scale = p.get("gap_scale", 1.0)
    gap = scale * math.sqrt(delta / p["K_ref"]) / (4.0 * math.sqrt(2.0))
    if (p["d"] - 1) * gap > delta:
        return [("K_ref", f"hard_linear needs (d-1)·Δ <= δ = 1/H for valid probabilities (Δ = gap_scale·sqrt(δ/K_ref)/(4√2)); "
                          f"got d = {p['d']}, H = {p['H']}, K_ref = {p['K_ref']}, gap_scale = {scale:g}: needs K_ref >= "
                          f"{math.ceil(p['H'] * ((p['d'] - 1) * scale / (4.0 * math.sqrt(2.0))) ** 2)}")]
    return []


def hard_linear_horizon(p: dict[str, Any]) -> list[Problem]:
    # the same instance tuned to its own K (experiments/linmix/jobs.py run_hard)
    return [("K", msg.replace("K_ref", "K")) for _, msg in hard_linear({**p, "K_ref": p["K"]})]
