"""Cross-check of the core calibration (``dprl.privacy.calibration``) against an independent
library, Google's ``dp-accounting`` (``src/dprl/README.md``: "every calibration is also checked
against exact accounting, including an independent library").

- analytic Gaussian σ (``gaussian_sigma_tight``/``gaussian_mu``) against the library's
  privacy-loss distribution (PLD) of one Gaussian mechanism;
- L-fold composition (``composed_epsilon`` of ``sqrt(L)·Δ/σ``) against the PLD composed L
  times and the library's PLD accountant;
- the papers' zCDP route (``zcdp_to_dp``, ``gaussian_sigma_zcdp``): valid (never below the
  exact ε) but loose;
- Laplace composition (the ℓ1 sum ``L·Δ/b``, ``laplace_tree_scale``) against the composed
  Laplace PLD.
"""

import math

import dp_accounting
import pytest
from dp_accounting.pld import privacy_loss_distribution as pld

from dprl.privacy import calibration as cal

GRID = [(0.1, 1e-5), (1.0, 1e-5), (1.0, 1e-3), (5.0, 1e-3), (10.0, 1e-5)]


def gaussian_pld(sigma: float, sensitivity: float = 1.0, compositions: int = 1, interval: float = 1e-4) -> pld.PrivacyLossDistribution:
    """The library's (pessimistic) privacy-loss distribution; ``interval`` is its
    discretisation of the loss, which bounds its error on ε."""
    one = pld.from_gaussian_mechanism(sigma, sensitivity=sensitivity, value_discretization_interval=interval)
    return one if compositions == 1 else one.self_compose(compositions)


@pytest.mark.parametrize("eps,delta", GRID)
def test_analytic_gaussian_sigma_matches_the_library(eps, delta):
    sigma = cal.gaussian_sigma_tight(eps, delta, 2.0)
    lib = gaussian_pld(sigma, sensitivity=2.0, interval=1e-4 * max(1.0, eps))
    assert lib.get_epsilon_for_delta(delta) == pytest.approx(eps, rel=1e-4)
    assert lib.get_delta_for_epsilon(eps) == pytest.approx(delta, rel=1e-3)
    # the smallest such σ: 1% less noise is no longer (ε, δ)-DP
    assert gaussian_pld(0.99 * sigma, sensitivity=2.0, interval=1e-4 * max(1.0, eps)).get_delta_for_epsilon(eps) > delta
    assert cal.gaussian_mu(eps, delta) == pytest.approx(2.0 / sigma, rel=1e-12)


@pytest.mark.parametrize("levels", [3, 11])
@pytest.mark.parametrize("eps,delta", [(1.0, 1e-5), (5.0, 1e-3)])
def test_l_fold_composition_matches_the_library(levels, eps, delta):
    """A tree counter composes L Gaussian node releases: ``composed_epsilon(sqrt(L)·Δ/σ)``
    must equal the library's L-fold composition (PLD self-composition and accountant)."""
    sigma = cal.gaussian_sigma_tight(eps, delta, 1.0, compositions=levels)
    ours = cal.composed_epsilon(cal.tree_counter_mu(sigma, 1.0, levels), delta)
    assert ours == pytest.approx(eps, rel=1e-9)
    lib = gaussian_pld(sigma, compositions=levels, interval=1e-4 * max(1.0, eps))
    assert lib.get_epsilon_for_delta(delta) == pytest.approx(ours, rel=1e-3)
    acc = dp_accounting.pld.PLDAccountant()
    acc.compose(dp_accounting.GaussianDpEvent(sigma), levels)
    assert acc.get_epsilon(delta) == pytest.approx(ours, rel=1e-3)


