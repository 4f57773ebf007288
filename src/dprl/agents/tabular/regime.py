"""Where PUCB's regret rate applies (src/dprl/README.md, "Regimes").

PrivQ (``planner.priv_q_into``) clamps ``Q̃⁺ = min(H, Q̃ + conf)``. While every ``Q̃⁺`` is
``H`` all actions tie and the random tie-break plays uniformly, so regret is linear for every
ε. Under the good event ``Q̃⁺ >= Q*`` (optimism) and ``Q̃ ≈ Q*``, so ``Q̃⁺(s, a, h) < H``
needs ``ñ >= max(2E, 1)`` and

    conf(ñ) = (H+1) φ̃(ñ) + ψ̃(ñ) < H − Q*(s, a, h),    ψ̃ = (1+SH)(3E/ñ + 2E²/ñ²),

i.e. ``ñ ≈ 3(1+SH)E/(H − Q*)``: 12E-60E per (s, a, h) on garnet S=3 A=2 H=2 (the issue's
"ñ ≈ 20E"). Under uniform play ``(s, a, h)`` is visited ``d_h(s)/A`` times per episode
(``d_h`` the state distribution of the uniform policy), so the pair crosses its threshold
``n*(s, a, h)`` after ``n*·A/d_h(s)`` episodes. Two horizons follow:

- the first untie, ``min`` over pairs in states with at least two actions, each no earlier
  than the later steps it looks ahead to (for ``h < H`` the target contains
  ``Ṽ_{h+1} = H`` and stays clamped until step ``h+1`` unclamps; on garnet and RiverSwim
  this is the last step): the first episode after which the policy is no longer all-tied
  (measured: ``first_untie_episode``, from the agent's last all-tied episode; a diagnostic);
- the burn-in ``T*``, ``max`` over every reachable ``(s, a, h)`` with ``Q* < H``
  (:func:`clamp_watch`): by then every optimistic value has left ``H`` and the greedy
  policy is the learnt one everywhere; regret curves bend there. Its measured counterpart
  is the same event: the first episode after the last one in which a watched pair still
  had ``Q̃⁺ = H`` (``agent.last_clamped_episode``, recorded by the compiled loop). The
  uniform visit rate is an approximation once some pairs unclamp (the greedy policy then
  shifts visits; a clamped pair is preferred wherever its state is visited), which is why
  ``T*`` is a prediction and the end of the clamp is measured as well.

The regime criterion is the one of every paper (``analysis/regime.ONSET_DECADES``): a rate is
inside its regime when ``T`` is a decade past the burn-in, the later of ``T*`` and its
measured end, and is then fitted over the last decade ``[T/10, T]``.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from dprl.agents.tabular import calibration as cal
from dprl.agents.tabular.planner import log_term
from dprl.envs.tabular import TabularMDP
from dprl.privacy.setting import PrivacySetting

# analysis/regime.ONSET_DECADES, the one regime criterion (a test checks the two agree): the
# jobs' horizon_needed needs it below the analysis layer
ONSET_DECADES = 1.0


def confidence_width(n: float, E: float, S: int, A: int, H: int, beta: float, bonus_scale: float = 1.0) -> float:
    """``conf`` of PrivQ's known branch at released count ``n >= max(2E, 1)`` (the same
    formula as ``planner.priv_q_into``; ψ̃ vanishes for ``E = 0``)."""
    phi = math.sqrt((2.0 * math.log(n + E) + log_term(S, A, H, beta)) / max(n - E, 1.0))
    conf = (H + 1) * phi + ((1.0 + S * H) * (3.0 * E / n + 2.0 * E * E / (n * n)) if E > 0 else 0.0)
    return conf * bonus_scale


def unclamp_count(margin: float, E: float, S: int, A: int, H: int, beta: float, bonus_scale: float = 1.0) -> float:
    """Smallest released count ``n >= max(2E, 1)`` with ``conf(n) < margin`` (``inf`` if
    ``margin <= 0``). ``conf`` decreases in ``n`` on the known branch, so bisection on
    ``log n`` finds the crossing."""
    return crossing_count(margin, lambda n: confidence_width(n, E, S, A, H, beta, bonus_scale), max(2.0 * E, 1.0))


def crossing_count(margin: float, width: Callable[[float], float], start: float = 1.0) -> float:
    """Smallest count ``n >= start`` with ``width(n) < margin`` for a bonus ``width``
    decreasing in ``n`` (``inf`` when ``margin <= 0`` or beyond ``e^100``), by bisection on
    ``log n``: the unclamping count of any planner that clamps its optimistic values at ``H``."""
    lo = start
    if margin <= 0:
        return math.inf
    if width(lo) < margin:
        return lo
    a, b = math.log(lo), math.log(lo) + 1.0
    while width(math.exp(b)) >= margin:
        a, b = b, b + 1.0
        if b > 100:
            return math.inf
    for _ in range(80):
        m = 0.5 * (a + b)
        if width(math.exp(m)) < margin:
            b = m
        else:
            a = m
    return math.exp(b)


def uniform_visit_rates(env: TabularMDP) -> np.ndarray:
    """Expected visits per episode of each ``(h, s, a)`` under uniform play over the
    available actions: ``d_h(s)/A_s`` with ``d_1 = p0`` and
    ``d_{h+1}(s') = Σ_{s,a} d_h(s) P(s'|s,a,h)/A_s`` (``A_s = n_actions[s]``)."""
    pi = (np.arange(env.A)[None, :] < env.n_actions[:, None]) / env.n_actions[:, None]  # (S, A)
    rates = np.empty((env.H, env.S, env.A))
    d = env.p0.copy()
    for h in range(env.H):
        rates[h] = d[:, None] * pi
        d = np.einsum("sa,sat->t", rates[h], env.P[h])
    return rates


def unclamp_episodes(env: TabularMDP, E: float, beta: float, bonus_scale: float = 1.0) -> np.ndarray:
    """Episodes of uniform play until each ``(h, s, a)`` reaches its unclamping count
    ``n*`` (margin ``H − Q*(s, a, h)``), ``(H, S, A)``; ``inf`` where never visited."""
    S, A, H = env.S, env.A, env.H
    return width_unclamp_episodes(env, lambda m: unclamp_count(m, E, S, A, H, beta, bonus_scale))


def width_unclamp_episodes(env: TabularMDP, count_of_margin: Callable[[float], float],
                           caps: np.ndarray | None = None) -> np.ndarray:
    """Episodes of uniform play until each reachable ``(h, s, a)`` reaches the count
    ``count_of_margin(cap_h − Q*(s, a, h))`` at which its bonus falls below its margin,
    ``(H, S, A)``; ``caps`` (one per step, default ``H``) is where the planner clamps."""
    rates = uniform_visit_rates(env)
    cap = np.full(env.H, float(env.H)) if caps is None else np.asarray(caps, dtype=float)
    margin = cap[:, None, None] - env.optimal_q
    out = np.full((env.H, env.S, env.A), math.inf)
    cache: dict[float, float] = {}
    for idx in zip(*np.nonzero(rates > 0)):
        m = round(float(margin[idx]), 12)
        if m not in cache:
            cache[m] = count_of_margin(m)
        out[idx] = cache[m] / rates[idx]
    return out


def bonus_burn_in(env: TabularMDP, width: Callable[[float], float], start: float = 1.0,
                  caps: np.ndarray | None = None) -> tuple[float, float]:
    """``(first untie, T*)`` of an optimistic planner that clamps its values at ``caps`` (one
    per step; default ``H``) and adds a bonus ``width(n)`` (summed over rewards and
    next-state values) at true count ``n``: this module's analysis of PUCB with ``width`` in
    place of ``conf``. Tabular plug-ins declare their predicted burn-in with it
    (``Algorithm.burn_in``), so their rate rows get the whole regime criterion, the
    no-escape horizon included."""
    return _burn_in(env, width_unclamp_episodes(env, lambda m: crossing_count(m, width, start), caps), caps)


def clamp_watch(env: TabularMDP, caps: np.ndarray | None = None) -> np.ndarray:
    """The pairs whose clamp :func:`pucb_burn_in`'s ``T*`` waits for, ``(H, S, A)``:
    reachable under uniform play and ``Q* < H`` (a pair whose true value is ``H`` stays at
    ``H`` rightly); with ``caps`` (one per step) ``Q*_h < cap_h`` for a planner clamping
    there. The compiled loop records the last episode one of them was still at
    ``H`` (``agent.last_clamped_episode``): the measured end of the same burn-in."""
    cap = float(env.H) if caps is None else np.asarray(caps, dtype=float)[:, None, None]
    return (uniform_visit_rates(env) > 0) & (env.optimal_q < cap)


def error_bound(privacy: PrivacySetting, S: int, A: int, H: int, T: int, beta: float, l1_per_step: int = 2) -> float:
    """The ``E`` PrivQ uses from episode 2 on (:func:`calibration.count_error_bounds`)."""
    return cal.count_error_bounds(privacy, S, A, H, T, beta, l1_per_step)[1]


def pucb_burn_in(env: TabularMDP, E: float, beta: float, bonus_scale: float = 1.0) -> tuple[float, float]:
    """``(first untie, T*)`` of PUCB with error bound ``E`` on ``env`` (``E = 0``: UBEV),
    module docstring: from :func:`unclamp_episodes`, the first untie and the max over every
    reachable pair."""
    return _burn_in(env, unclamp_episodes(env, E, beta, bonus_scale))


def _burn_in(env: TabularMDP, eps: np.ndarray, caps: np.ndarray | None = None) -> tuple[float, float]:
    """``(first untie, T*)`` from the unclamping episodes ``eps`` of every ``(h, s, a)``, the
    planner clamping at ``caps`` (one per step; default ``H``)."""
    # pairs with Q* = cap (margin 0) never leave it, which is their true value: no burn-in there
    reach = clamp_watch(env, caps)
    t_star = float(eps[reach].max()) if reach.any() else 0.0
    # a pair unties its state only if the state has >= 2 actions, and (h < H) only once the
    # later steps it looks ahead to have unclamped (bounded by their slowest reachable pair)
    first = math.inf
    choice = env.n_actions >= 2
    for h in range(env.H):
        later = eps[h + 1:][reach[h + 1:]]
        wait = float(later.max()) if later.size else 0.0
        cand = eps[h][reach[h] & choice[:, None]]
        if cand.size:
            first = min(first, max(float(cand.min()), wait))
    return first, t_star


def job_burn_in(env: TabularMDP, privacy: PrivacySetting | None, T: int, beta: float, bonus_scale: float = 1.0,
                l1_per_step: int | None = 2) -> tuple[float, float]:
    """:func:`pucb_burn_in` from a job's own constants: its instance, ``T``, ``β``,
    ``bonus_scale`` and privacy calibration (``None``: UBEV, ``E = 0``)."""
    if privacy is None:
        return pucb_burn_in(env, 0.0, beta, bonus_scale)
    E = error_bound(privacy, env.S, env.A, env.H, T, beta, l1_per_step)
    return pucb_burn_in(env, E, beta, bonus_scale)
