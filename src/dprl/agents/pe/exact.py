"""Exact check of the sensitivity bounds of DP-LSW and DP-LSL (the arguments of
:mod:`dprl.agents.pe.bounds`): on a small chain, every pair of neighbouring batches under the
paper's relation (one trajectory *replaced* by another) is enumerated, the true
``||θ_X - θ_X'||_2`` is computed with the estimators' own ``fit``, and compared with a bound on
the local sensitivity at ``X`` (``sensitivity_bound``: the ``k = 0`` term that ``σ_X a`` covers).
A bound that the true change exceeds on some pair is not valid, whatever its source.

The data domain is the one the arguments cover: each trajectory visits any set of
non-absorbing states and has a first-visit return in ``[0, F_max]`` at each (the chain's own
trajectories are a subset of it, so a bound valid here is valid on the chain). A batch of
``m`` trajectories is ``m - 1`` shared ones, plus the replaced one (``X``) or its replacement
(``X'``). Per state ``s`` only the shared count ``c_s ∈ {0..m-1}``, the shared return sum
``S_s ∈ [0, c_s F_max]``, whether the old and the new trajectory visit ``s`` and their returns
there matter, and every combination across states is realisable. For fixed counts both
``θ_X`` and ``θ_X'`` are linear in ``(S, r_old, r_new)`` (``F_X = sums/counts``; LSW's weights and
LSL's ``(ΦᵀΓ_XΦ + λ/(2m) I)^{-1}ΦᵀΓ_X`` depend on the counts only), so the convex
``||θ_X - θ_X'||`` is largest at a vertex of the box: ``S_s ∈ {0, c_s F_max}``, returns in
``{0, F_max}``. The enumeration over those vertices is therefore the exact supremum over the
domain: ``9 (2m - 1)`` options per state, their product over the ``n`` non-absorbing states
(every ordered pair, so ``(X', X)`` too).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dprl.agents.pe.estimators import DPLSL, DPLSW
from dprl.envs.mrp import BatchStats


def _state_options(m: int, f_max: float) -> np.ndarray:
    """Rows ``(count_x, count_x', sum_x, sum_x')`` of one state's options (vertices only)."""
    rows = []
    for c in range(m):
        for s_sum in ((0.0, c * f_max) if c > 0 else (0.0,)):
            for old in (0, 1):
                for new in (0, 1):
                    for r_old in ((0.0, f_max) if old else (0.0,)):
                        for r_new in ((0.0, f_max) if new else (0.0,)):
                            rows.append((c + old, c + new, s_sum + r_old, s_sum + r_new))
    return np.array(rows, dtype=float)


def replacement_pairs(n_states: int, absorbing: int, m: int, f_max: float = 1.0) -> tuple[BatchStats, BatchStats]:
    """Every replacement pair ``(X, X')`` of batches of ``m`` trajectories on ``n_states`` states
    (``absorbing`` carries no weight: count and return 0), at the vertices of the return box."""
    if m < 1:
        raise ValueError(f"a batch holds at least one trajectory, got m = {m}")
    opts = _state_options(m, f_max)
    free = [s for s in range(n_states) if s != absorbing]
    idx = np.stack(np.meshgrid(*[np.arange(len(opts))] * len(free), indexing="ij"), axis=-1).reshape(-1, len(free))
    cx, cy, sx, sy = (np.zeros((len(idx), n_states)) for _ in range(4))
    for j, s in enumerate(free):
        o = opts[idx[:, j]]
        cx[:, s], cy[:, s], sx[:, s], sy[:, s] = o.T
    ms = np.full(len(idx), m)
    return BatchStats.from_sums(ms, cx.astype(np.int64), sx), BatchStats.from_sums(ms, cy.astype(np.int64), sy)


@dataclass(frozen=True)
class ExactCheck:
    """The largest true change over a bound, over every enumerated pair (valid iff <= 1)."""

    max_ratio: float  # max ||θ_X - θ_X'|| / bound(X)
    max_change: float  # max ||θ_X - θ_X'||
    pairs: int
    counts_x: tuple[int, ...]  # the worst pair's counts
    counts_x_prime: tuple[int, ...]


def check_bound(est: DPLSW | DPLSL, pairs: tuple[BatchStats, BatchStats], scale: float = 1.0) -> ExactCheck:
    """The exact check of ``est``'s ``sensitivity_bound`` (times ``scale``: ``0.5`` plants a
    bound half the size) on the enumerated ``pairs``; the fit is the estimator's own."""
    x, y = pairs
    change = np.linalg.norm(est.fit(x) - est.fit(y), axis=1)
    ratio = change / (scale * est.sensitivity_bound(x))
    i = int(np.argmax(ratio))
    return ExactCheck(float(ratio[i]), float(change.max()), len(change),
                      tuple(int(c) for c in x.counts[i]), tuple(int(c) for c in y.counts[i]))


def dense_features(n_states: int, d: int, absorbing: int, seed: int = 2016) -> np.ndarray:
    """A dense feature matrix (entries uniform in [-1, 1], fixed seed; the absorbing state's
    row kept, as in the chain's features): ``||Φ||_2`` well below ``||Φ||_F`` and no partition."""
    return np.random.default_rng([seed, n_states, d, absorbing]).uniform(-1.0, 1.0, size=(n_states, d))


# the bounds checked: the two calibrations as built, the authors' published constants, and a
# planted bound that must fail (the tight bound halved: the check's power)
VARIANTS = ("paper", "tight", "as published", "tight halved")
PLANTED = "tight halved"


def variant_estimators(alg: dict, phi: np.ndarray, rho: np.ndarray, f_max: float = 1.0
                       ) -> dict[str, tuple[DPLSW | DPLSL, float]]:
    """``variant -> (estimator, scale of its bound)`` for ``alg`` (``dp_lsw``, or ``dp_lsl``
    with ``c``, ``p``): ``paper`` and ``tight`` built by the package's factory, ``as published``
    from :mod:`dprl.agents.pe.published`. The ratio of a bound to the true change depends on
    neither ε nor δ (nor ``F_max``): nominal (1, 0.1) fill the constructors."""
    from dprl.agents.pe.build import EstimationTask, build_agent
    from dprl.agents.pe.published import PublishedDPLSL, PublishedDPLSW
    from dprl.privacy.setting import PrivacySetting

    name, task = alg["name"], EstimationTask(phi, rho, f_max)
    built = {cal: build_agent(name, alg, PrivacySetting(epsilon=1.0, delta=0.1, calibration=cal), task).agent
             for cal in ("paper", "tight")}
    if name == "dp_lsw":
        published = PublishedDPLSW(phi, rho, f_max, 1.0, 0.1)
    elif name == "dp_lsl":
        published = PublishedDPLSL(phi, rho, alg["c"], alg["p"], f_max, 1.0, 0.1)
    else:
        raise ValueError(f"the exact check covers dp_lsw and dp_lsl, got {name!r}")
    return {"paper": (built["paper"], 1.0), "tight": (built["tight"], 1.0), "as published": (published, 1.0),
            PLANTED: (built["tight"], 0.5)}
