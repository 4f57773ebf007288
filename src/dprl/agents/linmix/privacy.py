"""The LinOpt agents' privacy as the built agent holds it: its accounting and the audits of
its Privatizer (Zhou 2022, Sec. 6.1 and Remark 6.9; ``src/dprl/README.md``,
"Neighbouring relations: replacement" and "Privacy audits"; claim Z1). The same module in
every paper's agent package:

- :func:`held_calibration`: the calibration with the noise the built agent's two
  regularizers hold (the σ's its compiled loop reads), whose
  ``accounted_epsilon``/``accounted_delta`` are the job's accounting;
- :func:`drawn_calibration`: the same with the σ's the compiled path drew with (a job that
  ran the agent accounts from it, and refuses if they differ from the held ones);
- the neighbouring inputs (:func:`audit_features`, :func:`neighbouring_statistics`) and
  the samplers of the audit (:func:`central_sampler`, :func:`local_sampler`), which draw
  through the episode loop's own compiled kernels (:func:`dprl.agents.linmix.loop.audit_releases`)
  with the σ's of the agent's own regularizers.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from dprl.agents.linmix.calibration import LinOptCalibration
from dprl.agents.linmix.loop import CENTRAL, LOCAL, audit_releases
from dprl.agents.protocol import BuiltAgent
from dprl.envs.linear_mixture import KnownFeatures, make_mixture
from dprl.privacy.regularizer import CentralRegularizer, LocalRegularizer, RegularizerCalibration

AUDITED = {"central_privatizer": "private_linopt_vi", "local_randomizer": "ldp_linopt_vi"}  # audit row -> agent


def held_calibration(built: BuiltAgent) -> LinOptCalibration | None:
    """The calibration of the noise the built agent holds (``None`` for a non-private
    agent): the build's calibration with the (p, r) calibrations of the agent's own
    regularizers and their σ's, so the accounting reads the agent, not the config."""
    if built.calibration is None:
        return None
    return _with_regularizers(built.calibration, built.agent.reg_p.calibration, built.agent.reg_r.calibration)


def _with_regularizers(cal: LinOptCalibration, p: RegularizerCalibration, r: RegularizerCalibration) -> LinOptCalibration:
    sigmas = np.array([p.sigma_gram, p.sigma_target, r.sigma_gram, r.sigma_target])
    return dataclasses.replace(cal, p=p, r=r, sigmas=sigmas)


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


def _regularizers(built: BuiltAgent, kind: type) -> tuple:
    reg_p, reg_r = built.agent.reg_p, built.agent.reg_r
    if not (isinstance(reg_p, kind) and isinstance(reg_r, kind)):
        raise ValueError(f"this audit needs an agent with {kind.__name__}s, got {type(reg_p).__name__}")
    return reg_p, reg_r


def _sampler(reg_p, reg_r, feat: KnownFeatures, kind: int, users: int, levels: int):
    """``sample(first, n, rng)``: ``n`` runs of the agent's two regularizers through the
    episode loop's own compiled kernels (:func:`dprl.agents.linmix.loop.audit_releases`),
    with the σ's, shift and ``λ_min`` the loop reads from them; user 1 from
    :func:`neighbouring_statistics`, users 2..``users`` zero; every release after each user,
    p's then r's (the upper triangle of every ``V_{k,h}``, then every ``U_{k,h}``). The σ's
    drawn with are recorded in the regularizers' ``drawn``."""
    H, d1, d2 = feat.horizon, feat.d1, feat.d2
    width = users * H * (d1 * (d1 + 1) // 2 + d1 + d2 * (d2 + 1) // 2 + d2)
    params = np.array([[c.sigma_gram, c.sigma_target, c.shift, c.lam_min] for c in (reg_p.calibration, reg_r.calibration)])
    if reg_p.noisy != reg_r.noisy:
        raise ValueError("both regressions of the Privatizer add noise, or neither does")

    def sample(first: bool, n: int, rng: np.random.Generator) -> np.ndarray:
        gp, tp, gr, tr = (np.ascontiguousarray(a, dtype=float).reshape(-1) for a in neighbouring_statistics(feat, first))
        out = np.empty((n, width))
        audit_releases(kind, H, d1, d2, gp, tp, gr, tr, n, users, levels, reg_p.noisy, params, rng, reg_p.drawn,
                       reg_r.drawn, out)
        return out

    return sample


def central_sampler(built: BuiltAgent, feat: KnownFeatures):
    """``sample(first, n, rng)``: ``n`` runs of the built agent's central Privatizer (its
    ``4H`` tree counters over its ``K`` users) on users ``1..K-1`` (user 1 from
    :func:`neighbouring_statistics`, the others zero), returning every release the other
    users' policies are computed from (after 1..K-1 users): :func:`_sampler`."""
    agent_p, agent_r = _regularizers(built, CentralRegularizer)
    K = agent_p.gram_counter.max_elements
    return _sampler(agent_p, agent_r, feat, CENTRAL, K - 1, agent_p.gram_counter.levels)


def local_sampler(built: BuiltAgent, feat: KnownFeatures):
    """``sample(first, n, rng)``: ``n`` runs of one user's local randomiser (Remark 6.9)
    through the built agent's :class:`LocalRegularizer` s' kernels (what the server holds
    after her): :func:`_sampler`."""
    agent_p, agent_r = _regularizers(built, LocalRegularizer)
    return _sampler(agent_p, agent_r, feat, LOCAL, 1, 1)


def drawn_calibration(built: BuiltAgent, check: bool = True) -> LinOptCalibration | None:
    """:func:`held_calibration` with the σ's the compiled path drew the two regularizers'
    noise with (:meth:`~dprl.privacy.regularizer.Regularizer.drawn_calibration`; ``check``:
    raise if they differ from the held ones): what a job that ran the agent accounts from."""
    if built.calibration is None:
        return None
    return _with_regularizers(built.calibration, built.agent.reg_p.drawn_calibration(check),
                              built.agent.reg_r.drawn_calibration(check))