@pytest.mark.parametrize("eps,delta", GRID)
def test_zcdp_route_is_valid_but_loose(eps, delta):
    """``ε = ρ + 2 sqrt(ρ ln 1/δ)`` is an upper bound on the exact ε of a Gaussian
    mechanism with ``ρ = Δ²/(2σ²)``: never below the library's exact ε, and above it."""
    for levels in (1, 5):
        sigma = cal.gaussian_sigma_zcdp(eps, delta, 1.0, compositions=levels)
        rho = levels / (2 * sigma**2)
        assert cal.zcdp_to_dp(rho, delta) == pytest.approx(eps, rel=1e-9)
        exact = gaussian_pld(sigma, compositions=levels, interval=1e-4 * max(1.0, eps)).get_epsilon_for_delta(delta)
        assert exact <= eps  # valid: the zCDP calibration's σ is (ε, δ)-DP by the library
        assert exact < 0.95 * eps  # loose: the tight route exists for a reason
        assert exact == pytest.approx(cal.composed_epsilon(math.sqrt(2 * rho), delta), rel=1e-3)
        assert sigma > cal.gaussian_sigma_tight(eps, delta, 1.0, compositions=levels)


@pytest.mark.parametrize("levels,eps", [(3, 0.5), (11, 1.0), (11, 4.0)])
def test_laplace_l1_sum_composition_matches_the_library(levels, eps):
    """A Laplace tree counter: ``L`` nodes, each ``Lap(b)`` with ``b = L·Δ/ε`` and ℓ1
    sensitivity Δ. Pure ε-DP by the ℓ1 sum, and exactly so: the library's composed PLD has
    δ(ε) ≈ 0 (its discretisation is pessimistic) and δ(0.99 ε) > 0."""
    sens = 2.0
    b = cal.laplace_tree_scale(eps, levels, sens)
    lib = pld.from_laplace_mechanism(b, sensitivity=sens, value_discretization_interval=1e-5).self_compose(levels)
    assert lib.get_delta_for_epsilon(eps) < 1e-6
    assert lib.get_delta_for_epsilon(0.99 * eps) > 1e-6
    assert lib.get_epsilon_for_delta(1e-9) == pytest.approx(eps, rel=1e-4)


def test_library_disagrees_with_a_broken_calibration():
    """The checks above have power: a σ computed for the per-node budget (√L missing)
    is far from private at (ε, δ) by the library."""
    levels, eps, delta = 11, 1.0, 1e-5
    wrong = cal.gaussian_sigma_tight(eps, delta, 1.0)  # compositions forgotten
    assert gaussian_pld(wrong, compositions=levels).get_epsilon_for_delta(delta) > 2 * eps
    assert math.isclose(cal.composed_epsilon(cal.tree_counter_mu(wrong, 1.0, levels), delta),
                        gaussian_pld(wrong, compositions=levels).get_epsilon_for_delta(delta), rel_tol=1e-3)


# ------------------------------------------------ the accounting of built agents, by the library
# Each paper's ``held_calibration`` reads the noise a built agent holds; the library composes
# the same noise on the paper's own worst replacement pair (``agents/<paper>/privacy.py``).


def _rng():
    import numpy as np

    return np.random.default_rng(0)


@pytest.mark.parametrize("l1_per_step", [1, 2])
def test_pucb_agent_accounting_matches_the_library(l1_per_step):
    """PUCB's counters: one user moves each of the 3 blocks by ``2H`` in ℓ1, in ``L`` nodes of
    ``Lap(b)`` with ``b`` the agent's own scale: the library's composed Laplace PLD."""
    from dprl.agents.tabular.build import build_agent
    from dprl.agents.tabular.privacy import counters_only_env, held_calibration
    from dprl.privacy.setting import PrivacySetting

    H, T = 2, 8
    built = build_agent("pucb", {"beta": 0.05, "bonus_scale": 1.0, "l1_per_step": l1_per_step},
                        PrivacySetting(epsilon=1.0, calibration="tight"), counters_only_env(2, 2, H), T, _rng(), _rng())
    held = held_calibration(built)
    b = built.agent.source.scale
    lib = pld.from_laplace_mechanism(b, sensitivity=2.0 * H, value_discretization_interval=1e-5).self_compose(3 * held.levels)
    assert lib.get_epsilon_for_delta(1e-9) == pytest.approx(held.accounted_epsilon, rel=1e-3)
    assert held.accounted_epsilon == pytest.approx(1.0 if l1_per_step == 2 else 2.0, rel=1e-12)
    assert held.accounted_delta == 0.0


