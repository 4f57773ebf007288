"""Episodic linear quadratic (LQ) systems (Chowdhury, Zhou, Shroff 2021, Sec. II-A).

``x_{h+1} = A x_h + B u_h + w_h``, cost ``c_h = x_hᵀQx_h + u_hᵀRu_h``, horizon ``H``, fixed
start ``x_1``. This module holds the systems (with the checks of Assumption 1), the
finite-horizon Riccati recursion (eqs. 3-5), the exact expected cost of any linear
time-varying policy ``u_h = K_h x_h`` under the true system (Lyapunov recursion) and the
exact per-episode regret (eq. 6). The numerical kernels are compiled (Numba, cached) and
shared by the Python API and the compiled episode loop (:mod:`dprl.agents.lq.loop`):
:func:`riccati_into` runs the recursion batch-last over many candidate systems at once
(the optimistic oracle), :func:`policy_cost_one`, :func:`rollout_into` and
:func:`ball_noise_into` one episode at a time; :func:`riccati`, :func:`policy_cost`,
:func:`rollout` and :meth:`LQSystem.sample_noise` wrap them for arrays of any batch shape.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from numba import njit

from dprl.checks import check_array, check_number

_TOL = 1e-12


def is_controllable(a: np.ndarray, b: np.ndarray) -> bool:
    """Kalman rank test: ``rank [B, AB, ..., A^{n-1}B] = n``."""
    n = a.shape[0]
    blocks, m = [], b
    for _ in range(n):
        blocks.append(m)
        m = a @ m
    ctrb = np.hstack(blocks)
    return bool(np.linalg.matrix_rank(ctrb) == n)


@njit(cache=True)
def ball_noise_into(rng: np.random.Generator, radius: float, out: np.ndarray) -> None:
    """``out.shape[0]`` draws uniform in the Euclidean ball of radius ``radius`` in ``R^n``:
    Gaussian directions (``rng.standard_normal((size, n))``, normalised) times radii
    ``radius · U^{1/n}`` (``rng.random(size)``), drawn in that order."""
    size, n = out.shape
    for t in range(size):
        for i in range(n):
            out[t, i] = rng.standard_normal()
    for t in range(size):
        sq = 0.0
        for i in range(n):
            sq += out[t, i] * out[t, i]
        norm = np.sqrt(sq)
        rad = radius * rng.random() ** (1.0 / n)
        for i in range(n):
            out[t, i] = out[t, i] / norm * rad


@dataclass(frozen=True, eq=False)
class LQSystem:
    """An LQ system satisfying Assumption 1 of the paper (checked at construction).

    ``noise_radius`` is ``C_w``: ``w_h`` is uniform in the Euclidean ball of radius ``C_w``
    (zero mean, independent, ``||w|| <= C_w``; covariance ``C_w²/(n+2) I``, known to the
    simulator only). ``c_a``, ``c_b`` are the constants of Assumption 1(b);
    ``gamma`` is the largest ``γ`` allowed by Assumption 1(e), ``(1 - C_A - C_w)/C_B``,
    unless given (then it must satisfy (e)).
    """

    a: np.ndarray
    b: np.ndarray
    q: np.ndarray
    r: np.ndarray
    x1: np.ndarray
    horizon: int
    noise_radius: float
    c_a: float
    c_b: float
    gamma: float | None = None
    name: str = "lq"
    w_cov: np.ndarray = field(init=False, repr=False)

    def __post_init__(self) -> None:
        # finite first: NaN fails none of the norm tests below (every comparison is false)
        check_number("horizon H", self.horizon, minimum=1, integer=True)
        for label, v in (("C_A", self.c_a), ("C_B", self.c_b), ("C_w (noise_radius)", self.noise_radius)):
            check_number(label, v)
        if self.gamma is not None:
            check_number("gamma", self.gamma)
        a, b, q, r, x1 = (np.atleast_2d(check_array(label, m)) for label, m in
                          (("A", self.a), ("B", self.b), ("Q", self.q), ("R", self.r), ("x1", self.x1)))
        x1 = x1.reshape(-1)
        object.__setattr__(self, "a", a)
        object.__setattr__(self, "b", b)
        object.__setattr__(self, "q", q)
        object.__setattr__(self, "r", r)
        object.__setattr__(self, "x1", x1)
        n, d = b.shape
        if a.shape != (n, n):
            raise ValueError(f"A must be n x n with n = rows of B = {n}, got shape {a.shape}")
        if q.shape != (n, n) or r.shape != (d, d):
            raise ValueError(f"Q must be {n}x{n} and R {d}x{d}, got {q.shape} and {r.shape}")
        for label, m in (("Q", q), ("R", r)):
            if not np.allclose(m, m.T) or np.linalg.eigvalsh(0.5 * (m + m.T))[0] <= 0:
                raise ValueError(f"{label} must be symmetric positive definite (Sec. II-A)")
        if x1.shape != (n,):
            raise ValueError(f"x1 must have n = {n} entries, got shape {x1.shape}")
        if np.linalg.norm(x1) > 1 + _TOL:
            raise ValueError(f"Assumption 1(c) violated: ||x_1|| = {np.linalg.norm(x1):.6g} > 1")
        theta_f = float(np.sqrt(np.sum(a**2) + np.sum(b**2)))
        if theta_f > 1 + _TOL:
            raise ValueError(f"Assumption 1(a) violated: ||Theta||_F = {theta_f:.6g} > 1")
        if not is_controllable(a, b):
            raise ValueError("Assumption 1(a) violated: [A, B] is not controllable")
        if not (0 < self.c_a < 1 and 0 < self.c_b < 1):
            raise ValueError(f"Assumption 1(b) needs 0 < C_A, C_B < 1, got C_A={self.c_a}, C_B={self.c_b}")
        norm_a, norm_b = np.linalg.norm(a, 2), np.linalg.norm(b, 2)
        if norm_a > self.c_a + _TOL:
            raise ValueError(f"Assumption 1(b) violated: ||A|| = {norm_a:.6g} > C_A = {self.c_a}")
        if norm_b > self.c_b + _TOL:
            raise ValueError(f"Assumption 1(b) violated: ||B|| = {norm_b:.6g} > C_B = {self.c_b}")
        if not 0 < self.noise_radius < 1:
            raise ValueError(f"Assumption 1(d) violated: need 0 < C_w < 1, got C_w = {self.noise_radius}")
        gamma_max = (1.0 - self.c_a - self.noise_radius) / self.c_b
        gamma = gamma_max if self.gamma is None else float(self.gamma)
        if not gamma > 0:
            raise ValueError(
                f"Assumption 1(e) violated: C_A + gamma C_B + C_w <= 1 needs gamma > 0, i.e. C_A + C_w < 1 "
                f"(got C_A={self.c_a}, C_w={self.noise_radius})"
            )
        if self.c_a + gamma * self.c_b + self.noise_radius > 1 + _TOL:
            raise ValueError(
                f"Assumption 1(e) violated: C_A + gamma C_B + C_w = {self.c_a + gamma * self.c_b + self.noise_radius:.6g} > 1"
            )
        object.__setattr__(self, "gamma", gamma)
        # E[w wᵀ] for w uniform in the ball of radius C_w in R^n: C_w²/(n+2) I.
        object.__setattr__(self, "w_cov", (self.noise_radius**2 / (n + 2)) * np.eye(n))

    @property
    def n(self) -> int:
        return self.a.shape[0]

    @property
    def d(self) -> int:
        return self.b.shape[1]

    @property
    def theta(self) -> np.ndarray:
        """``Θ = [A, B]ᵀ`` of shape ``(n+d, n)``."""
        return np.vstack([self.a.T, self.b.T])

    def sample_noise(self, rng: np.random.Generator, size: int) -> np.ndarray:
        """``size`` draws of ``w`` uniform in the ball of radius ``C_w`` (shape ``(size, n)``)."""
        out = np.empty((size, self.n))
        ball_noise_into(rng, self.noise_radius, out)
        return out


def theta_to_ab(theta: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Split ``Θ = [A, B]ᵀ`` (batch + ``(n+d, n)``) into ``A`` (batch+(n,n)), ``B`` (batch+(n,d))."""
    t = np.swapaxes(theta, -1, -2)
    return t[..., :n], t[..., n:]


