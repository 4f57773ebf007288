"""Private-UCB-VI (Chowdhury & Zhou, "Differentially Private Regret Minimization in Episodic
Markov Decision Processes", AAAI 2022, arXiv 2112.10599) with the Central (JDP) Privatizer,
and its non-private counterpart UCB-VI on exact counts, as dprl plug-ins of the tabular
setting: the step protocol (``policy``/``observe``) and the compiled block protocol
(``block_kernel``) of :mod:`dprl.agents.plugin`, which give the same numbers.

Source. The paper's text was reachable through the search tool only as the opening of its
TeX (introduction and Table 1: ε-JDP regret ``Õ(√(SAH³T) + S²AH³/ε)``); the algorithm box
below is written from recollection of the paper's Section 4 (private optimistic value
iteration), not from its text. Checked against the authors' public code (a ``UCBVI_JDP``
agent, read through the search tool's code index, not copied): its estimates are the ones of
line 3 (``P̃ = Ñ(s,a,·)/max{1, Ñ + E}``, ``r̃ = C̃/max{1, Ñ + E}``), its bonuses have this
module's form (a Hoeffding root at ``ñ`` plus ``S·E/ñ``, the transition bonus scaled by the
steps to go), with a constant ``2 ln 3`` in place of ``ι`` and no clipping at ``H``; it draws
fresh Laplace noise at every call instead of keeping tree counters (not a private
mechanism over time). The bonus constants here are derived from the Privatizer's accuracy
assumption (derivation in :func:`plan_into`), not copied from the printed bonus, which could
not be read: a documented deviation in constants, not in form.

PUCB in the paper's Table 1 (what this package could read of it). The table restates PUCB's
ε-JDP regret as ``Õ(√(S²AH³T) + S²AH³/ε)`` with a footnote, where Vietri et al. (2020,
Theorem 4) state ``H²√(SAT)`` over ``T`` episodes, i.e. ``√(SAH³T)`` in steps: the restated
non-private term carries an extra ``√S``. The footnote's text was not reachable; Qiao & Wang's
later Markov-game paper (DP-Nash-VI, its Table 1) restates the same ``√(S²AH³T)`` for PUCB
and defers to this footnote ("more discussions about this bound can be found in Chowdhury
and Zhou [2022]"). This is reported beside the claims, never counted against Vietri et al.:
the claims of that paper (V2, V9) are judged on the rate in ``T``, which both forms share.

Algorithm (Private-UCB-VI), ``K`` episodes, confidence ``β``:

1. for ``k = 1..K``:
2.   the Privatizer releases the private counts ``C̃ᵏ_h(s,a)`` (reward sums), ``Ñᵏ_h(s,a)``
     (visits) and ``Ñᵏ_h(s,a,s')`` (transitions) of episodes ``1..k−1``;
3.   private estimates ``r̃ = C̃ / max{1, Ñ + E}``, ``P̃(s'|s,a) = Ñ(s,a,s') / max{1, Ñ + E}``;
4.   ``Ṽᵏ_{H+1} = 0``; for ``h = H..1``:
5.     ``Q̃ᵏ_h(s,a) = min{H, r̃ + β^r + Σ_{s'} P̃(s'|s,a) Ṽᵏ_{h+1}(s') + β^{pv}}``;
6.     ``Ṽᵏ_h(s) = max_a Q̃ᵏ_h(s,a)``, ``πᵏ_h(s) = argmax_a Q̃ᵏ_h(s,a)``;
7.   play ``πᵏ``, send the trajectory to the Privatizer (it feeds its counters).

Privatizer accuracy (the paper's assumption on the private counts): with probability
``1 − β``, for every ``(k, h, s, a, s')``, ``|Ñ − N| ≤ E``, ``|C̃ − C| ≤ E`` and
``|Ñ(s,a,s') − N(s,a,s')| ≤ E``. The paper states three bounds ``E_{ε,β,1..3}``; dprl's
counters give one bound ``E`` for all of them (:meth:`PrivateStats.current_e`), which is used
for each.

What is dprl's. The Central Privatizer is the binary (tree) mechanism with Laplace noise on
every count: :class:`dprl.agents.tabular.statistics.PrivateStats` (PUCB's counters, one
Laplace tree counter per ``r, n, m`` entry, ε-JDP under replacement by the billboard lemma),
held as the agent's ``source``, so dprl accounts the agent from the scale it holds
(``dprl.agents.tabular.privacy.held_calibration``) and audits it (``tabular_audit``). Its
Laplace scale is PUCB's calibration (two entries of each family change per step under
replacement), not re-derived from the paper's Privatizer section: a deviation in the
constant of the noise, not in the mechanism. ``ucb_vi`` is the same planner on exact counts
(``ExactStats``, ``E = 0``). Deviation: dprl instances may offer fewer actions in some states
(``n_actions``); the maximum and argmax of line 6 run over the available ones (first index
on ties, as ``numpy.argmax``).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from dprl.agents.plugin import TabularBlockKernel
from dprl.agents.protocol import BuiltAgent
from dprl.agents.tabular.regime import bonus_burn_in, clamp_watch, error_bound
from dprl.agents.tabular.statistics import ExactStats, PrivateStats, feed_stats, release_stats


def log_term(S: int, A: int, H: int, K: int, beta: float) -> float:
    """``ι = ln(4SAHK/β)``: Hoeffding's bound for the rewards and for the next-state value
    at every ``(k, h, s, a)`` by a union bound, each with probability ``β/2``."""
    return math.log(4.0 * S * A * H * K / beta)


@njit(cache=True)
def plan_into(values: np.ndarray, E: float, S: int, A: int, H: int, n_actions: np.ndarray, iota: float,
              V: np.ndarray, W: np.ndarray, policy_out: np.ndarray, watch: np.ndarray) -> bool:
    """Lines 3-6 on the released flat ``[C̃ | Ñ | Ñ(s')]`` vector ``values`` with error bound ``E``,
    writing ``πᵏ`` into ``policy_out`` (``V``, ``W``: scratch of ``S``). Returns whether a
    watched pair (``watch``, ``(H, S, A)``: ``agents/tabular/regime.clamp_watch``) is still
    clamped at ``Q̃ = H``: the burn-in the plug-in's :func:`burn_in` predicts, measured.

    Bonuses, with ``ñ = max{1, Ñ + E}`` (``Ñ + E ≥ N`` under the accuracy assumption, and
    ``Ñ + E ≤ N + 2E``): Hoeffding's term at ``ñ`` plus the counts' error, ``|r̃ − r̂| ≤
    |C̃ − C|/ñ + r̂·(ñ − N)/ñ ≤ 3E/ñ`` and, for ``V ∈ [0, H]``, ``|(P̃ − P̂)V| ≤ H(S·E + 2E)/ñ``:

    - ``β^r = √(ι / (2ñ)) + 3E/ñ`` (rewards in ``[0, 1]``);
    - ``β^{pv} = H√(ι / (2ñ)) + H(S + 2)E/ñ`` (the next-state value, range ``H``)."""
    sah = S * A * H
    clamped = False
    V[:] = 0.0  # line 4: Ṽ_{H+1} = 0
    for h in range(H - 1, -1, -1):
        for s in range(S):
            best, arg = -np.inf, 0
            for a in range(n_actions[s]):
                i = (h * S + s) * A + a
                n = max(1.0, values[sah + i] + E)  # line 3: max{1, Ñ + E}
                pv = 0.0
                for t in range(S):
                    pv += values[2 * sah + i * S + t] / n * V[t]  # Σ_{s'} P̃(s'|s,a) Ṽ_{h+1}(s')
                root = math.sqrt(iota / (2.0 * n))
                bonus_r = root + 3.0 * E / n
                bonus_pv = H * root + H * (S + 2.0) * E / n
                q = min(float(H), values[i] / n + bonus_r + pv + bonus_pv)  # line 5
                if q >= H and watch[h, s, a]:
                    clamped = True
                if q > best:  # line 6: max and first argmax over the available actions
                    best, arg = q, a
            W[s] = best
            policy_out[h, s] = arg
        V[:] = W
    return clamped


@njit(cache=True)
def _plan(state: tuple, k: int, policy_out: np.ndarray) -> None:
    """Block protocol ``plan``: line 2 (:func:`release_stats`) then lines 3-6."""
    ks, n_actions, iota, V, W, watch, last = state
    values, E = release_stats(ks)
    if plan_into(values, E, ks[11], ks[12], ks[13], n_actions, iota, V, W, policy_out, watch):
        last[0] = k + 1  # the run's episodes are 1-based in last_clamped_episode


@njit(cache=True)
def _learn(state: tuple, k: int, states: np.ndarray, actions: np.ndarray, rewards: np.ndarray) -> None:
    """Block protocol ``learn``: line 7 (:func:`feed_stats`, dprl's counters' kernels)."""
    feed_stats(state[0], states, actions, rewards)


class PrivateUCBVI:
    """Private-UCB-VI (or UCB-VI on ``ExactStats``) following both tabular protocols of
    :mod:`dprl.agents.plugin`; ``source`` is dprl's statistics object it releases through.
    ``last_clamped_episode``: the last episode (1-based) in which a watched pair of ``watch``
    still had ``Q̃ = H`` (0: none), the measured end of its burn-in (the job records it)."""

    def __init__(self, source: PrivateStats | ExactStats, n_actions: np.ndarray, iota: float,
                 watch: np.ndarray) -> None:
        self.source, self.n_actions, self.iota = source, np.asarray(n_actions, dtype=np.int64), float(iota)
        self.watch = np.asarray(watch, dtype=np.bool_)
        self._V, self._W = np.empty(source.S), np.empty(source.S)
        self._last = np.zeros(1, dtype=np.int64)
        self._k = 0
        self.block_kernel = TabularBlockKernel(
            _plan, _learn,
            (source.kernel_state(), self.n_actions, self.iota, self._V, self._W, self.watch, self._last))

    @property
    def last_clamped_episode(self) -> int:
        return int(self._last[0])

    def policy(self) -> np.ndarray:
        """Lines 2-6: the release (``source.release()``), then the planner."""
        st = self.source.release()
        pi = np.empty((st.H, st.S), dtype=np.int64)
        if plan_into(st.values, st.e, st.S, st.A, st.H, self.n_actions, self.iota, self._V, self._W, pi, self.watch):
            self._last[0] = self._k + 1
        self._k += 1
        return pi

    def observe(self, states: np.ndarray, actions: np.ndarray, rewards: np.ndarray) -> None:
        """Line 7: the trajectory to the Privatizer (``source.update``)."""
        self.source.update(states, actions, rewards)


def build(params, privacy, env, n_episodes, agent_rng, noise_rng) -> BuiltAgent:
    """``private_ucb_vi``'s factory: dprl's tree counters sized for the job's ``K`` episodes."""
    source = PrivateStats(env.S, env.A, env.H, n_episodes, privacy, params["beta"], noise_rng)
    iota = log_term(env.S, env.A, env.H, n_episodes, params["beta"])
    return BuiltAgent(PrivateUCBVI(source, env.n_actions, iota, clamp_watch(env)), source.calibration())


def build_exact(params, privacy, env, n_episodes, agent_rng, noise_rng) -> BuiltAgent:
    """``ucb_vi``'s factory: the same planner on exact counts (``E = 0``), non-private."""
    iota = log_term(env.S, env.A, env.H, n_episodes, params["beta"])
    return BuiltAgent(PrivateUCBVI(ExactStats(env.S, env.A, env.H), env.n_actions, iota, clamp_watch(env)), None)


def bonus_width(n: float, E: float, S: int, H: int, iota: float) -> float:
    """``β^r + β^{pv}`` of :func:`plan_into` at true count ``n`` (released ``Ñ ≈ n``, so
    ``ñ = max{1, n + E}``): the whole bonus a pair's ``Q̃`` carries above its estimate."""
    m = max(1.0, n + E)
    return (1.0 + H) * math.sqrt(iota / (2.0 * m)) + (3.0 + H * (S + 2.0)) * E / m


def burn_in(params, privacy, env, n_episodes: int) -> tuple[float, float]:
    """Predicted ``(first untie, T*)`` of a ``K = n_episodes`` run (``Algorithm.burn_in``):
    episodes of uniform play until every watched ``Q̃`` leaves ``H``
    (``agents/tabular/regime.bonus_burn_in`` with :func:`bonus_width`); ``E`` is the
    counters' bound for ``K`` (the scale :class:`PrivateStats` calibrates, 0 for UCB-VI)."""
    beta = params["beta"]
    E = 0.0 if privacy is None else error_bound(privacy, env.S, env.A, env.H, n_episodes, beta)
    iota = log_term(env.S, env.A, env.H, n_episodes, beta)
    return bonus_burn_in(env, lambda n: bonus_width(n, E, env.S, env.H, iota))
