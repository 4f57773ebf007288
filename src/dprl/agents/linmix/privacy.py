"""The LinOpt agents' privacy as the built agent holds it: its accounting and the audits of
its Privatizer (Zhou 2022, Sec. 6.1 and Remark 6.9; ``src/dprl/README.md``,
"Neighbouring relations: replacement" and "Privacy audits"; claim Z1). The same module in
every paper's agent package:

- :func:`held_calibration`: the calibration with the noise the built agent's two
  regularizers hold (the σ's its compiled loop reads), whose
  ``accounted_epsilon``/``accounted_delta`` are the job's accounting;
- the neighbouring inputs (:func:`audit_features`, :func:`neighbouring_statistics`) and
  the samplers of the audit (:func:`central_sampler`, :func:`local_sampler`), which draw
  from replicas of the agent's own regularizers (``Regularizer.replicas``).
"""

from __future__ import annotations

import dataclasses

import numpy as np

from dprl.agents.linmix.calibration import LinOptCalibration
from dprl.agents.protocol import BuiltAgent
from dprl.envs.linear_mixture import KnownFeatures, make_mixture
from dprl.privacy.regularizer import CentralRegularizer, LocalRegularizer, RegularizedStats

AUDITED = {"central_privatizer": "private_linopt_vi", "local_randomizer": "ldp_linopt_vi"}  # audit row -> agent


def held_calibration(built: BuiltAgent) -> LinOptCalibration | None:
    """The calibration of the noise the built agent holds (``None`` for a non-private
    agent): the build's calibration with the (p, r) calibrations of the agent's own
    regularizers and their σ's, so the accounting reads the agent, not the config."""
    if built.calibration is None:
        return None
    p, r = built.agent.reg_p.calibration, built.agent.reg_r.calibration
    sigmas = np.array([p.sigma_gram, p.sigma_target, r.sigma_gram, r.sigma_target])
    return dataclasses.replace(built.calibration, p=p, r=r, sigmas=sigmas)


def audit_features(d: int, H: int) -> KnownFeatures:
    """A tiny mixture (d1 = d2 = d) whose public features fix the sensitivities."""
    return make_mixture(max(d, 1), 2, d, d, H, np.random.default_rng(0)).features()


def neighbouring_statistics(feat: KnownFeatures, first: bool) -> tuple[np.ndarray, ...]:
    """User 1's per-step statistics in the hardest neighbouring pair for these features.

    ``first=True``: ``V ≡ H`` so ``ϕ = c`` (every coordinate at its maximum ``H``), target
    ``H``; reward feature ``e_1`` with reward 1. ``first=False``: ``V ≡ 0`` (``ϕ = 0``), and
    ``e_2`` with reward 1 (``e_1`` with reward 0 if ``d2 = 1``). The differences attain the
    replacement sensitivities ``d1 H²``, ``sqrt(d1) H²``, ``sqrt 2``, ``sqrt 2``.
    """
    H, d1, d2 = feat.horizon, feat.d1, feat.d2
    phi = np.full(d1, float(H)) if first else np.zeros(d1)
    y = float(H) if first else 0.0
    e = np.zeros(d2)
    rew = 1.0
    if first or d2 == 1:
        e[0] = 1.0
        rew = 1.0 if first else 0.0
    else:
        e[1] = 1.0
    gp = np.broadcast_to(np.outer(phi, phi), (H, d1, d1))
    tp = np.broadcast_to((phi * y)[:, None], (H, d1, 1))
    gr = np.broadcast_to(np.outer(e, e), (H, d2, d2))
    tr = np.broadcast_to((e * rew)[:, None], (H, d2, 1))
    return gp, tp, gr, tr


def _flatten(stats: RegularizedStats, p: int) -> np.ndarray:
    """One release per run: the upper triangle of every ``V_{k,h}`` and every ``U_{k,h}``."""
    iu = np.triu_indices(p)
    n = stats.gram.shape[0]
    return np.concatenate([stats.gram[..., iu[0], iu[1]].reshape(n, -1), stats.target.reshape(n, -1)], axis=1)


def _regularizers(built: BuiltAgent, kind: type) -> tuple:
    reg_p, reg_r = built.agent.reg_p, built.agent.reg_r
    if not (isinstance(reg_p, kind) and isinstance(reg_r, kind)):
        raise ValueError(f"this audit needs an agent with {kind.__name__}s, got {type(reg_p).__name__}")
    return reg_p, reg_r


def central_sampler(built: BuiltAgent, feat: KnownFeatures):
    """``sample(first, n, rng)``: ``n`` replicas of the built agent's central Privatizer
    (its ``4H`` tree counters over its ``K`` users) on users ``1..K-1`` (user 1 from
    :func:`neighbouring_statistics`, the others zero), returning every release the other
    users' policies are computed from (after 1..K-1 users)."""
    agent_p, agent_r = _regularizers(built, CentralRegularizer)
    K = agent_p.gram_counter.max_elements

    def sample(first: bool, n: int, rng: np.random.Generator) -> np.ndarray:
        gp, tp, gr, tr = neighbouring_statistics(feat, first)
        reg_p, reg_r = agent_p.replicas(n, rng), agent_r.replicas(n, rng)
        outs = []
        for t in range(1, K):
            for reg, g, c in ((reg_p, gp, tp), (reg_r, gr, tr)):
                if t == 1:
                    reg.observe(np.broadcast_to(g, (n, *g.shape)), np.broadcast_to(c, (n, *c.shape)))
                else:
                    reg.observe(np.zeros((n, *g.shape)), np.zeros((n, *c.shape)))
                outs.append(_flatten(reg.release(), g.shape[-1]))
        return np.concatenate(outs, axis=1)

    return sample


def local_sampler(built: BuiltAgent, feat: KnownFeatures):
    """``sample(first, n, rng)``: ``n`` runs of one user's local randomiser (Remark 6.9),
    through replicas of the built agent's :class:`LocalRegularizer` s (what the server holds
    after her)."""
    agent_p, agent_r = _regularizers(built, LocalRegularizer)

    def sample(first: bool, n: int, rng: np.random.Generator) -> np.ndarray:
        gp, tp, gr, tr = neighbouring_statistics(feat, first)
        reg_p, reg_r = agent_p.replicas(n, rng), agent_r.replicas(n, rng)
        outs = []
        for reg, g, c in ((reg_p, gp, tp), (reg_r, gr, tr)):
            reg.observe(np.broadcast_to(g, (n, *g.shape)), np.broadcast_to(c, (n, *c.shape)))
            outs.append(_flatten(reg.release(), g.shape[-1]))
        return np.concatenate(outs, axis=1)

    return sample
