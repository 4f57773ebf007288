"""PUCB's privacy calibration: per-counter ε', Laplace scale and the count-error bound ``E_ε``.

Sensitivity (deviation from the paper, documented here once). Claim 1 bounds the total ℓ1
change of the ``ñ`` streams by ``H`` when one user changes, which gives the per-counter
level ``ε' = ε/(3H)`` of Algorithm 2. Under the paper's own neighbouring relation
(Definition 3: *t-neighbours* replace user ``t``) the ℓ1 change is ``2H``: at each step the
old trajectory's indicator drops by 1 at one tuple and the new one's rises by 1 at
another (likewise for ``m̃``, and for ``r̃`` with rewards in [0, 1]). With ``ε' = ε/(3H)``
the counters are therefore ``ε``-DP only for add/remove neighbours and ``2ε``-DP for
replacement neighbours. ``l1_per_step`` selects the analysis: 2 (default, correct for
Definition 3, ``ε' = ε/(6H)``) or 1 (the printed ``ε/(3H)``; the audit experiment shows
it fails at the claimed ε). Both calibrations use the same ``ε'``: they differ only in
``E_ε``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from dprl.privacy.calibration import laplace_sum_tail, laplace_tree_scale
from dprl.privacy.setting import PrivacySetting
from dprl.privacy.tree_counter import tree_levels


def n_counters(S: int, A: int, H: int) -> int:
    """``2SAH + S²AH`` private counters (r̃, ñ, m̃)."""
    return 2 * S * A * H + S * S * A * H


def counter_epsilon(epsilon: float, H: int, l1_per_step: int = 2) -> float:
    """Per-counter level: ``ε' = ε/(3H)`` (Algorithm 2, line 1) divided by the per-step ℓ1
    change of one user (module docstring): three blocks (r̃, ñ, m̃) each get ε/3, and one
    user moves each block by at most ``l1_per_step·H`` in ℓ1 (Hsu et al. 2016, Lemma 34)."""
    return epsilon / (3.0 * H * l1_per_step)


def counter_scale(epsilon: float, H: int, T: int, l1_per_step: int = 2) -> float:
    """Per-node Laplace scale of every PUCB counter: ``b = L/ε'`` (a stream element is in
    [0, 1], so one counter's ℓ1 sensitivity per element is 1)."""
    return laplace_tree_scale(counter_epsilon(epsilon, H, l1_per_step), tree_levels(T), 1.0)


def e_eps_paper(epsilon: float, S: int, A: int, H: int, T: int, beta: float, l1_per_step: int = 2) -> float:
    """``E_ε = (3/ε) H log((2SAH + HAS²)/β) log(T)^{5/2}`` as printed (natural logs; the
    paper does not give the base, and base e gives the smaller, least vacuous value).

    The printed formula bounds the noise of counters at level ``ε/(3H)``; with the
    replacement-neighbour correction the counters run at ``(ε/l1_per_step)/(3H)``, so the
    same formula is evaluated at ``ε/l1_per_step`` (it must bound the noise actually added)."""
    eps = epsilon / l1_per_step
    return 3.0 / eps * H * math.log(n_counters(S, A, H) / beta) * math.log(max(T, 2)) ** 2.5


def e_eps_tight(epsilon: float, S: int, A: int, H: int, T: int, beta: float, l1_per_step: int = 2) -> np.ndarray:
    """``tight`` replacement of ``E_ε``, one value per episode ``t = 1..T`` (array index ``t``).

    The release used in episode ``t`` is the prefix over episodes ``1..t-1``: per counter a
    sum of ``popcount(t-1) <= L`` i.i.d. ``Lap(b)`` node noises (``b`` from
    :func:`counter_scale`). We bound it with the exact tail of the sum of ``L`` terms
    (``laplace_sum_tail``) at level ``β/(N·T)``, and a union bound over the
    ``N = 2SAH + S²AH`` counters and the ``T`` episodes gives: with probability ``>= 1 − β``
    every release of every counter is within ``E`` of its true count, the event Algorithm
    3's analysis needs (the paper's ``E_ε`` is one valid such bound, this is a sharper one).
    Using ``L`` terms for every ``t`` is valid because adding an independent symmetric
    term to a sum with a symmetric log-concave density only fattens its tails (Anderson's
    inequality), and it needs one quantile instead of ``L``. ``E`` depends only on public
    constants, never on data, so it costs no privacy. ``E_1 = 0``: the first release is an
    empty sum (exactly zero).
    """
    e = np.full(T + 1, e_eps_tight_value(epsilon, S, A, H, T, beta, l1_per_step))
    e[:2] = 0.0
    return e


