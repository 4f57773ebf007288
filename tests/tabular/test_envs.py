import numpy as np
import pytest

from dprl.envs.bandit import BernoulliBandit, mab
from dprl.envs.tabular import TabularMDP, garnet, lowerbound, lowerbound_optimal_value, riverswim


def _tiny():
    P = np.zeros((2, 2, 1, 2))
    P[..., 0] = 1.0
    return P, np.zeros((2, 2, 1)), np.array([1.0, 0.0])


def test_validation_messages():
    P, R, p0 = _tiny()
    bad = P.copy()
    bad[0, 0, 0] = [0.5, 0.4]
    with pytest.raises(ValueError, match="probability vector"):
        TabularMDP(bad, R, p0)
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        TabularMDP(P, R + 1.5, p0)
    with pytest.raises(ValueError, match="p0"):
        TabularMDP(P, R, np.array([0.7, 0.7]))
    with pytest.raises(ValueError, match="H must be >= 1"):
        riverswim(S=4, H=0)
    with pytest.raises(ValueError, match="branching"):
        garnet(np.random.default_rng(0), S=3, branching=4)
    with pytest.raises(ValueError, match="gap"):
        lowerbound(np.random.default_rng(0), gap=0.0)
    with pytest.raises(ValueError, match="at least 2 arms"):
        BernoulliBandit(np.array([0.5]))
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        BernoulliBandit(np.array([0.5, 1.2]))


def test_lowerbound_optimal_value_matches_paper():
    for seed in range(5):
        env, I = lowerbound(np.random.default_rng(seed), n=3, m=2, gap=0.3, H=4)
        assert env.optimal_value == pytest.approx(lowerbound_optimal_value(I, 0.3, 4), abs=1e-12)
        # the optimal first action is I_s where I_s != 0, else 0
        Q = env.optimal_q[0]
        for s in range(3):
            assert np.argmax(Q[s]) == I[s]
    # returns are H or 0 (reward 1 for every transition into +)
    env, I = lowerbound(np.random.default_rng(1), n=2, m=1, gap=0.4, H=3)
    u = env.draw_uniforms(np.random.default_rng(2), 200)
    pi = np.zeros((3, 4), dtype=int)
    totals = {env.rollout(pi, row)[2].sum() for row in u}
    assert totals == {0.0, 3.0}


def test_policy_value_of_optimal_policy_and_monte_carlo():
    env = garnet(np.random.default_rng(3), S=5, A=3, H=4, branching=2)
    pi_star = env.optimal_q.argmax(-1)
    assert env.policy_value(pi_star) == pytest.approx(env.optimal_value)
    u = env.draw_uniforms(np.random.default_rng(4), 20000)
    mc = np.mean([env.rollout(pi_star, row)[2].sum() for row in u])
    assert mc == pytest.approx(env.optimal_value, abs=0.05)


def test_riverswim_optimal_is_swim_right():
    env = riverswim(S=4, H=12)
    assert np.all(env.optimal_q[0].argmax(-1) == 1)


def test_instances_depend_only_on_rng():
    a = garnet(np.random.default_rng(7), S=6, A=2, H=3)
    b = garnet(np.random.default_rng(7), S=6, A=2, H=3)
    assert np.array_equal(a.P, b.P) and np.array_equal(a.R, b.R)
    m = mab(np.random.default_rng(0), k=5, alpha=0.1)
    assert np.isclose(np.sort(m.gaps())[1:], 0.1).all()


def test_lowerbound_plus_and_minus_have_a_single_action():
    """Figure 1: ``+`` and ``−`` have one action; copies would split the visits (spec)."""
    import numpy as np

    from dprl.agents.tabular.build import build_agent
    from dprl.agents.tabular.episodes import feed_episodes
    from dprl.envs.tabular import lowerbound
    from dprl.runner.online import EpisodeRecord

    env, _ = lowerbound(np.random.default_rng(0), n=2, m=2, gap=0.4, H=3)
    assert env.n_actions.tolist() == [3, 3, 1, 1]
    assert np.all(np.isinf(env.optimal_q[:, 2:, 1:]))
    agent = build_agent("ubev", {"beta": 0.05, "bonus_scale": 1.0}, None, env, 3000, np.random.default_rng(1), None).agent
    feed_episodes(agent, env, 3000, np.random.default_rng(2), EpisodeRecord())
    n = agent.source.release().n  # (H, S, A) exact visit counts
    assert n[1:, 2:, 1:].sum() == 0 and n[1:, 2:, 0].sum() == 2 * 3000  # every later step in + or −, action 0
    assert n[0, :2, :].sum() == 3000 and np.all(n[0, :2, :] > 0)  # initial states: every action tried
