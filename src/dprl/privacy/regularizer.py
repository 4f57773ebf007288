"""Estimation under changing regularizers: one Regularizer/Privatizer abstraction for the
LQ paper (Chowdhury, Zhou, Shroff 2021, Sec. III) and the linear-mixture paper (Zhou 2022,
Sec. 6). Both estimate ``Θ̂_k = V_k^{-1} U_k`` from

    ``V_k = Σ_{j<k} G_j + H_k``,   ``U_k = Σ_{j<k} C_j + L_k``,

where ``G_j = Σ_h z zᵀ`` and ``C_j = Σ_h z yᵀ`` are user ``j``'s (episode ``j``'s) Gram and
cross statistics and ``(H_k, L_k)`` is a regularizer that may change with ``k``. The agent
only ever sees ``(V_k, U_k)`` and the constants ``(λ_min, λ_max, ν)`` that bound the
regularizer on the good event (``λ_min I ⪯ H_k ⪯ λ_max I``, ``||L_k||_{H_k^{-1}} <= ν``) and
enter the confidence radius ``β_k``:

- :class:`NonPrivateRegularizer`: ``H_k = λI``, ``L_k = 0`` (ridge regression).
- :class:`CentralRegularizer`: central JDP. Gaussian tree counters release the two sums;
  ``H_k`` = counter noise + shift ``η I`` (Chowdhury et al. Alg. 1; Zhou Sec. 6.1).
- :class:`LocalRegularizer`: local DP (Zhou Remark 6.9). Each user perturbs her own
  statistics; the agent sums them, so ``H_k`` is a sum of ``k-1`` noise terms plus ``η I``.

Arrays carry a leading ``batch`` shape for several independent regressions advancing
together (Zhou: one per step ``h``). Paper-specific constants come in through
:class:`RegularizerCalibration`; the papers' calibration formulas live with their agents.
"""

from __future__ import annotations

import dataclasses
import logging
import math
from abc import ABC, abstractmethod
from dataclasses import dataclass

import numpy as np

from dprl.checks import check_number
from dprl.privacy.noise import GaussianNoise
from dprl.privacy.tree_counter import TreeCounter

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class RegularizerCalibration:
    """Noise scales and good-event constants of a private regularizer.

    ``sigma_gram``/``sigma_target``: per-node (central) or per-user (local) Gaussian scales.
    ``shift``: ``η`` added to the released Gram sum. ``lam_min``, ``lam_max``, ``nu``: the
    bounds that enter ``β_k``.
    """

    sigma_gram: float
    sigma_target: float
    shift: float
    lam_min: float
    lam_max: float
    nu: float

    def result_columns(self) -> dict[str, float]:
        """The columns a job records for this regularizer, named alike in both papers
        (LQ: the regularizer of ``Θ``; linear mixture: of the transition parameter ``θ_p``)."""
        return {"sigma_gram": self.sigma_gram, "sigma_target": self.sigma_target, "lam_min": self.lam_min, "nu": self.nu}


@dataclass(frozen=True)
class GoodEventBounds:
    """What ``β_k`` needs to know about a regularizer: ``λ_min I ⪯ H_k ⪯ λ_max I`` and
    ``||L_k||_{H_k^{-1}} <= ν`` on the good event (Chowdhury et al. Assumption 1; Zhou
    Assumption 2)."""

    lam_min: float
    lam_max: float
    nu: float

    @classmethod
    def ridge(cls, lam: float) -> GoodEventBounds:
        """Non-private ridge regression, ``H_k = λI``, ``L_k = 0``: ``(λ, λ, 0)`` (always)."""
        return cls(lam, lam, 0.0)


def shifted_calibration(sigma_gram: float, sigma_target: float, gram_noise_bound: float, target_noise_bound: float) -> RegularizerCalibration:
    """The one place both papers' good-event constants are computed (Chowdhury et al.,
    Sec. IV-A and proof of Theorem 3: ``η = 2Λ``, ``λ_min = Λ``, ``λ_max = 3Λ``,
    ``ν = ||L_k||/√Λ``; Zhou, Sec. 6.1 and proof of Theorem 6.5: ``Z = N + 2Σ I``,
    ``λ_min = Σ``, ``λ_max = 3Σ``, ``ν = ||z||/√Σ``): with ``||N_k||_op <= Σ``
    (``gram_noise_bound``) and ``||L_k|| <= z`` (``target_noise_bound``) on the good event, the
    shift ``η = 2Σ`` gives ``H_k = N_k + 2Σ I`` with ``Σ I ⪯ H_k ⪯ 3Σ I`` and
    ``||L_k||_{H_k^{-1}} <= z/sqrt(Σ)``. The bounds ``Σ, z`` are each paper's own (printed
    for ``paper``, :func:`dprl.privacy.calibration.tight_noise_bounds` for ``tight``)."""
    check_number("the Gram noise bound", gram_noise_bound, exclusive_minimum=0.0)
    check_number("the target noise bound", target_noise_bound, minimum=0.0)
    return RegularizerCalibration(sigma_gram, sigma_target, shift=2.0 * gram_noise_bound, lam_min=gram_noise_bound,
                                  lam_max=3.0 * gram_noise_bound, nu=target_noise_bound / math.sqrt(gram_noise_bound))


