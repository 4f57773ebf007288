"""DP-UCBVI (Qiao & Wang, "Near-Optimal Differentially Private Reinforcement Learning",
AISTATS 2023, arXiv 2212.04680) and its non-private counterpart UCBVI-Bernstein, as dprl
plug-ins of the tabular setting (step protocol of :mod:`dprl.agents.plugin`).

Source. The stored ar5iv page (https://ar5iv.labs.arxiv.org/html/2212.04680) was reachable
through the search tool only as excerpts of its opening (abstract: regret
``Õ(√(SAH²T) + S²AH³/ε)``, optimal for ``ε > S^1.5 A^0.5 H² / √T``, "privately releasing
Bernstein-type exploration bonuses and an improved method for releasing visitation
statistics"). The authors' later paper on Markov games (DP-Nash-VI, Qiao & Wang; its text
was readable through the search tool's code index) states that its Assumption 3.1 and its
Privatizers generalise this paper's to two players, and that with one min-player action
(``B = 1``) it reduces to this paper's setting and bounds. From that text, with ``B = 1``,
this module's Privatizer is confirmed line by line: the assumption (probability
``1 − β/3``; ``|ñ − n| ≤ E_{ε,β}`` for both counts; ``ñ(s,a,s') > 0``; ``ñ(s,a) = Σ_{s'}
ñ(s,a,s') ≥ n(s,a)``), ``ι = log(30HSAK/β)``, the Central Privatizer's binary mechanism
accurate to ``E_{ε,β}/4``, the min-max projection (its equation (8)) and the shift
``E_{ε,β}/(2S)`` per next state, ``E_{ε,β}/2`` per pair (its equation (9)). The bonus is not
confirmed: the later paper's is Nash-VI's (``γ = (C₁/H) P̃(V̄ − V̲)`` added to both bounds, and
``Γ = C₂√(Var_P̃((V̄+V̲)/2) ι/ñ) + C₂HSE_{ε,β}ι/ñ + C₂H²Sι/ñ`` with unnamed universal
constants), which differs from the bonus below in its lower-order terms; the bonus below
(its Bernstein term on ``V̄``, a correction on ``V̄ − V̲``, the lower-order terms
:data:`LOWER_ORDER`, :data:`PRIVACY_TERM`) is written from recollection of this paper's
Section 4, not from its text, and is a documented uncertainty of this module: both have the
Bernstein variance term, the privacy term ``∝ H S E_{ε,β}/ñ`` and the regret bound's form.
The text of Algorithm 1 and of Section 4's bonus could not be read (only the opening pages
of the stored copies of arXiv 2212.04680 were reachable, 2026-12-03), so the bonus and the
``Q̄``/``Q̲`` updates below remain unconfirmed.

Algorithm 1 (DP-UCBVI), with ``T = KH`` steps and ``ι = log(30 H S A K / β)``:

1. Initialise the Privatizer; private counts ``ñ¹ = 0``.
2. for ``k = 1..K``:
3.   ``V̄_{H+1} = V̲_{H+1} = 0``;
4.   for ``h = H..1``, every ``(s, a)``: ``P̃ = ñ_h(s,a,·) / ñ_h(s,a)`` (the Privatizer's output);
5.     ``Q̄_h(s,a) = min{H − h + 1, r_h(s,a) + P̃ V̄_{h+1} + b_h(s,a)}``;
6.     ``Q̲_h(s,a) = max{0, r_h(s,a) + P̃ V̲_{h+1} − b_h(s,a)}``;
7.     ``π_h(s) = argmax_a Q̄_h(s,a)``, ``V̄_h(s) = Q̄_h(s, π_h(s))``, ``V̲_h(s) = Q̲_h(s, π_h(s))``;
8.   run ``π^k``, send the trajectory to the Privatizer, which releases ``ñ^{k+1}``.

Private Bernstein-type bonus (Section 4), with ``V̄ = V̄_{h+1}``, ``V̲ = V̲_{h+1}``:
``b = 2√(Var_{P̃}(V̄) ι / ñ) + 2√(E_{P̃}[(V̄ − V̲)²] ι / ñ) + LOWER_ORDER·H S ι / ñ
+ PRIVACY_TERM·H S E_{ε,β} / ñ``; the last term is the range ``H`` times the paper's bound
``‖P̃ − P̂‖₁ ≤ 2 S E_{ε,β} / ñ`` between the private and the empirical transitions.

Privatizer conditions (Assumption of Section 3): with probability ``1 − β/3``, for all
``(k, h, s, a, s')``: ``|ñ_h(s,a) − n_h(s,a)| ≤ E_{ε,β}``, ``|ñ_h(s,a,s') − n_h(s,a,s')| ≤
E_{ε,β}``, ``ñ_h(s,a,s') > 0`` and ``ñ_h(s,a) = Σ_{s'} ñ_h(s,a,s') ≥ n_h(s,a)``, so that
``P̃`` is a probability vector.

Central (JDP) Privatizer (Section 5.1): binary-mechanism (tree) counters with Laplace noise
release ``n̂_h(s,a)`` and ``n̂_h(s,a,s')`` accurate to ``E_{ε,β}/4``; then, per ``(h, s, a)``,
``x = argmin_x max_{s'} |x_{s'} − n̂(s,a,s')|`` subject to ``x ≥ 0`` and ``|Σ x − n̂(s,a)| ≤
E_{ε,β}/4``, and ``ñ(s,a,s') = x_{s'} + E_{ε,β}/(2S)``, ``ñ(s,a) = Σ_{s'} ñ(s,a,s')``.

What is dprl's. The tree counters are :class:`dprl.agents.tabular.statistics.PrivateStats`
(PUCB's: one Laplace tree counter per ``r, n, m`` entry, ε-JDP under replacement by the
billboard lemma), held as the agent's ``source``: dprl accounts the agent from the scale
they hold (``dprl.agents.tabular.privacy.held_calibration``) and audits them
(``tabular_audit``). The counters' error bound ``E`` (:meth:`PrivateStats.current_e`,
``|released − true| ≤ E`` for every counter with probability ``1 − β``) is the raw
accuracy ``E_{ε,β}/4`` of the paper: here ``E_{ε,β} = 4E``. The min-max projection and the
shift are :func:`privatize_counts`, a post-processing of the released counters (privacy
unchanged). ``ucbvi_bernstein`` is the same planner on exact counts (``ExactStats``,
``E = 0``), where the projection is the identity.

Two implementations of lines 3-8, giving the same numbers (``tests/beyond/test_dp_ucbvi.py``;
the NumPy one is the readable statement the compiled one is tested against, and the path the
planted-bonus test plants in):
the NumPy step protocol (:meth:`DPUCBVI.policy` / :meth:`DPUCBVI.observe`) and the compiled
block protocol of :mod:`dprl.agents.plugin` (:func:`kernel_plan` / :func:`kernel_learn` on
the counters' ``kernel_state``, the agent's ``block_kernel``), which the runner uses.

Deviations (each also stated where it is made):

- rewards: the paper's rewards are known; dprl's are Bernoulli with unknown means, so
  ``r_h(s,a)`` is the released reward sum over ``ñ`` (clipped to [0, 1]) and the bonus gets
  the Hoeffding term ``√(2ι/ñ)`` plus the reward counter's error ``E/ñ``;
- an ``(h, s, a)`` with ``ñ = 0`` (only possible on exact counts) is planned at ``Q̄ =
  H − h + 1``, ``Q̲ = 0`` (never visited: nothing is known of it);
- where the released ``n̂(s,a) + E_{ε,β}/4 < 0`` (outside the Privatizer's event) the
  projection's constraint set is empty: the upper end of the sum is taken as ``0``.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from dprl.agents.plugin import TabularBlockKernel
from dprl.agents.protocol import BuiltAgent
from dprl.agents.tabular.regime import bonus_burn_in, clamp_watch, error_bound
from dprl.agents.tabular.statistics import ExactStats, PrivateStats, ReleasedStats, feed_stats, release_stats

# The bonus's lower-order coefficients (module docstring: to be checked against the paper)
LOWER_ORDER = 5.0
PRIVACY_TERM = 2.0
# bisection steps of the min-max projection: the bracket shrinks by 2^-45 (below 1e-13 of its width)
PROJECTION_STEPS = 45


def log_term(S: int, A: int, H: int, K: int, beta: float) -> float:
    """``ι = log(30 H S A K / β)`` of the bonus (Section 4)."""
    return math.log(30.0 * H * S * A * K / beta)


def privatize_counts(n_hat: np.ndarray, m_hat: np.ndarray, e_paper: float) -> tuple[np.ndarray, np.ndarray]:
    """The Central Privatizer's post-processing (Section 5.1) of the released counts
    ``n̂ (H,S,A)``, ``n̂' (H,S,A,S)`` with error bound ``E_{ε,β}`` (``e_paper``): the min-max
    projection ``x = argmin max_{s'} |x − n̂'|`` over ``x ≥ 0``, ``|Σx − n̂| ≤ E/4``, then
    ``ñ' = x + E/(2S)`` and ``ñ = Σ ñ'``. Returns ``(ñ, ñ')``. On exact counts (``E = 0``)
    ``n̂'`` itself is feasible at distance 0, so the projection is the identity."""
    if e_paper == 0.0:
        return np.array(n_hat, dtype=float), np.array(m_hat, dtype=float)
    S = m_hat.shape[-1]
    lower = n_hat - e_paper / 4.0
    # deviation (module docstring): an empty constraint set outside the Privatizer's event
    upper = np.maximum(n_hat + e_paper / 4.0, 0.0)
    # the box [max(m̂ − t, 0), m̂ + t] is non-empty from t = max(0, −min m̂); feasible for t = hi
    lo_t = np.maximum(0.0, (-m_hat).max(-1))
    hi_t = np.abs(m_hat).max(-1) + np.abs(n_hat) + e_paper
    for _ in range(PROJECTION_STEPS):
        mid = 0.5 * (lo_t + hi_t)
        low_sum = np.maximum(m_hat - mid[..., None], 0.0).sum(-1)
        high_sum = np.maximum(m_hat + mid[..., None], 0.0).sum(-1)
        ok = (low_sum <= upper) & (high_sum >= lower)
        hi_t, lo_t = np.where(ok, mid, hi_t), np.where(ok, lo_t, mid)
    box_lo = np.maximum(m_hat - hi_t[..., None], 0.0)
    box_hi = np.maximum(m_hat + hi_t[..., None], 0.0)
    s_lo, s_hi = box_lo.sum(-1), box_hi.sum(-1)
    # the point of the box whose sum is nearest n̂ within [lower, upper]
    target = np.clip(n_hat, np.maximum(lower, s_lo), np.minimum(upper, s_hi))
    width = s_hi - s_lo
    lam = np.where(width > 0, (target - s_lo) / np.where(width > 0, width, 1.0), 0.0)
    x = box_lo + lam[..., None] * (box_hi - box_lo)
    m_tilde = x + e_paper / (2.0 * S)
    return m_tilde.sum(-1), m_tilde


def bernstein_bonus(var_next: np.ndarray, gap2_next: np.ndarray, n: np.ndarray, iota: float, H: int, S: int,
                    e_paper: float, e_counter: float) -> np.ndarray:
    """The private Bernstein-type bonus (Section 4; module docstring) on ``ñ > 0``:
    ``2√(Var_P̃(V̄) ι/ñ) + 2√(E_P̃(V̄ − V̲)² ι/ñ) + LOWER_ORDER·HSι/ñ + PRIVACY_TERM·HSE_{ε,β}/ñ``,
    plus (deviation: unknown rewards) ``√(2ι/ñ) + E/ñ`` for the estimated mean reward."""
    transitions = 2.0 * np.sqrt(var_next * iota / n) + 2.0 * np.sqrt(gap2_next * iota / n)
    lower_order = (LOWER_ORDER * H * S * iota + PRIVACY_TERM * H * S * e_paper) / n
    reward = np.sqrt(2.0 * iota / n) + e_counter / n
    return transitions + lower_order + reward


@njit(cache=True)
def _privatize_one(n_hat: float, m_hat: np.ndarray, e_paper: float, m_out: np.ndarray) -> float:
    """:func:`privatize_counts` for one ``(h, s, a)`` in compiled code, operation for
    operation (sequential sums over ``s'``): writes ``ñ(s,a,·)`` into ``m_out``, returns ``ñ(s,a)``."""
    S = m_hat.shape[0]
    if e_paper == 0.0:
        m_out[:] = m_hat
        return n_hat
    lower = n_hat - e_paper / 4.0
    upper = max(n_hat + e_paper / 4.0, 0.0)
    lo_t, top = 0.0, 0.0
    for j in range(S):
        lo_t = max(lo_t, -m_hat[j])
        top = max(top, abs(m_hat[j]))
    hi_t = top + abs(n_hat) + e_paper
    for _ in range(PROJECTION_STEPS):
        mid = 0.5 * (lo_t + hi_t)
        low_sum, high_sum = 0.0, 0.0
        for j in range(S):
            low_sum += max(m_hat[j] - mid, 0.0)
            high_sum += max(m_hat[j] + mid, 0.0)
        if low_sum <= upper and high_sum >= lower:
            hi_t = mid
        else:
            lo_t = mid
    s_lo, s_hi = 0.0, 0.0
    for j in range(S):
        s_lo += max(m_hat[j] - hi_t, 0.0)
        s_hi += max(m_hat[j] + hi_t, 0.0)
    target = min(max(n_hat, max(lower, s_lo)), min(upper, s_hi))
    width = s_hi - s_lo
    lam = (target - s_lo) / width if width > 0 else 0.0
    total = 0.0
    for j in range(S):
        box_lo = max(m_hat[j] - hi_t, 0.0)
        box_hi = max(m_hat[j] + hi_t, 0.0)
        m_out[j] = box_lo + lam * (box_hi - box_lo) + e_paper / (2.0 * S)
        total += m_out[j]
    return total


@njit(cache=True)
def kernel_plan(state: tuple, k: int, policy_out: np.ndarray) -> None:
    """Lines 3-7 in compiled code (:meth:`DPUCBVI.plan`, operation for operation) from the
    counters' compiled release (:func:`~dprl.agents.tabular.statistics.release_stats`)."""
    ks, iota, unavailable, upper, lower, m_row, watch, last = state
    S, A, H = ks[11], ks[12], ks[13]
    clamped = False
    values, e = release_stats(ks)
    e_paper = 4.0 * e
    K = S * A * H
    upper[H, :] = 0.0
    lower[H, :] = 0.0
    for h in range(H - 1, -1, -1):
        for s in range(S):
            best, best_low, arg = -np.inf, 0.0, 0
            for a in range(A):
                i = (h * S + s) * A + a
                n = _privatize_one(values[K + i], values[2 * K + i * S:2 * K + (i + 1) * S], e_paper, m_row)
                if n > 0:
                    mean_up, second, gap2, mean_low = 0.0, 0.0, 0.0, 0.0
                    for j in range(S):
                        p = m_row[j] / n
                        u = upper[h + 1, j]
                        g = u - lower[h + 1, j]
                        mean_up += p * u
                        second += p * (u * u)
                        gap2 += p * (g * g)
                        mean_low += p * lower[h + 1, j]
                    var = max(second - mean_up * mean_up, 0.0)
                    transitions = 2.0 * np.sqrt(var * iota / n) + 2.0 * np.sqrt(gap2 * iota / n)
                    lower_order = (LOWER_ORDER * H * S * iota + PRIVACY_TERM * H * S * e_paper) / n
                    b = transitions + lower_order + (np.sqrt(2.0 * iota / n) + e / n)
                    reward = min(max(values[i] / n, 0.0), 1.0)
                    q_up = min(reward + mean_up + b, H - h)
                    q_low = max(reward + mean_low - b, 0.0)
                else:
                    q_up, q_low = float(H - h), 0.0
                if q_up >= H - h and watch[h, s, a]:
                    clamped = True
                if not unavailable[s, a] and q_up > best:
                    best, best_low, arg = q_up, q_low, a
            policy_out[h, s] = arg
            upper[h, s] = best
            lower[h, s] = best_low
    if clamped:
        last[0] = k + 1  # the run's episodes are 1-based in last_clamped_episode


@njit(cache=True)
def kernel_learn(state: tuple, k: int, states: np.ndarray, actions: np.ndarray, rewards: np.ndarray) -> None:
    """Line 8 in compiled code: the trajectory into the counters (:func:`feed_stats`)."""
    feed_stats(state[0], states, actions, rewards)


class DPUCBVI:
    """DP-UCBVI's agent (Algorithm 1) on dprl's counters (``source``: :class:`PrivateStats`
    for DP-UCBVI, :class:`ExactStats` for UCBVI-Bernstein): ``policy()`` plans lines 3-7
    from the counters' release, ``observe()`` is line 8. ``last_clamped_episode``: the last
    episode (1-based) in which a pair of ``watch`` (``(H, S, A)``; default none) still had
    ``Q̄_h`` at its cap ``H − h + 1``, the measured end of the burn-in :func:`burn_in` predicts."""

    def __init__(self, source: PrivateStats | ExactStats, n_episodes: int, beta: float, n_actions: np.ndarray,
                 compiled: bool = True, watch: np.ndarray | None = None) -> None:
        self.source = source
        self.watch = (np.zeros((source.H, source.S, source.A), dtype=np.bool_) if watch is None
                      else np.asarray(watch, dtype=np.bool_))
        self._last = np.zeros(1, dtype=np.int64)
        self._k = 0
        self.S, self.A, self.H = source.S, source.A, source.H
        self.iota = log_term(self.S, self.A, self.H, n_episodes, beta)
        self.unavailable = np.arange(self.A)[None, :] >= np.asarray(n_actions)[:, None]
        # the last plan's upper and lower values (H+1, S): what the optimism tests read
        self.upper = np.zeros((self.H + 1, self.S))
        self.lower = np.zeros((self.H + 1, self.S))
        # the block protocol (dprl.agents.plugin): the same plan and learn compiled, on the
        # agent's own arrays and counters; without it the runner takes the NumPy step path
        if compiled:
            state = (source.kernel_state(), self.iota, self.unavailable, self.upper, self.lower, np.empty(self.S),
                     self.watch, self._last)
            self.block_kernel = TabularBlockKernel(kernel_plan, kernel_learn, state)

    def plan(self, st: ReleasedStats) -> np.ndarray:
        """Lines 3-7 from one release: the greedy policy ``(H, S)`` of ``Q̄``."""
        S, H = self.S, self.H
        e_paper = 4.0 * st.e  # the counters' error is the Privatizer's raw accuracy E_{ε,β}/4
        n, m = privatize_counts(st.n, st.m, e_paper)
        seen = n > 0
        n_safe = np.where(seen, n, 1.0)
        P = m / n_safe[..., None]  # line 4: P̃ (a probability vector where ñ > 0)
        # deviation: unknown Bernoulli rewards, estimated from the released sums
        reward = np.clip(st.r / n_safe, 0.0, 1.0)
        pi = np.empty((H, S), dtype=np.int64)
        self._clamped = False
        self.upper[H] = 0.0
        self.lower[H] = 0.0
        rows = np.arange(S)
        for h in range(H - 1, -1, -1):
            up, low = self.upper[h + 1], self.lower[h + 1]
            # elementwise products summed over s' (not BLAS): the compiled plan's operations
            mean_up = (P[h] * up).sum(-1)
            var = np.maximum((P[h] * (up * up)).sum(-1) - mean_up * mean_up, 0.0)
            gap = up - low
            gap2 = (P[h] * (gap * gap)).sum(-1)
            b = bernstein_bonus(var, gap2, n_safe[h], self.iota, H, S, e_paper, st.e)
            q_up = np.minimum(reward[h] + mean_up + b, H - h)  # line 5 (H − h + 1 with 1-based h)
            q_low = np.maximum(reward[h] + (P[h] * low).sum(-1) - b, 0.0)  # line 6
            # deviation: never-visited (h, s, a) (exact counts only) planned at the range
            q_up = np.where(seen[h], q_up, H - h)
            q_low = np.where(seen[h], q_low, 0.0)
            self._clamped |= bool(np.any((q_up >= H - h) & self.watch[h]))
            q_up[self.unavailable] = -np.inf
            pi[h] = q_up.argmax(axis=1)  # line 7
            self.upper[h] = q_up[rows, pi[h]]
            self.lower[h] = q_low[rows, pi[h]]
        return pi

    @property
    def last_clamped_episode(self) -> int:
        return int(self._last[0])

    def policy(self) -> np.ndarray:
        pi = self.plan(self.source.release())
        if self._clamped:
            self._last[0] = self._k + 1
        self._k += 1
        return pi

    def observe(self, states: np.ndarray, actions: np.ndarray, rewards: np.ndarray) -> None:
        """Line 8: the episode's trajectory to the Privatizer (the tree counters)."""
        self.source.update(states, actions, rewards)


def build(params: dict, privacy, env, n_episodes: int, agent_rng, noise_rng) -> BuiltAgent:
    """DP-UCBVI's factory (``Algorithm.factory``): PUCB's tree counters sized for the job;
    the calibration is the one these counters hold (``PrivateStats.calibration``)."""
    source = PrivateStats(env.S, env.A, env.H, n_episodes, privacy, params["beta"], noise_rng)
    return BuiltAgent(DPUCBVI(source, n_episodes, params["beta"], env.n_actions, watch=clamp_watch(env, caps_of(env.H))),
                      source.calibration())


def build_exact(params: dict, privacy, env, n_episodes: int, agent_rng, noise_rng) -> BuiltAgent:
    """UCBVI-Bernstein's factory: the same planner on exact counts (``E = 0``), no calibration."""
    source = ExactStats(env.S, env.A, env.H)
    return BuiltAgent(DPUCBVI(source, n_episodes, params["beta"], env.n_actions, watch=clamp_watch(env, caps_of(env.H))),
                      None)


def bonus_width(n: float, E: float, S: int, H: int, iota: float) -> float:
    """An upper bound of :func:`bernstein_bonus` at true count ``n`` (``ñ ≈ n + E_{ε,β}/2``
    after the shift (9), ``E_{ε,β} = 4E``), with ``Var_P̃(V̄) <= H²/4`` and ``E_P̃(V̄ − V̲)² <= H²``:
    a prediction that errs late, never early."""
    e_paper = 4.0 * E
    m = max(1.0, n + e_paper / 2.0)
    transitions = 2.0 * math.sqrt(H * H / 4.0 * iota / m) + 2.0 * math.sqrt(H * H * iota / m)
    return (transitions + (LOWER_ORDER * H * S * iota + PRIVACY_TERM * H * S * e_paper) / m
            + math.sqrt(2.0 * iota / m) + E / m)


def burn_in(params, privacy, env, n_episodes: int) -> tuple[float, float]:
    """Predicted ``(first untie, T*)`` of a ``K = n_episodes`` run (``Algorithm.burn_in``):
    episodes of uniform play until every watched ``Q̄_h`` leaves its cap ``H − h + 1``
    (line 5; ``agents/tabular/regime.bonus_burn_in`` with :func:`bonus_width`); ``E`` is the
    counters' bound for ``K`` (0 for UCBVI-Bernstein)."""
    beta = params["beta"]
    E = 0.0 if privacy is None else error_bound(privacy, env.S, env.A, env.H, n_episodes, beta)
    iota = log_term(env.S, env.A, env.H, n_episodes, beta)
    return bonus_burn_in(env, lambda n: bonus_width(n, E, env.S, env.H, iota), caps=caps_of(env.H))


def caps_of(H: int) -> np.ndarray:
    """Where line 5 clamps ``Q̄_h``: ``H − h + 1`` for ``h = 1..H``."""
    return np.arange(H, 0, -1, dtype=float)
