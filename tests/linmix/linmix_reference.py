"""Reference oracle for the compiled LinOpt loop: the plain NumPy planner and episode loop
the package ran before its loops were compiled, kept in the tests only (``test_compiled_loop.py`` checks
the compiled loop equals it to round-off; the benchmarks time both). It drives the
package's :class:`LinOptAgent` through its Regularizer interface, with the planner
replaced by the NumPy one below."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pandas as pd

from dprl.agents.linmix.linopt import LinOptAgent, Plan, confidence_radii
from dprl.runner.checkpoints import log_checkpoints
from dprl.envs.linear_mixture import KnownFeatures, LinearMixtureMDP
from dprl.privacy.regularizer import RegularizedStats


def reference_plan(feat: KnownFeatures, stats_p: RegularizedStats, stats_r: RegularizedStats, beta_p: float, beta_r: float,
                   policy: np.ndarray | None) -> Plan:
    """Optimistic backward recursion from released statistics only.

    ``policy=None``: LinOpt-VI (``V_h = max_a Q_h``, line 11). Otherwise LinOpt-PO with the
    current stochastic ``policy`` of shape ``(H, S, A)`` (``V_h = <Q_h, π_h>``, line 12).
    """
    H, S, A, d1 = feat.horizon, feat.S, feat.A, feat.d1
    psi_flat = feat.psi.reshape(S * A * d1, S)
    phi_r = feat.phi_r.reshape(S * A, -1)
    # lines 5-6 for all h at once (batched solves); Λ is SPD after the Regularizer's floor
    theta_p = np.linalg.solve(stats_p.gram, stats_p.target)[..., 0]  # (H, d1)
    theta_r = np.linalg.solve(stats_r.gram, stats_r.target)[..., 0]  # (H, d2)
    inv_p = np.linalg.inv(stats_p.gram)
    inv_r = np.linalg.inv(stats_r.gram)
    # line 9/10 reward part: Γ_r = β_r ||φ||_{Λ_r^{-1}} and φᵀθ̂_r, for all h
    quad_r = ((phi_r @ inv_r) * phi_r).sum(axis=-1)  # (H, SA); matmul beats einsum here
    reward_part = theta_r @ phi_r.T + beta_r * np.sqrt(np.maximum(quad_r, 0.0))  # (H, SA)
    V = np.zeros((H + 1, S))
    Q = np.empty((H, S, A))
    phis = np.empty((H, S, A, d1))
    for h in range(H - 1, -1, -1):
        # line 7: ϕ^k_h(s, a) = Σ_s' ψ(s, a, s') V^k_{h+1}(s') — one matmul over (s, a, i)
        # (einsum, not BLAS gemv: OpenBLAS threads this matrix-vector product and its
        # threads spin on a busy machine — 20x slower at S=300 when cores are shared)
        phi = np.einsum("nt,t->n", psi_flat, V[h + 1]).reshape(S * A, d1)
        phis[h] = phi.reshape(S, A, d1)
        quad = ((phi @ inv_p[h]) * phi).sum(axis=1)
        q = phi @ theta_p[h] + beta_p * np.sqrt(np.maximum(quad, 0.0)) + reward_part[h]
        # line 10: clip to [0, H - h + 1] (h is 0-based here)
        Q[h] = np.clip(q, 0.0, H - h).reshape(S, A)
        if policy is None:
            V[h] = Q[h].max(axis=1)
        else:
            V[h] = (Q[h] * policy[h]).sum(axis=1)
    return Plan(Q, V, phis)


class ReferenceAgent(LinOptAgent):
    """The package's agent with the NumPy planner."""

    def begin_episode(self) -> Plan:
        stats_p, stats_r = self.reg_p.release(), self.reg_r.release()
        self.beta = confidence_radii(stats_p, stats_r, self.feat.d1, self.feat.d2, self.K, self.feat.horizon, self.alpha)
        self._plan = reference_plan(self.feat, stats_p, stats_r, *self.beta, self.policy)
        return self._plan


def reference_run_episodes(env: LinearMixtureMDP, setup, K: int, env_rng: np.random.Generator, agent_rng: np.random.Generator,
                            n_checkpoints: int = 30, progress: Callable[[int, int], None] | None = None,
                            record_actions: bool = False) -> pd.DataFrame:
    """Run ``K`` episodes; one row per checkpoint with cumulative exact regret.

    Environment randomness: ``2H`` uniforms per episode from ``env_rng`` (next state,
    reward), drawn whether or not used, so all agents see the same stream (CRN).
    """
    agent = setup.agent
    H = env.horizon
    v_star = float(env.optimal_values()[0, env.s1])
    marks = set(log_checkpoints(K, n_checkpoints).tolist())
    rows = []
    cum_regret = cum_return = 0.0
    states = np.empty(H + 1, dtype=np.int64)
    actions = np.empty(H, dtype=np.int64)
    rewards = np.empty(H)
    self_actions = []
    for k in range(1, K + 1):
        agent.begin_episode()
        pi = agent.act_policy()
        value = env.policy_value(pi)
        cum_regret += v_star - value
        u = env_rng.random((H, 2))
        a_u = agent_rng.random(H) if agent.mode == "po" else None
        s = env.s1
        states[0] = s
        for h in range(H):
            if a_u is None:
                a = int(pi[h, s].argmax())
            else:
                a = int(min(np.searchsorted(np.cumsum(pi[h, s]), a_u[h], side="right"), env.A - 1))
            actions[h] = a
            rewards[h], s = env.step(s, a, u[h, 0], u[h, 1])
            states[h + 1] = s
        cum_return += rewards.sum()
        if record_actions:
            self_actions.append(actions.copy())
        agent.end_episode(states, actions, rewards)
        if k in marks:
            rows.append({
                "episode": k,
                "T": k * H,
                "regret": cum_regret,
                "sampled_return": cum_return,
                "optimal_value": v_star,
                "beta_p": agent.beta[0],
                "beta_r": agent.beta[1],
                "n_repaired": agent.reg_p.n_repaired + agent.reg_r.n_repaired,
                "n_not_pd": agent.reg_p.n_not_pd + agent.reg_r.n_not_pd,
            })
        if progress is not None:
            progress(k, K)
    df = pd.DataFrame(rows)
    if record_actions:
        df.attrs["actions"] = np.array(self_actions)
    return df