def e_eps_tight_value(epsilon: float, S: int, A: int, H: int, T: int, beta: float, l1_per_step: int = 2) -> float:
    """The value of :func:`e_eps_tight` for every episode ``t >= 2`` (it is constant there),
    without the length-``T`` array: the loop and long jobs need only this number."""
    b = counter_scale(epsilon, H, T, l1_per_step)
    return float(laplace_sum_tail(b, tree_levels(T), beta / (n_counters(S, A, H) * T)))


def count_error_bounds(privacy: PrivacySetting, S: int, A: int, H: int, T: int, beta: float,
                       l1_per_step: int = 2) -> tuple[float, float]:
    """``(E_1, E_t for t >= 2)``: the count-error bound PrivQ uses in episode 1 and from
    episode 2 on at ``privacy.epsilon``, for ``privacy.calibration`` ``paper`` (the printed ``E_ε`` in both) or ``tight``
    (:func:`e_eps_tight`: 0 for the empty first release, then a constant; 0 when ``T < 2``,
    where no later episode exists). The one place the two calibrations' ``E`` is chosen."""
    epsilon = privacy.epsilon
    if privacy.calibration == "paper":
        e = e_eps_paper(epsilon, S, A, H, T, beta, l1_per_step)
        return e, e
    return 0.0, (e_eps_tight_value(epsilon, S, A, H, T, beta, l1_per_step) if T >= 2 else 0.0)


def first_exploit_episode(privacy: PrivacySetting, S: int, A: int, H: int, T: int, beta: float, l1_per_step: int = 2) -> float:
    """Smallest episode ``t <= T`` at which some ``ñ >= 2E_ε`` is possible at all: a true
    count before episode ``t`` is at most ``t-1``, so we need ``t - 1 >= 2E`` (noise aside).
    ``inf`` when it never happens within ``T`` (spec, claim V4). ``E_1`` does not matter:
    ``t - 1 >= 1`` fails at ``t = 1`` anyway."""
    e = count_error_bounds(privacy, S, A, H, T, beta, l1_per_step)[1]
    # the planner's known branch needs ñ >= max(2E, 1) (planner.priv_q)
    t = math.ceil(max(2 * e, 1.0)) + 1
    return float(t) if t <= T else math.inf


@dataclass(frozen=True)
class PUCBCalibration:
    """PUCB's noise and confidence constants for its ``T`` episodes (Algorithm 2 lines 1-4):
    the Laplace scale of every counter node and the bound ``E`` the planner uses in episode
    1 (``e_first``) and from episode 2 on (``e_rest``; :class:`PrivateStats`), with the
    horizon ``H`` and the tree levels ``L`` the accounting needs."""

    epsilon: float
    calibration: str
    scale: float
    e_first: float
    e_rest: float
    H: int
    levels: int  # L: tree nodes holding each stream element

    @property
    def accounted_epsilon(self) -> float:
        """ε of the counters' Laplace noise under replacement (``src/dprl/README.md``,
        "Neighbouring relations: replacement"): ``3`` blocks (r̃, ñ, m̃), each element in
        ``L`` nodes, and one user moves each block by ``2H`` in ℓ1 (module docstring), so
        ``ε_acc = 3 · L · 2H / b`` for the scale ``b`` held (``inf`` for no noise).
        Equals the nominal ε for ``l1_per_step = 2`` and twice it for the printed ``1``."""
        if self.scale == 0:
            return math.inf
        return 3.0 * self.levels * 2.0 * self.H / self.scale

    @property
    def accounted_delta(self) -> float:
        """Laplace noise: pure ε-DP."""
        return 0.0

    def e_used(self, episode: int) -> float:
        """``E`` of the release planned on in ``episode`` (1-based)."""
        return self.e_first if episode == 1 else self.e_rest

