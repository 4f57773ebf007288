"""The shared Regularizer/Privatizer: ridge, central tree counters, local noise."""

import numpy as np
import pytest
from regularizer_reference import finish_with_eigh_everywhere

from dprl.privacy.setting import PrivacySetting
from dprl.privacy.regularizer import (
    CentralRegularizer, LocalRegularizer, NonPrivateRegularizer, RegularizerCalibration,
)

CAL = RegularizerCalibration(sigma_gram=1.0, sigma_target=1.0, shift=3.0, lam_min=1.0, lam_max=5.0, nu=0.5)


def users(rng, k, batch=(2,), p=3, q=2):
    for _ in range(k):
        z = rng.standard_normal((*batch, 5, p))
        y = rng.standard_normal((*batch, 5, q))
        yield np.swapaxes(z, -1, -2) @ z, np.swapaxes(z, -1, -2) @ y


def test_nonprivate_is_ridge():
    rng = np.random.default_rng(0)
    reg = NonPrivateRegularizer((2,), 3, 2, lam=0.7)
    G = np.zeros((2, 3, 3))
    C = np.zeros((2, 3, 2))
    for g, c in users(rng, 9):
        reg.observe(g, c)
        G += g
        C += c
    st = reg.release()
    np.testing.assert_allclose(st.gram, G + 0.7 * np.eye(3))
    np.testing.assert_allclose(np.linalg.solve(st.gram, st.target), np.linalg.solve(G + 0.7 * np.eye(3), C))
    assert st.lam_min == st.lam_max == 0.7 and st.nu == 0


def test_central_without_noise_equals_ridge_with_shift():
    rng = np.random.default_rng(1)
    a = CentralRegularizer((2,), 3, 2, max_users=16, calibration=CAL, rng=None, noise=False)
    b = NonPrivateRegularizer((2,), 3, 2, lam=CAL.shift)
    for g, c in users(rng, 11):
        a.observe(g, c)
        b.observe(g, c)
        sa, sb = a.release(), b.release()
        np.testing.assert_allclose(sa.gram, sb.gram, rtol=1e-12)
        np.testing.assert_allclose(sa.target, sb.target, rtol=1e-12, atol=1e-12)  # tree vs sequential summation order


def test_central_noise_is_symmetric_and_pd_repairs_are_counted():
    rng = np.random.default_rng(2)
    big = RegularizerCalibration(sigma_gram=50.0, sigma_target=1.0, shift=0.1, lam_min=0.1, lam_max=1.0, nu=1.0)
    reg = CentralRegularizer((4,), 3, 2, max_users=16, calibration=big, rng=rng)
    for g, c in users(rng, 5, batch=(4,)):
        reg.observe(g, c)
        st = reg.release()
        np.testing.assert_allclose(st.gram, np.swapaxes(st.gram, -1, -2))
        assert np.all(np.linalg.eigvalsh(st.gram)[..., 0] >= big.lam_min * (1 - 1e-9))
    assert reg.n_not_pd > 0 and reg.n_repaired >= reg.n_not_pd


