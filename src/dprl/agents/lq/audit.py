"""Privacy audit of Private-OFU-RL's counters (Theorem 2's proof; ``src/dprl/README.md``, audits).

The audit drives the agent's own noise path: the :class:`CentralRegularizer` built with
the job's :class:`PrivateOFUCalibration`, whose ``release`` gives ``(V_k, U_k)`` (B1's
symmetric-noise release of ``Σ_{j<k} Σ_h z zᵀ`` plus the shift, and B2's release of
``Σ_{j<k} Σ_h z x_{h+1}ᵀ``). The mechanism's output is the whole sequence of ``K``
releases (continual observation); ``n`` independent runs advance together as the
Regularizer's batch axis.

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
from dprl.agents.lq.build import private_regularizer  # the agent's own noise path
from dprl.privacy.audit import AuditResult, audit

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


def regularizer_releases(
    cal: PrivateOFUCalibration, first: User, episodes: int, runs: int, rng: np.random.Generator, which: str,
) -> np.ndarray:
    """``runs`` independent :class:`CentralRegularizer` s (the agent's noise path) fed
    ``first`` then ``episodes - 1`` null users; returns, per run, all ``episodes`` releases
    of ``V_k`` (upper triangle), ``U_k``, or both (``which`` = B1, B2, joint)."""
    gram, target = first
    p, q = target.shape
    reg = private_regularizer(cal, p, q, episodes, rng, batch_shape=(runs,))
    iu = np.triu_indices(p)
    zero_g, zero_t = np.zeros((runs, p, p)), np.zeros((runs, p, q))
    out = []
    for t in range(episodes):
        if t == 0:
            reg.observe(np.broadcast_to(gram, (runs, p, p)), np.broadcast_to(target, (runs, p, q)))
        else:
            reg.observe(zero_g, zero_t)
        st = reg.release()
        parts = []
        if which in ("B1", "joint"):
            parts.append(st.gram[:, iu[0], iu[1]])
        if which in ("B2", "joint"):
            parts.append(st.target.reshape(runs, -1))
        out.append(np.concatenate(parts, axis=1))
    return np.concatenate(out, axis=1)


def audit_counters(
    cal: PrivateOFUCalibration, n: int, d: int, horizon: int, gamma: float, episodes: int, runs: int,
    rng: np.random.Generator, confidence: float = 1e-3, sigma_scale: float = 1.0,
) -> dict[str, AuditResult]:
    """Audit B1, B2 at their claimed guarantees and both together at (ε, δ), each on its
    worst replacement pair.

    ``sigma_scale`` < 1 builds a deliberately broken mechanism (too little noise) for tests.
    """
    claims = {name: cal.claimed({"B1": "gram", "B2": "target", "joint": "joint"}[name]) for name in PAIR_NAMES}
    if sigma_scale != 1.0:  # the claims stay those of the correct calibration
        r = cal.regularizer
        cal = dataclasses.replace(cal, regularizer=dataclasses.replace(
            r, sigma_gram=r.sigma_gram * sigma_scale, sigma_target=r.sigma_target * sigma_scale))
    out = {}
    for name in PAIR_NAMES:
        d0, d1 = replacement_pair(name, n, d, horizon, gamma)

        def sampler(user: User, runs: int, g: np.random.Generator, name: str = name) -> np.ndarray:
            return regularizer_releases(cal, user, episodes, runs, g, name)

        eps, delta = claims[name]
        out[name] = audit(sampler, d0, d1, eps, delta, n=runs, rng=rng, alpha=confidence)
    return out
