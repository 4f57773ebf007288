"""Privacy audit of Private-OFU-RL's counters (Theorem 2's proof; ``mechanisms.md``, audits).

B1 continually releases ``Σ_{j<k} Σ_h z zᵀ`` with symmetric Gaussian node noise, B2
``Σ_{j<k} Σ_h z x_{h+1}ᵀ``. Neighbouring streams of ``K`` episodes: ``D`` has only null
users (zero statistics), ``D'`` replaces user 1 (who lies in the most tree nodes, ``L``)
by a maximal user: ``z_h = (1+γ) e_1`` and ``x_{h+1} = e_1`` for every ``h``, so her
contributions have Frobenius norm exactly ``Δ1 = H(1+γ)²`` and ``Δ2 = H(1+γ)``. The
mechanism's output is the whole sequence of ``K`` releases (continual observation).
Runs are vectorised: ``n`` independent counters advance together as one array.
"""

from __future__ import annotations

import numpy as np

from dprl.agents.lq.calibration import LQPrivacyCalibration
from dprl.privacy.audit import AuditResult, audit
from dprl.privacy.noise import GaussianNoise
from dprl.privacy.tree_counter import TreeCounter


def maximal_user(n: int, d: int, horizon: int, gamma: float) -> tuple[np.ndarray, np.ndarray]:
    """One user's ``(Σ_h z zᵀ, Σ_h z xᵀ)`` with ``||z|| = 1+γ``, ``||x|| = 1`` at every step."""
    p = n + d
    z = np.zeros(p)
    z[0] = 1.0 + gamma
    x = np.zeros(n)
    x[0] = 1.0
    return horizon * np.outer(z, z), horizon * np.outer(z, x)


def counter_releases(
    first: np.ndarray, episodes: int, sigma: float, runs: int, rng: np.random.Generator, symmetric: bool
) -> np.ndarray:
    """``runs`` independent tree counters fed ``first`` then ``episodes - 1`` null users;
    returns all ``episodes`` releases flattened per run (upper triangle if symmetric)."""
    shape = (runs, *first.shape)
    counter = TreeCounter(shape, episodes, GaussianNoise(sigma), rng, symmetric=symmetric)
    zero = np.zeros(shape)
    if symmetric:
        iu = np.triu_indices(first.shape[0])
        pick = lambda m: m[:, iu[0], iu[1]]  # noqa: E731
    else:
        pick = lambda m: m.reshape(runs, -1)  # noqa: E731
    out = []
    for t in range(episodes):
        counter.update(np.broadcast_to(first, shape) if t == 0 else zero)
        out.append(pick(counter.release()))
    return np.concatenate(out, axis=1)


def audit_counters(
    cal: LQPrivacyCalibration, n: int, d: int, horizon: int, gamma: float, episodes: int, samples: int,
    rng: np.random.Generator, confidence: float = 1e-3, sigma_scale: float = 1.0,
) -> dict[str, AuditResult]:
    """Audit B1, B2 at their claimed guarantees and both together at (ε, δ).

    ``sigma_scale`` < 1 builds a deliberately broken mechanism (too little noise) for tests.
    """
    gram, target = maximal_user(n, d, horizon, gamma)
    s1 = cal.regularizer.sigma_gram * sigma_scale
    s2 = cal.regularizer.sigma_target * sigma_scale

    def sample_gram(user: np.ndarray, runs: int, g: np.random.Generator) -> np.ndarray:
        return counter_releases(user, episodes, s1, runs, g, symmetric=True)

    def sample_target(user: np.ndarray, runs: int, g: np.random.Generator) -> np.ndarray:
        return counter_releases(user, episodes, s2, runs, g, symmetric=False)

    def sample_joint(users: tuple[np.ndarray, np.ndarray], runs: int, g: np.random.Generator) -> np.ndarray:
        # the counters draw independent noise, so the pair's output is the concatenation
        return np.concatenate([sample_gram(users[0], runs, g), sample_target(users[1], runs, g)], axis=1)

    out = {}
    for name, sampler, d0, d1 in (
        ("B1", sample_gram, np.zeros_like(gram), gram),
        ("B2", sample_target, np.zeros_like(target), target),
        ("joint", sample_joint, (np.zeros_like(gram), np.zeros_like(target)), (gram, target)),
    ):
        eps, delta = cal.claimed({"B1": "gram", "B2": "target", "joint": "joint"}[name])
        out[name] = audit(sampler, d0, d1, eps, delta, n=samples, rng=rng, alpha=confidence)
    return out
