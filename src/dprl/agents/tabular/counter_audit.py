"""Audits of PUCB's private counters (``src/dprl/README.md``, "Privacy audits"; claim V1).

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

from dprl.agents.tabular import calibration as cal
from dprl.agents.tabular.statistics import _ctz, episode_indicators, feed_tree, laplace_into
from dprl.privacy.audit import AuditResult, audit, laplace_llr, nodes_from_releases
from dprl.privacy.audit_power import LaplacePair
from dprl.privacy.tree_counter import tree_levels


def _tree_sampler(stream: np.ndarray, scale: float):
    """Sampler for ``audit``: ``n`` independent runs of PUCB's own counter kernels
    (:func:`~dprl.agents.tabular.statistics.feed_tree` with
    :func:`~dprl.agents.tabular.statistics.laplace_into`, the code the compiled agent runs;
    the ``n·K`` counters advance as one array) on ``stream`` ``(T, K)``, returning their
    node values flattened to ``(n, T·K)``."""

    def sample(data: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
        T, K = data.shape
        N = n * K
        exact, suffix = np.zeros((tree_levels(T), N)), np.zeros((tree_levels(T), N))
        noise = np.empty(N)
        rel = np.empty((n, T, K))
        for t in range(1, T + 1):
            laplace_into(rng.standard_exponential(N), rng.standard_exponential(N), scale, noise)
            feed_tree(exact, suffix, t, np.ascontiguousarray(np.broadcast_to(data[t - 1], (n, K))).reshape(N), noise, True)
            rel[:, t - 1] = suffix[_ctz(t)].reshape(n, K)
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


def audit_counter(
    epsilon: float, H: int, T: int, l1_per_step: int, n: int, rng: np.random.Generator, noise_multiplier: float = 1.0
) -> AuditResult:
    """One PUCB counter at its level ``ε'``: streams ``(1, 0, ..., 0)`` vs all zeros.
    ``noise_multiplier`` != 1 builds a deliberately broken counter (tests)."""
    scale = cal.counter_scale(epsilon, H, T, l1_per_step) * noise_multiplier
    d0, d1 = counter_streams(T)
    return audit(_tree_sampler(d0, scale), d0, d1, cal.counter_epsilon(epsilon, H, l1_per_step), n=n, rng=rng,
                 statistics=_llr_statistic(d0, d1, scale))


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


def audit_episode(epsilon: float, S: int, A: int, H: int, T: int, l1_per_step: int, n: int, rng: np.random.Generator) -> AuditResult:
    """All ``2SAH + S²AH`` counters at ``ε' = counter_epsilon(ε, H, l1_per_step)``, audited
    against the claimed episode-level ``ε`` (Theorem 1)."""
    if S < 2:
        raise ValueError("the episode audit needs S >= 2 (two different trajectories)")
    scale = cal.counter_scale(epsilon, H, T, l1_per_step)
    d0, d1 = episode_streams(S, A, H, T)
    return audit(_tree_sampler(d0, scale), d0, d1, epsilon, n=n, rng=rng, statistics=_llr_statistic(d0, d1, scale))
