"""PUCB's privacy: exact accounting through the agent's statistics object, counter
audits (passing and deliberately broken) and an end-to-end JDP audit of the agent's
actions. All fast: a privacy bug must fail ``pytest -m "not slow"``."""

import functools
import itertools

import numpy as np
import pytest

from dprl.privacy.setting import PrivacySetting
from dprl.agents.tabular.agent import OptimisticAgent
from dprl.agents.tabular.build import build_agent
from dprl.agents.tabular.privacy import audit_counter, audit_episode, counters_only_env
from dprl.agents.tabular.statistics import PrivateStats
from dprl.experiments.accounting import accounted_epsilon as job_accounted_epsilon
from dprl.privacy.audit import audit
from dprl.runner.job import JobSpec
from dprl.privacy.tree_counter import tree_levels

S, A, H, T = 2, 2, 2, 8


def _released_vector(stats: PrivateStats) -> np.ndarray:
    rel = stats.release()
    return np.concatenate([rel.r.ravel(), rel.n.ravel(), rel.m.ravel()])


def _stream_element(states, actions, rewards) -> np.ndarray:
    """What PUCB's statistics object feeds its counters for one episode: its release
    after that single episode with the noise switched off."""
    src = PrivateStats(S, A, H, T, PrivacySetting(epsilon=1.0, calibration="tight"), 0.05, None, noise_multiplier=0.0)
    src.update(np.array(states), np.array(actions), np.array(rewards, dtype=float))
    return _released_vector(src)


@functools.cache
def replacement_l1_sensitivity() -> float:
    """Largest ℓ1 change of PUCB's stream element when one user's episode is replaced by
    another's (Definition 3), over every trajectory with rewards at the extremes {0, 1}
    (the ℓ1 change is convex in the rewards, so its maximum over [0, 1] is at a vertex)."""
    trajs = itertools.product(itertools.product(range(S), repeat=H + 1), itertools.product(range(A), repeat=H),
                              itertools.product((0.0, 1.0), repeat=H))
    x = np.array([_stream_element(*t) for t in trajs])
    return float(max(np.abs(x - row).sum(axis=1).max() for row in x))


def accounted_epsilon(epsilon: float, l1_per_step: int) -> float:
    """Exact pure-DP ε of PUCB's counters under replacement: one user's element enters at
    most ``L`` tree nodes, each node adds i.i.d. ``Lap(b)`` to every counter, so basic
    composition (tight for Laplace) gives ``L · Δ1 / b`` with ``b`` the scale the
    statistics object actually uses."""
    src = PrivateStats(S, A, H, T, PrivacySetting(epsilon=epsilon, calibration="tight"), 0.05, np.random.default_rng(0), l1_per_step=l1_per_step)
    return tree_levels(T) * replacement_l1_sensitivity() / src.scale


def test_exact_accounting_of_pucb_statistics_under_replacement():
    """The noise path the agent uses is ε-DP under replacement neighbours; the paper's
    printed ε' = ε/(3H) (Claim 1's add/remove ℓ1 bound) is only 2ε-DP: the check this
    test makes fails on it."""
    assert replacement_l1_sensitivity() == 2 * 3 * H  # ℓ1 2 per step in each of r̃, ñ, m̃
    for eps in (0.5, 1.0, 4.0):
        assert accounted_epsilon(eps, 2) == pytest.approx(eps, rel=1e-12)
        assert accounted_epsilon(eps, 1) == pytest.approx(2 * eps, rel=1e-12)
        # the accounting the workflow records and validates agrees with this brute force
        for l1 in (1, 2):
            spec = JobSpec("tabular_regret", "tabular_regret", {"name": "pucb", "l1_per_step": l1, "beta": 0.05, "bonus_scale": 1.0},
                           {"name": "garnet", "S": S, "A": A, "H": H, "branching": 2}, {"epsilon": eps, "calibration": "tight"},
                           {"episodes": T}, 0)
            assert job_accounted_epsilon(spec) == pytest.approx(accounted_epsilon(eps, l1), rel=1e-12)


def test_pucb_statistics_draw_the_noise_their_scale_says():
    """The accounting above reads ``scale``; the released noise must be Lap(scale):
    E|Lap(b)| = b, checked on 300 agents × 32 counters after one episode."""
    eps = 1.0
    x = _stream_element([0, 1, 0], [1, 0], [1.0, 0.0])
    rng = np.random.default_rng(1)
    noise = []
    for _ in range(300):
        src = PrivateStats(S, A, H, T, PrivacySetting(epsilon=eps, calibration="tight"), 0.05, rng)
        src.update(np.array([0, 1, 0]), np.array([1, 0]), np.array([1.0, 0.0]))
        noise.append(_released_vector(src) - x)
    noise = np.concatenate(noise)
    assert np.mean(np.abs(noise)) == pytest.approx(src.scale, rel=0.05)
    assert abs(np.median(noise)) < 0.05 * src.scale


