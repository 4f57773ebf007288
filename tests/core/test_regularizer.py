"""The shared Regularizer/Privatizer: ridge, central tree counters, local noise."""

import numpy as np
import pytest

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
    a = CentralRegularizer((2,), 3, 2, horizon=16, calibration=CAL, rng=None, noise=False)
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
    reg = CentralRegularizer((4,), 3, 2, horizon=16, calibration=big, rng=rng)
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