@dataclass
class RegularizedStats:
    """What the agent may read at the start of an episode."""

    gram: np.ndarray  # V_k, shape batch + (p, p), symmetric positive definite
    target: np.ndarray  # U_k, shape batch + (p, q)
    lam_min: float
    lam_max: float
    nu: float
    repaired: np.ndarray  # bool, batch shape: V_k had an eigenvalue below lam_min and was floored
    not_pd: np.ndarray  # bool, batch shape: V_k was not positive definite before repair


class NoiseScaleError(RuntimeError):
    """A regularizer's noise was drawn with other σ's than its calibration holds (or not
    drawn at all): the job must not write results (:meth:`Regularizer.drawn_calibration`)."""


def undrawn_scales(statistics: int = 2) -> np.ndarray:
    """A ``drawn`` array for :func:`dprl.privacy.kernels.gaussian_into` before any draw: per
    statistic (Gram, target) ``[min, max] = [+inf, -inf]`` of the σ's drawn with."""
    return np.tile(np.array([[math.inf, -math.inf]]), (statistics, 1))


# Rounding room of the Gershgorin screen in Regularizer._finish, relative to the largest
# absolute row sum (both bounds are computed to ~1e-15 of it)
_GERSHGORIN_ROOM = 1e-9


class Regularizer(ABC):
    """Accumulates users' statistics and releases regularized ``(V_k, U_k)``."""

    def __init__(self, batch_shape: tuple[int, ...], p: int, q: int) -> None:
        self.batch_shape = tuple(batch_shape)
        self.p, self.q = int(p), int(q)
        self.n_users = 0
        self.n_repaired = 0  # releases (per batch member) that needed the eigenvalue floor
        self.n_not_pd = 0  # of which V_k was not even positive definite
        # (min, max) of the σ's the compiled path drew the Gram's and the target's noise with
        # (rows 0, 1; dprl.privacy.kernels.gaussian_into writes it): what a job accounts from
        self.drawn = undrawn_scales()

    @property
    def gram_shape(self) -> tuple[int, ...]:
        return (*self.batch_shape, self.p, self.p)

    @property
    def target_shape(self) -> tuple[int, ...]:
        return (*self.batch_shape, self.p, self.q)

    @property
    @abstractmethod
    def bounds(self) -> GoodEventBounds:
        """``(λ_min, λ_max, ν)`` every release carries (they depend on the calibration only)."""

    @abstractmethod
    def observe(self, gram: np.ndarray, target: np.ndarray) -> None:
        """Add one user's statistics ``G_j`` (batch+(p,p)) and ``C_j`` (batch+(p,q))."""

    @abstractmethod
    def release(self) -> RegularizedStats:
        """``(V_k, U_k)`` and the good-event constants for the next user."""

    def drawn_calibration(self, check: bool = True) -> RegularizerCalibration:
        """The calibration with the σ's the compiled path drew this regularizer's noise with
        (:attr:`drawn`, the smallest of each statistic): what a job accounts from, so a noise
        scale changed between the calibration and the kernel that draws the noise
        (:func:`dprl.privacy.kernels.gaussian_into`) shows in the accounted ε. With ``check``
        (a job about to write results), raises :class:`NoiseScaleError` when any σ drawn with
        differs from the calibration's (less noise: not private at the nominal ε; more: a
        job labelled with an ε it did not run at), or when users were fed with the noise on
        and nothing was drawn. Without draws (noise off, or no user yet) the calibration
        itself. Only the compiled loops and audits record draws (``observe``'s NumPy path
        does not)."""
        c = self.calibration  # type: ignore[attr-defined]
        lo = self.drawn[:, 0]
        if not np.isfinite(lo).any():
            if check and self.noisy and self.n_users > 0:
                raise NoiseScaleError(f"{type(self).__name__}: {self.n_users} users fed with the noise on, but the "
                                      "compiled path reported no Gaussian draw: refusing to account and write results")
            return c
        held = np.array([c.sigma_gram, c.sigma_target])
        hi = self.drawn[:, 1]
        if check and not ((lo == held) & (hi == held)).all():
            what = "less noise than" if (lo < held).any() else "other noise than"
            raise NoiseScaleError(
                f"{type(self).__name__}: the compiled path drew its noise with σ_gram in [{lo[0]:.6g}, {hi[0]:.6g}], "
                f"σ_target in [{lo[1]:.6g}, {hi[1]:.6g}] but the calibration holds σ_gram = {held[0]:.6g}, "
                f"σ_target = {held[1]:.6g}: {what} the calibration requires; refusing to write results")
        return dataclasses.replace(c, sigma_gram=float(lo[0]) if np.isfinite(lo[0]) else c.sigma_gram,
                                   sigma_target=float(lo[1]) if np.isfinite(lo[1]) else c.sigma_target)

    @property
    def noisy(self) -> bool:
        """Whether the regularizer adds noise (False: non-private, or built with ``noise=False``)."""
        return False

    def _finish(self, gram: np.ndarray, target: np.ndarray, lam_min: float, lam_max: float, nu: float) -> RegularizedStats:
        """Symmetrise, check positive definiteness, floor eigenvalues below ``lam_min``.

        On the good event ``V_k ⪰ H_k ⪰ λ_min I``; a smaller eigenvalue means the noise left
        the good event. We floor the spectrum at ``λ_min`` (a post-processing of released
        values, so privacy is unaffected), count it, and log it; an indefinite matrix is
        never used as is.
        """
        gram = 0.5 * (gram + np.swapaxes(gram, -1, -2))
        # Gershgorin: λ_min >= min_i (a_ii − Σ_{j≠i} |a_ij|). Where that bound clears λ_min
        # with room for rounding no floor can apply, so eigh runs on the other matrices only
        # (the same per-matrix LAPACK call, so the same numbers). The lq audits' releases
        # clear it 99.998% of the time; eigh of all of them was 10 of a job's 28 s.
        absrow = np.abs(gram).sum(-1)
        diag = np.diagonal(gram, axis1=-2, axis2=-1)
        lower = (diag - (absrow - np.abs(diag))).min(-1)
        check = ~(lower - _GERSHGORIN_ROOM * absrow.max(-1) >= lam_min)  # NaN: to eigh, as before
        repaired = np.zeros(check.shape, dtype=bool)
        not_pd = np.zeros(check.shape, dtype=bool)
        if check.any():
            eigval, eigvec = np.linalg.eigh(gram[check])
            low = eigval[..., 0]
            repaired[check] = low < lam_min * (1.0 - 1e-12)
            not_pd[check] = low <= 0.0
            fix = repaired[check]
            if fix.any():
                floored = np.maximum(eigval, lam_min)
                fixed = (eigvec * floored[..., None, :]) @ np.swapaxes(eigvec, -1, -2)
                gram[check] = np.where(fix[..., None, None], fixed, gram[check])
        if repaired.any():
            self.n_repaired += int(repaired.sum())
            self.n_not_pd += int(not_pd.sum())
            log.debug(
                "regularizer: %d Gram matrices below lam_min=%.3g (%d not PD) after %d users; eigenvalues floored",
                int(repaired.sum()), lam_min, int(not_pd.sum()), self.n_users,
            )
        return RegularizedStats(gram, target, lam_min, lam_max, nu, repaired, not_pd)