# --------------------------------------------------------------------------- generators


def random_system(
    n: int, d: int, horizon: int, rng: np.random.Generator, c_a: float = 0.8, c_b: float = 0.6,
    noise_radius: float = 0.05, theta_norm: float = 1.0,
) -> LQSystem:
    """A random system meeting Assumption 1: Gaussian ``A``, ``B`` rescaled to spectral norms
    ``C_A``, ``C_B`` and then (if needed) jointly shrunk to ``||Θ||_F <= theta_norm``;
    redrawn until controllable (almost sure). ``x_1`` is a uniformly random unit vector;
    ``Q = I_n``, ``R = I_d``."""
    check_number("state dimension n", n, minimum=1, integer=True)
    check_number("control dimension d", d, minimum=1, integer=True)
    if not 0 < theta_norm <= 1:
        raise ValueError(f"theta_norm must lie in (0, 1] (Assumption 1(a)), got {theta_norm}")
    for _ in range(100):
        a = rng.standard_normal((n, n))
        b = rng.standard_normal((n, d))
        a *= c_a / np.linalg.norm(a, 2)
        b *= c_b / np.linalg.norm(b, 2)
        frob = np.sqrt(np.sum(a**2) + np.sum(b**2))
        if frob > theta_norm:
            a, b = a * (theta_norm / frob), b * (theta_norm / frob)
        if is_controllable(a, b):
            break
    else:  # pragma: no cover - probability zero
        raise RuntimeError("could not draw a controllable system")
    x1 = rng.standard_normal(n)
    x1 /= np.linalg.norm(x1)
    return LQSystem(a, b, np.eye(n), np.eye(d), x1, horizon, noise_radius, c_a, c_b, name="random")


