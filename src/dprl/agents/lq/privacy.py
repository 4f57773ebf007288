"""Private-OFU-RL's privacy as the built agent holds it: its accounting and the audit of
its counters (Theorem 2's proof; ``src/dprl/README.md``, "Neighbouring relations:
replacement" and "Privacy audits"). The same module in every paper's agent package:

- :func:`held_calibration`: the calibration with the noise the built agent's
  :class:`CentralRegularizer` holds (the σ's its compiled loop reads), whose
  ``accounted_epsilon``/``accounted_delta`` are the job's accounting;
- :func:`drawn_calibration`: the same with the σ's the compiled path drew with (a job that
  ran the agent accounts from it, and refuses if they differ from the held ones);
- the neighbouring inputs (:func:`replacement_pair`) and the audit (:func:`audit_counters`),
  which draws through the episode loop's own compiled kernels
  (:func:`dprl.agents.lq.loop.audit_releases`) with the agent's regularizer's σ's, releasing
  ``(V_k, U_k)`` as the loop does (B1's symmetric-noise release of ``Σ_{j<k} Σ_h z zᵀ``
  plus the shift, and B2's release of ``Σ_{j<k} Σ_h z x_{h+1}ᵀ``). The mechanism's output
  is the whole sequence of ``K`` releases (continual observation), ``n`` independent runs
  of it per input.

Neighbouring inputs follow Definition 2, *replacement* of user 1 (who lies in the most
tree nodes, ``L``) by another real user; every other user is the same in ``D`` and ``D'``
(null here: counters are linear, so other users shift both outputs alike). Each user keeps
one ``(z, x)`` for all ``H`` steps, so her contributions are ``H z zᵀ`` and ``H z xᵀ`` with
``||z|| = 1+γ``, ``||x|| = 1``. The pairs (:func:`replacement_pair`) attain the worst
cases of :mod:`dprl.privacy.replacement`:

- ``B1``: ``z ⟂ z'`` (``||ΔG||² = 2Δ1²``), ``x = x'``;
- ``B2``: ``z = z'``, ``x' = -x`` (``||ΔC||² = 4Δ2²``);
- ``joint``: ``z'`` at 60° to ``z``, ``x' = -x`` (``(||ΔG||/Δ1)² + (||ΔC||/Δ2)² = 4.5``).
"""

from __future__ import annotations

import dataclasses

import numpy as np

from dprl.agents.lq.calibration import PrivateOFUCalibration
from dprl.agents.lq.loop import audit_releases
from dprl.agents.protocol import BuiltAgent
from dprl.envs.lq import LQSystem
from dprl.privacy.audit import AuditResult, audit
from dprl.privacy.regularizer import CentralRegularizer

User = tuple[np.ndarray, np.ndarray]  # (Σ_h z zᵀ, Σ_h z xᵀ)
PAIR_NAMES = ("B1", "B2", "joint")


def user_statistics(z: np.ndarray, x: np.ndarray, horizon: int) -> User:
    """One user's ``(Σ_h z zᵀ, Σ_h z xᵀ)`` when she has the same ``(z, x)`` at every step."""
    return horizon * np.outer(z, z), horizon * np.outer(z, x)


def replacement_pair(which: str, n: int, d: int, horizon: int, gamma: float) -> tuple[User, User]:
    """The worst replacement pair for ``B1``, ``B2`` or ``joint`` (module docstring)."""
    p = n + d
    if p < 2:
        raise ValueError("replacement pairs need n + d >= 2")
    c = 1.0 + gamma
    e1, e2 = np.eye(p)[0], np.eye(p)[1]
    x = np.eye(n)[0]
    z = c * e1
    if which == "B1":
        z2, x2 = c * e2, x
    elif which == "B2":
        z2, x2 = z, -x
    elif which == "joint":
        z2, x2 = c * (0.5 * e1 + np.sqrt(0.75) * e2), -x
    else:
        raise ValueError(f"unknown pair {which!r}; expected one of {PAIR_NAMES}")
    return user_statistics(z, x, horizon), user_statistics(z2, x2, horizon)


def held_calibration(built: BuiltAgent) -> PrivateOFUCalibration | None:
    """The calibration of the noise the built agent holds (``None`` for OFU-RL): the
    build's calibration with the σ's, shift and bounds of the agent's own regularizer
    (what its compiled loop reads), so the accounting reads the agent, not the config."""
    if built.calibration is None:
        return None
    return dataclasses.replace(built.calibration, regularizer=built.agent.regularizer.calibration)