def _gaussian_accountant(parts: list[tuple[float, float, int]], delta: float) -> float:
    """ε at ``delta`` of Gaussian mechanisms ``(σ, ‖Δ‖, count)`` composed (PLD accountant)."""
    acc = dp_accounting.pld.PLDAccountant()
    for sigma, change, count in parts:
        acc.compose(dp_accounting.GaussianDpEvent(sigma / change), count)
    return acc.get_epsilon(delta)


@pytest.mark.parametrize("calibration", ["paper", "tight"])
def test_private_ofu_agent_accounting_matches_the_library(calibration):
    """Private-OFU-RL: B1 and B2 over ``L`` nodes with the σ's of the agent's regularizer, on
    the joint replacement pair of its audit (``replacement_pair("joint")``)."""
    import numpy as np

    from dprl.agents.lq.build import build_agent
    from dprl.agents.lq.privacy import audit_system, held_calibration, replacement_pair
    from dprl.privacy.setting import PrivacySetting

    n, d, H, gamma, K = 2, 1, 10, 1.0, 8
    built = build_agent("private_ofu_rl", {"alpha": 0.1, "n_candidates": 1},
                        PrivacySetting(epsilon=1.0, delta=1e-3, calibration=calibration), audit_system(n, d, H, gamma), K,
                        _rng(), _rng())
    held = held_calibration(built)
    r = built.agent.regularizer.calibration
    (g0, c0), (g1, c1) = replacement_pair("joint", n, d, H, gamma)
    lib = _gaussian_accountant([(r.sigma_gram, np.linalg.norm(g0 - g1), held.levels),
                                (r.sigma_target, np.linalg.norm(c0 - c1), held.levels)], held.accounted_delta)
    assert lib == pytest.approx(held.accounted_epsilon, rel=2e-3)
    assert held.accounted_epsilon <= 1.0 * (1 + 1e-9)


@pytest.mark.parametrize("scheme", ["central", "local"])
def test_linopt_agent_accounting_matches_the_library(scheme):
    """LinOpt's Privatizer: the ``4H`` streams over ``m`` nodes (1 for the local randomiser)
    with the σ's of the agent's two regularizers, on its audit's hardest pair
    (``neighbouring_statistics``), which attains all four replacement sensitivities."""
    import numpy as np

    from dprl.agents.linmix.build import build_agent
    from dprl.agents.linmix.privacy import audit_features, held_calibration, neighbouring_statistics
    from dprl.experiments.linmix.spec import AGENTS
    from dprl.privacy.setting import PrivacySetting

    feat, K = audit_features(2, 2), 8
    name = "private_linopt_vi" if scheme == "central" else "ldp_linopt_vi"
    built = build_agent(name, AGENTS[name].defaults(),
                        PrivacySetting(epsilon=1.0, delta=1e-5, calibration="tight"), feat, K, _rng(), _rng())
    held = held_calibration(built)
    p, r = built.agent.reg_p.calibration, built.agent.reg_r.calibration
    a, b = neighbouring_statistics(feat, True), neighbouring_statistics(feat, False)
    changes = [float(np.linalg.norm(x[0] - y[0])) for x, y in zip(a, b)]  # one step, per stream
    count = held.m * feat.horizon
    lib = _gaussian_accountant([(s, c, count) for s, c in zip((p.sigma_gram, p.sigma_target, r.sigma_gram, r.sigma_target),
                                                                 changes)], held.accounted_delta)
    assert lib == pytest.approx(held.accounted_epsilon, rel=2e-3)
    assert held.accounted_epsilon == pytest.approx(1.0, rel=1e-6)
