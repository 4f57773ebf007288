"""Running OFU-RL / Private-OFU-RL episodes (the runner of :mod:`dprl.agents.protocol`).

Per-episode regret is exact (``RegretEvaluator``: Lyapunov recursion with the true ``Θ*``
and ``W``); sampled costs are logged too. The environment noise of episode ``k`` is the
``k``-th block of ``H`` draws of the environment stream, whatever the agent does (common
random numbers across algorithms and privacy levels). The loop itself is compiled
(:mod:`dprl.agents.lq.loop`); this module drives the loop in blocks that end at the
checkpoints and writes the table (the agents are built by :mod:`dprl.agents.lq.build`).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

import numpy as np
import pandas as pd
from scipy.linalg import solve_triangular

from dprl.agents.lq.calibration import PrivateOFUCalibration
from dprl.agents.lq.loop import (
    CUM_REGRET,
    CUM_SAMPLED,
    LAST_BETA,
    LAST_FEASIBLE,
    LAST_REGRET,
    N_CLIPPED,
    N_FALLBACK,
    N_NOT_PD,
    N_REPAIRED,
    run_block,
)
from dprl.agents.lq.ofu import OFUAgent
from dprl.agents.protocol import BuiltAgent, checked_checkpoints
from dprl.envs.lq import LQSystem, RegretEvaluator
from dprl.privacy.regularizer import CentralRegularizer, NonPrivateRegularizer

log = logging.getLogger("dprl.job")



def ridge_estimate(z: np.ndarray, x_next: np.ndarray, lam: float) -> np.ndarray:
    """Standard ridge ``argmin ||X - ZΘ||_F² + λ||Θ||_F²`` by least squares on the augmented
    system ``[Z; √λ I] Θ = [X; 0]`` (independent of the regularizer code; claim C4)."""
    p = z.shape[1]
    za = np.vstack([z, np.sqrt(lam) * np.eye(p)])
    xa = np.vstack([x_next, np.zeros((p, x_next.shape[1]))])
    return np.linalg.lstsq(za, xa, rcond=None)[0]


def run_episodes(
    built: BuiltAgent[OFUAgent, PrivateOFUCalibration], env: LQSystem, n_episodes: int, env_rng: np.random.Generator,
    checkpoints: np.ndarray, progress: Callable[[int, int], None] | None = None, *, check_ridge: bool = False,
    block: int = 4096,
) -> pd.DataFrame:
    """Run ``K = n_episodes`` episodes of Algorithm 1 on the system ``env``
    (:func:`dprl.agents.lq.loop.run_block`, compiled; the runner of :mod:`dprl.agents.protocol`) in
    blocks of at most ``block`` episodes that end at every checkpoint; one row per checkpoint
    with cumulative exact and sampled regret, the confidence radius, estimation errors and the
    regularizer's repair counters. Memory does not grow with ``K``; ``progress`` is called
    after every block. ``check_ridge`` (OFU-RL) compares ``Θ̂_k`` at each checkpoint with the
    ridge solution of episodes ``1..k-1`` kept as a QR factor (claim C4). The σ's the loop drew
    the counters' noise with are recorded in the regularizer's ``drawn``
    (:meth:`~dprl.privacy.regularizer.Regularizer.drawn_calibration`: what the job accounts from)."""
    system, episodes = env, n_episodes
    marks = checked_checkpoints(checkpoints, episodes)
    agent = built.agent
    reg = agent.regularizer
    oracle = agent.oracle
    n, p = system.n, system.n + system.d
    if isinstance(reg, CentralRegularizer):
        private = True
        if reg.gram_counter.t + episodes > reg.gram_counter.max_elements:
            raise ValueError(f"{episodes} more episodes exceed the counters' horizon {reg.gram_counter.max_elements} "
                             f"({reg.gram_counter.t} already fed)")
        noisy = reg.gram_counter.noise is not None
        g_exact, g_suffix = reg.gram_counter.node_arrays()
        t_exact, t_suffix = reg.target_counter.node_arrays()
        c = reg.calibration
        sigma_g, sigma_t, shift, lam_min, lam_max, nu = c.sigma_gram, c.sigma_target, c.shift, c.lam_min, c.lam_max, c.nu
        gram_sum, target_sum, lam = np.zeros((p, p)), np.zeros((p, n)), 0.0  # ridge state: unused here
        noise_rng = reg.gram_counter.rng if noisy else np.random.default_rng(0)  # a typed placeholder without noise
        drawn = reg.drawn  # the loop records the σ's it draws with here (the job accounts from them)
    elif isinstance(reg, NonPrivateRegularizer):
        private = noisy = False
        g_exact = g_suffix = t_exact = t_suffix = np.zeros((1, 1))
        sigma_g = sigma_t = shift = lam_min = lam_max = nu = 0.0
        gram_sum, target_sum, lam = reg._gram, reg._target, reg.lam
        noise_rng = np.random.default_rng(0)  # a typed placeholder: no privacy noise
        drawn = reg.drawn  # nothing is drawn
    else:
        raise TypeError(f"the LQ loop runs OFU-RL's ridge or Private-OFU-RL's central regularizer, not {type(reg).__name__}")
    if check_ridge and private:
        raise ValueError("check_ridge compares with ridge regression: it needs OFU-RL's λ")
    evaluator = RegretEvaluator(system)
    theta_star = system.theta
    stops = np.union1d(marks, np.arange(block, episodes, block))
    marks = set(marks.tolist())
    ridge = np.zeros((p, p + n))
    if check_ridge:
        ridge[:, :p] = np.sqrt(reg.lam) * np.eye(p)  # [√λ I | 0]: the prior rows of the augmented system
    ridge_before = np.zeros_like(ridge)
    sums = np.zeros(4)
    counts = np.zeros(5, dtype=np.int64)
    theta_hat, theta_tilde = np.zeros((p, n)), np.zeros((p, n))
    w_agent = oracle.w_cov
    args = (private, noisy, gram_sum, target_sum, float(lam),
            g_exact, g_suffix, t_exact, t_suffix, float(sigma_g), float(sigma_t), float(shift), float(lam_min),
            float(lam_max), float(nu), system.a, system.b, system.q, system.r, system.x1,
            float(system.noise_radius), system.w_cov, float(evaluator.optimal), oracle.n_candidates,
            float(agent.alpha), float(agent.gamma), bool(agent.clip), w_agent, oracle.rng, env_rng, noise_rng,
            drawn, system.horizon, check_ridge, ridge, ridge_before, sums, counts, theta_hat, theta_tilde)
    # zero episodes: compiles the loop on first use, else loads Numba's cached machine code;
    # timed apart from the episodes so that job logs show compile and simulation separately
    start = time.perf_counter()
    run_block(0, 0, *args)
    log.info("LQ episode loop ready in %.2f s (Numba compile on first use, cache load after)", time.perf_counter() - start)
    rows = []
    done = 0
    for stop in stops.tolist():
        before = counts.copy()
        run_block(done, stop, *args)
        # the objects' bookkeeping, as their own observe/release would have done it
        fed = stop - done
        reg.n_users += fed
        reg.n_repaired += int(counts[N_REPAIRED] - before[N_REPAIRED])
        reg.n_not_pd += int(counts[N_NOT_PD] - before[N_NOT_PD])
        agent.n_clipped += int(counts[N_CLIPPED] - before[N_CLIPPED])
        if private:
            reg.gram_counter.t += fed
            reg.target_counter.t += fed
        done = stop
        if stop in marks:
            row = {
                "episode": stop,
                "regret": sums[CUM_REGRET],
                "regret_sampled": sums[CUM_SAMPLED],
                "episode_regret": sums[LAST_REGRET],
                "beta": sums[LAST_BETA],
                "theta_hat_error": float(np.linalg.norm(theta_hat - theta_star)),
                "theta_tilde_error": float(np.linalg.norm(theta_tilde - theta_star)),
                "n_feasible": int(counts[LAST_FEASIBLE]),
                "n_oracle_fallback": int(counts[N_FALLBACK]),
                "n_repaired": reg.n_repaired,
                "n_not_pd": reg.n_not_pd,
                "n_clipped": agent.n_clipped,
                "optimal_cost": evaluator.optimal,
            }
            if check_ridge:
                # Θ̂_k was computed from episodes 1..k-1 (released before episode k).
                if stop > 1:
                    ridge_k = solve_triangular(ridge_before[:, :p], ridge_before[:, p:])
                    row["ridge_gap"] = float(np.linalg.norm(theta_hat - ridge_k) / max(np.linalg.norm(ridge_k), 1e-300))
                else:
                    row["ridge_gap"] = float(np.abs(theta_hat).max())
            rows.append(row)
        if progress is not None:
            progress(done, episodes)
    out = pd.DataFrame(rows)
    if agent.regularizer.n_repaired:
        log.warning(
            "regularizer floored %d Gram releases (%d not positive definite) in %d episodes",
            agent.regularizer.n_repaired, agent.regularizer.n_not_pd, episodes)
    return out
