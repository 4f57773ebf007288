import inspect

import numpy as np
import pandas as pd
import pytest

from dprl.agents.tabular import calibration as cal
from dprl.agents.tabular.agent import OptimisticAgent
from dprl.agents.tabular.build import build_agent
from dprl.agents.tabular.episodes import feed_episodes
from dprl.agents.tabular.planner import greedy_policy, priv_q, priv_q_into
from dprl.agents.tabular.statistics import PrivateStats, ReleasedStats
from dprl.envs.tabular import garnet, riverswim
from dprl.experiments.tabular import jobs
from dprl.runner.job import JobContext, JobSpec
from dprl.runner.online import EpisodeRecord
from dprl.privacy.setting import PrivacySetting


def _released(r: np.ndarray, n: np.ndarray, m: np.ndarray, e: float) -> ReleasedStats:
    H, S, A = n.shape
    return ReleasedStats(np.concatenate([r.ravel(), n.ravel(), m.ravel()]), e, S, A, H)


def test_ubev_finds_optimal_policy_on_riverswim():
    """Exact counts, many episodes: the committed policies become optimal up to the
    0.005-reward decisions in rarely visited (s, h) (which UBEV's bonus resolves only after
    far more visits); the swim-right decision from the start state is learned."""
    env = riverswim(S=2, H=3)
    agent = build_agent("ubev", {"beta": 0.05, "bonus_scale": 1.0}, None, env, 20000, np.random.default_rng(0), None).agent
    log = feed_episodes(agent, env, 20000, np.random.default_rng(1), EpisodeRecord())
    rho = env.optimal_value
    assert log.gap[:100].mean() > 0.5 * rho
    assert log.gap[-1000:].mean() < 0.02 * rho
    assert agent.policy()[0, 0] == env.optimal_q[0, 0].argmax() == 1


def test_pucb_without_noise_reproduces_ubev_exactly():
    env = garnet(np.random.default_rng(0), S=4, A=2, H=3, branching=2)
    T = 600
    ub = build_agent("ubev", {"beta": 0.05, "bonus_scale": 1.0}, None, env, T, np.random.default_rng(5), None).agent
    src = PrivateStats(env.S, env.A, env.H, T, PrivacySetting(epsilon=1.0, calibration="tight"), 0.05, None, noise_multiplier=0.0)
    pu = OptimisticAgent(src, 0.05, 1.0, np.random.default_rng(5))
    a = feed_episodes(ub, env, T, np.random.default_rng(9), EpisodeRecord())
    b = feed_episodes(pu, env, T, np.random.default_rng(9), EpisodeRecord())
    assert np.array_equal(a.gap, b.gap) and np.array_equal(a.ret, b.ret)
    ra, rb = ub.source.release(), pu.source.release()
    assert np.array_equal(ra.n, rb.n) and np.array_equal(ra.m, rb.m) and np.array_equal(ra.r, rb.r) and rb.e == 0.0


def test_planner_reads_only_released_statistics():
    # structural: the planner's only data argument is a ReleasedStats ...
    params = list(inspect.signature(priv_q).parameters)
    assert params == ["stats", "beta", "bonus_scale", "n_actions"]  # n_actions: the MDP's public action sets
    assert inspect.signature(priv_q).parameters["stats"].annotation in (ReleasedStats, "ReleasedStats")
    # the compiled kernel's only array inputs are the release (rel) and its scratch/output
    kernel = list(inspect.signature(priv_q_into.py_func).parameters)
    # (memo, memo_conf: the confidence widths it computed on exact counts, keyed by the released ñ)
    assert kernel == ["rel", "E", "S", "A", "H", "n_actions", "log_sah_beta", "bonus_scale", "Q", "V", "memo", "memo_conf"]
    # ... whose arrays are read-only views
    src = PrivateStats(3, 2, 2, 16, PrivacySetting(epsilon=1.0, calibration="tight"), 0.05, np.random.default_rng(0))
    rel = src.release()
    for x in (rel.r, rel.n, rel.m):
        with pytest.raises(ValueError):
            x[...] = 0.0

    # ... and the agent touches its source only through release() (and update() to feed it)
    class Recorder:
        S, A, H = 3, 2, 2

        def __init__(self):
            self.calls = []

        def release(self):
            self.calls.append("release")
            return _released(np.ones((2, 3, 2)), np.full((2, 3, 2), 5.0), np.ones((2, 3, 2, 3)), 0.0)

        def __getattr__(self, name):
            raise AssertionError(f"agent read {name!r} from its statistics source")

    rec = Recorder()
    OptimisticAgent(rec, 0.05, 1.0, np.random.default_rng(0)).policy()
    assert rec.calls == ["release"]


def test_policy_is_a_function_of_the_release():
    """Two sources with different hidden data but the same release give the same policy."""
    rel = _released(np.ones((2, 3, 2)), np.full((2, 3, 2), 9.0), np.full((2, 3, 2, 3), 3.0), 1.0)
    Q1 = priv_q(rel, 0.05)
    Q2 = priv_q(_released(rel.r.copy(), rel.n.copy(), rel.m.copy(), 1.0), 0.05)
    assert np.array_equal(Q1, Q2)
    keys = np.random.default_rng(0).random(Q1.shape)
    assert np.array_equal(greedy_policy(Q1, keys), greedy_policy(Q2, keys))


