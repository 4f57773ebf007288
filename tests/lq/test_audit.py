"""Privacy audit of Private-OFU-RL's counters on *replacement* pairs (Definition 2), driven
through the agent's own noise path: the right mechanism passes, broken ones fail."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from dprl.privacy.setting import PrivacySetting
from dprl.agents.lq.build import build_agent
from dprl.agents.lq.calibration import sensitivities
from dprl.agents.lq.privacy import audit_counters, audit_system, regularizer_releases, replacement_pair
from dprl.privacy.replacement import CROSS_ALONE, GRAM_ALONE, JOINT

ARGS = dict(n=2, d=1, horizon=10, gamma=1.0, episodes=4, runs=10_000)


def _built(calibration, eps, sigma_scale=1.0):
    """Private-OFU-RL built by the factory for the audit's sizes; ``sigma_scale`` != 1 cuts
    the σ's of the agent's own regularizer after it is built (a test-only hook: a broken
    agent, whose claims stay those of the correct calibration)."""
    built = build_agent("private_ofu_rl", {"alpha": 0.1, "n_candidates": 1},
                        PrivacySetting(epsilon=eps, delta=1e-3, calibration=calibration),
                        audit_system(ARGS["n"], ARGS["d"], ARGS["horizon"], ARGS["gamma"]), ARGS["episodes"],
                        np.random.default_rng(0), np.random.default_rng(0))
    reg = built.agent.regularizer
    reg.calibration = dataclasses.replace(reg.calibration, sigma_gram=reg.calibration.sigma_gram * sigma_scale,
                                          sigma_target=reg.calibration.sigma_target * sigma_scale)
    return built


def _audit(built, seed=11):
    return audit_counters(built, ARGS["runs"], np.random.default_rng(seed))


@pytest.mark.parametrize("which, expected", [("B1", GRAM_ALONE), ("B2", CROSS_ALONE), ("joint", JOINT)])
def test_replacement_pairs_attain_the_worst_case(which, expected):
    (g0, c0), (g1, c1) = replacement_pair(which, 2, 1, 10, 1.0)
    d1, d2 = sensitivities(10, 1.0)
    got = (np.linalg.norm(g0 - g1) / d1) ** 2 * (which != "B2") + (np.linalg.norm(c0 - c1) / d2) ** 2 * (which != "B1")
    assert got == pytest.approx(expected)
    for z_norm in (np.sqrt(np.trace(g0) / 10), np.sqrt(np.trace(g1) / 10)):  # both are real users of norm 1+γ
        assert z_norm == pytest.approx(2.0)


def test_releases_are_the_regularizer_prefix_sums():
    built = _built("tight", 4.0)
    cal = built.calibration
    first, _ = replacement_pair("joint", 2, 1, 10, 1.0)
    out = regularizer_releases(built.agent.regularizer, first, 50_000, np.random.default_rng(0), "joint")
    iu = np.triu_indices(3)
    expected_gram = first[0][iu] + cal.regularizer.shift * np.eye(3)[iu]
    expected = np.tile(np.concatenate([expected_gram, first[1].ravel()]), 4)
    np.testing.assert_allclose(out.mean(0), expected, atol=0.05 * cal.regularizer.sigma_gram * 2)


@pytest.mark.parametrize("calibration", ["paper", "tight"])
def test_correct_counters_pass(calibration):
    res = _audit(_built(calibration, 4.0))
    assert all(r.passed for r in res.values()), {k: r.eps_lb for k, r in res.items()}


@pytest.mark.parametrize("seed", range(3))
def test_counters_with_half_the_noise_fail(seed):
    res = _audit(_built("tight", 4.0, sigma_scale=0.5), seed=seed)
    assert not any(r.passed for r in res.values()), {k: (r.epsilon, r.eps_lb) for k, r in res.items()}
