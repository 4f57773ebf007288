"""PUCB's privacy as the built agent holds it: its accounting and its audits (claim V1;
``src/dprl/README.md``, "Neighbouring relations: replacement" and "Privacy audits").

Every paper's agent package has this module, with the same two parts:

- :func:`held_calibration`: the calibration of the noise a built agent holds, read from
  its noise objects (here the agent's :class:`PrivateStats`: the Laplace scale the compiled
  loop runs with), whose ``accounted_epsilon``/``accounted_delta`` are the job's accounting;
- the neighbouring inputs of the audit (:func:`counter_streams`, :func:`episode_streams`)
  and the audits themselves, which draw from the built agent's own counters
  (:meth:`PrivateStats.replicas`: same scale, same horizon, same kernels).

The released view of the counters over ``T`` episodes is the sequence of prefix sums;
it is an invertible linear function of the noisy tree nodes (node of episode ``t`` =
release(t) − release(t − 2^{ctz t})), so we audit the node values, on which the
log-likelihood ratio under the claimed Laplace model is a sum over coordinates (the
optimal test, passed to the audit as an extra statistic).

Neighbours: user 1 replaced (Definition 3). Whole episode: user 1 stays in state 0 with
action 0 and reward 1 in ``D`` and in state 1 with reward 1 in ``D'``, so every step moves
2 entries of each of r̃, ñ, m̃; users 2..T are identical in both.
"""

from __future__ import annotations

import numpy as np

from dprl.agents.protocol import BuiltAgent
from dprl.agents.tabular import calibration as cal
from dprl.agents.tabular.statistics import PrivateStats, episode_indicators
from dprl.envs.tabular import TabularMDP
from dprl.privacy.audit import AuditResult, audit, laplace_llr, nodes_from_releases
from dprl.privacy.audit_power import LaplacePair
from dprl.privacy.kernels import sign_words


def held_calibration(built: BuiltAgent) -> cal.PUCBCalibration | None:
    """The calibration of the noise the built agent holds (``None`` for UBEV): read from
    its :class:`PrivateStats` (:meth:`PrivateStats.calibration`), not rebuilt from the config."""
    source = built.agent.source
    return source.calibration() if isinstance(source, PrivateStats) else None


def counters_only_env(S: int, A: int, H: int) -> TabularMDP:
    """An MDP of the audit's shape (uniform transitions, no reward): what PUCB needs to be
    built with ``2SAH + S²AH`` counters. The audit feeds the counters its own users
    (:func:`episode_streams`), never episodes of this MDP."""
    return TabularMDP(np.full((H, S, A, S), 1.0 / S), np.zeros((H, S, A)), np.full(S, 1.0 / S), name="pucb_counters")


def private_stats(built: BuiltAgent) -> PrivateStats:
    """The tree counters the built agent holds (``agent.source``: PUCB's, or a plug-in's that
    releases through dprl's counters), which the audits below examine."""
    source = getattr(built.agent, "source", None)
    if not isinstance(source, PrivateStats):
        raise ValueError("a privacy audit needs an agent holding dprl's tree counters (agent.source, a PrivateStats), "
                         f"got {type(source).__name__}")
    return source


