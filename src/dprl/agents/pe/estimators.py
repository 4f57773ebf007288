"""LSW, DP-LSW, LSL, DP-LSL and the global-sensitivity baseline GS-DP-LSL (Balle, Gomrokchi,
Precup 2016; spec ``balle2016-policy-evaluation.md``). Two calibrations of the sensitivity
bounds (``src/dprl/README.md``, "Two calibrations"; the arguments in :mod:`dprl.agents.pe.bounds`):
``paper`` (the spec's Frobenius norms and DP-LSL's offset ``λ - ||ρ||_∞||Φ||_F²``) and ``tight``
(operator norms, and ``λ`` itself as DP-LSL's denominator). Both keep the same estimator
``θ_X`` (the same ``λ``), the same ``Ψ_X`` form and the same ``(a, b)``: only σ's constant differs.

Every estimator works on :class:`~dprl.envs.mrp.BatchStats` of ``B`` batches at once (the
nested batch sizes of one job) and returns weights ``θ`` of shape ``(B, d)``.

Privacy is output perturbation: a DP estimator's :meth:`release` returns a
:class:`Release` holding only the noisy weights ``θ_X + N(0, σ_X² I_d)``; everything
downstream (values, errors) is computed from a ``Release``. The data-dependent ``σ_X`` and
``Ψ_X`` are returned separately in a :class:`NoiseReport` for the experimenter's analysis
(figures of the noise scale); they are not part of the published output.

Neighbouring relation: the paper's, one trajectory *replaced* by another (Balle et al. 2016, "Setting";
``src/dprl/README.md``). Every first-visit count ``m_s`` then moves by at most one in either
direction, which is what the ``U_k`` of both bounds cover. Each DP estimator reports its
accounted ε (:meth:`DPLSW.accounted_epsilon`): the nominal ε for the smooth-sensitivity
mechanisms (NRS07), the exact Gaussian ε at the global sensitivity for GS-DP-LSL.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dprl.agents.pe.bounds import gs_lsl_sqrt_psi, lsl_log_u, lsl_psi, lsw_psi, lsw_u
from dprl.checks import check_array, check_number
from dprl.envs.mrp import BatchStats
from dprl.privacy.calibration import composed_epsilon
from dprl.privacy.smooth_sensitivity import gaussian_release, smooth_gaussian_constants, smooth_sigma


@dataclass(frozen=True)
class Release:
    """The only output of a DP estimator: released weights ``θ̃`` ``(B, d)``."""

    theta: np.ndarray

    def values(self, phi: np.ndarray) -> np.ndarray:
        """``V̂ = Φ θ̃`` ``(B, N)``."""
        return self.theta @ phi.T


@dataclass(frozen=True)
class NoiseReport:
    """Analysis-only diagnostics of a release (data-dependent, never published)."""

    sigma: np.ndarray  # (B,) noise standard deviation σ_X per coordinate
    psi: np.ndarray  # (B,) smooth bound Ψ_X (or its global replacement, squared)


def _check(phi: np.ndarray, rho: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    # finite before any pinv/solve: the SVD of a matrix holding inf never converges
    phi = check_array("features phi", phi)
    rho = check_array("state weights rho", rho, minimum=0.0)
    if phi.ndim != 2 or rho.shape != (phi.shape[0],):
        raise ValueError(f"features must be (N, d) and weights (N,), got {phi.shape} and {rho.shape}")
    if not rho.sum() > 0:
        raise ValueError("state weights rho must be non-negative and not all zero")
    return phi, rho


def _check_f_max(f_max: float) -> float:
    return float(check_number("F_max", f_max, exclusive_minimum=0.0))


# calibration -> the norm in the sensitivity bound (``bounds.py``: ``||Av|| <= ||A||_2||v||``
# is step 3 of DP-LSW's argument; the paper's ``||A||_F >= ||A||_2``)
LSW_NORMS = {"paper": "fro", "tight": 2}
# calibration -> (norm of Φ in the numerator and c_λ, offset of the denominator ``λ - offset``
# as a multiple of ||ρ||_∞ ||Φ||²): the paper's ``||Φ||_F`` and ``λ - ||ρ||_∞||Φ||_F²``; the
# argument of ``bounds.py`` (step 4) ``||Φ||_2`` and ``λ``
LSL_NORMS = {"paper": ("fro", 1.0), "tight": (2, 0.0)}


def _calibration(calibration: str, table: dict) -> str:
    if calibration not in table:
        raise ValueError(f"unknown calibration {calibration!r} of the 2016 policy-evaluation estimators; "
                         f"choose one of {list(table)}")
    return calibration


class LSW:
    """First-visit MC + least squares with fixed weights (Balle et al. 2016, "LSW"):
    ``θ_X = (Γ^{1/2}Φ)^+ Γ^{1/2} F_X``, ``Γ = diag(ρ)``."""

    def __init__(self, phi: np.ndarray, rho: np.ndarray) -> None:
        self.phi, self.rho = _check(phi, rho)
        sqrt_g = np.sqrt(self.rho)
        self.pinv = np.linalg.pinv(sqrt_g[:, None] * self.phi)  # (Γ^{1/2}Φ)^+, d×N
        self.weights = self.pinv * sqrt_g[None, :]  # (Γ^{1/2}Φ)^+ Γ^{1/2}, data-independent

    @property
    def dim(self) -> int:
        return self.phi.shape[1]

    def fit(self, stats: BatchStats) -> np.ndarray:
        return stats.mean_returns @ self.weights.T


class DPLSW(LSW):
    """DP-LSW: ``θ_X + N(0, σ_X² I_d)`` with
    ``σ_X = (F_max / a) ||(Γ^{1/2}Φ)^+||_F sqrt(Ψ_X)`` and
    ``Ψ_X = max_k e^{-kb} Σ_s ρ(s)/max(m_s - k, 1)²`` (Balle et al. 2016, "DP-LSW").

    Requires first-visit returns in ``[0, F_max]`` (:class:`~dprl.envs.mrp.FiniteMRP` checks
    rewards in ``[0, r_max]``): then one changed trajectory moves ``F_X(s)`` by at most
    ``F_max / max(m_s, 1)`` and the squared local sensitivity is at most
    ``F_max² ||(Γ^{1/2}Φ)^+||² Σ_s ρ(s)/max(m_s, 1)²``; ``k`` changed trajectories lower
    each ``m_s`` by at most ``k``, which gives ``U_k``. The norm is the calibration's
    (:data:`LSW_NORMS`): Frobenius (``paper``) or operator (``tight``; valid by step 3 of
    the argument in :mod:`dprl.agents.pe.bounds`).
    """

    def __init__(self, phi: np.ndarray, rho: np.ndarray, f_max: float, epsilon: float, delta: float,
                 calibration: str = "paper") -> None:
        super().__init__(phi, rho)
        self.f_max = _check_f_max(f_max)
        self.calibration = _calibration(calibration, LSW_NORMS)
        self.pinv_norm = float(np.linalg.norm(self.pinv, LSW_NORMS[calibration]))
        self.psi_weights = self.rho  # the weights of U_k (the authors' code: √ρ, agents/pe/published.py)
        self.const = smooth_gaussian_constants(epsilon, delta, self.dim)

    def psi(self, stats: BatchStats) -> np.ndarray:
        """The b-smooth bound ``Ψ_X`` ``(B,)`` (the negative controls of the audit override this)."""
        return lsw_psi(stats.counts, self.psi_weights, self.const.b)

    def sensitivity_bound(self, stats: BatchStats) -> np.ndarray:
        """The bound on the local sensitivity ``max_X' ||θ_X - θ_X'||_2`` at each batch ``(B,)``:
        ``F_max ||(Γ^{1/2}Φ)^+|| sqrt(U_0(X))`` (what ``σ_X a`` covers at ``k = 0``; the exact check)."""
        u0 = lsw_u(np.atleast_2d(stats.counts).astype(float), self.psi_weights, np.zeros((len(stats), 1)))[:, 0]
        return self.f_max * self.pinv_norm * np.sqrt(u0)

    def noise(self, stats: BatchStats) -> NoiseReport:
        psi = self.psi(stats)
        return NoiseReport(np.asarray(smooth_sigma(psi, self.f_max * self.pinv_norm, self.const.a)), psi)

    def accounted_epsilon(self, stats: BatchStats) -> np.ndarray:
        """Accounted ε per batch ``(B,)``: the nominal ε. By NRS07 (Nissim, Raskhodnikova, Smith
        2007, smooth sensitivity with Gaussian noise) ``θ_X + N(0, σ_X² I_d)`` is (ε, δ)-DP
        under the replacement relation whenever ``σ_X >= ||θ_X - θ_X'||/a`` and ``|ln σ_X²/σ_X'²| <= b`` with
        the ``(a, b)`` of ``src/dprl/README.md``; ``Ψ_X`` is b-smooth and bounds the squared local
        sensitivity (tests), so the theorem's ε is the accounted one."""
        return np.full(len(stats), self.const.accounted_epsilon)

    def release(self, stats: BatchStats, rng: np.random.Generator | None) -> tuple[Release, NoiseReport]:
        report = self.noise(stats)
        theta = self.fit(stats)
        noisy = np.stack([gaussian_release(t, float(s), rng) for t, s in zip(theta, report.sigma)])
        return Release(noisy), report


