"""Linear mixture environments: validation at construction and model structure."""

import math

import numpy as np
import pytest

from dprl.envs.linear_mixture import LinearMixtureMDP, make_hard_linear, make_mixture, make_tabular_as_linear


def test_mixture_is_a_valid_linear_mixture():
    env = make_mixture(12, 3, 4, 3, 4, np.random.default_rng(0))
    assert env.P.shape == (12, 3, 12)
    np.testing.assert_allclose(env.P.sum(axis=2), 1.0)
    np.testing.assert_allclose(env.P, np.einsum("sait,i->sat", env.psi, env.theta_p))
    assert env.r.min() >= 0 and env.r.max() <= 1
    assert env.features().d1 == 4 and env.features().d2 == 3


def test_mixture_state_count_independent_of_d():
    small, large = (make_mixture(S, 3, 2, 2, 2, np.random.default_rng(1)) for S in (10, 300))
    assert small.d1 == large.d1 == 2 and large.S == 300


@pytest.mark.parametrize("kwargs, match", [
    ({"S": 1, "d2": 2}, "S >= d2"),
    ({"H": 0}, "H must be >= 1"),
    ({"A": 0}, "A must be >= 1"),
    ({"concentration": 0.0}, "concentration"),
])
def test_mixture_rejects_bad_sizes(kwargs, match):
    args = {"S": 5, "A": 2, "d1": 2, "d2": 2, "H": 2, **kwargs}
    conc = args.pop("concentration", 0.5)
    with pytest.raises(ValueError, match=match):
        make_mixture(args["S"], args["A"], args["d1"], args["d2"], args["H"], np.random.default_rng(0), conc)


def _valid_parts():
    env = make_mixture(4, 2, 2, 2, 2, np.random.default_rng(0))
    return dict(psi=env.psi.copy(), theta_p=env.theta_p.copy(), phi_r=env.phi_r.copy(), theta_r=env.theta_r.copy(), horizon=2)


@pytest.mark.parametrize("mutate, match", [
    (lambda p: p.update(theta_p=p["theta_p"] * 0.5), "sum to 1"),
    (lambda p: p.update(theta_r=np.array([1.3, 0.0])), "rewards must lie in"),
    (lambda p: p.update(horizon=0), "horizon"),
    (lambda p: p.update(phi_r=p["phi_r"] * 2.0), r"\|\|phi\(s,a\)\|\| <= 1"),
    (lambda p: p.update(theta_p=np.array([3.0, -2.0])), r"theta_p"),
])
def test_linear_mixture_validation(mutate, match):
    parts = _valid_parts()
    mutate(parts)
    with pytest.raises(ValueError, match=match):
        LinearMixtureMDP(**parts)


def test_hard_linear_structure():
    d, H, K = 4, 3, 500
    env = make_hard_linear(d, H, K, np.random.default_rng(3))
    assert env.S == H + 2 and env.A == 2 ** (d - 1)
    delta = 1.0 / H
    gap = math.sqrt(delta / K) / (4 * math.sqrt(2))
    mu = env.theta_p[1:] * math.sqrt(gap / (1 + gap * (d - 1)))
    # jump probability to the rewarding state is δ + <μ, a>; the best action is sign(μ)
    acts = np.array(np.meshgrid(*[[-1.0, 1.0]] * (d - 1), indexing="ij")).reshape(d - 1, -1).T
    np.testing.assert_allclose(env.P[0, :, H + 1], delta + acts @ mu)
    V = env.optimal_values()
    best = int(np.argmax(acts @ np.sign(mu)))
    assert np.argmax(env.r[0] + env.P[0] @ V[1]) == best
    with pytest.raises(ValueError, match="d >= 2"):
        make_hard_linear(1, H, K, np.random.default_rng(0))
    with pytest.raises(ValueError, match="valid probabilities"):
        make_hard_linear(8, 1, 1, np.random.default_rng(0))


def test_tabular_as_linear_recovers_the_table():
    env = make_tabular_as_linear(3, 2, 2, np.random.default_rng(0))
    assert env.d1 == 18 and env.d2 == 6
    np.testing.assert_allclose(env.P.reshape(-1), env.theta_p)
    np.testing.assert_allclose(env.r.reshape(-1), env.theta_r)


def test_policy_value_matches_optimal_for_greedy_policy():
    env = make_mixture(6, 3, 2, 2, 3, np.random.default_rng(5))
    V = env.optimal_values()
    acts = np.stack([(env.r + env.P @ V[h + 1]).argmax(axis=1) for h in range(env.horizon)])
    pi = np.zeros((env.horizon, env.S, env.A))
    np.put_along_axis(pi, acts[..., None], 1.0, axis=2)
    assert env.policy_value(pi) == pytest.approx(V[0, env.s1])
    assert env.deterministic_policy_value(acts) == pytest.approx(V[0, env.s1])
    uniform = np.full_like(pi, 1.0 / env.A)
    assert env.policy_value(uniform) < V[0, env.s1]
