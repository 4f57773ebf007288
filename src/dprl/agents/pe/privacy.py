"""The DP estimators' privacy as the built estimator holds it: its accounting and the audit
of its output perturbation (Balle, Gomrokchi, Precup 2016; claim B1; ``src/dprl/README.md``,
"Neighbouring relations: replacement" and "Privacy audits"). The same module in every
paper's agent package:

- :func:`held_calibration`: the accounting of the noise a built estimator holds (its
  smooth-sensitivity constants ``(a, b)``, or GS-DP-LSL's global-sensitivity σ), with
  ``accounted_epsilon``/``accounted_delta``;
- the neighbouring inputs of the audit (:func:`adversarial_setup`,
  :func:`adversarial_batches`) and the audit of one pair (:func:`audit_pair`), whose runs
  are the estimator's own releases (``release``, the batch jobs' path, which adds the noise
  by :func:`dprl.agents.pe.estimators.add_noise` and reports the σ it drew with).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from dprl.agents.pe.broken import variant_class
from dprl.agents.pe.build import EstimationTask, build_agent
from dprl.agents.pe.estimators import DPLSL, DPLSW
from dprl.agents.protocol import BuiltAgent
from dprl.envs.mrp import BatchStats, FirstVisitData
from dprl.privacy.audit import audit
from dprl.privacy.setting import PrivacySetting
from dprl.privacy.smooth_sensitivity import gaussian_pair_epsilon


@dataclass(frozen=True)
class EstimatorAccounting:
    """The accounted ``(ε, δ)`` of a built estimator's noise under replacement."""

    accounted_epsilon: float
    accounted_delta: float


def held_calibration(built: BuiltAgent, m: int) -> EstimatorAccounting | None:
    """The accounting of the noise the built estimator holds (``None`` for LSW/LSL), read
    from the estimator itself (:meth:`DPLSW.accounted_epsilon`: NRS07's ε of its ``(a, b)``,
    or GS-DP-LSL's analytic Gaussian ε of its σ) on an empty batch of ``m`` trajectories:
    neither depends on the data, and GS-DP-LSL's ``Δ/σ = a`` not on ``m`` beyond round-off."""
    if built.calibration is None:
        return None
    est = built.agent
    n = est.phi.shape[0]
    empty = BatchStats(np.array([int(m)]), np.zeros((1, n), dtype=np.int64), np.zeros((1, n)))
    return EstimatorAccounting(float(est.accounted_epsilon(empty)[0]), float(est.const.delta))


def adversarial_setup(d: int) -> tuple[np.ndarray, np.ndarray]:
    """``d`` non-absorbing states with identity features and ``ρ = 1/d`` each, plus one
    absorbing state (index ``d``, zero feature row, ``ρ = 0``): ``Φ`` ``(d+1, d)``, ``ρ`` ``(d+1,)``."""
    phi = np.vstack([np.eye(d), np.zeros((1, d))])
    rho = np.append(np.full(d, 1.0 / d), 0.0)
    return phi, rho


AUDIT_PAIRS = ("return_change", "count_2_to_1", "count_1_to_0")


def adversarial_batches(pair: str, d: int, f_max: float) -> tuple[BatchStats, BatchStats]:
    """Neighbouring batches under the paper's replacement relation (one trajectory replaced by
    another), on the states of :func:`adversarial_setup`. Every trajectory ends in the
    absorbing state; "full" trajectories visit every state.

    - ``return_change`` (``m = 1``): a full trajectory with first-visit returns 0, replaced by
      one with returns ``F_max``. Counts unchanged, so ``σ_X = σ_X'``: the largest shift of
      ``θ`` relative to the noise (the sensitivity bound is attained for DP-LSW with ``d = 1``).
    - ``count_2_to_1`` (``m = 2``): full trajectories with returns 0 and ``F_max``; the second is
      replaced by one that visits only the absorbing state. Every count drops from 2 to 1
      (measured: local-sensitivity noise doubles DP-LSW's σ here, exact ε 2.54 at δ = 0.1, d = 1).
    - ``count_1_to_0`` (``m = 1``): a full trajectory with returns ``F_max`` replaced by an
      absorbing-only one; every count drops from 1 to 0 (the largest relative change of
      DP-LSL's local sensitivity, where the old cap ``k < m`` is the local sensitivity).
    """
    n = d + 1
    full = np.ones(n, dtype=bool)
    empty = np.zeros(n, dtype=bool)
    empty[d] = True  # absorbing only
    ret = np.where(np.arange(n) < d, f_max, 0.0)
    if pair == "return_change":
        return (FirstVisitData(np.zeros((1, n)), full[None]).stats(), FirstVisitData(ret[None], full[None]).stats())
    if pair == "count_2_to_1":
        x = FirstVisitData(np.stack([np.zeros(n), ret]), np.stack([full, full]))
        y = FirstVisitData(np.zeros((2, n)), np.stack([full, empty]))
        return x.stats(), y.stats()
    if pair == "count_1_to_0":
        return (FirstVisitData(ret[None], full[None]).stats(), FirstVisitData(np.zeros((1, n)), empty[None]).stats())
    raise ValueError(f"unknown audit pair {pair!r}; choose one of {AUDIT_PAIRS}")