def double_integrator(
    horizon: int, tau: float = 0.5, c_a: float = 0.75, c_b: float = 0.4, noise_radius: float = 0.05
) -> LQSystem:
    """The fixed documented system: a discretised double integrator (position, velocity;
    force input) with step ``τ``, ``A₀ = [[1, τ], [0, 1]]``, ``B₀ = [τ²/2, τ]ᵀ``, scaled to
    ``A = C_A A₀/||A₀||``, ``B = C_B B₀/||B₀||`` so that Assumption 1 holds (the open-loop
    system is then stable; the scaling models a damped, normalised plant). ``x_1 = (1, 0)``
    (unit displacement at rest), ``Q = I``, ``R = I``."""
    if not tau > 0:
        raise ValueError(f"tau must be > 0, got {tau}")
    a0 = np.array([[1.0, tau], [0.0, 1.0]])
    b0 = np.array([[tau**2 / 2.0], [tau]])
    a = c_a * a0 / np.linalg.norm(a0, 2)
    b = c_b * b0 / np.linalg.norm(b0, 2)
    return LQSystem(a, b, np.eye(2), np.eye(1), np.array([1.0, 0.0]), horizon, noise_radius, c_a, c_b, name="double_integrator")


# --------------------------------------------------------------------------- Riccati
#
# Compiled (Numba) kernels, batch-last: the optimistic oracle runs the recursion for
# hundreds of candidate systems of 2x2-sized matrices per episode, where NumPy's per-call
# overhead dominated (measured: 296 µs per oracle Riccati in NumPy, ~14 µs compiled). The
# summation order of every product is that of the previous NumPy version (``Σ_j`` in
# increasing ``j``), so results agree with it to round-off.


@njit(cache=True, error_model="numpy")
def _bmm_into(x: np.ndarray, y: np.ndarray, out: np.ndarray) -> None:
    """``out[i, l, :] = Σ_j x[i, j, :] y[j, l, :]`` (batch-last ``(i, j, N) @ (j, l, N)``;
    the inner loop runs over the batch, so it vectorises)."""
    ni, nj, nb = x.shape
    nl = y.shape[1]
    for i in range(ni):
        for l in range(nl):
            for c in range(nb):
                out[i, l, c] = x[i, 0, c] * y[0, l, c]
            for j in range(1, nj):
                for c in range(nb):
                    out[i, l, c] += x[i, j, c] * y[j, l, c]


@njit(cache=True)
def _solve_small(s: np.ndarray, m: np.ndarray) -> np.ndarray:
    """``S⁻¹M`` for one small ``(d, d)`` system: Gaussian elimination with partial pivoting."""
    d = s.shape[0]
    a = s.copy()
    x = m.copy()
    for col in range(d):
        piv = col
        for row in range(col + 1, d):
            if abs(a[row, col]) > abs(a[piv, col]):
                piv = row
        if piv != col:
            for j in range(d):
                a[col, j], a[piv, j] = a[piv, j], a[col, j]
            for j in range(x.shape[1]):
                x[col, j], x[piv, j] = x[piv, j], x[col, j]
        for row in range(col + 1, d):
            f = a[row, col] / a[col, col]
            for j in range(col, d):
                a[row, j] -= f * a[col, j]
            for j in range(x.shape[1]):
                x[row, j] -= f * x[col, j]
    for col in range(d - 1, -1, -1):
        for j in range(x.shape[1]):
            acc = x[col, j]
            for k in range(col + 1, d):
                acc -= a[col, k] * x[k, j]
            x[col, j] = acc / a[col, col]
    return x


