"""The pre-issue-12 NumPy code path of the LQ episode loop (Chowdhury, Zhou, Shroff 2021),
kept only as a test oracle for the compiled loop of :mod:`dprl.agents.lq.loop`.

A copy of ``agents/lq/{run,ofu,oracle}.py`` and the parts of ``envs/lq.py`` they used at
commit 1671bb3 (batched NumPy Riccati, Lyapunov regret, rollout, noise sampler, random-search
oracle, agent), with the package's unchanged Regularizers. The oracle's map of the unit ball
onto the confidence set is ``L^{-T}`` (Cholesky) as in the package since 2026-11-28, not
``V^{-1/2}``. Only ``run_episodes`` differs:
it returns the per-episode records (the oracle test compares them episode by episode)
next to the checkpoint table, and has no ``check_ridge``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from dprl.agents.lq.calibration import private_ofu_calibration
from dprl.agents.lq.build import private_regularizer
from dprl.runner.checkpoints import log_checkpoints
from dprl.envs.lq import LQSystem
from dprl.privacy.regularizer import NonPrivateRegularizer, RegularizedStats, Regularizer


# ------------------------------------------------------------------ envs/lq.py (NumPy)


def sample_noise(system: LQSystem, rng: np.random.Generator, size: int) -> np.ndarray:
    g = rng.standard_normal((size, system.n))
    g /= np.linalg.norm(g, axis=1, keepdims=True)
    rad = system.noise_radius * rng.random(size) ** (1.0 / system.n)
    return g * rad[:, None]


def theta_to_ab(theta: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    t = np.swapaxes(theta, -1, -2)
    return t[..., :n], t[..., n:]


def _bmm(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    return (x[:, :, None, :] * y[None, :, :, :]).sum(axis=1)


def riccati(a, b, q, r, horizon):
    batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    n, d = b.shape[-2], b.shape[-1]
    size = int(np.prod(batch, dtype=int))
    al = np.ascontiguousarray(np.broadcast_to(a, (*batch, n, n)).reshape(size, n, n).transpose(1, 2, 0))
    bl = np.ascontiguousarray(np.broadcast_to(b, (*batch, n, d)).reshape(size, n, d).transpose(1, 2, 0))
    at, bt = np.ascontiguousarray(al.transpose(1, 0, 2)), np.ascontiguousarray(bl.transpose(1, 0, 2))
    ql, rl = np.asarray(q, float)[:, :, None], np.asarray(r, float)[:, :, None]
    p_all = np.zeros((horizon + 1, n, n, size))
    k_all = np.empty((horizon, d, n, size))
    p = p_all[horizon]
    for h in range(horizon - 1, -1, -1):
        btp = _bmm(bt, p)
        s = rl + _bmm(btp, bl)
        m = _bmm(btp, al)
        if d == 1:
            k = -m / s
        else:
            k = -np.linalg.solve(s.transpose(2, 0, 1), m.transpose(2, 0, 1)).transpose(1, 2, 0)
        p = ql + _bmm(at, _bmm(p, al)) + _bmm(m.transpose(1, 0, 2), k)
        p = 0.5 * (p + p.transpose(1, 0, 2))
        p_all[h] = p
        k_all[h] = k
    p_out = np.moveaxis(p_all, -1, 1).reshape(horizon + 1, *batch, n, n)
    k_out = np.moveaxis(k_all, -1, 1).reshape(horizon, *batch, d, n)
    return p_out, k_out


def optimal_cost(p_all, w_cov, x1):
    quad = np.einsum("i,...ij,j->...", x1, p_all[0], x1)
    noise = np.einsum("h...ij,ji->...", p_all[1:], w_cov)
    return quad + noise


def policy_cost(a, b, q, r, gains, w_cov, x1):
    horizon = gains.shape[0]
    n = a.shape[-1]
    p = np.zeros((*gains.shape[1:-2], n, n))
    noise = np.zeros(gains.shape[1:-2])
    for h in range(horizon - 1, -1, -1):
        noise = noise + np.einsum("...ij,ji->...", p, w_cov)
        k = gains[h]
        cl = a + b @ k
        p = q + np.swapaxes(k, -1, -2) @ r @ k + np.swapaxes(cl, -1, -2) @ p @ cl
    return np.einsum("i,...ij,j->...", x1, p, x1) + noise


class RegretEvaluator:
    def __init__(self, system: LQSystem) -> None:
        s = self.system = system
        p_all, _ = riccati(s.a, s.b, s.q, s.r, s.horizon)
        self.optimal = float(optimal_cost(p_all, s.w_cov, s.x1))

    def regret(self, gains: np.ndarray) -> float:
        s = self.system
        return float(policy_cost(s.a, s.b, s.q, s.r, gains, s.w_cov, s.x1)) - self.optimal


def rollout(system: LQSystem, gains: np.ndarray, noise: np.ndarray):
    s = system
    xs = np.empty((s.horizon + 1, s.n))
    us = np.empty((s.horizon, s.d))
    xs[0] = s.x1
    at, bt = s.a.T, s.b.T
    for h in range(s.horizon):
        u = gains[h] @ xs[h]
        us[h] = u
        xs[h + 1] = xs[h] @ at + u @ bt + noise[h]
    cost = float(np.einsum("hi,ij,hj->", xs[:-1], s.q, xs[:-1]) + np.einsum("hi,ij,hj->", us, s.r, us))
    return xs, us, cost


# ------------------------------------------------------------------ agents/lq/oracle.py


@dataclass
class OracleResult:
    theta: np.ndarray
    gains: np.ndarray
    cost: float
    n_feasible: int
    fallback: bool


class OptimisticOracle:
    def __init__(self, n, d, q, r, horizon, x1, noise_radius, n_candidates, rng):
        self.n, self.d, self.p = n, d, n + d
        self.q, self.r, self.horizon, self.x1 = q, r, horizon, x1
        self.w_cov = (noise_radius**2 / n) * np.eye(n)
        self.n_candidates = int(n_candidates)
        self.rng = rng

    def _unit_ball(self, count):
        dim = self.p * self.n
        g = self.rng.standard_normal((count, dim))
        g *= (self.rng.random(count) ** (1.0 / dim) / np.linalg.norm(g, axis=1))[:, None]
        return g.reshape(count, self.p, self.n)

    def __call__(self, center, gram, beta):
        inv_sqrt = np.linalg.inv(np.linalg.cholesky(gram)).T  # M = L^{-T}: MᵀVM = I (since 2026-11-28)
        cand = np.empty((self.n_candidates, self.p, self.n))
        cand[0] = center
        if self.n_candidates > 1:
            cand[1:] = center + beta * (inv_sqrt @ self._unit_ball(self.n_candidates - 1))
        norms = np.sqrt(np.einsum("kij,kij->k", cand, cand))
        outside = norms > 1.0
        cand[outside] /= norms[outside, None, None]
        diff = cand - center
        dist2 = np.einsum("kij,il,klj->k", diff, gram, diff)
        keep = ~outside | (dist2 <= beta * beta * (1.0 + 1e-9))
        feasible = cand[keep]
        fallback = feasible.shape[0] == 0
        if fallback:
            c = center / max(1.0, float(np.linalg.norm(center)))
            feasible = c[None]
        a, b = theta_to_ab(feasible, self.n)
        p_all, k_all = riccati(a, b, self.q, self.r, self.horizon)
        costs = optimal_cost(p_all, self.w_cov, self.x1)
        j = int(np.argmin(costs))
        return OracleResult(feasible[j], k_all[:, j], float(costs[j]), 0 if fallback else int(feasible.shape[0]), fallback)


# ------------------------------------------------------------------ agents/lq/ofu.py


@dataclass
class Plan:
    gains: np.ndarray
    theta_hat: np.ndarray
    theta_tilde: np.ndarray
    beta: float
    n_feasible: int
    fallback: bool


def confidence_radius(stats: RegularizedStats, n: int, noise_radius: float, alpha: float) -> float:
    p = stats.gram.shape[-1]
    _, logdet = np.linalg.slogdet(stats.gram)
    info = max(0.0, float(logdet) - p * math.log(stats.lam_min))
    return noise_radius * math.sqrt(2.0 * math.log(2.0 / alpha) + n * info) + math.sqrt(stats.lam_max) + stats.nu


class OFUAgent:
    def __init__(self, regularizer: Regularizer, oracle: OptimisticOracle, n, d, noise_radius, gamma, alpha, clip):
        self.regularizer, self.oracle = regularizer, oracle
        self.n, self.d, self.noise_radius, self.gamma, self.alpha, self.clip = n, d, noise_radius, gamma, alpha, clip
        self.n_clipped = 0

    def act(self) -> Plan:
        stats = self.regularizer.release()
        theta_hat = np.linalg.solve(stats.gram, stats.target)
        beta = confidence_radius(stats, self.n, self.noise_radius, self.alpha)
        res = self.oracle(theta_hat, stats.gram, beta)
        return Plan(res.gains, theta_hat, res.theta, beta, res.n_feasible, res.fallback)

    def observe(self, states, controls):
        z = np.hstack([states[:-1], controls])
        x_next = states[1:]
        if self.clip:
            z = self._clip(z, 1.0 + self.gamma)
            x_next = self._clip(x_next, 1.0)
        self.regularizer.observe(z.T @ z, z.T @ x_next)

    def _clip(self, v, bound):
        norms = np.linalg.norm(v, axis=1)
        over = norms > bound
        if over.any():
            self.n_clipped += int(over.sum())
            v = v.copy()
            v[over] *= (bound / norms[over])[:, None]
        return v


# ------------------------------------------------------------------ agents/lq/episodes.py


def build_reference_agent(system, name, params, privacy, episodes, agent_rng, noise_rng) -> OFUAgent:
    n, d, p = system.n, system.d, system.n + system.d
    oracle = OptimisticOracle(n, d, system.q, system.r, system.horizon, system.x1, system.noise_radius,
                              int(params["n_candidates"]), agent_rng)
    alpha = float(params["alpha"])
    if name == "ofu_rl":
        reg = NonPrivateRegularizer((), p, n, float(params["lam"]))
        return OFUAgent(reg, oracle, n, d, system.noise_radius, system.gamma, alpha, clip=False)
    cal = private_ofu_calibration(privacy,
                                  episodes, system.horizon, system.gamma, n, d, alpha)
    reg = private_regularizer(cal, p, n, episodes, noise_rng)
    return OFUAgent(reg, oracle, n, d, system.noise_radius, system.gamma, alpha, clip=True)


def reference_run_episodes(system, agent: OFUAgent, episodes, env_rng, n_checkpoints):
    """Today's loop; returns (checkpoint table without the calibration columns, per-episode
    exact and sampled regret, per-episode β)."""
    evaluator = RegretEvaluator(system)
    theta_star = system.theta
    marks = set(log_checkpoints(episodes, n_checkpoints).tolist())
    rows, regrets, sampled, betas = [], [], [], []
    cum_regret = cum_sampled = 0.0
    n_fallback = 0
    for k in range(1, episodes + 1):
        plan = agent.act()
        noise = sample_noise(system, env_rng, system.horizon)
        states, controls, cost = rollout(system, plan.gains, noise)
        agent.observe(states, controls)
        regret = evaluator.regret(plan.gains)
        cum_regret += regret
        cum_sampled += cost - evaluator.optimal
        n_fallback += plan.fallback
        regrets.append(regret)
        sampled.append(cost - evaluator.optimal)
        betas.append(plan.beta)
        if k in marks:
            reg = agent.regularizer
            rows.append({
                "episode": k, "regret": cum_regret, "regret_sampled": cum_sampled, "episode_regret": regret,
                "beta": plan.beta, "theta_hat_error": float(np.linalg.norm(plan.theta_hat - theta_star)),
                "theta_tilde_error": float(np.linalg.norm(plan.theta_tilde - theta_star)),
                "n_feasible": plan.n_feasible, "n_oracle_fallback": n_fallback, "n_repaired": reg.n_repaired,
                "n_not_pd": reg.n_not_pd, "n_clipped": agent.n_clipped, "optimal_cost": evaluator.optimal,
            })
    return pd.DataFrame(rows), np.array(regrets), np.array(sampled), np.array(betas)