def test_local_noise_scales_with_users():
    n_rep, k = 4000, 16
    finals = []
    for r in range(n_rep // 1000):
        rng = np.random.default_rng(10 + r)
        reg = LocalRegularizer((1000,), 2, 1, calibration=CAL, rng=rng)
        for _ in range(k):
            reg.observe(np.zeros((1000, 2, 2)), np.zeros((1000, 2, 1)))
        finals.append(reg._target[:, 0, 0].copy())
    var = np.concatenate(finals).var()
    assert var == pytest.approx(k * CAL.sigma_target**2, rel=0.1)  # grows like K, not log K


UNEQUAL = RegularizerCalibration(sigma_gram=3.0, sigma_target=0.5, shift=0.0, lam_min=1e-9, lam_max=1.0, nu=1.0)


def _measured_sigmas(reg, runs, p, q):
    """Per-entry std of the Gram (upper triangle) and target noise in one release after one
    null user: a single node (central) or a single perturbation (local)."""
    reg.observe(np.zeros((runs, p, p)), np.zeros((runs, p, q)))
    st = reg.release()
    iu = np.triu_indices(p)
    # the eigenvalue floor at lam_min ~ 0 must not touch these (shift 0: floor only below 1e-9)
    raw_gram = reg.gram_counter.release() if isinstance(reg, CentralRegularizer) else reg._gram
    return float(raw_gram[:, iu[0], iu[1]].std()), float(st.target.std())


@pytest.mark.parametrize("kind", ["central", "local"])
def test_gram_and_target_noise_have_their_own_sigma(kind):
    """σ_gram != σ_target: a Gram counter (or local Gram perturbation) drawing with the
    target's σ, or the reverse, is off by 6x here."""
    runs, p, q = 50_000, 3, 2
    rng = np.random.default_rng(3)
    reg = (CentralRegularizer((runs,), p, q, max_users=8, calibration=UNEQUAL, rng=rng) if kind == "central"
           else LocalRegularizer((runs,), p, q, calibration=UNEQUAL, rng=rng))
    s_gram, s_target = _measured_sigmas(reg, runs, p, q)
    assert s_gram == pytest.approx(UNEQUAL.sigma_gram, rel=0.02)
    assert s_target == pytest.approx(UNEQUAL.sigma_target, rel=0.02)


def test_central_release_noise_sums_the_set_bits_nodes():
    """After t users the release sums popcount(t) independent nodes, each with its own σ."""
    runs, p, q = 20_000, 2, 1
    reg = CentralRegularizer((runs,), p, q, max_users=16, calibration=UNEQUAL, rng=np.random.default_rng(4))
    for _ in range(7):  # 7 = 0b111: three nodes
        reg.observe(np.zeros((runs, p, p)), np.zeros((runs, p, q)))
    assert reg.gram_counter.release()[:, 0, 1].var() == pytest.approx(3 * UNEQUAL.sigma_gram**2, rel=0.05)
    assert reg.target_counter.release().var() == pytest.approx(3 * UNEQUAL.sigma_target**2, rel=0.05)


def test_good_event_constants_are_shared_by_both_papers():
    """Chowdhury et al. (η = 2Λ, λ_min = Λ, λ_max = 3Λ, ν = ||L||/√Λ) and Zhou (Z = N + 2Σ I,
    λ_min = Σ, λ_max = 3Σ, ν = ||z||/√Σ) get their constants from the one function, and every
    Regularizer reports the bounds its releases carry."""
    from dprl.agents.linmix.calibration import linopt_calibration
    from dprl.agents.lq.calibration import private_ofu_calibration
    from dprl.envs.linear_mixture import make_mixture
    from dprl.privacy.regularizer import GoodEventBounds, shifted_calibration

    c = shifted_calibration(2.0, 3.0, 4.0, 6.0)
    assert (c.shift, c.lam_min, c.lam_max, c.nu) == (8.0, 4.0, 12.0, 3.0)
    feat = make_mixture(3, 10, 2, 2, 3, np.random.default_rng(0)).features()
    for route in ("paper", "tight"):
        cals = [private_ofu_calibration(PrivacySetting(epsilon=1.0, delta=1e-3, calibration=route), 100, 5, 0.5, 2, 1, 0.1).regularizer,
                *(getattr(linopt_calibration(PrivacySetting(epsilon=1.0, delta=1e-5, calibration=route), s, 100, feat, 0.05), r)
                  for s in ("central", "local") for r in ("p", "r"))]
        for c in cals:
            assert c.shift == 2 * c.lam_min and c.lam_max == 3 * c.lam_min
    reg = CentralRegularizer((), 3, 2, 8, CAL, np.random.default_rng(0))
    reg.observe(np.eye(3), np.ones((3, 2)))
    stats = reg.release()
    assert reg.bounds == GoodEventBounds(stats.lam_min, stats.lam_max, stats.nu) == GoodEventBounds(1.0, 5.0, 0.5)
    assert NonPrivateRegularizer((), 3, 2, 0.5).bounds == GoodEventBounds(0.5, 0.5, 0.0)


@pytest.mark.parametrize("batch", [(), (5,), (400,), (3, 70)])
def test_gershgorin_screen_gives_the_floor_eigh_everywhere_gives(batch):
    """The screen skips eigh only where no floor can apply: the released V, the repaired and
    not-PD flags are bit-identical to eigh of every matrix, on releases around λ_min (some
    cleared by Gershgorin, some floored, some not PD). A screen that skipped matrices whose
    bound is below λ_min would leave some unfloored and fail."""
    rng = np.random.default_rng(7)
    p, lam_min = 3, 1.0
    g = rng.normal(scale=0.4, size=(*batch, p, p))
    gram = g + np.swapaxes(g, -1, -2) + rng.uniform(0.2, 3.0, size=(*batch, 1, 1)) * np.eye(p)
    reg = NonPrivateRegularizer(batch, p, 1, lam_min)
    st = reg._finish(gram.copy(), np.zeros((*batch, p, 1)), lam_min, lam_min, 0.0)
    ref, repaired, not_pd = finish_with_eigh_everywhere(gram, lam_min)
    assert np.array_equal(st.gram, ref) and np.array_equal(st.repaired, repaired) and np.array_equal(st.not_pd, not_pd)
    assert reg.n_repaired == int(np.sum(repaired)) and reg.n_not_pd == int(np.sum(not_pd))
    if len(batch) and np.prod(batch) >= 100:  # the grid exercises every branch
        assert repaired.any() and not_pd.any() and (~repaired).any()


def test_gershgorin_screen_sends_non_finite_matrices_to_eigh():
    """A NaN release is not cleared by the screen: eigh sees it, as it did before."""
    reg = NonPrivateRegularizer((2,), 2, 1, 1.0)
    gram = np.stack([np.eye(2) * 5.0, np.full((2, 2), np.nan)])
    try:
        ref, repaired, not_pd = finish_with_eigh_everywhere(gram.copy(), 1.0)
    except np.linalg.LinAlgError:
        with pytest.raises(np.linalg.LinAlgError):
            reg._finish(gram.copy(), np.zeros((2, 2, 1)), 1.0, 1.0, 0.0)
        return
    st = reg._finish(gram.copy(), np.zeros((2, 2, 1)), 1.0, 1.0, 0.0)
    assert np.array_equal(st.gram, ref, equal_nan=True) and np.array_equal(st.repaired, repaired)
    assert np.array_equal(st.not_pd, not_pd)