@njit(cache=True, error_model="numpy")
def _riccati_into_n2_d1(
    a: np.ndarray, b: np.ndarray, q: np.ndarray, r: np.ndarray, p_all: np.ndarray, k_all: np.ndarray,
) -> None:
    """:func:`riccati_into` for ``n = 2``, ``d = 1`` (every LQ instance of the experiments; the
    oracle's hot spot): one pass over the batch per step, with the same floating-point
    operations in the same order as :func:`riccati_into_general`, so the same bits
    (``tests/lq/test_envs.py``). The batch sits in local contiguous arrays, so the loop
    vectorises; the general recursion streams a dozen temporaries through memory."""
    nb = b.shape[2]
    horizon = k_all.shape[0]
    r00, q00, q01, q10, q11 = r[0, 0], q[0, 0], q[0, 1], q[1, 0], q[1, 1]
    a00, a01, a10, a11 = a[0, 0].copy(), a[0, 1].copy(), a[1, 0].copy(), a[1, 1].copy()
    b0, b1 = b[0, 0].copy(), b[1, 0].copy()
    p = np.zeros((4, nb))  # P_{h+1}: entries 00, 01, 10, 11
    pn = np.empty((4, nb))
    k = np.empty((2, nb))
    p_all[horizon] = 0.0
    for h in range(horizon - 1, -1, -1):
        for c in range(nb):
            btp0 = b0[c] * p[0, c] + b1[c] * p[2, c]  # BᵀP
            btp1 = b0[c] * p[1, c] + b1[c] * p[3, c]
            s = r00 + (btp0 * b0[c] + btp1 * b1[c])  # S = R + BᵀPB
            m0 = btp0 * a00[c] + btp1 * a10[c]  # M = BᵀPA
            m1 = btp0 * a01[c] + btp1 * a11[c]
            k0 = -m0 / s  # eq. 3
            k1 = -m1 / s
            k[0, c] = k0
            k[1, c] = k1
            pa00 = p[0, c] * a00[c] + p[1, c] * a10[c]  # PA
            pa01 = p[0, c] * a01[c] + p[1, c] * a11[c]
            pa10 = p[2, c] * a00[c] + p[3, c] * a10[c]
            pa11 = p[2, c] * a01[c] + p[3, c] * a11[c]
            t00 = (q00 + (a00[c] * pa00 + a10[c] * pa10)) + m0 * k0  # eq. 4: Q + AᵀPA + MᵀK
            t01 = (q01 + (a00[c] * pa01 + a10[c] * pa11)) + m0 * k1
            t10 = (q10 + (a01[c] * pa00 + a11[c] * pa10)) + m1 * k0
            t11 = (q11 + (a01[c] * pa01 + a11[c] * pa11)) + m1 * k1
            pn[0, c] = 0.5 * (t00 + t00)  # symmetrise against drift
            pn[1, c] = 0.5 * (t01 + t10)
            pn[2, c] = 0.5 * (t10 + t01)
            pn[3, c] = 0.5 * (t11 + t11)
        p, pn = pn, p
        for c in range(nb):
            p_all[h, 0, 0, c] = p[0, c]
            p_all[h, 0, 1, c] = p[1, c]
            p_all[h, 1, 0, c] = p[2, c]
            p_all[h, 1, 1, c] = p[3, c]
            k_all[h, 0, 0, c] = k[0, c]
            k_all[h, 0, 1, c] = k[1, c]


@njit(cache=True, error_model="numpy")
def riccati_into(a: np.ndarray, b: np.ndarray, q: np.ndarray, r: np.ndarray, p_all: np.ndarray, k_all: np.ndarray) -> None:
    """Eqs. 3-4 for ``N`` systems at once, batch-last: ``a`` ``(n, n, N)``, ``b`` ``(n, d, N)``;
    writes ``P_h`` to ``p_all[h-1]`` (``(H+1, n, n, N)``, ``P_{H+1} = 0``) and ``K_h`` to
    ``k_all[h-1]`` (``(H, d, n, N)``)."""
    if b.shape[0] == 2 and b.shape[1] == 1:
        _riccati_into_n2_d1(a, b, q, r, p_all, k_all)
    else:
        riccati_into_general(a, b, q, r, p_all, k_all)


