"""The compiled LinOpt loop against its NumPy reference (``linmix_reference.py``): the same
actions in every episode and regret equal to round-off, for the non-private, central
(JDP) and local (LDP) privatizers, VI and PO; the Regularizers' state after the run is the
reference's."""

import numpy as np
import pytest
from linmix_reference import ReferenceAgent, reference_run_episodes

from dprl.agents.linmix import episodes as linmix_episodes
from dprl.agents.linmix.build import build_agent
from dprl.experiments.linmix.spec import AGENTS
from dprl.agents.linmix.episodes import run_episodes
from dprl.envs.linear_mixture import make_env
from dprl.privacy.regularizer import RegularizerCalibration
from dprl.privacy.setting import PrivacySetting
from dprl.runner.checkpoints import log_checkpoints

ALGS = ["ucrl_vtr", "oppo", "private_linopt_vi", "private_linopt_po", "ldp_linopt_vi", "ldp_linopt_po"]
MIXTURE = {"S": 8, "A": 3, "d1": 2, "d2": 2, "H": 3, "concentration": 0.5}


def _both(name, privacy, env_name="mixture", params=MIXTURE, K=300, seed=0, override=None):
    env = make_env(env_name, params, np.random.default_rng(seed))
    runs = []
    for ref in (False, True):
        setup = build_agent(name, AGENTS[name].defaults(), privacy, env, K, np.random.default_rng(seed + 1), np.random.default_rng(seed + 2),
                            override=override)
        if ref:
            setup.agent.__class__ = ReferenceAgent
            df = reference_run_episodes(env, setup, K, np.random.default_rng(seed + 3), np.random.default_rng(seed + 1), 12,
                                        record_actions=True)
        else:
            df = run_episodes(setup, env, K, np.random.default_rng(seed + 3), log_checkpoints(K, 12), record_actions=True)
        runs.append((df, setup.agent))
    return runs


def _assert_equal_to_round_off(new, ref):
    (a, agent_a), (b, agent_b) = new, ref
    np.testing.assert_array_equal(a.attrs["actions"], b.attrs["actions"])
    np.testing.assert_allclose(a["regret"], b["regret"], rtol=1e-10, atol=1e-10)
    for col in ("episode", "T", "sampled_return", "optimal_value", "beta_p", "beta_r", "n_repaired", "n_not_pd"):
        np.testing.assert_array_equal(a[col], b[col], err_msg=col)
    # the Privatizer's state after the run (the compiled loop updates it in place)
    for ra, rb in ((agent_a.reg_p, agent_b.reg_p), (agent_a.reg_r, agent_b.reg_r)):
        sa, sb = ra.release(), rb.release()
        np.testing.assert_allclose(sa.gram, sb.gram, rtol=1e-10, atol=1e-10)
        np.testing.assert_allclose(sa.target, sb.target, rtol=1e-10, atol=1e-10)
        assert (ra.n_users, ra.n_repaired, ra.n_not_pd) == (rb.n_users, rb.n_repaired, rb.n_not_pd)
    if agent_a.mode == "po":
        np.testing.assert_allclose(agent_a.log_policy, agent_b.log_policy, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("epsilon", [10.0, 1e6])
@pytest.mark.parametrize("name", ALGS)
def test_compiled_linopt_equals_reference_to_round_off(name, epsilon):
    """300 episodes (tight calibration): every action identical, regret to round-off. At
    ε = 10 the bonuses clip every Q (ties, random priorities); at ε = 10⁶ the estimates and
    bonuses decide the actions (the positive control below shows it)."""
    privacy = None if name in ("ucrl_vtr", "oppo") else PrivacySetting(epsilon=epsilon, delta=1e-5, calibration="tight")
    new, ref = _both(name, privacy)
    assert np.unique(ref[0].attrs["actions"], axis=0).shape[0] > 1  # the agent does change its actions
    _assert_equal_to_round_off(new, ref)


@pytest.mark.parametrize("name", ["ucrl_vtr", "private_linopt_vi", "ldp_linopt_po"])
def test_a_loop_with_other_radii_is_caught(monkeypatch, name):
    """Positive control: the compiled loop with confidence radii 10% too large (a broken
    variant) no longer matches the reference, so the equivalence test has power."""
    privacy = None if name == "ucrl_vtr" else PrivacySetting(epsilon=1e6, delta=1e-5, calibration="tight")
    radii = linmix_episodes.confidence_radii
    monkeypatch.setattr(linmix_episodes, "confidence_radii", lambda *a: tuple(1.1 * b for b in radii(*a)))
    (new, _), (ref, _) = _both(name, privacy)
    assert not np.array_equal(new.attrs["actions"], ref.attrs["actions"])


@pytest.mark.parametrize("name", ["private_linopt_vi", "ldp_linopt_po"])
def test_compiled_linopt_floors_the_same_releases(name):
    """A calibration whose noise leaves the good event (tiny λ_min margin): releases are
    floored, and the compiled loop floors the same ones."""
    cal = RegularizerCalibration(sigma_gram=3.0, sigma_target=3.0, shift=1.0, lam_min=0.9, lam_max=1.5, nu=1.0)
    new, ref = _both(name, None, K=200, override=(cal, cal))
    assert ref[0]["n_repaired"].iloc[-1] > 0
    _assert_equal_to_round_off(new, ref)


@pytest.mark.parametrize("env_name,params", [
    ("hard_linear", {"d": 3, "H": 3, "K_ref": 1000}),
    ("tabular_as_linear", {"S": 3, "A": 2, "H": 2}),
])
def test_compiled_linopt_equals_reference_on_other_instances(env_name, params):
    new, ref = _both("private_linopt_vi", PrivacySetting(epsilon=10.0, delta=1e-5, calibration="paper"), env_name, params, K=200)
    _assert_equal_to_round_off(new, ref)


def test_final_regret_over_seeds_is_indistinguishable():
    """Final regret of the compiled and reference loops over 6 seeds (600 episodes,
    Private-LinOpt-PO and -VI): the paired differences are at round-off, far below the
    seed-to-seed spread."""
    for name in ("private_linopt_vi", "private_linopt_po"):
        finals = np.array([[df["regret"].iloc[-1] for df, _ in _both(name, PrivacySetting(epsilon=1e6, delta=1e-5, calibration="tight"),
                                                                      K=600, seed=seed)] for seed in range(6)])
        diff = finals[:, 0] - finals[:, 1]
        assert np.abs(diff).max() <= 1e-8 * max(1.0, np.abs(finals).max()), diff
        assert finals[:, 1].std() > 1e3 * np.abs(diff).max()  # the seeds do differ


def test_compiled_loop_rejects_more_episodes_than_the_tree_horizon():
    env = make_env("mixture", MIXTURE, np.random.default_rng(0))
    setup = build_agent("private_linopt_vi", AGENTS["private_linopt_vi"].defaults(), PrivacySetting(epsilon=10.0, delta=1e-5, calibration="tight"), env, 50,
                        np.random.default_rng(1), np.random.default_rng(2))
    with pytest.raises(ValueError, match="horizon"):
        run_episodes(setup, env, 51, np.random.default_rng(3), log_checkpoints(51, 30))
    with pytest.raises(ValueError, match="checkpoints"):
        run_episodes(setup, env, 40, np.random.default_rng(3), np.array([3, 2]))
    with pytest.raises(ValueError, match="unknown linear-mixture algorithm"):
        build_agent("linopt", {}, None, env, 50, np.random.default_rng(1), np.random.default_rng(2))
