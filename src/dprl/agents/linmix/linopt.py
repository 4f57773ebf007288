"""LinOpt-VI-Reg (Zhou 2022, Algorithm 1; UCRL-VTR with changing regularizers) and
LinOpt-PO-Reg (Algorithm 2; OPPO with bandit feedback), with any Regularizer from
:mod:`dprl.privacy.regularizer` (non-private ridge, central JDP tree counters, local DP).

Per step ``h`` two ridge regressions: ``θ̂_{h,p} = Λ_{h,p}^{-1} u_{h,p}`` on the
value-targeted features ``ϕ_j = ϕ_{V^j_{h+1}}(s^j_h, a^j_h)`` with targets
``V^j_{h+1}(s^j_{h+1})`` — each past episode ``j`` uses *its own* value estimate ``V^j``
(UCRL-VTR, and what the Privatizer's streams need: an element is fixed when it arrives) —
and ``θ̂_{h,r} = Λ_{h,r}^{-1} u_{h,r}`` on ``φ(s^j_h, a^j_h)`` with the observed rewards.

Privacy structure: the planner :func:`plan` is a pure function of the *released*
statistics (``RegularizedStats`` of both regressions), the known features, the
confidence radii and (PO) the current policy. The agent never keeps raw sums: the only
path from a user's trajectory to the agent's state is ``Regularizer.observe``.

Choices the paper leaves open (none affects privacy: all are post-processing of releases
or use only the agent's own randomness): greedy ties (frequent when every ``Q`` is
clipped at ``H-h+1``) are broken uniformly at random from the agent stream; a released
Gram matrix with an eigenvalue below ``λ_min`` (outside the good event) is floored by the
Regularizer and counted (``repaired`` column); Algorithm 1 line 1's ``Λ^1 = 0`` is the
empty sum, so the first release is the regularizer alone (``λI`` or noise + shift).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from dprl.checks import check_number
from dprl.envs.linear_mixture import KnownFeatures
from dprl.privacy.regularizer import RegularizedStats, Regularizer


def confidence_radii(
    stats_p: RegularizedStats, stats_r: RegularizedStats, d1: int, d2: int, K: int, H: int, alpha: float
) -> tuple[float, float]:
    """``β_p(α)``, ``β_r(α)`` of Lemma 3.1:
    ``β_p = (H/2) sqrt(2 ln(H/α) + d1 ln(1 + KH²/λ_min,p)) + sqrt(d1 λ_max,p) + ν_p``,
    ``β_r = (1/2) sqrt(2 ln(H/α) + d2 ln(1 + K/(d2 λ_min,r))) + sqrt(d2 λ_max,r) + ν_r``."""
    log_h = 2.0 * math.log(H / alpha)
    beta_p = 0.5 * H * math.sqrt(log_h + d1 * math.log1p(K * H**2 / stats_p.lam_min)) + math.sqrt(d1 * stats_p.lam_max) + stats_p.nu
    beta_r = 0.5 * math.sqrt(log_h + d2 * math.log1p(K / (d2 * stats_r.lam_min))) + math.sqrt(d2 * stats_r.lam_max) + stats_r.nu
    return beta_p, beta_r


@dataclass
class Plan:
    """The output of one planning pass (Alg. 1 lines 4-12 / Alg. 2 lines 5-12)."""

    Q: np.ndarray  # (H, S, A)
    V: np.ndarray  # (H+1, S): V^k_h, V^k_{H+1} = 0
    phi_p: np.ndarray  # (H, S, A, d1): ϕ^k_h = ϕ_{V^k_{h+1}} for every (s, a)


def plan(
    feat: KnownFeatures,
    stats_p: RegularizedStats,
    stats_r: RegularizedStats,
    beta_p: float,
    beta_r: float,
    policy: np.ndarray | None,
) -> Plan:
    """Optimistic backward recursion from released statistics only (compiled,
    :func:`dprl.agents.linmix.loop.plan_into`, the kernel the episode loop runs).

    ``policy=None``: LinOpt-VI (``V_h = max_a Q_h``, line 11). Otherwise LinOpt-PO with the
    current stochastic ``policy`` of shape ``(H, S, A)`` (``V_h = <Q_h, π_h>``, line 12).
    """
    from dprl.agents.linmix.loop import plan_into, plan_work, psi_rows

    H, S, A, d1 = feat.horizon, feat.S, feat.A, feat.d1
    Q, V, phis = np.empty((H, S, A)), np.empty((H + 1, S)), np.empty((H, d1, S * A))
    po = policy is not None
    plan_into(*psi_rows(feat), np.ascontiguousarray(feat.phi_r.reshape(S * A, -1).T, dtype=float),
              np.ascontiguousarray(stats_p.gram, dtype=float), np.ascontiguousarray(stats_p.target, dtype=float),
              np.ascontiguousarray(stats_r.gram, dtype=float), np.ascontiguousarray(stats_r.target, dtype=float),
              float(beta_p), float(beta_r), po, np.ascontiguousarray(policy, dtype=float) if po else np.zeros((H, S, A)),
              Q, V, phis, plan_work(S, A, d1, stats_r.gram.shape[-1]))
    return Plan(Q, V, np.ascontiguousarray(np.moveaxis(phis.reshape(H, d1, S, A), 1, 3)))


class LinOptAgent:
    """LinOpt-VI-Reg (``mode="vi"``) or LinOpt-PO-Reg (``mode="po"``) over a pair of
    Regularizers (``batch_shape=(H,)``; ``p = d1`` resp. ``d2``, ``q = 1``)."""

    def __init__(
        self,
        feat: KnownFeatures,
        K: int,
        reg_p: Regularizer,
        reg_r: Regularizer,
        mode: str,
        alpha: float,
        rng: np.random.Generator,
        eta: float | None = None,
    ) -> None:
        if mode not in ("vi", "po"):
            raise ValueError(f"mode must be 'vi' or 'po', got {mode!r}")
        if not 0 < alpha <= 1:
            raise ValueError(f"confidence level alpha must lie in (0, 1], got {alpha}")
        check_number("K", K, minimum=1, integer=True)
        if eta is not None:
            # a NaN step size turns every mirror-descent policy into NaN
            check_number("eta", eta, exclusive_minimum=0.0)
        H, S, A = feat.horizon, feat.S, feat.A
        if reg_p.batch_shape != (H,) or reg_p.p != feat.d1 or reg_r.batch_shape != (H,) or reg_r.p != feat.d2:
            raise ValueError("regularizers must have batch_shape (H,) and dimensions d1 (transition) and d2 (reward)")
        self.feat, self.K, self.mode, self.alpha, self.rng = feat, int(K), mode, float(alpha), rng
        self.reg_p, self.reg_r = reg_p, reg_r
        # OPPO step size (Cai et al. 2020): η = sqrt(2 log|A| / (H² K))
        self.eta = math.sqrt(2.0 * math.log(max(A, 2)) / (H**2 * K)) if eta is None else float(eta)
        self.log_policy = np.full((H, S, A), -math.log(A)) if mode == "po" else None
        self._plan: Plan | None = None
        self.beta = (np.nan, np.nan)

    @property
    def policy(self) -> np.ndarray | None:
        """Current stochastic policy ``π^k`` (PO) of shape ``(H, S, A)``."""
        if self.log_policy is None:
            return None
        return np.exp(self.log_policy)

    def begin_episode(self) -> Plan:
        """Receive the released statistics (Alg. line 14 of the previous episode) and plan."""
        stats_p, stats_r = self.reg_p.release(), self.reg_r.release()
        self.beta = confidence_radii(stats_p, stats_r, self.feat.d1, self.feat.d2, self.K, self.feat.horizon, self.alpha)
        self._plan = plan(self.feat, stats_p, stats_r, *self.beta, self.policy)
        return self._plan

    def act_policy(self) -> np.ndarray:
        """The committed policy as an ``(H, S, A)`` matrix (VI: greedy with uniform random
        tie-breaking from the agent's own stream; PO: ``π^k``)."""
        assert self._plan is not None
        if self.mode == "po":
            return self.policy
        Q = self._plan.Q
        best = Q >= Q.max(axis=2, keepdims=True) - 1e-12 * max(1.0, self.feat.horizon)
        # random tie-breaking: the first maximiser under a random priority per (h, s, a)
        prio = np.where(best, self.rng.random(Q.shape), -1.0)
        actions = prio.argmax(axis=2)
        pi = np.zeros_like(Q)
        np.put_along_axis(pi, actions[..., None], 1.0, axis=2)
        return pi

    def end_episode(self, states: np.ndarray, actions: np.ndarray, rewards: np.ndarray) -> None:
        """Send the user's statistics to the Regularizer and (PO) take the mirror step.

        ``states`` has ``H+1`` entries (``s_1..s_{H+1}``), ``actions``/``rewards`` ``H``.
        """
        assert self._plan is not None
        H = self.feat.horizon
        hs = np.arange(H)
        s, a, s_next = states[:-1], actions, states[1:]
        phi = self._plan.phi_p[hs, s, a]  # (H, d1): ϕ_{V^k_{h+1}}(s_h, a_h), this episode's V
        y = self._plan.V[hs + 1, s_next]  # V^k_{h+1}(s_{h+1})
        phr = self.feat.phi_r[s, a]  # (H, d2)
        self.reg_p.observe(phi[:, :, None] * phi[:, None, :], (phi * y[:, None])[..., None])
        self.reg_r.observe(phr[:, :, None] * phr[:, None, :], (phr * rewards[:, None])[..., None])
        if self.mode == "po":
            # Alg. 2 line 15: π^{k+1}_h ∝ π^k_h exp(η Q^k_h), in log space
            lp = self.log_policy + self.eta * self._plan.Q
            lp -= lp.max(axis=2, keepdims=True)
            lp -= np.log(np.exp(lp).sum(axis=2, keepdims=True))
            self.log_policy = lp