def audit_system(n: int, d: int, horizon: int, gamma: float) -> LQSystem:
    """A system with the audit's sizes and ``γ`` (Assumption 1 holds: ``A`` a shift of norm
    0.05, ``B = C_B e_1``, ``C_w = 0.05``, ``C_A + γ C_B + C_w <= 1``): what Private-OFU-RL
    is built for to audit its counters, which the audit feeds its own users
    (:func:`replacement_pair`), never this system's trajectories."""
    c_a, c_w = 0.05, 0.05
    c_b = min(0.5, (1.0 - c_a - c_w) / gamma)
    return LQSystem(c_a * np.eye(n, k=-1) if n > 1 else np.full((1, 1), c_a), c_b * np.eye(n, d), np.eye(n), np.eye(d),
                    np.zeros(n), horizon, c_w, c_a, c_b, gamma=gamma, name="audit_stream")


def _regularizer(built: BuiltAgent) -> CentralRegularizer:
    reg = built.agent.regularizer
    if not isinstance(reg, CentralRegularizer):
        raise ValueError(f"a privacy audit needs Private-OFU-RL's counters, got a {type(reg).__name__}")
    return reg


def regularizer_releases(
    reg: CentralRegularizer, first: User, runs: int, rng: np.random.Generator, which: str,
) -> np.ndarray:
    """``runs`` independent runs of the agent's regularizer ``reg`` fed ``first`` then null
    users up to its ``K`` episodes, through the episode loop's own compiled kernels
    (:func:`dprl.agents.lq.loop.audit_releases`: the noise drawn by the loop's
    ``_observe_central``, with the σ's, shift and ``λ_min`` the loop reads from ``reg``);
    returns, per run, all ``K`` releases of ``V_k`` (upper triangle), ``U_k``, or both
    (``which`` = B1, B2, joint). The σ's drawn with are recorded in ``reg.drawn``, from which
    the audit job accounts (:meth:`~dprl.privacy.regularizer.Regularizer.drawn_calibration`)."""
    if which not in PAIR_NAMES:
        raise ValueError(f"unknown pair {which!r}; expected one of {PAIR_NAMES}")
    gram, target = (np.ascontiguousarray(a, dtype=float) for a in first)
    p, q = target.shape
    counter = reg.gram_counter
    with_gram, with_target = which in ("B1", "joint"), which in ("B2", "joint")
    width = (p * (p + 1) // 2) * with_gram + p * q * with_target
    out = np.empty((runs, counter.max_elements * width))
    c = reg.calibration
    audit_releases(gram, target, runs, counter.max_elements, counter.levels, reg.noisy, float(c.sigma_gram),
                   float(c.sigma_target), float(c.shift), float(c.lam_min), with_gram, with_target, rng, reg.drawn, out)
    return out


def drawn_calibration(built: BuiltAgent, check: bool = True) -> PrivateOFUCalibration | None:
    """:func:`held_calibration` with the σ's the compiled path drew the agent's noise with
    (:meth:`~dprl.privacy.regularizer.Regularizer.drawn_calibration`; ``check``: raise if
    they differ from the held ones): what a job that ran the agent accounts from."""
    if built.calibration is None:
        return None
    return dataclasses.replace(built.calibration, regularizer=_regularizer(built).drawn_calibration(check))


def audit_counters(
    built: BuiltAgent, runs: int, rng: np.random.Generator, confidence: float = 1e-3,
    pairs: tuple[str, ...] = PAIR_NAMES, system: LQSystem | None = None,
) -> dict[str, AuditResult]:
    """Audit the built agent's B1, B2 at their claimed guarantees and both together at
    (ε, δ), each on its worst replacement pair for the ``n, d, γ`` and horizon of ``system``
    (default: the agent's own; a plug-in's agent exposes only its ``regularizer``).
    The claims are those of the calibration the agent was built with; the noise is the
    one its regularizer holds. ``pairs``: which of :data:`PAIR_NAMES` to audit."""
    cal, agent, reg = built.calibration, built.agent, _regularizer(built)
    sizes = (agent.n, agent.d, agent.oracle.horizon, agent.gamma) if system is None else (
        system.n, system.d, system.horizon, system.gamma)
    claims = {name: cal.claimed({"B1": "gram", "B2": "target", "joint": "joint"}[name]) for name in PAIR_NAMES}
    out = {}
    for name in pairs:
        d0, d1 = replacement_pair(name, *sizes)

        def sampler(user: User, runs: int, g: np.random.Generator, name: str = name) -> np.ndarray:
            return regularizer_releases(reg, user, runs, g, name)

        eps, delta = claims[name]
        out[name] = audit(sampler, d0, d1, eps, delta, n=runs, rng=rng, alpha=confidence)
    return out
