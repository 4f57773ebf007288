"""Linear mixture MDPs (Zhou 2022, Assumption 1) and their exact evaluation.

``P(s'|s,a) = <ψ(s,a,s'), θ_p>`` and ``r(s,a) = <φ(s,a), θ_r>`` with known features
``ψ ∈ R^{d1}``, ``φ ∈ R^{d2}``; rewards are random (Bernoulli with mean ``r``) in [0, 1].
The model is time-homogeneous (one ``θ_p``, ``θ_r`` for all steps); the agents still
estimate one ``θ_{h,p}``, ``θ_{h,r}`` per step as in the paper.

Three instances (all validated at construction):

- :func:`make_mixture`: ``d1`` random base kernels ``P_i`` and ``θ_p`` in the simplex, so
  ``ψ(s,a,s') = (P_1(s'|s,a), ..., P_{d1}(s'|s,a))``. The states are split into ``d2``
  clusters (``c(s) = s mod d2``); base kernel ``i`` sends ``(s, a)`` to cluster
  ``σ_i(c(s), a)`` (a random map) and, inside it, to a Dirichlet-random state. The reward
  feature is ``φ(s,a) = e_{(c(s)+a) mod d2}`` (actions matter for rewards and transitions). The number of states ``S`` is free while ``d1, d2`` are
  fixed: the instance that tests independence from ``|S|``.
  This generator is *lumpable* onto its clusters (the cluster of the next state depends
  only on ``(c(s), a)`` and rewards only on ``(c(s), a)``), so values and features
  depend only on (cluster, action) and regret cannot depend on ``S``: kept for the
  regret experiments (Z2, Z3, Z6), not a test of independence from ``S``.
- :func:`make_spread_mixture`: non-lumpable, paired across ``S`` and nested in ``A``
  (Z4, Z5). Every ``(s, a)`` has its own cluster weights, ``ψ`` puts mass on every state,
  and every draw is keyed by the indices it belongs to, so the instances with ``S`` and
  ``S' > S`` states share ``θ``, the cluster-level kernels and the rows of states
  ``0..S-1``, and the instance with ``A`` actions contains the one with fewer.
- :func:`make_hard_linear`: the hard instance of Zhou, Gu, Szepesvári (2021, lower-bound
  construction, after Zhou et al. 2020), see its docstring. As ``hard_linear_horizon`` it is a family
  indexed by the number of episodes ``K``, each member run for exactly the ``K`` its gap
  is tuned to (experiment ``linmix_hard``).
- :func:`make_tabular_as_linear`: a random tabular MDP written as a linear mixture with
  one-hot features (``d1 = S²A``, ``d2 = SA``).

The agent only gets :class:`KnownFeatures` (``ψ``, ``φ``, ``s_1``, ``H``): never ``θ``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from dprl.checks import check_array, check_number


class _FeatureShape:
    """Sizes read off the feature arrays ``psi`` (S, A, d1, S') and ``phi_r`` (S, A, d2)."""

    psi: np.ndarray
    phi_r: np.ndarray

    @property
    def S(self) -> int:
        return self.psi.shape[0]

    @property
    def A(self) -> int:
        return self.psi.shape[1]

    @property
    def d1(self) -> int:
        return self.psi.shape[2]

    @property
    def d2(self) -> int:
        return self.phi_r.shape[2]


@dataclass(frozen=True)
class KnownFeatures(_FeatureShape):
    """What the learner knows: the feature maps and the episode structure."""

    psi: np.ndarray  # (S, A, d1, S'): ψ_i(s, a, s'), laid out so that ψ·V is one matmul
    phi_r: np.ndarray  # (S, A, d2)
    horizon: int
    s1: int



@dataclass
class LinearMixtureMDP(_FeatureShape):
    """A finite linear mixture MDP with exact dynamic-programming evaluation."""

    psi: np.ndarray  # (S, A, d1, S)
    theta_p: np.ndarray  # (d1,)
    phi_r: np.ndarray  # (S, A, d2)
    theta_r: np.ndarray  # (d2,)
    horizon: int
    s1: int = 0
    name: str = "linear_mixture"
    P: np.ndarray = field(init=False)  # (S, A, S)
    r: np.ndarray = field(init=False)  # (S, A) mean rewards

    def __post_init__(self) -> None:
        # finite first: a NaN passes every norm and probability test below
        psi = check_array("psi", self.psi)
        if psi.ndim != 4 or psi.shape[0] != psi.shape[3]:
            raise ValueError(f"psi must have shape (S, A, d1, S), got {psi.shape}")
        S, A, d1, _ = psi.shape
        if S < 1 or A < 1 or d1 < 1:
            raise ValueError(f"sizes must be positive: S={S}, A={A}, d1={d1}")
        check_number("horizon H", self.horizon, minimum=1, integer=True)
        if not 0 <= self.s1 < S:
            raise ValueError(f"initial state s1={self.s1} outside 0..{S - 1}")
        theta_p = check_array("theta_p", self.theta_p)
        phi_r = check_array("phi_r", self.phi_r)
        theta_r = check_array("theta_r", self.theta_r)
        if theta_p.shape != (d1,):
            raise ValueError(f"theta_p must have shape ({d1},), got {theta_p.shape}")
        if phi_r.ndim != 3 or phi_r.shape[:2] != (S, A):
            raise ValueError(f"phi_r must have shape (S, A, d2) = ({S}, {A}, d2), got {phi_r.shape}")
        d2 = phi_r.shape[2]
        if theta_r.shape != (d2,):
            raise ValueError(f"theta_r must have shape ({d2},), got {theta_r.shape}")
        # Assumption 1 (Zhou 2022): ||θ_p|| <= sqrt(d1), ||θ_r|| <= sqrt(d2), ||φ|| <= 1,
        # ||ϕ_V|| <= sqrt(d1) H for every V with values in [0, H].
        tol = 1e-9
        if np.linalg.norm(theta_p) > math.sqrt(d1) + tol:
            raise ValueError(f"||theta_p|| = {np.linalg.norm(theta_p):.4g} exceeds sqrt(d1) = {math.sqrt(d1):.4g}")
        if np.linalg.norm(theta_r) > math.sqrt(d2) + tol:
            raise ValueError(f"||theta_r|| = {np.linalg.norm(theta_r):.4g} exceeds sqrt(d2) = {math.sqrt(d2):.4g}")
        if np.linalg.norm(phi_r, axis=-1).max() > 1 + tol:
            raise ValueError("reward features must satisfy ||phi(s,a)|| <= 1")
        abs_mass = np.abs(psi).sum(axis=3)  # (S, A, d1): max_V |ϕ_i| / H
        if np.linalg.norm(abs_mass, axis=-1).max() > math.sqrt(d1) + tol:
            raise ValueError("transition features violate ||phi_V(s,a)|| <= sqrt(d1) H for V in [0, H]")
        P = np.einsum("sait,i->sat", psi, theta_p)
        if P.min() < -tol:
            raise ValueError(f"transition probabilities must be >= 0, got min {P.min():.3g}")
        if not np.allclose(P.sum(axis=2), 1.0, atol=1e-9):
            raise ValueError("transition probabilities P(.|s,a) must sum to 1 for every (s, a)")
        r = phi_r @ theta_r
        if r.min() < -tol or r.max() > 1 + tol:
            raise ValueError(f"mean rewards must lie in [0, 1], got [{r.min():.3g}, {r.max():.3g}]")
        self.psi, self.theta_p, self.phi_r, self.theta_r = psi, theta_p, phi_r, theta_r
        self.P = np.clip(P, 0.0, None)
        self.P /= self.P.sum(axis=2, keepdims=True)
        self.r = np.clip(r, 0.0, 1.0)
        self._cumP = np.cumsum(self.P, axis=2)
        self._cumP[..., -1] = 1.0

    # ------------------------------------------------------------------ structure

    def features(self) -> KnownFeatures:
        return KnownFeatures(self.psi, self.phi_r, self.horizon, self.s1)

    # ------------------------------------------------------------------ sampling
    def step(self, s: int, a: int, u_next: float, u_reward: float) -> tuple[float, int]:
        """One transition from uniforms (inverse-CDF sampling; common random numbers)."""
        reward = 1.0 if u_reward < self.r[s, a] else 0.0
        s_next = int(np.searchsorted(self._cumP[s, a], u_next, side="right"))
        return reward, min(s_next, self.S - 1)

    # ------------------------------------------------------------------ exact evaluation
    def optimal_values(self) -> np.ndarray:
        """``V*_h`` for ``h = 1..H+1`` (shape ``(H+1, S)``) by backward induction."""
        H = self.horizon
        V = np.zeros((H + 1, self.S))
        for h in range(H - 1, -1, -1):
            V[h] = (self.r + self.P @ V[h + 1]).max(axis=1)
        return V

    def policy_value(self, pi: np.ndarray) -> float:
        """``V^π_1(s_1)`` of a (possibly stochastic) policy ``pi`` of shape ``(H, S, A)``."""
        V = np.zeros(self.S)
        for h in range(self.horizon - 1, -1, -1):
            V = (pi[h] * (self.r + np.einsum("sat,t->sa", self.P, V))).sum(axis=1)  # no threaded gemv
        return float(V[self.s1])

    def deterministic_policy_value(self, actions: np.ndarray) -> float:
        """``V^π_1(s_1)`` of a deterministic policy ``actions`` of shape ``(H, S)``."""
        V = np.zeros(self.S)
        idx = np.arange(self.S)
        for h in range(self.horizon - 1, -1, -1):
            a = actions[h]
            V = self.r[idx, a] + np.einsum("st,t->s", self.P[idx, a], V)
        return float(V[self.s1])


# ---------------------------------------------------------------------- instances


def _check_clustered(name: str, S: int, A: int, d1: int, d2: int, H: int, concentration: float) -> None:
    """Sizes and concentration of the two clustered generators."""
    for what, v in (("S", S), ("A", A), ("d1", d1), ("d2", d2), ("H", H)):
        check_number(what, v, minimum=1, integer=True)
    if S < d2:
        raise ValueError(f"{name} needs S >= d2 so that every one of the d2 clusters has a state (S={S}, d2={d2})")
    check_number("Dirichlet concentration", concentration, exclusive_minimum=0.0)


def make_mixture(
    S: int, A: int, d1: int, d2: int, H: int, rng: np.random.Generator, concentration: float = 0.5
) -> LinearMixtureMDP:
    """Random mixture of ``d1`` base kernels over ``d2`` state clusters (module docstring)."""
    _check_clustered("mixture", S, A, d1, d2, H, concentration)
    cluster = np.arange(S) % d2
    members = [np.flatnonzero(cluster == c) for c in range(d2)]
    target = rng.integers(0, d2, size=(d1, d2, A))  # σ_i(c, a)
    psi = np.zeros((S, A, d1, S))
    for i in range(d1):
        for s in range(S):
            for a in range(A):
                m = members[target[i, cluster[s], a]]
                psi[s, a, i, m] = rng.dirichlet(np.full(m.size, concentration))
    theta_p = rng.dirichlet(np.ones(d1))
    phi_r = np.zeros((S, A, d2))
    s_idx, a_idx = np.meshgrid(np.arange(S), np.arange(A), indexing="ij")
    phi_r[s_idx, a_idx, (cluster[:, None] + a_idx) % d2] = 1.0  # r(s, a) = θ_r[(c(s) + a) mod d2]
    theta_r = rng.uniform(0.0, 1.0, size=d2)
    return LinearMixtureMDP(psi, theta_p, phi_r, theta_r, H, 0, "mixture")


def _keyed(key: np.random.SeedSequence, *index: int) -> np.random.Generator:
    """The generator of one indexed draw: it depends on ``key`` and ``index`` only, never on
    the instance's size, so instances of different sizes share the draws they have in common."""
    return np.random.default_rng(np.random.SeedSequence(key.entropy, spawn_key=(*key.spawn_key, *index)))


def make_spread_mixture(
    S: int, A: int, d1: int, d2: int, H: int, key: np.random.SeedSequence, concentration: float = 0.5,
    mix: float = 0.5,
) -> LinearMixtureMDP:
    """Non-lumpable mixture of ``d1`` base kernels, paired across ``S`` and nested in ``A``.

    States are split into ``d2`` clusters (``c(s) = s mod d2``). Base kernel ``i`` sends
    ``(s, a)`` to cluster ``c'`` with probability ``w_{i,s,a}(c') = (1 − mix) q_i(c(s), a, c')
    + mix u_{i,s,a}(c')``, where ``q_i(c, a, ·)`` (cluster level) and ``u_{i,s,a}`` (one per
    state-action: breaks lumpability when ``mix > 0``) are Dirichlet(concentration) over
    the ``d2`` clusters, and spreads that mass uniformly over the cluster's states:
    ``ψ_i(s, a, s') = w_{i,s,a}(c(s')) / |c(s')|`` (positive on every state). ``θ_p`` is
    Dirichlet(1). Each draw comes from its own keyed stream (``key`` and its indices,
    :func:`_keyed`): ``θ`` and ``q`` do not depend on ``S`` or ``A``, ``u_{i,s,a}`` only on
    ``(s, a)``, so the pairing across ``S`` (Z4) and the nesting in ``A`` (Z5) are exact.

    Rewards: ``φ(s, a) = e_{c(s)}``, ``θ_r`` uniform on ``[0, 1]^{d2}``. They do not depend on
    the action, which acts through the transitions only, so with ``H >= 3`` the value of a
    state depends on its own row and the learner must generalise across states through
    ``θ_p`` (with ``H = 2`` only the first step's choice matters).
    """
    _check_clustered("spread_mixture", S, A, d1, d2, H, concentration)
    if not 0 <= mix <= 1:
        raise ValueError(f"mix must lie in [0, 1], got {mix}")
    cluster = np.arange(S) % d2
    size = np.bincount(cluster, minlength=d2).astype(float)
    alpha = np.full(d2, concentration)
    structure = _keyed(key, 0)
    theta_p = structure.dirichlet(np.ones(d1))
    theta_r = structure.uniform(0.0, 1.0, size=d2)
    q = np.array([[_keyed(key, 1, c, a).dirichlet(alpha, size=d1) for a in range(A)] for c in range(d2)])  # (d2, A, d1, d2)
    w = np.empty((S, A, d1, d2))
    for s in range(S):
        for a in range(A):
            w[s, a] = (1.0 - mix) * q[cluster[s], a] + mix * _keyed(key, 2, s, a).dirichlet(alpha, size=d1)
    psi = w[..., cluster] / size[cluster]  # (S, A, d1, S): ψ_i(s, a, s') = w_{i,s,a}(c(s')) / |c(s')|
    phi_r = np.zeros((S, A, d2))
    phi_r[np.arange(S), :, cluster] = 1.0
    return LinearMixtureMDP(psi, theta_p, phi_r, theta_r, H, 0, "spread_mixture")


def hard_linear_gap(H: int, K: int, gap_scale: float = 1.0) -> float:
    """``Δ = gap_scale·sqrt(δ/K)/(4√2)`` with ``δ = 1/H``: the gap of :func:`make_hard_linear`
    tuned to ``K`` episodes (Zhou, Gu, Szepesvári 2021, lower-bound construction: ``gap_scale
    = 1``). A larger scale keeps ``Δ ∝ 1/√K`` (every policy's regret stays ``∝ √K``, the
    family's shape) but gives a learner whose confidence width shrinks like ``1/√K`` enough
    signal to resolve part of ``μ`` within ``K``: at scale 1 every learner plays like uniform
    play, at scale 100 Private-LinOpt-VI loses about half of what uniform play loses."""
    return gap_scale * math.sqrt((1.0 / H) / K) / (4.0 * math.sqrt(2.0))


def hard_linear_uniform_regret(d: int, K: int, gap: float) -> float:
    """Regret of uniform play over ``K`` episodes of :func:`make_hard_linear` with ``H = 2``
    (the no-information reference): only the first step's action decides the reward (the
    second step's jump lands after the last reward), its jump probability ``δ + <μ, a>``
    falls short of the best one by ``2Δ`` per wrong sign, and half the ``d − 1`` signs of a
    uniform action are wrong: ``K·(d − 1)·Δ``."""
    return K * (d - 1) * gap


def make_hard_linear(d: int, H: int, K_ref: int, rng: np.random.Generator, gap_scale: float = 1.0) -> LinearMixtureMDP:
    """Hard linear mixture MDP of Zhou, Gu, Szepesvári (2021), lower-bound construction
    (episodic version of the instance of Zhou, He, Gu 2020).

    States ``x_1..x_{H+2}`` (indices ``0..H+1``): a chain ``x_1 → x_2 → ... → x_{H+1}``,
    ``x_{H+1}`` absorbing with reward 0, ``x_{H+2}`` absorbing with reward 1. Actions
    ``a ∈ {-1, 1}^{d-1}`` (``A = 2^{d-1}``). From a chain state ``x_i`` the agent jumps to
    ``x_{H+2}`` with probability ``δ + <μ, a>`` and moves on to ``x_{i+1}`` otherwise.
    Parameters: ``δ = 1/H``, ``Δ = gap_scale·sqrt(δ/K_ref)/(4 sqrt 2)`` (:func:`hard_linear_gap`;
    the paper's instance at ``gap_scale = 1``), ``μ ∈ {-Δ, Δ}^{d-1}`` uniform
    (drawn from ``rng``). Features: ``ψ(x_{i+1}|x_i,a) = (α(1-δ), -βa)``,
    ``ψ(x_{H+2}|x_i,a) = (αδ, βa)``, ``ψ(x|x,a) = (α, 0)`` for the two absorbing states, and
    ``θ_p = (1/α, μ/β)`` with ``α = sqrt(1/(1+Δ(d-1)))``, ``β = sqrt(Δ/(1+Δ(d-1)))``, so that
    ``||ϕ_V|| <= H``. Reward feature ``φ(s,a) = 1[s = x_{H+2}]`` (``d2 = 1``), ``θ_r = 1``.
    The best action is ``sign(μ)``; each wrong coordinate costs ``2Δ`` of jump probability.
    """
    if d < 2:
        raise ValueError(f"hard_linear needs d >= 2 (one constant coordinate plus d-1 action coordinates), got {d}")
    if H < 1 or K_ref < 1:
        raise ValueError(f"H and K_ref must be >= 1, got H={H}, K_ref={K_ref}")
    if not gap_scale > 0:
        raise ValueError(f"hard_linear needs gap_scale > 0, got {gap_scale}")
    delta = 1.0 / H
    gap = hard_linear_gap(H, K_ref, gap_scale)
    if (d - 1) * gap > delta:
        raise ValueError(f"hard_linear needs (d-1) Δ <= δ for valid probabilities (d={d}, H={H}, K_ref={K_ref}, "
                         f"gap_scale={gap_scale:g})")
    actions = np.array(np.meshgrid(*[[-1.0, 1.0]] * (d - 1), indexing="ij")).reshape(d - 1, -1).T  # (A, d-1)
    A = actions.shape[0]
    S = H + 2
    bad, good = H, H + 1
    alpha = math.sqrt(1.0 / (1.0 + gap * (d - 1)))
    beta = math.sqrt(gap / (1.0 + gap * (d - 1)))
    mu = gap * rng.choice([-1.0, 1.0], size=d - 1)
    psi = np.zeros((S, A, d, S))
    for i in range(H):
        nxt = i + 1 if i + 1 < H else bad
        psi[i, :, 0, nxt] = alpha * (1 - delta)
        psi[i, :, 1:, nxt] = -beta * actions
        psi[i, :, 0, good] += alpha * delta
        psi[i, :, 1:, good] += beta * actions
    psi[bad, :, 0, bad] = alpha
    psi[good, :, 0, good] = alpha
    theta_p = np.concatenate([[1.0 / alpha], mu / beta])
    phi_r = np.zeros((S, A, 1))
    phi_r[good, :, 0] = 1.0
    return LinearMixtureMDP(psi, theta_p, phi_r, np.ones(1), H, 0, "hard_linear")


def make_tabular_as_linear(S: int, A: int, H: int, rng: np.random.Generator) -> LinearMixtureMDP:
    """A random tabular MDP (Dirichlet(1) rows, uniform mean rewards) as a linear mixture:
    ``ψ(s,a,s') = e_{(s,a,s')} ∈ R^{S²A}``, ``θ_p = vec P``; ``φ(s,a) = e_{(s,a)}``, ``θ_r = vec r``."""
    if S < 1 or A < 1 or H < 1:
        raise ValueError(f"S, A, H must be >= 1, got S={S}, A={A}, H={H}")
    if S * S * A > 4096:
        raise ValueError(f"tabular_as_linear has d1 = S^2 A = {S * S * A} > 4096; use a smaller instance")
    P = rng.dirichlet(np.ones(S), size=(S, A))
    r = rng.uniform(0.0, 1.0, size=(S, A))
    d1 = S * S * A
    psi = np.zeros((S, A, d1, S))
    s, a, t = np.meshgrid(np.arange(S), np.arange(A), np.arange(S), indexing="ij")
    psi[s, a, (s * A + a) * S + t, t] = 1.0
    phi_r = np.zeros((S, A, S * A))
    s2, a2 = np.meshgrid(np.arange(S), np.arange(A), indexing="ij")
    phi_r[s2, a2, s2 * A + a2] = 1.0
    return LinearMixtureMDP(psi, P.reshape(-1), phi_r, r.reshape(-1), H, 0, "tabular_as_linear")


def make_env(name: str, params: dict, rng: np.random.Generator, key: np.random.SeedSequence | None = None) -> LinearMixtureMDP:
    """Build an environment from its config name and parameters. ``spread_mixture`` draws
    from ``key`` (the job passes one that ignores ``S`` and ``A``, which pairs its instances
    across them; without one, a key is drawn from ``rng``)."""
    if name == "spread_mixture":
        if key is None:
            key = np.random.SeedSequence(int(rng.integers(2**63)))
        return make_spread_mixture(params["S"], params["A"], params["d1"], params["d2"], params["H"], key,
                                   params["concentration"], params["mix"])
    if name == "mixture":
        return make_mixture(params["S"], params["A"], params["d1"], params["d2"], params["H"], rng, params["concentration"])
    if name == "hard_linear":
        return make_hard_linear(params["d"], params["H"], params["K_ref"], rng)
    if name == "hard_linear_horizon":  # the family hard at K: Δ tuned to the job's own K
        return make_hard_linear(params["d"], params["H"], params["K"], rng, params.get("gap_scale", 1.0))
    if name == "tabular_as_linear":
        return make_tabular_as_linear(params["S"], params["A"], params["H"], rng)
    raise ValueError(f"unknown linear mixture environment {name!r}")