class LSL:
    """First-visit MC + ridge regression with data-dependent weights (Balle et al. 2016, "LSL"):
    ``θ_X = (ΦᵀΓ_XΦ + (λ/(2m)) I)^{-1} ΦᵀΓ_X F_X``, ``Γ_X = diag(ρ(s) m_s / m)``,
    ``λ = ||ρ||_∞ ||Φ||_F² + c m^p`` (``c > 0`` so that ``λ > ||ρ||_∞||Φ||_F²``)."""

    def __init__(self, phi: np.ndarray, rho: np.ndarray, c: float, p: float) -> None:
        self.phi, self.rho = _check(phi, rho)
        # c > 0 so that λ > ||ρ||_∞||Φ||_F²; finite, or λ = inf and the weights and the noise
        # scale 2 F_max ||Φ||_F/(λ - ||ρ||_∞||Φ||_F²) come out NaN and 0
        check_number("the regularization constant c", c, exclusive_minimum=0.0)
        check_number("the regularization exponent p", p)
        self.c, self.p = float(c), float(p)
        self.phi_frob = float(np.linalg.norm(self.phi))
        self.lam0 = float(self.rho.max()) * self.phi_frob**2  # ||ρ||_∞ ||Φ||_F²

    @property
    def dim(self) -> int:
        return self.phi.shape[1]

    def lam(self, m: np.ndarray) -> np.ndarray:
        return self.lam0 + self.c * np.asarray(m, dtype=float) ** self.p

    def fit(self, stats: BatchStats) -> np.ndarray:
        m = stats.m.astype(float)
        gx = self.rho * stats.counts / m[:, None]  # diag of Γ_X, (B, N)
        gram = np.einsum("ni,bn,nj->bij", self.phi, gx, self.phi)
        gram += (self.lam(m) / (2.0 * m))[:, None, None] * np.eye(self.dim)
        rhs = (gx * stats.mean_returns) @ self.phi
        return np.linalg.solve(gram, rhs[..., None])[..., 0]