def test_privq_unknown_pairs_are_optimistic():
    # noisy counts below 2E (even negative) give Q+ = H, never a negative value
    H, S, A = 3, 2, 2
    n = np.full((H, S, A), -4.0)
    rel = _released(np.full((H, S, A), 50.0), n, np.zeros((H, S, A, S)), 10.0)
    assert np.all(priv_q(rel, 0.05) == H)


def test_paper_E_eps_is_vacuous_and_tight_is_smaller():
    S, A, H, T, beta = 6, 2, 4, 10**5, 0.05
    paper = cal.e_eps_paper(1.0, S, A, H, T, beta)
    tight = cal.e_eps_tight(1.0, S, A, H, T, beta)
    assert tight.max() < paper
    assert 2 * paper > T  # V4's premise: the known branch is never reached at this T
    assert cal.first_exploit_episode(PrivacySetting(epsilon=1.0, calibration="paper"), S, A, H, T, beta) == np.inf


def test_first_exploit_episode_tight():
    S, A, H, T, beta = 4, 2, 2, 10**5, 0.05
    e = cal.e_eps_tight(10.0, S, A, H, T, beta)
    t = cal.first_exploit_episode(PrivacySetting(epsilon=10.0, calibration="tight"), S, A, H, T, beta)
    assert 1 < t < T
    t = int(t)
    assert t - 1 >= 2 * e[t] and t - 2 < 2 * e[t - 1]


def test_tight_E_bounds_the_noise_actually_added():
    """Empirical check of E_t's validity at a large per-counter level."""
    S, A, H, T, beta = 2, 1, 1, 8, 0.05
    e = cal.e_eps_tight(1.0, S, A, H, T, beta)
    level = beta / (cal.n_counters(S, A, H) * T)
    rng = np.random.default_rng(0)
    src = PrivateStats(S, A, H, T, PrivacySetting(epsilon=1.0, calibration="tight"), beta, rng)
    b = src.scale
    k = 4  # L for T = 8: the bound used for every release
    sums = b * (rng.standard_exponential((400000, k)) - rng.standard_exponential((400000, k))).sum(1)
    assert np.mean(np.abs(sums) > e[8]) <= level
    assert np.mean(np.abs(sums) > 0.5 * e[8]) > level  # and it is not absurdly loose


def _spec(alg, privacy, seed=0, T=300):
    return JobSpec("tabular_regret", "tabular_regret", alg, {"name": "garnet", "S": 4, "A": 2, "H": 3, "branching": 2},
                   privacy, {"episodes": T, "checkpoints": 10}, seed)


def test_job_is_deterministic_and_uses_common_random_numbers():
    pucb = {"name": "pucb", "beta": 0.05, "bonus_scale": 1.0, "l1_per_step": 2}
    priv = PrivacySetting(epsilon=10.0, calibration="tight")
    a = jobs.run_regret(JobContext(_spec(pucb, priv)))
    b = jobs.run_regret(JobContext(_spec(pucb, priv)))
    pd.testing.assert_frame_equal(a, b)
    c = jobs.run_regret(JobContext(_spec(pucb, priv, seed=1)))
    assert not a["regret"].equals(c["regret"])
    ub = jobs.run_regret(JobContext(_spec({"name": "ubev", "beta": 0.05, "bonus_scale": 1.0}, None)))
    assert ub["optimal_value"].iloc[0] == a["optimal_value"].iloc[0]  # same instance for both algorithms


def test_width_memo_matches_fresh_widths_when_counts_or_e_change():
    """``priv_q_into`` reuses a pair's confidence width only for the same released ``ñ`` and
    ``E = 0`` (exact counts): after counts change, and after ``E`` changes, the result equals
    a planner with an empty memo. Positive control: a memo whose widths were planted wrong
    (what a key that ignored ``ñ`` would return) changes ``Q``."""
    from dprl.agents.tabular.planner import log_term, new_memo

    S, A, H = 3, 2, 2
    rng = np.random.default_rng(0)
    sah = S * A * H
    rel = np.concatenate([rng.random(sah) * 50, 60 + rng.random(sah) * 40, rng.random(sah * S) * 30])
    na = np.full(S, A, dtype=np.int64)
    lt = log_term(S, A, H, 0.05)

    def plan(rel, E, memo):
        Q = np.empty((H, S, A))
        priv_q_into(rel, E, S, A, H, na, lt, 1.0, Q, np.empty((2, S)), *memo)
        return Q

    warm = new_memo(S, A, H)
    plan(rel, 0.0, warm)
    rel2 = rel.copy()
    rel2[sah:sah + 3] += 1.0  # three counts change
    for r, E in ((rel, 0.0), (rel2, 0.0), (rel2, 2.0), (rel2, 0.0)):
        assert np.array_equal(plan(r, E, warm), plan(r, E, new_memo(S, A, H)))
    bad = new_memo(S, A, H)
    plan(rel, 0.0, bad)
    bad[1][:] *= 1.5
    assert not np.array_equal(plan(rel, 0.0, bad), plan(rel, 0.0, new_memo(S, A, H)))