@njit(cache=True, error_model="numpy")
def riccati_into_general(
    a: np.ndarray, b: np.ndarray, q: np.ndarray, r: np.ndarray, p_all: np.ndarray, k_all: np.ndarray,
) -> None:
    """:func:`riccati_into` for any ``n``, ``d``: one batched small matrix product at a time."""
    n, d, nb = b.shape
    horizon = k_all.shape[0]
    at = np.ascontiguousarray(a.transpose(1, 0, 2))
    bt = np.ascontiguousarray(b.transpose(1, 0, 2))
    btp = np.empty((d, n, nb))
    s = np.empty((d, d, nb))
    m = np.empty((d, n, nb))
    mt = np.empty((n, d, nb))
    pa = np.empty((n, n, nb))
    t1 = np.empty((n, n, nb))
    t2 = np.empty((n, n, nb))
    p_all[horizon] = 0.0
    for h in range(horizon - 1, -1, -1):
        p = p_all[h + 1]
        k = k_all[h]
        _bmm_into(bt, p, btp)  # BᵀP
        _bmm_into(btp, b, s)
        for i in range(d):
            for j in range(d):
                for c in range(nb):
                    s[i, j, c] = r[i, j] + s[i, j, c]  # S = R + BᵀPB
        _bmm_into(btp, a, m)  # M = BᵀPA
        if d == 1:
            for j in range(n):
                for c in range(nb):
                    k[0, j, c] = -m[0, j, c] / s[0, 0, c]  # eq. 3: K = -S⁻¹BᵀPA
        else:
            for c in range(nb):
                kc = _solve_small(np.ascontiguousarray(s[:, :, c]), np.ascontiguousarray(m[:, :, c]))
                for i in range(d):
                    for j in range(n):
                        k[i, j, c] = -kc[i, j]
        # eq. 4: P_h = Q + AᵀPA − AᵀPB S⁻¹ BᵀPA = Q + AᵀPA + MᵀK (P_{h+1} on the right; the
        # paper's eq. 3 writes P_h there, we follow the standard form as in the spec)
        _bmm_into(p, a, pa)
        _bmm_into(at, pa, t1)
        for i in range(n):
            for j in range(d):
                for c in range(nb):
                    mt[i, j, c] = m[j, i, c]
        _bmm_into(mt, k, t2)
        pn = p_all[h]
        for i in range(n):
            for j in range(n):
                for c in range(nb):
                    t1[i, j, c] = (q[i, j] + t1[i, j, c]) + t2[i, j, c]
        for i in range(n):
            for j in range(n):
                for c in range(nb):
                    pn[i, j, c] = 0.5 * (t1[i, j, c] + t1[j, i, c])  # symmetrise against drift


@njit(cache=True, error_model="numpy")
def optimal_costs_into(p_all: np.ndarray, w_cov: np.ndarray, x1: np.ndarray, out: np.ndarray) -> None:
    """``J*_1(Θ, x_1) = x_1ᵀP_1x_1 + Σ_{h=1}^H tr(P_{h+1} W)`` (eq. 5) of every system of a
    batch-last ``p_all``."""
    n, nb = p_all.shape[1], p_all.shape[3]
    quad = np.zeros(nb)
    for i in range(n):
        for j in range(n):
            xx = x1[i]
            for c in range(nb):
                quad[c] += xx * p_all[0, i, j, c] * x1[j]
    noise = np.zeros(nb)
    for h in range(1, p_all.shape[0]):
        for i in range(n):
            for j in range(n):
                w = w_cov[j, i]
                for c in range(nb):
                    noise[c] += p_all[h, i, j, c] * w
    for c in range(nb):
        out[c] = quad[c] + noise[c]