class DPLSL(LSL):
    """DP-LSL: ``θ_X + N(0, σ_X² I_d)`` with
    ``σ_X = 2 F_max ||Φ||_F sqrt(Ψ_X) / (a (λ - ||ρ||_∞||Φ||_F²))``,
    ``Ψ_X = max_{0<=k<=m} e^{-kb} (c_λ sqrt(Σ_s ρ(s) min(m_s + k, m)) + ||ρ||_2)²``,
    ``c_λ = ||Φ||_F ||ρ||_∞ / sqrt(2λ)`` (Balle et al. 2016, "DP-LSL") under ``paper``; under
    ``tight`` (:data:`LSL_NORMS`; step 4 of the argument in :mod:`dprl.agents.pe.bounds`)
    ``||Φ||_2`` in the numerator and in ``c_λ`` and ``λ`` as the denominator. With ``smooth=False`` it is the
    global-sensitivity baseline GS-DP-LSL: ``sqrt(Ψ_X)`` replaced by ``c_λ sqrt(m) + ||ρ||_2``
    (``U_k`` with every ``m_s`` replaced by ``m``, an upper bound for every dataset when
    ``Σ_s ρ(s) <= 1``; data-independent, so the smoothness condition holds trivially)."""

    def __init__(self, phi: np.ndarray, rho: np.ndarray, c: float, p: float, f_max: float,
                 epsilon: float, delta: float, smooth: bool = True, calibration: str = "paper") -> None:
        super().__init__(phi, rho, c, p)
        self.f_max = _check_f_max(f_max)
        self.smooth = bool(smooth)
        self.calibration = _calibration(calibration, LSL_NORMS)
        norm, offset = LSL_NORMS[calibration]
        self.sens_norm = float(np.linalg.norm(self.phi, norm))  # ||Φ|| of the bound
        self.offset = offset * float(self.rho.max()) * self.sens_norm**2  # λ - offset in the denominator
        if not smooth and self.rho.sum() > 1.0 + 1e-12:
            raise ValueError("GS-DP-LSL's global bound needs state weights with sum(rho) <= 1")
        self.const = smooth_gaussian_constants(epsilon, delta, self.dim)

    def c_lam(self, m: np.ndarray) -> np.ndarray:
        return self.sens_norm * float(self.rho.max()) / np.sqrt(2.0 * self.lam(m))

    def psi(self, stats: BatchStats) -> np.ndarray:
        """``Ψ_X`` ``(B,)``: the b-smooth bound (``k`` up to ``m``), or the squared global
        replacement for GS-DP-LSL (the negative controls of the audit override this)."""
        m = stats.m.astype(float)
        c_lam = self.c_lam(m)
        if self.smooth:
            return lsl_psi(stats.counts, m, self.rho, c_lam, self.const.b)
        return gs_lsl_sqrt_psi(m, self.rho, c_lam) ** 2

    def sensitivity_scale(self, m: np.ndarray) -> np.ndarray:
        """``2 F_max ||Φ||_F / (λ - ||ρ||_∞||Φ||_F²)`` (``paper``; ``2 F_max ||Φ||_2 / λ`` under
        ``tight``): the ℓ2 sensitivity of ``θ_X`` is at most this times ``sqrt(U_0(X))``
        (Balle et al. 2016, "DP-LSL"; :mod:`dprl.agents.pe.bounds`)."""
        return 2.0 * self.f_max * self.sens_norm / (self.lam(m) - self.offset)

    def sensitivity_bound(self, stats: BatchStats) -> np.ndarray:
        """The bound on the local sensitivity at each batch ``(B,)``: ``sensitivity_scale ·
        sqrt(U_0(X))`` (what ``σ_X a`` covers at ``k = 0``; the exact check)."""
        m = stats.m.astype(float)
        k0 = np.zeros((len(stats), 1))
        u0 = np.exp(lsl_log_u(np.atleast_2d(stats.counts).astype(float), m, self.rho, self.c_lam(m), k0)[:, 0])
        return self.sensitivity_scale(m) * np.sqrt(u0)

    def noise(self, stats: BatchStats) -> NoiseReport:
        psi = self.psi(stats)
        scale = self.sensitivity_scale(stats.m.astype(float))
        # GS-DP-LSL keeps the paper's baseline σ = Δ/a (the smooth mechanism's a) under tight
        # too, with tight's operator-norm Δ: B4 compares smooth against global sensitivity like
        # for like under each calibration. Its exact ε is then far below the nominal ε (a
        # knowingly conservative baseline, stated as such by the accounting check P4); the
        # exactly calibrated Gaussian at the global sensitivity is F4's, not B4's.
        return NoiseReport(np.asarray(smooth_sigma(psi, 1.0, self.const.a)) * scale, psi)

    def accounted_epsilon(self, stats: BatchStats) -> np.ndarray:
        """Accounted ε per batch ``(B,)`` under the replacement relation.

        DP-LSL: the nominal ε, by NRS07's theorem (see :meth:`DPLSW.accounted_epsilon`).
        GS-DP-LSL: a Gaussian mechanism with a data-independent σ, so its exact ε is that of
        the analytic Gaussian mechanism (Balle & Wang 2018) with ``μ = Δ/σ``, ``Δ`` the global
        ℓ2 sensitivity ``sensitivity_scale · (c_λ sqrt(m) + ||ρ||_2)`` (``Σρ <= 1``). Under
        ``paper``, with the smooth mechanism's ``σ = Δ/a``, this is ``ε_G(a, δ)``, far below the
        nominal ε: the baseline keeps the paper's noise, so it is over-private, not
        under-private; under ``tight`` too (with the operator-norm ``Δ``).
        """
        if self.smooth:
            return np.full(len(stats), self.const.accounted_epsilon)
        m = stats.m.astype(float)
        delta_gs = self.sensitivity_scale(m) * gs_lsl_sqrt_psi(m, self.rho, self.c_lam(m))
        sigma = self.noise(stats).sigma
        return np.array([composed_epsilon(float(d / s), self.const.delta) for d, s in zip(delta_gs, sigma)])

    def release(self, stats: BatchStats, rng: np.random.Generator | None) -> tuple[Release, NoiseReport]:
        report = self.noise(stats)
        theta = self.fit(stats)
        noisy = np.stack([gaussian_release(t, float(s), rng) for t, s in zip(theta, report.sigma)])
        return Release(noisy), report
