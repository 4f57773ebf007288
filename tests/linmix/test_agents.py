"""LinOpt-VI/PO agents: estimation, privacy structure, noise-free equivalence, determinism."""

import inspect

import numpy as np
import pandas as pd
import pytest

from linmix_reference import reference_run_episodes

from dprl.agents.linmix.linopt import LinOptAgent, plan
from dprl.agents.linmix.loop import plan_into
from dprl.agents.linmix.build import build_agent
from dprl.experiments.linmix.spec import AGENTS
from dprl.agents.linmix.episodes import run_episodes
from dprl.envs.linear_mixture import make_mixture, make_tabular_as_linear
from dprl.experiments.linmix.jobs import run_regret
from dprl.privacy.regularizer import NonPrivateRegularizer, RegularizerCalibration
from dprl.runner.job import JobContext, JobSpec
from dprl.privacy.setting import PrivacySetting
from dprl.runner.checkpoints import log_checkpoints


def test_tabular_vtr_estimate_matches_empirical_counts():
    """On tabular_as_linear, with one value function V held fixed, the VTR ridge estimate
    in the direction V is the empirical-count prediction <V, P̂(.|s,a)> shrunk by
    n|V|²/(λ + n|V|²) (the regression is block-diagonal over (s, a))."""
    env = make_tabular_as_linear(3, 2, 2, np.random.default_rng(0))
    lam = 1e-3
    setup = build_agent("ucrl_vtr", {**AGENTS["ucrl_vtr"].defaults(), "lam": lam}, None, env, 400, np.random.default_rng(1), np.random.default_rng(2))
    agent = setup.agent
    V = np.array([0.3, 1.7, 0.9])
    rng = np.random.default_rng(3)
    counts = np.zeros((env.S, env.A, env.S))
    for _ in range(400):
        p = agent.begin_episode()
        p.V[1] = V  # hold V^k_2 fixed so the targets are V(s')
        p.phi_p[0] = np.einsum("sait,t->sai", env.psi, V)
        s = env.s1
        a = int(rng.integers(env.A))
        r, s2 = env.step(s, a, rng.random(), rng.random())
        a2 = int(rng.integers(env.A))
        r2, s3 = env.step(s2, a2, rng.random(), rng.random())
        counts[s, a, s2] += 1
        agent.end_episode(np.array([s, s2, s3]), np.array([a, a2]), np.array([r, r2]))
    stats = agent.reg_p.release()
    theta = np.linalg.solve(stats.gram[0], stats.target[0])[:, 0]
    for a in range(env.A):
        n = counts[env.s1, a].sum()
        assert n > 50
        p_hat = counts[env.s1, a] / n
        block = theta[(env.s1 * env.A + a) * env.S:(env.s1 * env.A + a + 1) * env.S]
        shrink = n * V @ V / (lam + n * V @ V)
        assert block @ V == pytest.approx(shrink * p_hat @ V, rel=1e-9)


@pytest.mark.parametrize("name", ["private_linopt_vi", "private_linopt_po", "ldp_linopt_vi"])
def test_private_regularizer_without_noise_reproduces_nonprivate(name):
    env = make_mixture(8, 3, 2, 2, 3, np.random.default_rng(0))
    K, lam = 60, 2.0
    base = "ucrl_vtr" if "vi" in name else "oppo"
    cal = RegularizerCalibration(1.0, 1.0, lam, lam, lam, 0.0)
    runs = []
    for alg, kw in ((base, {**AGENTS[base].defaults(), "lam": lam}), (name, AGENTS[name].defaults())):
        setup = build_agent(alg, kw, None, env, K, np.random.default_rng(1), np.random.default_rng(2),
                            noise=False, override=(cal, cal))
        df = run_episodes(setup, env, K, np.random.default_rng(3), log_checkpoints(K, 10), record_actions=True)
        runs.append(df)
    np.testing.assert_array_equal(runs[0].attrs["actions"], runs[1].attrs["actions"])
    np.testing.assert_allclose(runs[0]["regret"], runs[1]["regret"], rtol=1e-9, atol=1e-9)


class _Guard:
    """A regularizer proxy that only allows the Regularizer interface."""

    ALLOWED = {"observe", "release", "batch_shape", "p", "q", "n_repaired", "n_not_pd"}  # repair counts: not data

    def __init__(self, inner):
        object.__setattr__(self, "_inner", inner)
        object.__setattr__(self, "calls", [])

    def __getattr__(self, name):
        if name not in self.ALLOWED:
            raise AssertionError(f"agent read {name!r} of the regularizer")
        self.calls.append(name)
        return getattr(self._inner, name)