def riccati(a: np.ndarray, b: np.ndarray, q: np.ndarray, r: np.ndarray, horizon: int) -> tuple[np.ndarray, np.ndarray]:
    """Finite-horizon Riccati recursion (eqs. 3-4), vectorised over leading batch axes
    (:func:`riccati_into`).

    Returns ``P`` of shape ``(H+1,) + batch + (n, n)`` with ``P[h-1] = P_h`` (``P[H] = P_{H+1} = 0``)
    and gains ``K`` of shape ``(H,) + batch + (d, n)`` with ``K[h-1] = K_h``, the optimal
    control being ``u_h = K_h x_h``.
    """
    batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    n, d = b.shape[-2], b.shape[-1]
    size = int(np.prod(batch, dtype=int))
    al = np.ascontiguousarray(np.broadcast_to(a, (*batch, n, n)).reshape(size, n, n).transpose(1, 2, 0), dtype=float)
    bl = np.ascontiguousarray(np.broadcast_to(b, (*batch, n, d)).reshape(size, n, d).transpose(1, 2, 0), dtype=float)
    p_all = np.empty((horizon + 1, n, n, size))
    k_all = np.empty((horizon, d, n, size))
    riccati_into(al, bl, np.asarray(q, dtype=float), np.asarray(r, dtype=float), p_all, k_all)
    p_out = np.moveaxis(p_all, -1, 1).reshape(horizon + 1, *batch, n, n)
    k_out = np.moveaxis(k_all, -1, 1).reshape(horizon, *batch, d, n)
    return p_out, k_out


def optimal_cost(p_all: np.ndarray, w_cov: np.ndarray, x1: np.ndarray) -> np.ndarray:
    """``J*_1(Θ, x_1)`` (eq. 5) from :func:`riccati`'s ``P`` (batch-first), batched."""
    batch = p_all.shape[1:-2]
    n = p_all.shape[-1]
    pl = np.ascontiguousarray(np.moveaxis(p_all.reshape(p_all.shape[0], -1, n, n), 1, -1), dtype=float)
    out = np.empty(pl.shape[-1])
    optimal_costs_into(pl, np.asarray(w_cov, dtype=float), np.asarray(x1, dtype=float), out)
    return out.reshape(batch)


@njit(cache=True)
def matmul_into(x: np.ndarray, y: np.ndarray, out: np.ndarray, transpose_x: bool = False) -> None:
    """``out = x @ y`` (or ``xᵀ @ y``) for small matrices, summing ``Σ_l`` in increasing ``l``."""
    ni = x.shape[1] if transpose_x else x.shape[0]
    nl = x.shape[0] if transpose_x else x.shape[1]
    for i in range(ni):
        for j in range(y.shape[1]):
            acc = (x[0, i] if transpose_x else x[i, 0]) * y[0, j]
            for l in range(1, nl):
                acc += (x[l, i] if transpose_x else x[i, l]) * y[l, j]
            out[i, j] = acc


@njit(cache=True)
def policy_cost_one(
    a: np.ndarray, b: np.ndarray, q: np.ndarray, r: np.ndarray, gains: np.ndarray, w_cov: np.ndarray, x1: np.ndarray
) -> float:
    """:func:`policy_cost` of one policy ``gains`` ``(H, d, n)`` (Lyapunov recursion)."""
    horizon, d, n = gains.shape
    p = np.zeros((n, n))
    cl = np.empty((n, n))
    kr = np.empty((n, d))
    krk = np.empty((n, n))
    ctp = np.empty((n, n))
    lyap = np.empty((n, n))
    noise = 0.0
    for h in range(horizon - 1, -1, -1):
        tr = 0.0
        for i in range(n):
            for j in range(n):
                tr += p[i, j] * w_cov[j, i]
        noise = noise + tr  # tr(P^π_{h+1} W)
        k = gains[h]
        matmul_into(b, k, cl)
        cl += a  # A + B K_h
        matmul_into(k, r, kr, True)  # K_hᵀ R
        matmul_into(kr, k, krk)
        matmul_into(cl, p, ctp, True)  # (A + B K_h)ᵀ P^π_{h+1}
        matmul_into(ctp, cl, lyap)
        for i in range(n):
            for j in range(n):
                p[i, j] = q[i, j] + krk[i, j] + lyap[i, j]
    quad = 0.0
    for i in range(n):
        for j in range(n):
            quad += x1[i] * p[i, j] * x1[j]
    return quad + noise