def pair_releases(alg: dict, variant: str, pair: str, d: int, f_max: float, epsilon: float, delta: float,
                  calibration: str = "paper"
                  ) -> tuple[DPLSW | DPLSL, tuple[BatchStats, BatchStats], list[np.ndarray], list[float]]:
    """The estimator (``variant`` of ``alg`` under ``calibration``), the two batches of ``pair``,
    and the means ``θ`` and noise scales ``σ`` of the two releases, from the estimator's own fit and noise."""
    phi, rho = adversarial_setup(d)
    privacy = PrivacySetting(epsilon=epsilon, delta=delta, calibration=calibration)
    est = build_agent(alg["name"], alg, privacy, EstimationTask(phi, rho, f_max),
                      estimator_class=variant_class(alg["name"], variant)).agent
    batches = adversarial_batches(pair, d, f_max)
    theta = [est.fit(x)[0] for x in batches]
    sigma = [float(est.noise(x).sigma[0]) for x in batches]
    return est, batches, theta, sigma


def audit_pair(alg: dict, variant: str, pair: str, d: int, f_max: float, epsilon: float, delta: float,
               runs: int, rng: np.random.Generator, alpha: float = 1e-3, calibration: str = "paper") -> dict:
    """Audit one (mechanism variant, neighbouring pair): the runs are the estimator's own
    releases of the pair's two batches, through the path the batch jobs run
    (:meth:`~dprl.agents.pe.estimators.OutputPerturbation.release`, its fit, ``Ψ_X``, σ and
    :func:`~dprl.agents.pe.estimators.add_noise`, ``runs`` releases per call), audited by
    :func:`dprl.privacy.audit.audit` with, besides its generic statistics, the log-likelihood
    ratio of the two Gaussians the calibration claims (the Neyman–Pearson statistic of the
    claimed noise; a statistic fixed before the runs, so ``ε_lb`` stays a valid lower bound).

    The σ's of the row (``sigma_x``, ``sigma_x_prime``), the exact ε of the pair
    (:func:`gaussian_pair_epsilon`, which ``ε_lb`` cannot exceed beyond the audit's confidence
    level), NRS07's two conditions (``shift <= a·min σ``, ``|ln σ0²/σ1²| <= b``) and the
    correct mechanism's ``accounted_epsilon`` are those of the σ's the releases were drawn
    with (``NoiseReport.drawn``), not checked against the calibration: the audit measures.
    """
    est, batches, theta, sigma = pair_releases(alg, variant, pair, d, f_max, epsilon, delta, calibration)
    shift = float(np.linalg.norm(theta[0] - theta[1]))
    drawn = [math.inf, math.inf]  # the smallest σ each batch's releases were drawn with

    def sample(which: int, n: int, gen: np.random.Generator) -> np.ndarray:
        release, report = est.release(batches[which], gen, runs=n)
        drawn[which] = min(drawn[which], float(report.drawn[0]))
        return release.theta[0]

    def llr(y: np.ndarray) -> np.ndarray:  # ln p0(y)/p1(y) up to a constant, under the claimed σ's
        return (np.sum((y - theta[1]) ** 2, axis=1) / (2 * sigma[1] ** 2)
                - np.sum((y - theta[0]) ** 2, axis=1) / (2 * sigma[0] ** 2))

    res = audit(sample, 0, 1, epsilon, delta, n=runs, rng=rng, alpha=alpha, statistics={"llr": llr})
    if not np.isfinite(drawn).all():
        raise RuntimeError(f"the audit of {alg['name']} {variant} on {pair} drew no release of one of its batches")
    a, b = est.const.a, est.const.b
    log_ratio = abs(2.0 * math.log(drawn[0] / drawn[1]))
    counts = [int(x.counts[0, 0]) for x in batches]
    accounted = max(float(est.accounted_epsilon(x, np.array([s]))[0]) for x, s in zip(batches, drawn))
    return {
        "pair": pair, "variant": variant, "mechanism": alg["name"] if variant == "correct" else f"{alg['name']}:{variant}",
        "d": d, "m": int(batches[0].m[0]), "count_x": counts[0], "count_x_prime": counts[1],
        "shift": shift, "sigma_x": drawn[0], "sigma_x_prime": drawn[1], "a": a, "b": b,
        "shift_over_a_sigma": shift / (a * min(drawn)), "log_var_ratio_over_b": log_ratio / b,
        "nrs07_conditions": bool(shift <= a * min(drawn) * (1 + 1e-12) and log_ratio <= b * (1 + 1e-12)),
        "eps_exact": gaussian_pair_epsilon(delta, shift, drawn[0], drawn[1], d),
        **res.columns(),
        # NRS07's ε of the correct estimator's (a, b) at the σ's drawn with; a broken variant has no guarantee to account
        "accounted_epsilon": accounted if variant == "correct" else np.nan,
    }