def test_agent_reads_only_released_statistics():
    # the planner's only data arguments are the two released RegularizedStats ...
    params = list(inspect.signature(plan).parameters)
    assert params == ["feat", "stats_p", "stats_r", "beta_p", "beta_r", "policy"]
    # ... and the compiled kernel's: public features, the released (gram, target) pairs, the
    # radii, the current policy, its outputs and work arrays (plan_work: scratch, each written
    # before it is read in every call)
    kernel = list(inspect.signature(plan_into.py_func).parameters)
    assert kernel == ["psi_cols_ptr", "psi_cols", "psi_rows_ptr", "psi_row_ids", "psi_values", "psi_row_pattern",
                      "psi_row_offset", "phi_rT", "gram_p", "target_p", "gram_r", "target_r",
                      "beta_p", "beta_r", "po", "policy", "Q", "V", "phis", "work"]
    env = make_mixture(6, 2, 2, 2, 2, np.random.default_rng(0))
    feat = env.features()
    gp, gr = _Guard(NonPrivateRegularizer((2,), 2, 1, 1.0)), _Guard(NonPrivateRegularizer((2,), 2, 1, 1.0))
    agent = LinOptAgent(feat, 20, gp, gr, "vi", 0.05, np.random.default_rng(0))
    # the step-by-step loop drives the agent through the Regularizer interface only
    reference_run_episodes(env, type("S", (), {"agent": agent})(), 20, np.random.default_rng(1), np.random.default_rng(2), 5)
    assert set(gp.calls) <= _Guard.ALLOWED and "release" in gp.calls and "observe" in gp.calls
    # no raw statistics kept by the agent itself
    assert not any(isinstance(v, np.ndarray) and v.shape[-2:] == (2, 2) for v in vars(agent).values())


def test_po_policy_is_mirror_descent_of_q():
    env = make_mixture(5, 3, 2, 2, 2, np.random.default_rng(0))
    setup = build_agent("oppo", AGENTS["oppo"].defaults(), None, env, 10, np.random.default_rng(1), np.random.default_rng(2))
    agent = setup.agent
    pi0 = agent.policy.copy()
    np.testing.assert_allclose(pi0, 1 / 3)
    p = agent.begin_episode()
    agent.end_episode(np.zeros(3, dtype=int), np.zeros(2, dtype=int), np.zeros(2))
    expected = pi0 * np.exp(agent.eta * p.Q)
    expected /= expected.sum(axis=2, keepdims=True)
    np.testing.assert_allclose(agent.policy, expected)


def _spec(alg: str, privacy, seed: int = 0) -> JobSpec:
    return JobSpec("linmix_regret", "linmix_regret", {"name": alg, **AGENTS[alg].defaults()},
                   {"name": "mixture", "S": 6, "A": 3, "d1": 2, "d2": 2, "H": 2, "concentration": 0.5},
                   privacy, {"episodes": 150, "checkpoints": 8}, seed)


def test_job_is_deterministic_and_uses_common_random_numbers():
    priv = PrivacySetting(epsilon=100.0, delta=1e-5, calibration="tight")
    a = run_regret(JobContext(_spec("private_linopt_vi", priv)))
    b = run_regret(JobContext(_spec("private_linopt_vi", priv)))
    pd.testing.assert_frame_equal(a, b)
    c = run_regret(JobContext(_spec("private_linopt_vi", priv, seed=1)))
    assert not a["regret"].equals(c["regret"])
    # same seed, different algorithm: the same instance (v_star) from the env stream
    d = run_regret(JobContext(_spec("ucrl_vtr", None)))
    assert d["optimal_value"].iloc[0] == a["optimal_value"].iloc[0]
    assert (a["regret"] >= -1e-9).all() and a["regret"].is_monotonic_increasing


@pytest.mark.parametrize("env", [
    {"name": "hard_linear", "d": 3, "H": 3, "K_ref": 1000},
    {"name": "tabular_as_linear", "S": 3, "A": 2, "H": 2},
])
@pytest.mark.parametrize("alg", ["ucrl_vtr", "private_linopt_po", "ldp_linopt_vi"])
def test_agents_run_on_every_environment(env, alg):
    priv = None if alg == "ucrl_vtr" else PrivacySetting(epsilon=10.0, delta=1e-5, calibration="paper")
    declared = AGENTS[alg].defaults()  # what the loader fills in
    spec = JobSpec("linmix_regret", "linmix_regret", {"name": alg, **declared}, env, priv, {"episodes": 40, "checkpoints": 5}, 0)
    df = run_regret(JobContext(spec))
    assert len(df) == 5 and np.isfinite(df["regret"]).all() and (df["regret"] >= -1e-9).all()