class NonPrivateRegularizer(Regularizer):
    """Ridge regression: ``H_k = λI``, ``L_k = 0`` (``λ_min = λ_max = λ``, ``ν = 0``)."""

    def __init__(self, batch_shape: tuple[int, ...], p: int, q: int, lam: float) -> None:
        super().__init__(batch_shape, p, q)
        check_number("ridge parameter lam", lam, exclusive_minimum=0.0)
        self.lam = float(lam)
        self._gram = np.zeros(self.gram_shape)
        self._target = np.zeros(self.target_shape)

    @property
    def bounds(self) -> GoodEventBounds:
        return GoodEventBounds.ridge(self.lam)

    def observe(self, gram: np.ndarray, target: np.ndarray) -> None:
        self._gram += gram
        self._target += target
        self.n_users += 1

    def release(self) -> RegularizedStats:
        gram = self._gram + self.lam * np.eye(self.p)
        false = np.zeros(self.batch_shape, dtype=bool)
        return RegularizedStats(gram, self._target.copy(), self.lam, self.lam, 0.0, false, false.copy())


class CentralRegularizer(Regularizer):
    """Central JDP: two Gaussian tree counters over users (episodes).

    ``V_k = T_{1,k} + η I`` with ``T_1`` the symmetric-noise release of ``Σ G_j``;
    ``U_k = T_{2,k}`` the release of ``Σ C_j`` (Chowdhury et al. Alg. 1; Zhou Sec. 6.1).
    With ``noise=False`` the counters are exact, so the agent reduces to the non-private
    one with ``λ = η`` (tested).
    """

    def __init__(
        self,
        batch_shape: tuple[int, ...],
        p: int,
        q: int,
        max_users: int,
        calibration: RegularizerCalibration,
        rng: np.random.Generator | None,
        noise: bool = True,
    ) -> None:
        super().__init__(batch_shape, p, q)
        self.calibration = calibration
        gram_noise = GaussianNoise(calibration.sigma_gram) if noise else None
        target_noise = GaussianNoise(calibration.sigma_target) if noise else None
        # the counters run over users (= episodes, at most max_users), not over the steps h
        self.gram_counter = TreeCounter(self.gram_shape, max_users, gram_noise, rng, symmetric=True)
        self.target_counter = TreeCounter(self.target_shape, max_users, target_noise, rng)

    def replicas(self, runs: int, rng: np.random.Generator) -> CentralRegularizer:
        """``runs`` fresh copies of this regularizer (no user yet) along a new leading batch
        axis, with its noise (its calibration, as the compiled loops read it) and its tree
        size: what the audits draw from, so they examine the noise the agent holds."""
        return CentralRegularizer((runs, *self.batch_shape), self.p, self.q, self.gram_counter.max_elements,
                                  self.calibration, rng, noise=self.gram_counter.noise is not None)

    @property
    def bounds(self) -> GoodEventBounds:
        c = self.calibration
        return GoodEventBounds(c.lam_min, c.lam_max, c.nu)

    @property
    def noisy(self) -> bool:
        return self.gram_counter.noise is not None

    def observe(self, gram: np.ndarray, target: np.ndarray) -> None:
        self.gram_counter.update(gram)
        self.target_counter.update(target)
        self.n_users += 1

    def release(self) -> RegularizedStats:
        c = self.calibration
        gram = self.gram_counter.release() + c.shift * np.eye(self.p)
        return self._finish(gram, self.target_counter.release().copy(), c.lam_min, c.lam_max, c.nu)


