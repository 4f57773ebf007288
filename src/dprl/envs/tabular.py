"""Finite-horizon tabular MDPs with exact evaluation (Vietri et al. 2020, Section 2).

Layout: time leads, ``P[h, s, a, s']``, mean rewards ``R[h, s, a]`` in [0, 1], initial
distribution ``p0[s]``. Rewards are Bernoulli with mean ``R`` unless ``next_reward`` is
given, in which case the reward of a transition is ``next_reward[s']`` (the lower-bound
class of Figure 1: reward 1 for every transition into ``+``); then ``R`` is its
expectation ``Σ_s' P next_reward``.

Exact quantities (Vietri et al. 2020, Section 2, "Setting"): ``ρ^π = p0ᵀ V_1^π`` by backward induction, regret
``ρ* − ρ^{π_t}``.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from numba import njit

from dprl.checks import check_array, check_number


@dataclass
class TabularMDP:
    P: np.ndarray  # (H, S, A, S)
    R: np.ndarray  # (H, S, A) mean reward
    p0: np.ndarray  # (S,)
    next_reward: np.ndarray | None = None  # (S,) deterministic reward of entering s'
    name: str = "mdp"
    # (S,) actions available in each state, ``0..n_actions[s]-1`` (public structure the agent
    # knows, like S and A); None: all A everywhere. Arrays stay (H, S, A); the rest are unused.
    n_actions: np.ndarray | None = None

    def __post_init__(self) -> None:
        self.P = np.asarray(self.P, dtype=float)
        self.p0 = np.asarray(self.p0, dtype=float)
        if self.P.ndim != 4 or self.P.shape[1] != self.P.shape[3]:
            raise ValueError(f"{self.name}: P must have shape (H, S, A, S), got {self.P.shape}")
        H, S, A, _ = self.P.shape
        if min(H, S, A) < 1:
            raise ValueError(f"{self.name}: sizes must be positive, got H={H}, S={S}, A={A}")
        if np.any(self.P < 0) or not np.allclose(self.P.sum(-1), 1.0, atol=1e-9):
            raise ValueError(f"{self.name}: every P(.|s,a,h) must be a probability vector (non-negative, sums to 1)")
        if self.p0.shape != (S,) or np.any(self.p0 < 0) or not np.isclose(self.p0.sum(), 1.0, atol=1e-9):
            raise ValueError(f"{self.name}: p0 must be a probability vector over the {S} states")
        if self.next_reward is not None:
            self.next_reward = check_array(f"{self.name}: next_reward", self.next_reward, minimum=0.0, maximum=1.0)
            if self.next_reward.shape != (S,):
                raise ValueError(f"{self.name}: next_reward must be a vector of S values in [0, 1]")
            self.R = self.P @ self.next_reward
        # NaN fails the [0, 1] test (a NaN reward would make every regret NaN)
        self.R = check_array(f"{self.name}: mean rewards R", self.R, minimum=0.0, maximum=1.0)
        if self.R.shape != (H, S, A):
            raise ValueError(f"{self.name}: R must have shape (H, S, A) = {(H, S, A)}, got {self.R.shape}")
        self.n_actions = np.full(S, A, dtype=np.int64) if self.n_actions is None else np.asarray(self.n_actions, dtype=np.int64)
        if self.n_actions.shape != (S,) or np.any((self.n_actions < 1) | (self.n_actions > A)):
            raise ValueError(f"{self.name}: n_actions must give 1..{A} actions for each of the {S} states")
        self.H, self.S, self.A = H, S, A
        # cumulative distributions for inverse-CDF sampling; last entry forced to 1 so a
        # uniform in [0, 1) always lands inside
        self._cdf = np.cumsum(self.P, axis=-1)
        self._cdf[..., -1] = 1.0
        self._cdf_p0 = np.cumsum(self.p0)
        self._cdf_p0[-1] = 1.0
        self._q_star, self._v_star = self._optimal()

    # ------------------------------------------------------------------ exact evaluation

    def _optimal(self) -> tuple[np.ndarray, np.ndarray]:
        """Backward induction of the optimal values: ``Q* (H, S, A)`` (``-inf`` at
        unavailable actions) and ``V* (H+1, S)``."""
        H, S, A = self.H, self.S, self.A
        V = np.zeros((H + 1, S))
        Q = np.empty((H, S, A))
        for h in range(H - 1, -1, -1):
            Q[h] = self.R[h] + self.P[h] @ V[h + 1]
            Q[h][np.arange(A)[None, :] >= self.n_actions[:, None]] = -np.inf  # unavailable actions
            V[h] = Q[h].max(axis=1)
        return Q, V

    @property
    def optimal_q(self) -> np.ndarray:
        return self._q_star

    @property
    def optimal_value(self) -> float:
        """``ρ* = p0ᵀ V*_1``."""
        return float(self.p0 @ self._v_star[0])

    def policy_value(self, policy: np.ndarray) -> float:
        """``ρ^π = p0ᵀ V^π_1`` for a deterministic policy ``policy[h, s]`` (ints)."""
        return float(self.policy_values(np.asarray(policy)[None])[0])

    def policy_values(self, policies: np.ndarray) -> np.ndarray:
        """``ρ^π`` of a batch of deterministic policies ``policies[b, h, s]``
        (:func:`policy_value_of`, the kernel the compiled episode loops evaluate their
        policies with, so every runner's regret has the same floating-point operations)."""
        policies = np.ascontiguousarray(policies, dtype=np.int64)
        if policies.ndim != 3 or policies.shape[1:] != (self.H, self.S):
            raise ValueError(f"{self.name}: policies must have shape (B, H, S) = (B, {self.H}, {self.S}), got {policies.shape}")
        out = np.empty(policies.shape[0])
        policy_values_into(self.P, self.R, self.p0, policies, out)
        return out

    # ------------------------------------------------------------------ simulation

    def draw_uniforms(self, rng: np.random.Generator, episodes: int) -> np.ndarray:
        """Environment randomness of ``episodes`` episodes, ``(episodes, 2H + 1)``: the
        initial state, then per step the transition and the reward uniforms. Drawn in a
        fixed amount per episode whatever the agent does, so every algorithm sees the same
        stream for a given seed (common random numbers)."""
        return rng.random((episodes, 2 * self.H + 1))

    def rollout(self, policy: np.ndarray, u: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """One episode under ``policy[h, s]`` with uniforms ``u`` (one row of
        :meth:`draw_uniforms`). Returns states ``(H+1,)``, actions ``(H,)``, rewards ``(H,)``."""
        H = self.H
        states = np.empty(H + 1, dtype=np.int64)
        actions = np.empty(H, dtype=np.int64)
        rewards = np.empty(H)
        rollout_into(*self.kernel_model(), np.asarray(policy, dtype=np.int64), np.asarray(u, dtype=float), states, actions, rewards)
        return states, actions, rewards

    def kernel_model(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, bool]:
        """The model as :func:`rollout_into` takes it: ``cdf, cdf_p0, R, next_reward,
        has_next_reward`` (``next_reward`` empty when rewards are Bernoulli)."""
        nr = self.next_reward
        return self._cdf, self._cdf_p0, self.R, (np.zeros(0) if nr is None else nr), nr is not None


@njit(cache=True)
def policy_value_of(P: np.ndarray, R: np.ndarray, p0: np.ndarray, policy: np.ndarray, V: np.ndarray, W: np.ndarray) -> float:
    """``ρ^π = p0ᵀ V^π_1`` of a deterministic ``policy[h, s]`` by backward induction,
    ``V_h(s) = R[h, s, a] + Σ_s' P[h, s, a, s'] V_{h+1}(s')`` with ``a = policy[h, s]`` and
    ``V_{H+1} = 0`` (Section 2 of Vietri et al. 2020), sums in index order. ``V``, ``W``:
    scratch of ``S`` values each (the loops evaluate every episode's policy without
    allocating)."""
    H, S = policy.shape
    V[:] = 0.0
    for h in range(H - 1, -1, -1):
        for s in range(S):
            a = policy[h, s]
            acc = 0.0
            for t in range(S):
                acc += P[h, s, a, t] * V[t]
            W[s] = R[h, s, a] + acc
        V[:] = W
    rho = 0.0
    for s in range(S):
        rho += p0[s] * V[s]
    return rho


@njit(cache=True)
def policy_values_into(P: np.ndarray, R: np.ndarray, p0: np.ndarray, policies: np.ndarray, out: np.ndarray) -> None:
    """:func:`policy_value_of` of each ``policies[b]`` into ``out[b]``."""
    S = P.shape[1]
    V = np.empty(S)
    W = np.empty(S)
    for b in range(policies.shape[0]):
        out[b] = policy_value_of(P, R, p0, policies[b], V, W)


@njit(cache=True)
def inverse_cdf(cdf: np.ndarray, u: float) -> int:
    """``searchsorted(cdf, u, side="right")``: the first index with ``cdf > u``, i.e. a draw
    from the distribution with cumulative ``cdf`` given a uniform ``u`` (the last entry is
    1 > u, so the search stops inside). Shared with the linear-mixture loop."""
    k = 0
    while cdf[k] <= u:
        k += 1
    return k


@njit(cache=True)
def rollout_into(
    cdf: np.ndarray, cdf_p0: np.ndarray, R: np.ndarray, next_reward: np.ndarray, has_next_reward: bool,
    policy: np.ndarray, u: np.ndarray, states: np.ndarray, actions: np.ndarray, rewards: np.ndarray,
) -> None:
    """One episode (compiled; :meth:`TabularMDP.rollout`): ``s_1 ~ p0`` by inverse CDF of
    ``u[0]``, then per step ``a = policy[h, s]``, ``s' ~ P(.|s,a,h)`` from ``u[1+2h]`` and
    the reward ``next_reward[s']`` or Bernoulli(``R[h,s,a]``) from ``u[2+2h]``."""
    H = policy.shape[0]
    s = inverse_cdf(cdf_p0, u[0])
    for h in range(H):
        a = policy[h, s]
        states[h] = s
        actions[h] = a
        s_next = inverse_cdf(cdf[h, s, a], u[1 + 2 * h])
        if has_next_reward:
            rewards[h] = next_reward[s_next]
        else:
            rewards[h] = 1.0 if u[2 + 2 * h] < R[h, s, a] else 0.0
        s = s_next
    states[H] = s


# ---------------------------------------------------------------------- instances


def riverswim(S: int = 6, H: int = 20) -> TabularMDP:
    """RiverSwim (Strehl & Littman 2008; the probabilities of Osband et al. 2013), finite
    horizon, start in the leftmost state. Action 0 swims left (deterministic), action 1
    right against the current. Rewards (Bernoulli means) 0.005 for left in state 0 and 1
    for right in state ``S-1``, the original 5/10000 scaled to [0, 1]."""
    check_number("riverswim S", S, minimum=2, integer=True)
    check_number("riverswim H", H, minimum=1, integer=True)
    P = np.zeros((S, 2, S))
    R = np.zeros((S, 2))
    for s in range(S):
        P[s, 0, max(s - 1, 0)] = 1.0
        if s == 0:
            P[s, 1, 0], P[s, 1, 1] = 0.4, 0.6
        elif s == S - 1:
            P[s, 1, s - 1], P[s, 1, s] = 0.4, 0.6
        else:
            P[s, 1, s - 1], P[s, 1, s], P[s, 1, s + 1] = 0.05, 0.6, 0.35
    R[0, 0] = 0.005
    R[S - 1, 1] = 1.0
    p0 = np.zeros(S)
    p0[0] = 1.0
    return TabularMDP(np.broadcast_to(P, (H, S, 2, S)).copy(), np.broadcast_to(R, (H, S, 2)).copy(), p0, name="riverswim")


def garnet(rng: np.random.Generator, S: int = 10, A: int = 3, H: int = 10, branching: int = 3) -> TabularMDP:
    """Random time-dependent MDP: for each ``(h, s, a)`` ``branching`` distinct successors
    with Dirichlet(1) probabilities; Bernoulli rewards with means U(0, 1); uniform ``p0``."""
    for what, v in (("S", S), ("A", A), ("H", H), ("branching", branching)):
        check_number(f"garnet {what}", v, minimum=1, integer=True)
    if branching > S:
        raise ValueError(f"garnet needs branching <= S, got branching={branching} > S={S}")
    keys = rng.random((H, S, A, S))
    succ = np.argsort(keys, axis=-1)[..., :branching]
    P = np.zeros((H, S, A, S))
    np.put_along_axis(P, succ, rng.dirichlet(np.ones(branching), size=(H, S, A)), axis=-1)
    R = rng.random((H, S, A))
    return TabularMDP(P, R, np.full(S, 1.0 / S), name="garnet")


def lowerbound(rng: np.random.Generator, n: int = 2, m: int = 1, gap: float = 0.2, H: int = 3) -> tuple[TabularMDP, np.ndarray]:
    """The hard class of Figure 1. States ``0..n-1`` are the initial states ``[n]``,
    ``n`` is ``+`` and ``n+1`` is ``−``; actions ``0..m``. ``P[+|s,0] = 1/2 + α'/2``,
    ``P[+|s,a] = 1/2`` for ``a ∉ {0, I_s}``, ``P[+|s,I_s] = 1/2 + α'`` if ``I_s ≠ 0``
    (``α' = gap``). ``+``/``−`` are absorbing with a single action (``n_actions = 1``, as in
    Figure 1: copies of one action would split the visits and delay learning). Reward 1 for every transition into ``+``
    (self-loops included), so an episode returns ``H`` or 0. ``I`` is drawn from ``rng``
    uniformly in ``{0..m}^n``. Returns the MDP and ``I``."""
    for what, v in (("n", n), ("m", m), ("H", H)):
        check_number(f"lowerbound {what}", v, minimum=1, integer=True)
    # P[+|s, I_s] = 1/2 + α' must be a probability: α' <= 1/2
    check_number("lowerbound gap α'", gap, exclusive_minimum=0.0, maximum=0.5)
    I = rng.integers(0, m + 1, size=n)
    S, A = n + 2, m + 1
    plus, minus = n, n + 1
    P1 = np.zeros((S, A, S))
    for s in range(n):
        p_plus = np.full(A, 0.5)
        p_plus[0] = 0.5 + gap / 2
        if I[s] != 0:
            p_plus[I[s]] = 0.5 + gap
        P1[s, :, plus], P1[s, :, minus] = p_plus, 1.0 - p_plus
    P1[plus, :, plus] = 1.0
    P1[minus, :, minus] = 1.0
    P = np.broadcast_to(P1, (H, S, A, S)).copy()
    # the initial states are only visited at h = 0; later steps keep them valid but unused
    p0 = np.zeros(S)
    p0[:n] = 1.0 / n
    nr = np.zeros(S)
    nr[plus] = 1.0
    n_actions = np.full(S, A)
    n_actions[[plus, minus]] = 1
    return TabularMDP(P, np.zeros((H, S, A)), p0, next_reward=nr, name="lowerbound", n_actions=n_actions), I


def lowerbound_optimal_value(I: np.ndarray, gap: float, H: int) -> float:
    """``ρ*`` of a Figure 1 instance in closed form: from initial state ``s`` the best
    action reaches ``+`` w.p. ``1/2 + α'`` (``I_s ≠ 0``) or ``1/2 + α'/2`` (``I_s = 0``)
    and then collects reward at every remaining step, so ``V*(s) = H·P[+|s, best]``."""
    best = np.where(np.asarray(I) != 0, 0.5 + gap, 0.5 + gap / 2)
    return float(H * best.mean())


def hard_gap(n: int, m: int, T: int, gap_scale: float = 1.0) -> float:
    """The gap ``α'(T) = gap_scale·sqrt(n·m/T)`` that makes a Figure 1 instance hard at
    horizon ``T`` (derivation: :func:`lowerbound_horizon`). Raises ``ValueError`` when it
    leaves ``(0, 1/2]``, where ``1/2 + α'`` is no longer a probability (``T < 4·gap_scale²·n·m``)."""
    for what, v in (("n", n), ("m", m), ("T", T)):
        check_number(f"lowerbound_horizon {what}", v, minimum=1, integer=True)
    check_number("lowerbound_horizon gap_scale", gap_scale, exclusive_minimum=0.0)
    gap = gap_scale * math.sqrt(n * m / T)
    if gap > 0.5:
        raise ValueError(f"lowerbound_horizon: gap α' = gap_scale·sqrt(n·m/T) = {gap:.4g} > 1/2 (P[+|s, I_s] = 1/2 + α' "
                         f"would exceed 1); needs T >= 4·gap_scale²·n·m = {math.ceil(4 * gap_scale ** 2 * n * m)}, got T = {T}")
    return gap


def lowerbound_horizon(rng: np.random.Generator, n: int = 2, m: int = 1, H: int = 2, T: int = 10000,
                       gap_scale: float = 1.0) -> tuple[TabularMDP, np.ndarray]:
    """The Figure 1 instance that is hard at horizon ``T``: :func:`lowerbound` with gap
    ``α'(T) = gap_scale·sqrt(n·m/T)`` (:func:`hard_gap`). Run for exactly ``T`` episodes,
    one instance per ``T``, these form a family indexed by the horizon, on which regret
    grows like √T for every algorithm that learns at all.

    Derivation (the bandit reduction of Dann & Brunskill 2015 and of the paper's Section
    6.2). The instance is ``n`` parallel bandits: from initial state ``s`` the first action
    decides ``+`` (return ``H``) or ``−`` (return 0), so state ``s`` is an ``(m+1)``-armed
    Bernoulli bandit with rewards scaled by ``H``, played ``N = T/n`` times in expectation.
    Instance ``I_s = j ≠ 0`` differs from ``I_s = 0`` in arm ``j`` only, by ``x = α'/2``
    (``1/2 + α'`` against the base arm 0's ``1/2 + α'/2``). With ``KL(Ber(1/2+x) ‖
    Ber(1/2)) <= 8x²`` for ``x <= 1/4``, an algorithm that pulls arm ``j`` ``N_j`` times
    tells the two instances apart only if ``N_j·8x² = 2N_j α'²`` is of order 1 (Bretagnolle–
    Huber); some arm gets at most ``N/m`` pulls, so at ``α' <= c·sqrt(m/N) = c·sqrt(n·m/T)``
    every algorithm confuses some instance with constant probability, and each such episode
    loses ``H·α'/2`` (``H`` times the arm gap). Summed over ``n`` states and ``T/n`` episodes
    each, ``E[Regret(T)] >= c'·T·H·α'(T) = c'·H·gap_scale·sqrt(n·m·T)``, i.e.
    ``Ω(H·sqrt(SAT))`` with ``S = n + 2``, ``A = m + 1`` (Theorem 6's ``sqrt(HSAT)`` up to
    a factor ``sqrt(H)``: here the whole return rides on the first step). The privacy term
    ``SAH ln(T)/ε`` comes from Lemma 8 on the same bandits: every ε-DP learner pulls each
    ``α'``-suboptimal arm ``>= ln(1/(4β))/(24εα')`` times, ``H·ln(1/(4β))/(24ε)`` regret per
    (state, arm), whatever ``α'``, as long as ``T/n`` pulls allow it.

    Conversely no policy loses more than ``H·α'`` per episode, so every algorithm's regret
    on the family is at most ``H·gap_scale·sqrt(n·m·T)``: the regret-vs-T exponent on the
    family is ``<= 1/2`` for every algorithm, learner or not. The family pins the rate from
    below (an algorithm, or a regret computation, that grows slower than √T here is wrong);
    a learner without exploration shows in the constant, not in the exponent (it locks on a
    wrong arm on some seeds and is perfect on others; measured in ``tests/tabular``).

    ``rng`` draws ``I`` only; the job keys it by the family's parameters without ``T``, so a
    seed has the same ``I`` at every ``T`` of the family (the curves are paired by seed)."""
    check_number("lowerbound_horizon H", H, minimum=1, integer=True)
    mdp, I = lowerbound(rng, n=n, m=m, gap=hard_gap(n, m, T, gap_scale), H=H)
    mdp.name = "lowerbound_horizon"
    return mdp, I


# environment name -> builder(params, rng), the parameters declared in experiments/tabular/spec.py
_BUILDERS: dict[str, Callable[[dict, np.random.Generator], TabularMDP]] = {
    "riverswim": lambda p, rng: riverswim(S=p["S"], H=p["H"]),
    "garnet": lambda p, rng: garnet(rng, S=p["S"], A=p["A"], H=p["H"], branching=p["branching"]),
    "lowerbound": lambda p, rng: lowerbound(rng, n=p["n"], m=p["m"], gap=p["gap"], H=p["H"])[0],
    "lowerbound_horizon": lambda p, rng: lowerbound_horizon(rng, n=p["n"], m=p["m"], H=p["H"], T=p["T"],
                                                            gap_scale=p["gap_scale"])[0],
}


def make_tabular_env(name: str, params: dict, rng: np.random.Generator) -> TabularMDP:
    """Build a declared environment from its config parameters (``rng``: the job's
    environment stream, so the instance depends only on environment and seed)."""
    builder = _BUILDERS.get(name)
    if builder is None:
        raise ValueError(f"unknown tabular environment {name!r} (known: {', '.join(_BUILDERS)})")
    return builder(params, rng)
