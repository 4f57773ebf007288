"""PUCB's privacy as the built agent holds it: its accounting and its audits (claim V1;
``src/dprl/README.md``, "Neighbouring relations: replacement" and "Privacy audits").

Every paper's agent package has this module, with the same two parts:

- :func:`held_calibration`: the calibration of the noise a built agent holds, read from
  its noise objects (here the agent's :class:`PrivateStats`: the Laplace scale the compiled
  loop runs with), whose ``accounted_epsilon``/``accounted_delta`` are the job's accounting
  before it runs; after it ran, :func:`ran_calibration` reads the scale the compiled loop's
  noise kernel (:func:`~dprl.agents.tabular.statistics.draw_laplace`) drew with and refuses
  the job if it is not the held one;
- the neighbouring inputs of the audit (:func:`counter_streams`, :func:`episode_streams`)
  and the audits themselves, which draw from the built agent's own counters
  (:meth:`PrivateStats.replicas`: same scale, same horizon) through the same noise kernel
  as the episode loop (:func:`drawn_calibration` reads what they drew).

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

import dataclasses

import numpy as np

from dprl.agents.protocol import BuiltAgent
from dprl.agents.tabular import calibration as cal
from dprl.agents.tabular.statistics import PrivateStats, episode_indicators
from dprl.envs.tabular import TabularMDP
from dprl.privacy.audit import AuditResult, audit, laplace_llr, nodes_from_releases
from dprl.privacy.audit_power import LaplacePair


def held_calibration(built: BuiltAgent) -> cal.PUCBCalibration | None:
    """The calibration of the noise the built agent holds (``None`` for UBEV): read from
    its :class:`PrivateStats` (:meth:`PrivateStats.calibration`), not rebuilt from the config."""
    source = built.agent.source
    return source.calibration() if isinstance(source, PrivateStats) else None


# Σ|noise| / Σ E equals the scale drawn with to a few units in the last place (draw_laplace);
# a scale farther than this from the held one was not the one held
DRAWN_SCALE_TOLERANCE = 1e-9


def drawn_calibration(stats: PrivateStats) -> cal.PUCBCalibration:
    """The calibration of the noise :func:`~dprl.agents.tabular.statistics.draw_laplace` has
    drawn for these counters (and their replicas): the held one (:meth:`PrivateStats.calibration`)
    if nothing was drawn or the scale drawn with equals the held scale to
    :data:`DRAWN_SCALE_TOLERANCE`, else the held one at the scale drawn with (its
    ``accounted_epsilon`` is the ε of the noise actually added)."""
    held = stats.calibration()
    drawn = stats.drawn_noise()
    if drawn.draws == 0 or abs(drawn.scale - held.scale) <= DRAWN_SCALE_TOLERANCE * held.scale:
        return held
    return dataclasses.replace(held, scale=drawn.scale)


def ran_calibration(built: BuiltAgent) -> cal.PUCBCalibration | None:
    """The calibration a job accounts after running ``built`` (``None`` for UBEV): the scale
    its compiled loop drew the counters' noise with (:func:`drawn_calibration`), which must be
    the scale the built agent held and was accounted with before the run
    (``built.calibration``), from standard exponentials. Raises (the job writes no result)
    when either fails: the loop added other noise than the one accounted."""
    stats = getattr(built.agent, "source", None)
    if not isinstance(stats, PrivateStats):
        return None
    ran, drawn = drawn_calibration(stats), stats.drawn_noise()
    # what the job was accounted with before it ran: PUCB's calibration, or a plug-in's counters
    accounted = built.calibration.scale if isinstance(built.calibration, cal.PUCBCalibration) else stats.scale
    if abs(ran.scale - accounted) > DRAWN_SCALE_TOLERANCE * accounted:
        raise ValueError(f"PUCB's counters drew their Laplace noise with scale {ran.scale:.6g}, but the agent holds and was "
                         f"accounted with scale {accounted:.6g} (accounted epsilon {ran.accounted_epsilon:.6g} at the scale "
                         f"drawn, nominal {stats.privacy.epsilon:g}): the noise the compiled loop adds is not the "
                         "calibrated noise; result not written")
    if not drawn.exponentials_standard():
        raise ValueError(f"PUCB's counters drew {drawn.draws} exponentials of mean {drawn.mean_exponential:.6g}, outside "
                         "the central 1 - 2e-12 of their Gamma law (standard exponentials have mean 1): the Laplace noise "
                         "the compiled loop adds is not Lap(scale); result not written")
    return ran


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
    (:meth:`PrivateStats.replicas`, the ``n·K`` counters advancing as one array) on a stream
    ``(T, K)``, their noise drawn from the audit's generator by the kernel of the compiled
    episode loop (:meth:`PrivateStats.feed`, :func:`~dprl.agents.tabular.statistics.draw_laplace`;
    recorded in ``stats.drawn``), returning their node values flattened to ``(n, T·K)``."""

    def sample(data: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
        T, K = data.shape
        N = n * K
        tree = stats.replicas(N)
        rel = np.empty((n, T, K))
        for t in range(1, T + 1):
            tree.feed(np.ascontiguousarray(np.broadcast_to(data[t - 1], (n, K))).reshape(N), rng)
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
