"""Building the agents from job parameters and running the episodic protocol.

Per-episode regret is exact (``RegretEvaluator``: Lyapunov recursion with the true ``Θ*``
and ``W``); sampled costs are logged too. The environment noise of episode ``k`` is the
``k``-th block of ``H`` draws of the environment stream, whatever the agent does (common
random numbers across algorithms and privacy levels).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pandas as pd

from dprl.agents.lq.calibration import LQPrivacyCalibration, private_ofu_calibration
from dprl.agents.lq.ofu import OFUAgent
from dprl.agents.lq.regime import onset_episode
from dprl.agents.lq.oracle import OptimisticOracle
from dprl.envs.lq import LQSystem, RegretEvaluator, rollout
from dprl.privacy.regularizer import CentralRegularizer, NonPrivateRegularizer


@dataclass
class BuiltAgent:
    agent: OFUAgent
    calibration: LQPrivacyCalibration | None  # None for non-private OFU-RL
    lam: float | None  # ridge λ of non-private OFU-RL


def private_regularizer(
    cal: LQPrivacyCalibration, p: int, q: int, episodes: int, rng: np.random.Generator | None,
    batch_shape: tuple[int, ...] = (),
) -> CentralRegularizer:
    """Private-OFU-RL's noise path (Algorithm 1: counters B1, B2 and the shift ``η = 2Λ``).
    The agent uses ``batch_shape=()``; audits and privacy tests build the same object with a
    batch of independent runs."""
    return CentralRegularizer(batch_shape, p, q, episodes, cal.regularizer, rng)


def build_agent(
    system: LQSystem, name: str, params: dict, privacy: dict | None, episodes: int,
    agent_rng: np.random.Generator, noise_rng: np.random.Generator,
) -> BuiltAgent:
    """``ofu_rl`` (``H_k = λI``) or ``private_ofu_rl`` (Algorithm 1, ``paper``/``tight``)."""
    n, d, p = system.n, system.d, system.n + system.d
    oracle = OptimisticOracle(n, d, system.q, system.r, system.horizon, system.x1, system.noise_radius,
                              int(params["n_candidates"]), agent_rng)
    alpha = float(params["alpha"])
    if name == "ofu_rl":
        lam = float(params["lam"])
        reg = NonPrivateRegularizer((), p, n, lam)
        return BuiltAgent(OFUAgent(reg, oracle, n, d, system.noise_radius, system.gamma, alpha, clip=False), None, lam)
    if name == "private_ofu_rl":
        if privacy is None or privacy.get("delta") is None:
            raise ValueError("private_ofu_rl is (epsilon, delta)-JDP: it needs epsilon and delta")
        cal = private_ofu_calibration(float(privacy["epsilon"]), float(privacy["delta"]), privacy["calibration"],
                                      episodes, system.horizon, system.gamma, n, d, alpha)
        reg = private_regularizer(cal, p, n, episodes, noise_rng)
        return BuiltAgent(OFUAgent(reg, oracle, n, d, system.noise_radius, system.gamma, alpha, clip=True), cal, None)
    raise ValueError(f"unknown LQ algorithm {name!r}")


def checkpoints(episodes: int, count: int) -> np.ndarray:
    """About ``count`` log-spaced episode indices in ``1..K`` (always including ``K``)."""
    pts = np.unique(np.round(np.geomspace(1, episodes, max(count, 2))).astype(int))
    return pts[(pts >= 1) & (pts <= episodes)]


def ridge_estimate(z: np.ndarray, x_next: np.ndarray, lam: float) -> np.ndarray:
    """Standard ridge ``argmin ||X - ZΘ||_F² + λ||Θ||_F²`` by least squares on the augmented
    system ``[Z; √λ I] Θ = [X; 0]`` (independent of the regularizer code; claim C4)."""
    p = z.shape[1]
    za = np.vstack([z, np.sqrt(lam) * np.eye(p)])
    xa = np.vstack([x_next, np.zeros((p, x_next.shape[1]))])
    return np.linalg.lstsq(za, xa, rcond=None)[0]


def run_episodes(
    system: LQSystem, built: BuiltAgent, episodes: int, env_rng: np.random.Generator, n_checkpoints: int,
    progress: Callable[[int, int], None] | None = None, check_ridge: bool = False,
) -> pd.DataFrame:
    """Run ``K`` episodes; one row per checkpoint with cumulative exact and sampled regret,
    the confidence radius, estimation errors and the regularizer's repair counters."""
    agent = built.agent
    evaluator = RegretEvaluator(system)
    theta_star = system.theta
    marks = set(checkpoints(episodes, n_checkpoints).tolist())
    rows = []
    cum_regret = cum_sampled = 0.0
    n_fallback = 0
    history_z: list[np.ndarray] = []
    history_x: list[np.ndarray] = []
    for k in range(1, episodes + 1):
        plan = agent.act()
        noise = system.sample_noise(env_rng, system.horizon)
        states, controls, cost = rollout(system, plan.gains, noise)
        agent.observe(states, controls)
        regret = evaluator.regret(plan.gains)
        cum_regret += regret
        cum_sampled += cost - evaluator.optimal
        n_fallback += plan.fallback
        if check_ridge:
            history_z.append(np.hstack([states[:-1], controls]))
            history_x.append(states[1:])
        if k in marks:
            reg = agent.regularizer
            row = {
                "episode": k,
                "regret": cum_regret,
                "regret_sampled": cum_sampled,
                "episode_regret": regret,
                "beta": plan.beta,
                "theta_hat_error": float(np.linalg.norm(plan.theta_hat - theta_star)),
                "theta_tilde_error": float(np.linalg.norm(plan.theta_tilde - theta_star)),
                "n_feasible": plan.n_feasible,
                "n_oracle_fallback": n_fallback,
                "n_floored": reg.n_repaired,
                "n_not_pd": reg.n_not_pd,
                "n_clipped": agent.n_clipped,
                "optimal_cost": evaluator.optimal,
            }
            if check_ridge:
                # Θ̂_k was computed from episodes 1..k-1 (released before episode k).
                ridge = ridge_estimate(np.vstack(history_z[:-1]), np.vstack(history_x[:-1]), built.lam) if k > 1 \
                    else np.zeros_like(theta_star)
                row["ridge_gap"] = float(np.linalg.norm(plan.theta_hat - ridge) / max(np.linalg.norm(ridge), 1e-300)) \
                    if k > 1 else float(np.abs(plan.theta_hat).max())
            rows.append(row)
        if progress is not None:
            progress(k, episodes)
    out = pd.DataFrame(rows)
    # contract, "Regimes": where per-episode regret leaves its burn-in level (NaN: not within K)
    out["onset_episode"] = onset_episode(out["episode"].to_numpy(), out["regret"].to_numpy())
    if built.calibration is not None:
        c = built.calibration
        out["sigma_gram"] = c.regularizer.sigma_gram
        out["sigma_target"] = c.regularizer.sigma_target
        out["lam_min"] = c.regularizer.lam_min
        out["nu"] = c.regularizer.nu
        out["tree_levels"] = c.levels
        out["eps_exact"] = c.exact_epsilon("joint", c.delta)
    else:
        out["lam_min"] = built.lam
    if agent.regularizer.n_repaired:
        logging.getLogger("dprl.job").warning(
            "regularizer floored %d Gram releases (%d not positive definite) in %d episodes",
            agent.regularizer.n_repaired, agent.regularizer.n_not_pd, episodes)
    return out