class LocalRegularizer(Regularizer):
    """Local DP (Zhou 2022, Remark 6.9): every user adds her own Gaussian noise
    (symmetric for the Gram) before sending; the agent sums the noisy statistics.

    The user-side perturbation happens in :meth:`observe`, which models the user's
    device: the agent-side state only ever holds noisy sums.
    """

    def __init__(
        self,
        batch_shape: tuple[int, ...],
        p: int,
        q: int,
        calibration: RegularizerCalibration,
        rng: np.random.Generator | None,
        noise: bool = True,
    ) -> None:
        super().__init__(batch_shape, p, q)
        self.calibration = calibration
        self.rng = rng
        self.noise = noise
        self._gram = np.zeros(self.gram_shape)
        self._target = np.zeros(self.target_shape)

    def replicas(self, runs: int, rng: np.random.Generator) -> LocalRegularizer:
        """``runs`` fresh copies along a new leading batch axis with this regularizer's noise
        (:meth:`CentralRegularizer.replicas`)."""
        return LocalRegularizer((runs, *self.batch_shape), self.p, self.q, self.calibration, rng, noise=self.noise)

    @property
    def bounds(self) -> GoodEventBounds:
        c = self.calibration
        return GoodEventBounds(c.lam_min, c.lam_max, c.nu)

    @property
    def noisy(self) -> bool:
        return bool(self.noise)

    def perturb(self, gram: np.ndarray, target: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The user's local randomiser: one Gaussian mechanism per statistic."""
        if not self.noise:
            return gram, target
        c = self.calibration
        g = gram + GaussianNoise(c.sigma_gram).sample(self.rng, self.gram_shape, symmetric=True)
        u = target + GaussianNoise(c.sigma_target).sample(self.rng, self.target_shape)
        return g, u

    def observe(self, gram: np.ndarray, target: np.ndarray) -> None:
        g, u = self.perturb(gram, target)
        self._gram += g
        self._target += u
        self.n_users += 1

    def release(self) -> RegularizedStats:
        c = self.calibration
        gram = self._gram + c.shift * np.eye(self.p)
        return self._finish(gram, self._target.copy(), c.lam_min, c.lam_max, c.nu)
