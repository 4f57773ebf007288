"""PUCB's privacy: counter audits (passing and deliberately broken) and an end-to-end
JDP audit of the agent's actions."""

import numpy as np
import pytest

from dprl.agents.tabular.agent import OptimisticAgent
from dprl.agents.tabular.counter_audit import audit_counter, audit_episode
from dprl.agents.tabular.statistics import PrivateStats
from dprl.privacy.audit import audit


def test_one_counter_passes_and_half_noise_fails():
    ok = audit_counter(6.0, 1, 4, 2, 50000, np.random.default_rng(0))  # ε' = 1
    assert ok.passed, ok
    broken = audit_counter(6.0, 1, 4, 2, 50000, np.random.default_rng(1), noise_multiplier=0.4)
    assert not broken.passed, broken


@pytest.mark.slow
def test_episode_composition_passes_and_paper_sensitivity_fails():
    """All counters of an episode at ε' = ε/(6H) pass at ε; the printed ε/(3H) (Claim 1's
    ℓ1 <= H, valid only for add/remove neighbours) fails under replacement neighbours."""
    ok = audit_episode(1.0, 2, 1, 1, 2, 2, 100000, np.random.default_rng(2))
    assert ok.passed, ok
    printed = audit_episode(1.0, 2, 1, 1, 2, 1, 100000, np.random.default_rng(3))
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
        src = PrivateStats(1, 2, 1, 4, epsilon, "tight", 0.05, rng, noise_multiplier=noise_multiplier)
        agent = OptimisticAgent(src, 0.05, 1e-6, rng)  # bonus_scale ~0: greedy, so the test has power
        seen = []
        for t, r in enumerate(users):
            a = int(agent.policy()[0, 0])
            if t != 2:
                seen.append(a)
            agent.observe(states, np.array([a]), np.array([r[a]]))
        out[i] = seen
    return out


@pytest.mark.slow
def test_end_to_end_jdp_audit_of_pucb():
    eps = 1.0
    ok = audit(lambda d, n, rng: _agent_view(d, n, rng, eps, 1.0), "D", "D'", eps, n=2500, rng=np.random.default_rng(4))
    assert ok.passed, ok
    broken = audit(lambda d, n, rng: _agent_view(d, n, rng, eps, 1e-4), "D", "D'", eps, n=2500, rng=np.random.default_rng(5))
    assert not broken.passed, broken
