"""Finite Markov reward processes for batch policy evaluation (Balle, Gomrokchi, Precup 2016;
spec ``balle2016-policy-evaluation.md``, "Setting" and "Environment").

A fixed policy on an MDP induces an MRP: transition matrix ``P`` (N×N), reward ``R[s, s']``
on the transition ``s → s'``, one absorbing state, discount ``γ``, start distribution ``p0``
and a maximum trajectory length. Provided here:

- :class:`FiniteMRP` (validated at construction) and :func:`chain_mrp`, the paper's chain;
- exact values ``V = (I - γP)^{-1} r`` with ``r(s) = Σ_s' P(s, s') R(s, s')``;
- vectorised sampling of ``m`` trajectories at once, reduced on the fly to first-visit
  Monte Carlo data (:class:`FirstVisitData`: first-visit discounted returns ``F_{i,s}`` and
  the visit mask), and per-batch-size statistics ``m_s`` and ``F_X(s)`` for nested batches.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
from numba import njit
from scipy import linalg

from dprl.checks import check_array, check_number

_CHUNK = 8192  # trajectories simulated together (bounds the (chunk, T) state buffer)


@dataclass(frozen=True)
class FiniteMRP:
    """A finite MRP with one absorbing state.

    ``P[s, s']`` transition probabilities (rows sum to 1), ``R[s, s']`` reward of the
    transition (in ``[0, r_max]``: the DP estimators need first-visit returns in
    ``[0, F_max]``), ``p0`` start distribution (no mass on the absorbing state), ``absorbing``
    the absorbing state (self-loop with reward 0), ``max_len`` the number of transitions
    after which a trajectory is cut.
    """

    P: np.ndarray
    R: np.ndarray
    p0: np.ndarray
    gamma: float
    absorbing: int
    max_len: int
    r_max: float

    def __post_init__(self) -> None:
        P, R, p0 = (np.asarray(x, dtype=float) for x in (self.P, self.R, self.p0))
        object.__setattr__(self, "P", P)
        object.__setattr__(self, "R", R)
        object.__setattr__(self, "p0", p0)
        n = P.shape[0] if P.ndim == 2 else 0
        if n < 2 or P.shape != (n, n):
            raise ValueError(f"P must be a square matrix with at least 2 states, got shape {P.shape}")
        if R.shape != (n, n):
            raise ValueError(f"R must have the shape of P {(n, n)}, got {R.shape}")
        if p0.shape != (n,):
            raise ValueError(f"p0 must have shape {(n,)}, got {p0.shape}")
        if np.any(P < 0) or not np.allclose(P.sum(axis=1), 1.0, atol=1e-10):
            raise ValueError("every row of P must be a probability distribution (entries >= 0, rows sum to 1)")
        if np.any(p0 < 0) or not np.isclose(p0.sum(), 1.0, atol=1e-10):
            raise ValueError("p0 must be a probability distribution (entries >= 0, sum to 1)")
        if not 0 <= self.gamma < 1:
            raise ValueError(f"discount gamma must lie in [0, 1), got {self.gamma}")
        if not (self.r_max > 0 and np.isfinite(self.r_max)):
            raise ValueError(f"r_max must be positive and finite, got {self.r_max}")
        check_array("rewards R", R, minimum=0.0, maximum=self.r_max)
        if not 0 <= self.absorbing < n:
            raise ValueError(f"absorbing state {self.absorbing} is not a state (0..{n - 1})")
        if P[self.absorbing, self.absorbing] != 1.0 or R[self.absorbing, self.absorbing] != 0.0:
            raise ValueError("the absorbing state must have a self-loop with probability 1 and reward 0")
        if p0[self.absorbing] != 0:
            raise ValueError("p0 must put no mass on the absorbing state")
        check_number("max_len", self.max_len, minimum=1, integer=True)

    @property
    def n_states(self) -> int:
        return self.P.shape[0]

    @property
    def f_max(self) -> float:
        """``F_max = R_max / (1 - γ)``: every discounted return lies in ``[0, F_max]``."""
        return self.r_max / (1.0 - self.gamma)

    @property
    def expected_reward(self) -> np.ndarray:
        """``r(s) = Σ_s' P(s, s') R(s, s')``."""
        return np.einsum("ij,ij->i", self.P, self.R)

    def true_values(self) -> np.ndarray:
        """Exact ``V = (I - γP)^{-1} r`` (untruncated; ``V(absorbing) = 0``)."""
        return linalg.solve(np.eye(self.n_states) - self.gamma * self.P, self.expected_reward)

    def _sparse_rows(self) -> tuple[np.ndarray, np.ndarray]:
        """Each row's support padded to the largest support size ``K`` and the cumulative
        probabilities of its first ``K-1`` entries (padding: probability 0, cumsum 1), so a
        step is ``support[s, #(u > cum[s])]``: O(mK) instead of O(mN)."""
        n = self.n_states
        nnz = (self.P > 0).sum(axis=1)
        k = int(nnz.max())
        support = np.zeros((n, k), dtype=np.int64)
        probs = np.zeros((n, k))
        for s in range(n):  # once per MRP, not per step
            idx = np.flatnonzero(self.P[s] > 0)
            support[s, : idx.size] = idx
            support[s, idx.size :] = idx[-1]
            probs[s, : idx.size] = self.P[s, idx]
        cum = np.cumsum(probs, axis=1)[:, :-1]
        cum[np.arange(k - 1)[None, :] >= (nnz - 1)[:, None]] = 1.0
        return support, cum

    def sample_first_visit(self, m: int, rng: np.random.Generator) -> FirstVisitData:
        """Sample ``m`` independent trajectories and reduce them to first-visit MC data.

        Trajectory ``i`` starts from ``p0`` and runs until the absorbing state or ``max_len``
        transitions. A state counts as visited at times ``0..len-1`` (a state reached only
        by the cut has no observed transition after it). ``F_{i,s}`` is the discounted
        return from the first visit: ``G_t = R(S_t, S_{t+1}) + γ G_{t+1}`` accumulated
        backwards, the earliest visit overwriting later ones.
        """
        chunks = list(self.iter_first_visit(m, rng))
        return FirstVisitData(np.concatenate([c.returns for c in chunks]), np.concatenate([c.visited for c in chunks]))

    def sample_prefix_stats(self, sizes: np.ndarray, rng: np.random.Generator) -> BatchStats:
        """``sample_first_visit(max(sizes), rng).prefix_stats(sizes)`` (the same trajectories;
        sums equal up to floating-point summation order) without holding all trajectories:
        chunks are reduced to running sums as they are drawn, so memory is O(chunk·N)
        whatever the batch size."""
        sizes = _check_sizes(sizes, int(np.max(sizes)))
        n = self.n_states
        sums, counts = np.zeros((sizes.size, n)), np.zeros((sizes.size, n), dtype=np.int64)
        tot_sum, tot_count, lo = np.zeros(n), np.zeros(n, dtype=np.int64), 0
        for chunk in self.iter_first_visit(int(sizes[-1]), rng):
            hi = lo + chunk.m
            inside = (sizes > lo) & (sizes <= hi)
            if inside.any():
                idx = sizes[inside] - lo - 1
                sums[inside] = tot_sum + np.cumsum(chunk.returns, axis=0)[idx]
                counts[inside] = tot_count + np.cumsum(chunk.visited, axis=0, dtype=np.int64)[idx]
            tot_sum = tot_sum + chunk.returns.sum(axis=0)
            tot_count = tot_count + chunk.visited.sum(axis=0)
            lo = hi
        return BatchStats.from_sums(sizes, counts, sums)

    def iter_first_visit(self, m: int, rng: np.random.Generator) -> Iterator[FirstVisitData]:
        """First-visit data of ``m`` trajectories, in chunks of at most ``_CHUNK`` (see
        :meth:`sample_first_visit`). Per chunk: start states from ``p0``, then one uniform per
        trajectory and step (``rng.random(c)``, also for trajectories already absorbed, until
        every one is; :func:`step_into`), then the backward pass (:func:`first_visit_into`).
        The NumPy code this replaced makes the same draws and gives the same numbers
        (``tests/pe/mrp_reference.py``, ``tests/pe/test_pe_mrp.py``)."""
        if m < 1:
            raise ValueError(f"batch size m must be >= 1, got {m}")
        support, cum = self._sparse_rows()
        n, T = self.n_states, self.max_len
        for lo in range(0, m, _CHUNK):
            c = min(lo + _CHUNK, m) - lo
            # time-major (T+1, c): a step reads and writes one contiguous row
            states = np.empty((T + 1, c), dtype=np.int64)
            states[0] = rng.choice(n, size=c, p=self.p0)
            steps = T
            for t in range(T):
                if step_into(states[t], states[t + 1], rng.random(c), support, cum, self.absorbing):
                    steps = t + 1
                    break
            ret, vis = np.zeros((c, n)), np.zeros((c, n), dtype=bool)
            first_visit_into(states, steps, self.R, self.gamma, self.absorbing, ret, vis)
            yield FirstVisitData(ret, vis)


# The sampler's two loops over a chunk, compiled. Profiled at pe_lambda's largest batch
# (3.2e6 trajectories of the chain): 15.4 of 17.5 s were the NumPy step and backward pass
# (temporaries of shape (chunk, K) and fancy indexing per step), the rest the draws.


@njit(cache=True)
def step_into(now: np.ndarray, nxt: np.ndarray, u: np.ndarray, support: np.ndarray, cum: np.ndarray,
              absorbing: int) -> bool:
    """``nxt`` from ``now`` (one state per trajectory) and one uniform per trajectory: ``s' =
    support[s, #(u > cum[s])]`` (the inverse CDF over the row's padded support,
    :meth:`FiniteMRP._sparse_rows`; strict ``>`` as the NumPy code it replaced, where
    ``envs.tabular.inverse_cdf`` counts ``cum <= u``). Returns whether every trajectory is
    now absorbed."""
    done = True
    for i in range(now.shape[0]):
        s = now[i]
        j = 0
        for k in range(cum.shape[1]):
            if u[i] > cum[s, k]:
                j += 1
        s_next = support[s, j]
        nxt[i] = s_next
        if s_next != absorbing:
            done = False
    return done


@njit(cache=True)
def first_visit_into(states: np.ndarray, steps: int, R: np.ndarray, gamma: float, absorbing: int,
                     ret: np.ndarray, vis: np.ndarray) -> None:
    """First-visit discounted returns of the trajectories of ``states`` (time-major, one
    column per trajectory): ``G_t = R(S_t, S_{t+1}) + γ G_{t+1}`` backwards from ``steps``,
    written at ``ret[i, S_t]`` for every non-absorbing ``S_t``, so the earliest visit is the
    one left (``vis`` marks the visited states)."""
    g = np.zeros(states.shape[1])
    for t in range(steps - 1, -1, -1):
        for i in range(states.shape[1]):
            s = states[t, i]
            g[i] = R[s, states[t + 1, i]] + gamma * g[i]
            if s != absorbing:
                ret[i, s] = g[i]
                vis[i, s] = True


def _check_sizes(sizes: np.ndarray, m: int) -> np.ndarray:
    sizes = np.asarray(sizes, dtype=np.int64).reshape(-1)
    if sizes.size == 0 or sizes.min() < 1 or sizes.max() > m:
        raise ValueError(f"batch sizes must lie in [1, {m}], got {sizes}")
    if np.any(np.diff(sizes) <= 0):
        raise ValueError(f"batch sizes must be strictly increasing, got {sizes}")
    return sizes


@dataclass(frozen=True)
class FirstVisitData:
    """Per-trajectory first-visit data: ``returns[i, s] = F_{i,s}`` (0 if not visited) and
    ``visited[i, s]``. One row per trajectory (per user)."""

    returns: np.ndarray
    visited: np.ndarray

    @property
    def m(self) -> int:
        return self.returns.shape[0]

    def prefix_stats(self, sizes: np.ndarray) -> BatchStats:
        """Statistics of the nested batches made of the first ``m`` trajectories, for every
        ``m`` in ``sizes`` at once (cumulative sums over trajectories)."""
        sizes = _check_sizes(sizes, self.m)
        # sums over the segments between consecutive sizes, then a cumulative sum over
        # segments: O(B·N) extra memory instead of a full (m, N) cumulative copy
        starts = np.concatenate([[0], sizes[:-1]])
        csum = np.cumsum(np.add.reduceat(self.returns[: sizes[-1]], starts, axis=0), axis=0)
        ccount = np.cumsum(np.add.reduceat(self.visited[: sizes[-1]], starts, axis=0, dtype=np.int64), axis=0)
        return BatchStats.from_sums(sizes, ccount, csum)

    def stats(self) -> BatchStats:
        return self.prefix_stats(np.array([self.m]))


@dataclass(frozen=True)
class BatchStats:
    """First-visit statistics of one or several batches (leading axis = batch).

    ``m`` batch sizes, ``counts[:, s] = m_s`` trajectories visiting ``s``,
    ``mean_returns[:, s] = F_X(s)`` (0 where ``m_s = 0``).
    """

    m: np.ndarray
    counts: np.ndarray
    mean_returns: np.ndarray

    @classmethod
    def from_sums(cls, m: np.ndarray, counts: np.ndarray, sums: np.ndarray) -> BatchStats:
        mean = np.divide(sums, counts, out=np.zeros_like(sums, dtype=float), where=counts > 0)
        return cls(np.atleast_1d(m), np.atleast_2d(counts), np.atleast_2d(mean))

    def __len__(self) -> int:
        return self.m.size


def chain_mrp(n_states: int = 40, p_right: float = 0.5, gamma: float = 0.99, max_len: int = 200, r_max: float = 1.0) -> FiniteMRP:
    """The chain of the paper's experiments (Balle et al. 2016, "Environment").

    States ``0..N-1``; ``N-1`` absorbing, ``N-2`` the goal. The evaluated policy moves right
    with probability ``p_right`` and stays otherwise; reward ``r_max`` on every transition
    into the goal (staying in it included); start uniform over non-absorbing states.
    """
    # n_states >= 3: a start, a goal and the absorbing state
    check_number("n_states", n_states, minimum=3, integer=True)
    if not 0 < p_right <= 1:
        raise ValueError(f"p_right must lie in (0, 1], got {p_right}")
    n = int(n_states)
    absorbing, goal = n - 1, n - 2
    P = np.zeros((n, n))
    idx = np.arange(absorbing)
    P[idx, idx] += 1.0 - p_right
    P[idx, idx + 1] += p_right
    P[absorbing, absorbing] = 1.0
    R = np.zeros((n, n))
    R[:, goal] = r_max * (P[:, goal] > 0)
    p0 = np.full(n, 1.0 / (n - 1))
    p0[absorbing] = 0.0
    return FiniteMRP(P, R, p0, gamma, absorbing, max_len, r_max)