def built_pucb(epsilon: float, S: int, A: int, H: int, T: int, l1_per_step: int = 2, noise_multiplier: float = 1.0):
    """A PUCB agent built by the factory; ``noise_multiplier`` != 1 cuts the noise of the
    agent's own counters after it is built (a test-only hook: a broken agent)."""
    built = build_agent("pucb", {"beta": 0.05, "bonus_scale": 1.0, "l1_per_step": l1_per_step},
                        PrivacySetting(epsilon=epsilon, calibration="tight"), counters_only_env(S, A, H), T,
                        np.random.default_rng(0), np.random.default_rng(0))
    built.agent.source.scale *= noise_multiplier
    return built


def test_one_counter_passes_and_half_noise_fails():
    ok = audit_counter(built_pucb(6.0, 2, 1, 1, 4), 50000, np.random.default_rng(0))  # ε' = 1
    assert ok.passed, ok
    broken = audit_counter(built_pucb(6.0, 2, 1, 1, 4, noise_multiplier=0.4), 50000, np.random.default_rng(1))
    assert not broken.passed, broken


def test_halved_counter_noise_fails_on_20_seeds():
    """One PUCB counter with half its noise (true ε 2ε'): ε_lb 1.67-1.9 ε' on 20 of 20 seeds
    at 2e4 runs (measured)."""
    broken = built_pucb(6.0, 2, 1, 1, 4, noise_multiplier=0.5)
    lbs = [audit_counter(broken, 20000, np.random.default_rng(s)).eps_lb for s in range(1, 21)]
    assert min(lbs) > 1.0, lbs  # ε' = 6/(6·1) = 1


def test_episode_composition_passes_and_paper_sensitivity_fails():
    """All counters of an episode at ε' = ε/(6H) pass at ε; the printed ε/(3H) (Claim 1's
    ℓ1 <= H, valid only for add/remove neighbours) fails under replacement neighbours
    (its exact ε is 2ε, but 12 small Laplace terms: at 1e5 runs its ε_lb was 1.14-1.33 ε
    on 8 seeds, at 4e4 runs only 0.71-1.21 ε)."""
    ok = audit_episode(built_pucb(1.0, 2, 1, 1, 2, 2), 100000, np.random.default_rng(2))
    assert ok.passed, ok
    printed = audit_episode(built_pucb(1.0, 2, 1, 1, 2, 1), 100000, np.random.default_rng(3))
    assert not printed.passed, printed


# ------------------------------------------------------------------- end-to-end JDP audit
# A one-state, two-action, H = 1 problem; T = 4 users. Users 1 and 2 answer r(0) = 0.6,
# r(1) = 0.4, so (without noise) action 0 leads after two episodes. User 3 is the one
# that changes: reward 1 (D) or 0 (D') for action 0. Without noise the action shown to
# user 4 is 0 under D and 1 under D'; the audit sees the actions of users 1, 2 and 4 (the
# view M_{-3} of Definition 3, the final policy being the action of episode 4's policy).

_USERS = {"D": [(0.6, 0.4), (0.6, 0.4), (1.0, 1.0), (0.5, 0.5)], "D'": [(0.6, 0.4), (0.6, 0.4), (0.0, 0.0), (0.5, 0.5)]}


def _agent_view(data: str, n: int, rng: np.random.Generator, epsilon: float, noise_multiplier: float) -> np.ndarray:
    out = np.empty((n, 3))
    users = _USERS[data]
    states = np.zeros(2, dtype=np.intp)
    for i in range(n):
        src = PrivateStats(1, 2, 1, 4, PrivacySetting(epsilon=epsilon, calibration="tight"), 0.05, rng, noise_multiplier=noise_multiplier)
        agent = OptimisticAgent(src, 0.05, 1e-6, rng)  # bonus_scale ~0: greedy, so the test has power
        seen = []
        for t, r in enumerate(users):
            a = int(agent.policy()[0, 0])
            if t != 2:
                seen.append(a)
            agent.observe(states, np.array([a]), np.array([r[a]]))
        out[i] = seen
    return out


def test_end_to_end_jdp_audit_of_pucb():
    eps = 1.0
    ok = audit(lambda d, n, rng: _agent_view(d, n, rng, eps, 1.0), "D", "D'", eps, n=2500, rng=np.random.default_rng(4))
    assert ok.passed, ok
    broken = audit(lambda d, n, rng: _agent_view(d, n, rng, eps, 1e-4), "D", "D'", eps, n=2500, rng=np.random.default_rng(5))
    assert not broken.passed, broken