def _tree_sampler(stats: PrivateStats):
    """Sampler for ``audit``: ``n`` independent runs of the agent's own counters
    (:meth:`PrivateStats.replicas`, the ``n·K`` counters advancing as one array, with the
    draw order of :meth:`PrivateStats.update`: ``E`` then the sign words) on a stream ``(T, K)``,
    returning their node values flattened to ``(n, T·K)``."""

    def sample(data: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
        T, K = data.shape
        N = n * K
        tree = stats.replicas(N)
        rel = np.empty((n, T, K))
        for t in range(1, T + 1):
            x = np.ascontiguousarray(np.broadcast_to(data[t - 1], (n, K))).reshape(N)
            tree.add(x, rng.standard_exponential(N), rng.random(sign_words(N)))
            rel[:, t - 1] = tree.release_values().reshape(n, K)
        return nodes_from_releases(rel).reshape(n, T * K)

    return sample


def _exact_nodes(data: np.ndarray) -> np.ndarray:
    rel = np.cumsum(data, axis=0)[None]
    return nodes_from_releases(rel).reshape(-1)


def _llr_statistic(d0: np.ndarray, d1: np.ndarray, scale: float):
    return {"laplace-llr": laplace_llr(_exact_nodes(d0), _exact_nodes(d1), scale)}


def counter_streams(T: int) -> tuple[np.ndarray, np.ndarray]:
    """One counter's streams: ``(1, 0, ..., 0)`` vs all zeros (the element at ``t = 1`` lies
    in all ``L`` nodes)."""
    d0 = np.zeros((T, 1))
    d0[0, 0] = 1.0
    return d0, np.zeros((T, 1))


def episode_streams(S: int, A: int, H: int, T: int) -> tuple[np.ndarray, np.ndarray]:
    """All counters' streams ``(T, 2SAH + S²AH)`` for the two neighbouring user sequences."""
    zeros_a = np.zeros(H, dtype=np.intp)
    others = episode_indicators(S, A, H, np.zeros(H + 1, dtype=np.intp), zeros_a, np.zeros(H))
    u0 = episode_indicators(S, A, H, np.zeros(H + 1, dtype=np.intp), zeros_a, np.ones(H))
    u1 = episode_indicators(S, A, H, np.ones(H + 1, dtype=np.intp), zeros_a, np.ones(H))
    d0 = np.tile(others, (T, 1))
    d1 = d0.copy()
    d0[0], d1[0] = u0, u1
    return d0, d1


def audited_pair(mechanism: str, epsilon: float, S: int, A: int, H: int, T: int, l1_per_step: int) -> LaplacePair:
    """The pair a V1 audit row examined, as node shifts in noise scales (for the audit's
    power, :func:`dprl.privacy.audit_power.detectable_inflation`): ``mechanism`` is
    ``counter`` (:func:`audit_counter`) or ``episode_*`` (:func:`audit_episode`; the
    printed-ε' variant uses ``l1_per_step = 1``)."""
    if mechanism == "counter":
        d0, d1 = counter_streams(T)
    else:
        d0, d1 = episode_streams(S, A, H, T)
        l1_per_step = 1 if mechanism == "episode_printed_eps_3H" else l1_per_step
    diff = np.abs(_exact_nodes(d0) - _exact_nodes(d1))
    return LaplacePair(tuple(diff[diff > 0] / cal.counter_scale(epsilon, H, T, l1_per_step)))


def audit_counter(built: BuiltAgent, n: int, rng: np.random.Generator) -> AuditResult:
    """One of the built agent's counters against its claimed level ``ε'``
    (:func:`calibration.counter_epsilon`): streams ``(1, 0, ..., 0)`` vs all zeros."""
    stats = private_stats(built)
    d0, d1 = counter_streams(stats.T)
    claimed = cal.counter_epsilon(stats.privacy.epsilon, stats.H, stats.l1_per_step)
    return audit(_tree_sampler(stats), d0, d1, claimed, n=n, rng=rng, statistics=_llr_statistic(d0, d1, stats.scale))


def audit_episode(built: BuiltAgent, n: int, rng: np.random.Generator) -> AuditResult:
    """All ``2SAH + S²AH`` counters of the built agent, audited against the claimed
    episode-level ``ε`` (Theorem 1) on the replacement pair of :func:`episode_streams`."""
    stats = private_stats(built)
    if stats.S < 2:
        raise ValueError("the episode audit needs S >= 2 (two different trajectories)")
    d0, d1 = episode_streams(stats.S, stats.A, stats.H, stats.T)
    return audit(_tree_sampler(stats), d0, d1, stats.privacy.epsilon, n=n, rng=rng,
                 statistics=_llr_statistic(d0, d1, stats.scale))