def policy_cost(
    a: np.ndarray, b: np.ndarray, q: np.ndarray, r: np.ndarray, gains: np.ndarray, w_cov: np.ndarray, x1: np.ndarray
) -> np.ndarray:
    """Exact expected cost ``J^π_1(Θ, x_1)`` of the linear time-varying policy ``u_h = K_h x_h``
    (``gains`` of shape ``(H,) + batch + (d, n)``) under ``(A, B)`` with noise covariance ``W``.

    Lyapunov recursion ``P^π_h = Q + K_hᵀRK_h + (A + BK_h)ᵀP^π_{h+1}(A + BK_h)``, ``P^π_{H+1} = 0``,
    and ``J^π_1 = x_1ᵀP^π_1x_1 + Σ_h tr(P^π_{h+1} W)`` (the noise is independent of the state;
    :func:`policy_cost_one` per policy).
    """
    gains = np.asarray(gains, dtype=float)
    horizon, batch, (d, n) = gains.shape[0], gains.shape[1:-2], gains.shape[-2:]
    flat = gains.reshape(horizon, -1, d, n)
    args = [np.ascontiguousarray(m, dtype=float) for m in (a, b, q, r)]
    w, x1 = np.asarray(w_cov, dtype=float), np.asarray(x1, dtype=float)
    out = np.array([policy_cost_one(*args, np.ascontiguousarray(flat[:, j]), w, x1) for j in range(flat.shape[1])])
    return out.reshape(batch)


@dataclass(frozen=True)
class RegretEvaluator:
    """Exact per-episode regret ``J^{π_k}_1(Θ*, x_1) - J*_1(Θ*, x_1)`` (eq. 6) for one system."""

    system: LQSystem
    optimal: float = field(init=False)
    optimal_gains: np.ndarray = field(init=False, repr=False)

    def __post_init__(self) -> None:
        s = self.system
        p_all, k_all = riccati(s.a, s.b, s.q, s.r, s.horizon)
        object.__setattr__(self, "optimal", float(optimal_cost(p_all, s.w_cov, s.x1)))
        object.__setattr__(self, "optimal_gains", k_all)

    def cost(self, gains: np.ndarray) -> float:
        s = self.system
        return float(policy_cost(s.a, s.b, s.q, s.r, gains, s.w_cov, s.x1))

    def regret(self, gains: np.ndarray) -> float:
        return self.cost(gains) - self.optimal


@njit(cache=True)
def rollout_into(
    a: np.ndarray, b: np.ndarray, q: np.ndarray, r: np.ndarray, x1: np.ndarray, gains: np.ndarray, noise: np.ndarray,
    xs: np.ndarray, us: np.ndarray,
) -> float:
    """One episode of ``u_h = K_h x_h``, ``x_{h+1} = A x_h + B u_h + w_h``: writes the states
    ``x_1..x_{H+1}`` to ``xs`` ``(H+1, n)`` and the controls to ``us`` ``(H, d)``; returns the
    sampled cost ``Σ_h x_hᵀQx_h + u_hᵀRu_h``."""
    horizon, d, n = gains.shape
    xs[0] = x1
    for h in range(horizon):
        for i in range(d):
            acc = gains[h, i, 0] * xs[h, 0]
            for j in range(1, n):
                acc += gains[h, i, j] * xs[h, j]
            us[h, i] = acc
        for i in range(n):
            ax = xs[h, 0] * a[i, 0]
            for j in range(1, n):
                ax += xs[h, j] * a[i, j]
            bu = us[h, 0] * b[i, 0]
            for j in range(1, d):
                bu += us[h, j] * b[i, j]
            xs[h + 1, i] = ax + bu + noise[h, i]
    state_cost = 0.0
    control_cost = 0.0
    for h in range(horizon):
        for i in range(n):
            for j in range(n):
                state_cost += xs[h, i] * q[i, j] * xs[h, j]
        for i in range(d):
            for j in range(d):
                control_cost += us[h, i] * r[i, j] * us[h, j]
    return state_cost + control_cost


def rollout(system: LQSystem, gains: np.ndarray, noise: np.ndarray) -> tuple[np.ndarray, np.ndarray, float]:
    """Run one episode of ``u_h = K_h x_h`` with the given noise draws (shape ``(H, n)``;
    :func:`rollout_into`).

    Returns states ``x_1..x_{H+1}`` (``(H+1, n)``), controls ``(H, d)`` and the sampled cost."""
    s = system
    xs = np.empty((s.horizon + 1, s.n))
    us = np.empty((s.horizon, s.d))
    cost = rollout_into(s.a, s.b, s.q, s.r, s.x1, np.ascontiguousarray(gains, dtype=float),
                        np.ascontiguousarray(noise, dtype=float), xs, us)
    return xs, us, float(cost)
