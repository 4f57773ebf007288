"""LinOpt-VI-Reg / LinOpt-PO-Reg (Zhou 2022, Algorithms 1 and 2) episode loop, compiled
(Numba): the same steps as :class:`dprl.agents.linmix.linopt.LinOptAgent` driven by
:func:`dprl.agents.linmix.episodes.run_episodes`, on the same random streams, equal to round-off (the summation orders,
and the bonus norms through a Cholesky factor instead of ``Λ^{-1}``, differ from NumPy's;
the oracle test is ``tests/linmix/test_compiled_loop.py``).

The Regularizers' state is updated in place (their own arrays: the ``TreeCounter`` nodes
of a :class:`CentralRegularizer`, the sums of a :class:`LocalRegularizer` or
:class:`NonPrivateRegularizer`), so the Python objects stay the single state of the
Privatizer; the kernels reproduce ``Regularizer.release``/``observe`` (``_release_into``,
``_observe``) with the calibration's σ's, shift and ``λ_min`` as inputs. The noise is scaled
by :func:`dprl.privacy.kernels.gaussian_into`, which records the σ's it drew with in each
regularizer's ``drawn``; the privacy audit runs the same two kernels (:func:`audit_releases`).

Random streams per episode, as the NumPy loop reads them: VI tie priorities
``LinOptAgent.rng.random((H, S, A))`` (PO: ``agent_rng.random(H)`` action uniforms, after
the environment's), ``env_rng.random((H, 2))``, and the Privatizer's Gaussian draws from
``noise_rng`` in the order Gram_p, target_p, Gram_r, target_r. All are drawn in blocks of
episodes (NumPy generators give the same numbers either way).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from dprl.envs.linear_mixture import KnownFeatures
from dprl.envs.tabular import inverse_cdf
from dprl.privacy.kernels import cholesky_into, feed_tree, finish_with, gaussian_into, lower_inverse_into, trailing_zeros
from dprl.runner.kernel_cache import drop_stale_closure
from dprl.runner.online import pairwise_sum

NONPRIVATE, CENTRAL, LOCAL = 0, 1, 2


@njit(cache=True)
def _observe(
    kind: int, H: int, d: int, G: np.ndarray, C: np.ndarray, z_g: np.ndarray, z_t: np.ndarray,
    sigma_g: float, sigma_t: float, sums_g: np.ndarray, sums_t: np.ndarray,
    exact_g: np.ndarray, suffix_g: np.ndarray, exact_t: np.ndarray, suffix_t: np.ndarray, t: int,
    noise_g: np.ndarray, noise_t: np.ndarray, noisy: bool, drawn: np.ndarray,
) -> None:
    """``Regularizer.observe(G, C)`` of user ``t`` (1-based) with flat ``G`` (H d²), ``C`` (H d).
    The noise ``σ z`` (``GaussianNoise.sample``, symmetric for the Gram) is scaled by
    :func:`~dprl.privacy.kernels.gaussian_into`, which records the σ's it drew with in
    ``drawn`` (the regularizer's: rows Gram, target; what the job accounts from)."""
    if noisy and kind != NONPRIVATE:
        gaussian_into(z_g, sigma_g, d, noise_g, drawn, 0)
        gaussian_into(z_t, sigma_t, 0, noise_t, drawn, 1)
    if kind == CENTRAL:  # two Gaussian tree counters (Zhou Sec. 6.1)
        feed_tree(exact_g, suffix_g, t, G, noise_g, noisy)
        feed_tree(exact_t, suffix_t, t, C, noise_t, noisy)
        return
    for c in range(H * d * d):  # sums of (locally perturbed, Remark 6.9) statistics
        sums_g[c] += G[c] + noise_g[c] if (noisy and kind == LOCAL) else G[c]
    for c in range(H * d):
        sums_t[c] += C[c] + noise_t[c] if (noisy and kind == LOCAL) else C[c]


@njit(cache=True)
def _release_into(
    kind: int, H: int, d: int, sums_g: np.ndarray, sums_t: np.ndarray, suffix_g: np.ndarray, suffix_t: np.ndarray,
    t: int, shift: float, lam_min: float, gram: np.ndarray, target: np.ndarray, sym: np.ndarray, chol: np.ndarray,
) -> tuple[int, int]:
    """``Regularizer.release()``: ``V_k`` (+ ``η I`` or ``λ I``) into ``gram`` (H, d, d) and
    ``U_k`` into ``target`` (H, d, 1); for the private regularizers ``_finish``'s
    symmetrisation and eigenvalue floor at ``λ_min`` (``sym``, ``chol``: its (d, d) work
    arrays). Returns how many were floored and how many of those were not positive definite."""
    central_empty = kind == CENTRAL and t == 0
    level = trailing_zeros(t) if kind == CENTRAL and t > 0 else 0
    for h in range(H):
        for i in range(d):
            c = h * d + i
            if central_empty:
                target[h, i, 0] = 0.0
            else:
                target[h, i, 0] = suffix_t[level, c] if kind == CENTRAL else sums_t[c]
            for j in range(d):
                f = c * d + j
                if central_empty:
                    g = 0.0
                else:
                    g = suffix_g[level, f] if kind == CENTRAL else sums_g[f]
                gram[h, i, j] = g + (shift if i == j else 0.0)
    if kind == NONPRIVATE:
        return 0, 0
    repaired = not_pd = 0
    for h in range(H):
        r, npd = finish_with(gram[h], lam_min, sym, chol)
        repaired += r
        not_pd += npd
    return repaired, not_pd


@njit(cache=True)
def _flatten_release(H: int, d: int, gram: np.ndarray, target: np.ndarray, out: np.ndarray, col: int) -> int:
    """A release as the audit reads it: the upper triangle of every ``V_{k,h}``, then every
    ``U_{k,h}``, into ``out`` from ``col``; returns the next column."""
    for h in range(H):
        for i in range(d):
            for j in range(i, d):
                out[col] = gram[h, i, j]
                col += 1
    for h in range(H):
        for i in range(d):
            out[col] = target[h, i, 0]
            col += 1
    return col


@njit(cache=True)
def _audit_state(kind: int, H: int, d: int, levels: int):
    """One regression's state and work arrays for :func:`_audit_user`: tree nodes (CENTRAL,
    ``levels`` levels) or sums, the node noise, its standard normals, and the release."""
    nrow = levels if kind == CENTRAL else 1
    return (np.zeros((nrow, H * d * d)), np.zeros((nrow, H * d * d)), np.zeros((nrow, H * d)), np.zeros((nrow, H * d)),
            np.zeros(H * d * d), np.zeros(H * d), np.zeros(H * d * d), np.zeros(H * d), np.empty(H * d * d),
            np.empty(H * d), np.empty((H, d, d)), np.empty((H, d, 1)), np.empty((d, d)), np.empty((d, d)))


@njit(cache=True)
def _audit_user(kind: int, H: int, d: int, G: np.ndarray, C: np.ndarray, t: int, noisy: bool, row: np.ndarray,
                rng: np.random.Generator, drawn: np.ndarray, state, out: np.ndarray, col: int) -> int:
    """User ``t`` (statistics ``G``, ``C``) into one regression of :func:`audit_releases`:
    its Gram's then its target's standard normals (the loop's order), :func:`_observe`,
    :func:`_release_into`, and the release into ``out`` from ``col``; returns the next column."""
    ex_g, sf_g, ex_t, sf_t, sums_g, sums_t, ng, nt, zg, zt, gram, target, sym, chol = state
    if t == 1:  # a fresh run
        for arr in (ex_g, sf_g, ex_t, sf_t):
            arr[:, :] = 0.0
        sums_g[:] = 0.0
        sums_t[:] = 0.0
    if noisy:
        for c in range(zg.shape[0]):
            zg[c] = rng.standard_normal()
        for c in range(zt.shape[0]):
            zt[c] = rng.standard_normal()
    _observe(kind, H, d, G, C, zg, zt, row[0], row[1], sums_g, sums_t, ex_g, sf_g, ex_t, sf_t, t, ng, nt, noisy, drawn)
    _release_into(kind, H, d, sums_g, sums_t, sf_g, sf_t, t, row[2], row[3], gram, target, sym, chol)
    return _flatten_release(H, d, gram, target, out, col)


@njit(cache=True)
def audit_releases(
    kind: int, H: int, d1: int, d2: int, Gp: np.ndarray, Cp: np.ndarray, Gr: np.ndarray, Cr: np.ndarray, runs: int,
    users: int, levels: int, noisy: bool, params: np.ndarray, rng: np.random.Generator, drawn_p: np.ndarray,
    drawn_r: np.ndarray, out: np.ndarray,
) -> None:
    """The privacy audit's mechanism through the loop's own kernels: ``runs`` independent runs
    of the Privatizer's two regularizers (``kind`` CENTRAL: tree counters of ``levels``
    levels; LOCAL: the server's sums), fed user 1's flat statistics ``(Gp, Cp)``, ``(Gr, Cr)``
    then null users up to ``users``, each observed by :func:`_observe` and released by
    :func:`_release_into` exactly as :func:`_run_block` does (same noise kernel, the σ's
    recorded in ``drawn_p``/``drawn_r``; ``params`` the ``[σ_gram, σ_target, shift, λ_min]``
    rows of p and r). ``out[r]``: after every user, p's release then r's
    (:func:`_flatten_release`)."""
    state_p, state_r = _audit_state(kind, H, d1, levels), _audit_state(kind, H, d2, levels)
    null_gp, null_cp, null_gr, null_cr = np.zeros_like(Gp), np.zeros_like(Cp), np.zeros_like(Gr), np.zeros_like(Cr)
    for r in range(runs):
        col = 0
        for t in range(1, users + 1):
            first = t == 1
            col = _audit_user(kind, H, d1, Gp if first else null_gp, Cp if first else null_cp, t, noisy, params[0], rng,
                              drawn_p, state_p, out[r], col)
            col = _audit_user(kind, H, d2, Gr if first else null_gr, Cr if first else null_cr, t, noisy, params[1], rng,
                              drawn_r, state_r, out[r], col)


def pattern_rows(dense: np.ndarray) -> tuple[np.ndarray, ...]:
    """The non-zeros of a 2-D matrix grouped by column pattern: rows with the same set of
    non-zero columns share one column list, so a product gathers ``x`` at those columns
    once and runs the dot products of all the pattern's rows side by side (ψ of a mixture
    has one pattern per cluster of successors; a dense matrix is a single pattern).
    Returns ``(pat_cols_ptr, pat_cols, pat_rows_ptr, pat_rows, values, row_pattern,
    row_offset)``: pattern ``p``'s columns and rows; ``values`` holds each pattern's block
    column by column (entry ``k`` of the pattern's ``n`` rows contiguous, so
    :func:`_matvec` runs along rows: SIMD, no chain of dependent additions); each row's
    pattern, and the offset of its entry ``k = 0`` (entry ``k`` at ``row_offset + k n``)."""
    from scipy.sparse import csr_matrix  # lazy: SciPy is slow to import

    m = csr_matrix(dense)
    groups: dict[bytes, list[int]] = {}
    for r in range(m.shape[0]):
        groups.setdefault(m.indices[m.indptr[r] : m.indptr[r + 1]].tobytes(), []).append(r)
    rows = np.array([r for g in groups.values() for r in g], dtype=np.int64)
    pat_rows_ptr = np.concatenate(([0], np.cumsum([len(g) for g in groups.values()]))).astype(np.int64)
    pat_cols = [m.indices[m.indptr[g[0]] : m.indptr[g[0] + 1]] for g in groups.values()]
    pat_cols_ptr = np.concatenate(([0], np.cumsum([c.size for c in pat_cols]))).astype(np.int64)
    row_pattern = np.empty(m.shape[0], dtype=np.int64)
    row_pattern[rows] = np.repeat(np.arange(len(groups)), np.diff(pat_rows_ptr))
    blocks = [np.stack([m.data[m.indptr[r] : m.indptr[r + 1]] for r in g], axis=1) for g in groups.values()]  # (columns, rows)
    block_start = np.concatenate(([0], np.cumsum([b.size for b in blocks])))
    row_offset = np.empty(m.shape[0], dtype=np.int64)
    for p, g in enumerate(groups.values()):
        row_offset[g] = block_start[p] + np.arange(len(g))
    values = np.concatenate([b.ravel() for b in blocks]) if m.nnz else np.zeros(0)
    return (pat_cols_ptr, np.concatenate(pat_cols).astype(np.int64) if pat_cols else np.zeros(0, dtype=np.int64),
            pat_rows_ptr, rows, values.astype(float), row_pattern, row_offset)


def psi_rows(feat: KnownFeatures) -> tuple[np.ndarray, ...]:
    """``ψ`` as rows ``(s, a, i)`` over ``s'`` (:func:`pattern_rows`), a public feature map."""
    S, A, d1 = feat.S, feat.A, feat.d1
    return pattern_rows(feat.psi.reshape(S * A * d1, S))


@njit(cache=True)
def _rows_dot(pat_cols_ptr: np.ndarray, pat_cols: np.ndarray, pat_rows_ptr: np.ndarray, values: np.ndarray,
              row_pattern: np.ndarray, row_offset: np.ndarray, rows: np.ndarray, x: np.ndarray, out: np.ndarray,
              iwork: np.ndarray, acc: np.ndarray) -> None:
    """``out[q] = M[rows[q]] x`` (:func:`pattern_rows`) for a few rows, each summed in column
    order (as :func:`_matvec`: the same numbers); the rows of one pattern side by side, so
    their sums run in parallel rather than as one chain of dependent additions per row.
    Work arrays (the loop calls it every episode): ``iwork`` of ``2 n_patterns + 1 + 2 n_rows``
    integers, ``acc`` of ``n_rows``."""
    n_pat = pat_cols_ptr.shape[0] - 1
    n_sel = rows.shape[0]
    start = iwork[: n_pat + 1]  # the selected rows grouped by pattern
    fill = iwork[n_pat + 1 : 2 * n_pat + 1]
    order = iwork[2 * n_pat + 1 : 2 * n_pat + 1 + n_sel]
    first = iwork[2 * n_pat + 1 + n_sel : 2 * n_pat + 1 + 2 * n_sel]
    start[:] = 0
    for q in range(n_sel):
        start[row_pattern[rows[q]] + 1] += 1
    for p in range(n_pat):
        start[p + 1] += start[p]
        fill[p] = start[p]
    for q in range(n_sel):
        p = row_pattern[rows[q]]
        order[fill[p]] = q
        fill[p] += 1
    for p in range(n_pat):
        lo, hi = start[p], start[p + 1]
        if lo == hi:
            continue
        c0 = pat_cols_ptr[p]
        n = pat_rows_ptr[p + 1] - pat_rows_ptr[p]
        for t in range(lo, hi):
            acc[t] = 0.0
            first[t] = row_offset[rows[order[t]]]
        for k in range(pat_cols_ptr[p + 1] - c0):
            xk = x[pat_cols[c0 + k]]
            for t in range(lo, hi):
                acc[t] += values[first[t] + k * n] * xk
        for t in range(lo, hi):
            out[order[t]] = acc[t]


@njit(cache=True)
def _matvec(pat_cols_ptr: np.ndarray, pat_cols: np.ndarray, pat_rows_ptr: np.ndarray, pat_rows: np.ndarray,
            values: np.ndarray, x: np.ndarray, out: np.ndarray, xg: np.ndarray, acc: np.ndarray) -> None:
    """``M x`` (:func:`pattern_rows`) into ``out`` of shape ``(d, n / d)``: row ``r`` goes to
    ``out[r % d, r // d]`` (``d = 1``: the plain product; ψ's rows ``(s, a, i)`` land at
    ``out[i, (s, a)]``, the layout the vectorised bonus loop reads). Each row is summed in
    column order, the rows of a pattern side by side; the NumPy
    reference sums in another order, so results agree to round-off. Work arrays: ``xg`` of
    ``len(x)``, ``acc`` of ``n`` (the number of rows)."""
    d = out.shape[0]
    off = 0
    for p in range(pat_cols_ptr.shape[0] - 1):
        c0 = pat_cols_ptr[p]
        m = pat_cols_ptr[p + 1] - c0
        n = pat_rows_ptr[p + 1] - pat_rows_ptr[p]
        for k in range(m):  # gather x once per pattern
            xg[k] = x[pat_cols[c0 + k]]
        for j in range(n):
            acc[j] = 0.0
        for k in range(m):  # column k of the pattern's block: contiguous over its rows
            xk = xg[k]
            col = values[off + k * n : off + (k + 1) * n]  # a slice: the loop indexes from 0 (SIMD)
            for j in range(n):
                acc[j] += col[j] * xk
        off += m * n
        for j in range(n):
            r = pat_rows[pat_rows_ptr[p] + j]
            out[r % d, r // d] = acc[j]


@njit(cache=True)
def _whitening_into(G: np.ndarray, u: np.ndarray, W: np.ndarray, theta: np.ndarray, L: np.ndarray) -> bool:
    """For a symmetric positive definite ``Λ = G``: ``W = L^{-1}`` (lower triangular, ``Λ = L Lᵀ``
    Cholesky) so that ``||x||²_{Λ^{-1}} = ||W x||²``, and ``θ = Λ^{-1} u = Wᵀ W u``. No
    allocation (the LAPACK wrappers allocate, which dominated at d = 5). Returns False
    (``W``, ``θ`` unset) if ``G`` is not positive definite."""
    d = G.shape[0]
    if not cholesky_into(G, 0.0, L):
        return False
    lower_inverse_into(L, W)
    for i in range(d):  # θ = Wᵀ (W u)
        theta[i] = 0.0
    for i in range(d):
        wu = 0.0
        for k in range(i + 1):
            wu += W[i, k] * u[k, 0]
        for k in range(i + 1):
            theta[k] += W[i, k] * wu
    return True


@njit(cache=True)
def _bonus_terms(
    xT: np.ndarray, W: np.ndarray, whitened: bool, theta: np.ndarray, lin: np.ndarray, quad: np.ndarray, z: np.ndarray,
) -> None:
    """For every column ``x = xT[:, n]``: ``lin[n] = xᵀθ`` and ``quad[n] = ||x||²_{Λ^{-1}}``,
    as ``||W x||²`` (whitened) or ``xᵀ M x`` with ``W = M = Λ^{-1}`` (the fallback for a
    Gram matrix that is not positive definite). Loops run along ``n`` (contiguous, SIMD)."""
    d = xT.shape[0]
    lin[:] = 0.0
    quad[:] = 0.0
    for i in range(d):
        z[:] = 0.0
        for k in range(i + 1 if whitened else d):
            w = W[i, k] if whitened else W[k, i]
            for n in range(z.shape[0]):
                z[n] += w * xT[k, n]
        for n in range(z.shape[0]):
            quad[n] += z[n] * z[n] if whitened else z[n] * xT[i, n]
            lin[n] += xT[i, n] * theta[i]


@njit(cache=True)
def _regression(G: np.ndarray, u: np.ndarray, W: np.ndarray, theta: np.ndarray, L: np.ndarray) -> tuple[bool, np.ndarray]:
    """Lines 5-6: ``θ̂ = Λ^{-1} u`` and what the bonus needs (:func:`_whitening_into`, or
    ``Λ^{-1}`` itself when ``Λ`` is not positive definite)."""
    if _whitening_into(G, u, W, theta, L):
        return True, W
    theta[:] = np.linalg.solve(G, u)[:, 0]
    return False, np.linalg.inv(G)


@njit(cache=True)
def plan_work(S: int, A: int, d1: int, d2: int) -> tuple:
    """The work arrays of :func:`plan_into`, allocated once per block of episodes: the
    bonus loop's five ``S A`` vectors, each regression's ``W``, ``L`` and ``θ``, and
    :func:`_matvec`'s gathered ``x`` and row sums. Every one is written before it is read in
    each call: no data passes from one episode's plan to the next through them."""
    SA = S * A
    return (np.empty(SA), np.empty(SA), np.empty(SA), np.empty(SA), np.empty(SA),
            np.empty((d1, d1)), np.empty((d1, d1)), np.empty(d1), np.empty((d2, d2)), np.empty((d2, d2)), np.empty(d2),
            np.empty(S), np.empty(SA * d1))


@njit(cache=True)
def plan_into(
    psi_cols_ptr: np.ndarray, psi_cols: np.ndarray, psi_rows_ptr: np.ndarray, psi_row_ids: np.ndarray, psi_values: np.ndarray,
    psi_row_pattern: np.ndarray, psi_row_offset: np.ndarray, phi_rT: np.ndarray,
    gram_p: np.ndarray, target_p: np.ndarray, gram_r: np.ndarray, target_r: np.ndarray,
    beta_p: float, beta_r: float, po: bool, policy: np.ndarray, Q: np.ndarray, V: np.ndarray, phis: np.ndarray,
    work: tuple,
) -> None:
    """Optimistic backward recursion from the released statistics only (Alg. 1 lines 4-12 /
    Alg. 2 lines 5-12); ``ψ`` as rows ``(s, a, i)`` over ``s'`` (:func:`psi_rows`) and
    ``phi_rT[i, (s, a)] = φ_i(s, a)``, both public feature maps. Outputs ``Q (H, S, A)``,
    ``V (H+1, S)`` with ``V_{H+1} = 0`` and ``phis[h, i, (s, a)] = ϕ^k_h(s, a)_i``. The bonus
    norms use the Cholesky factor of ``Λ`` instead of ``Λ^{-1}`` (equal to round-off).
    ``work``: the work arrays of :func:`plan_work` (the episode loop allocates them once per
    block; each is written before it is read in every call)."""
    H, S, A = Q.shape
    lin, quad, lin_r, quad_r, z, Wp, Lp, theta_p, Wr, Lr, theta_r, xg, acc = work
    for s in range(S):
        V[H, s] = 0.0
    for h in range(H - 1, -1, -1):
        # lines 5-6: θ̂ = Λ^{-1} u for both regressions, and the bonus norms' Λ
        white_p, Mp = _regression(gram_p[h], target_p[h], Wp, theta_p, Lp)
        white_r, Mr = _regression(gram_r[h], target_r[h], Wr, theta_r, Lr)
        # line 7: ϕ^k_h(s, a) = Σ_s' ψ(s, a, s') V^k_{h+1}(s')  (zero for V_{H+1} = 0)
        if h == H - 1:
            phis[h] = 0.0
        else:
            _matvec(psi_cols_ptr, psi_cols, psi_rows_ptr, psi_row_ids, psi_values, V[h + 1], phis[h], xg, acc)
        # lines 9-10: Q = ϕᵀθ̂_p + β_p ||ϕ||_{Λ_p^{-1}} + φᵀθ̂_r + β_r ||φ||_{Λ_r^{-1}}, clipped
        _bonus_terms(phis[h], Mp, white_p, theta_p, lin, quad, z)
        _bonus_terms(phi_rT, Mr, white_r, theta_r, lin_r, quad_r, z)
        for s in range(S):
            vbest = -math.inf
            vavg = 0.0
            for a in range(A):
                n = s * A + a
                reward_part = lin_r[n] + beta_r * math.sqrt(max(quad_r[n], 0.0))
                q = lin[n] + beta_p * math.sqrt(max(quad[n], 0.0)) + reward_part
                q = min(max(q, 0.0), float(H - h))  # line 10: clip to [0, H - h + 1]
                Q[h, s, a] = q
                vbest = max(vbest, q)
                vavg += q * policy[h, s, a] if po else 0.0
            V[h, s] = vavg if po else vbest  # line 11 (VI: max) / line 12 (PO: <Q, π>)


@njit(cache=True)
def _policy_value(
    P_cols_ptr: np.ndarray, P_cols: np.ndarray, P_rows_ptr: np.ndarray, P_rows: np.ndarray, P_values: np.ndarray,
    P_row_pattern: np.ndarray, P_row_offset: np.ndarray, r: np.ndarray, pi: np.ndarray, s1: int,
    deterministic: bool, actions: np.ndarray, Vbuf: np.ndarray, PV: np.ndarray,
    chosen: np.ndarray, iwork: np.ndarray, xg: np.ndarray, sums: np.ndarray,
) -> float:
    """``V^π_1(s_1)`` by backward induction on the true model (``LinearMixtureMDP.policy_value``;
    rows of ``P`` are ``(s, a)``). A deterministic policy (``actions[h, s]``) needs only the
    chosen rows: ``Σ_a π(a|s)(r + PV)`` is then exactly ``r + PV`` of that action. Work
    arrays: ``chosen`` (S integers), ``iwork`` (:func:`_rows_dot`), ``xg`` (S), ``sums`` (S A)."""
    H, S, A = pi.shape
    PV2 = PV.reshape(1, S * A)
    for s in range(S):
        Vbuf[1, s] = 0.0
    for h in range(H - 1, -1, -1):
        if deterministic:
            for s in range(S):
                chosen[s] = s * A + actions[h, s]
            _rows_dot(P_cols_ptr, P_cols, P_rows_ptr, P_values, P_row_pattern, P_row_offset, chosen, Vbuf[1], PV, iwork, sums)
            for s in range(S):
                Vbuf[0, s] = r[s, actions[h, s]] + PV[s]
        else:
            _matvec(P_cols_ptr, P_cols, P_rows_ptr, P_rows, P_values, Vbuf[1], PV2, xg, sums)
            for s in range(S):
                acc = 0.0
                for a in range(A):
                    acc += pi[h, s, a] * (r[s, a] + PV[s * A + a])
                Vbuf[0, s] = acc
        Vbuf[1, :] = Vbuf[0, :]
    return Vbuf[1, s1]


@njit(cache=True)
def _run_block(
    # features and model
    psi_cols_ptr: np.ndarray, psi_cols: np.ndarray, psi_rows_ptr: np.ndarray, psi_row_ids: np.ndarray, psi_values: np.ndarray,
    psi_row_pattern: np.ndarray, psi_row_offset: np.ndarray, phi_r: np.ndarray,
    P_cols_ptr: np.ndarray, P_cols: np.ndarray, P_rows_ptr: np.ndarray, P_rows: np.ndarray, P_values: np.ndarray,
    P_row_pattern: np.ndarray, P_row_offset: np.ndarray, r: np.ndarray, cumP: np.ndarray, s1: int,
    # regularizers: kinds, [σ_gram, σ_target, shift, λ_min] for p and r, their arrays
    d1: int, kinds: np.ndarray, params: np.ndarray, noisy: bool, t0: int,
    sums_gp: np.ndarray, sums_tp: np.ndarray, exact_gp: np.ndarray, suffix_gp: np.ndarray, exact_tp: np.ndarray, suffix_tp: np.ndarray,
    sums_gr: np.ndarray, sums_tr: np.ndarray, exact_gr: np.ndarray, suffix_gr: np.ndarray, exact_tr: np.ndarray, suffix_tr: np.ndarray,
    drawn_p: np.ndarray, drawn_r: np.ndarray,
    # agent
    po: bool, log_policy: np.ndarray, pi: np.ndarray, eta: float, beta_p: float, beta_r: float, v_star: float,
    # random blocks
    keys: np.ndarray, u: np.ndarray, a_u: np.ndarray, z: np.ndarray,
    # outputs per episode
    regret: np.ndarray, returns: np.ndarray, repaired: np.ndarray, actions_out: np.ndarray,
) -> None:
    """Episodes ``t0 + 1 .. t0 + len(u)`` (Alg. 1 / Alg. 2 loop body, see module docstring).
    PO: ``pi`` holds ``π^k = exp(log_policy)`` on entry and is kept current by the mirror
    step (VI: scratch).
    Per episode: ``regret[k] = V*_1(s_1) − V^{π_k}_1(s_1)``, the sampled return, the
    releases floored / not PD (``repaired[k]``: p floored, p not PD, r floored, r not PD)
    and the actions. ``drawn_p``/``drawn_r``: the regularizers' records of the σ's their
    noise was drawn with (:func:`_observe`)."""
    H, S, A = log_policy.shape
    d2 = phi_r.shape[1]
    gram_p, target_p = np.empty((H, d1, d1)), np.empty((H, d1, 1))
    gram_r, target_r = np.empty((H, d2, d2)), np.empty((H, d2, 1))
    Q, V, phis = np.empty((H, S, A)), np.empty((H + 1, S)), np.empty((H, d1, S * A))
    phi_rT = np.ascontiguousarray(phi_r.T)
    greedy = np.zeros((H, S), dtype=np.int64)
    Vbuf, PV = np.empty((2, S)), np.empty(S * A)
    Gp, Cp, Gr, Cr = np.zeros(H * d1 * d1), np.zeros(H * d1), np.zeros(H * d2 * d2), np.zeros(H * d2)
    ng_p, nt_p, ng_r, nt_r = np.zeros(H * d1 * d1), np.zeros(H * d1), np.zeros(H * d2 * d2), np.zeros(H * d2)
    states = np.empty(H + 1, dtype=np.int64)
    acts = np.empty(H, dtype=np.int64)
    rew = np.empty(H)
    o1, o2, o3 = H * d1 * d1, H * d1 * d1 + H * d1, H * d1 * d1 + H * d1 + H * d2 * d2
    tol = 1e-12 * max(1.0, float(H))
    # work arrays of the per-episode kernels, allocated once per block (allocations were a
    # fifth of an episode; results are bit-identical, tests/linmix/test_compiled_loop.py)
    work = plan_work(S, A, d1, d2)
    sym_p, chol_p, sym_r, chol_r = np.empty((d1, d1)), np.empty((d1, d1)), np.empty((d2, d2)), np.empty((d2, d2))
    chosen = np.empty(S, dtype=np.int64)
    iwork = np.empty(2 * P_cols_ptr.shape[0] + 2 * S, dtype=np.int64)
    xg_v, acc_v = np.empty(S), np.empty(S * A)
    for k in range(u.shape[0]):
        t = t0 + k  # users so far
        # begin_episode: the released statistics, then planning on them only
        repaired[k, 0], repaired[k, 1] = _release_into(kinds[0], H, d1, sums_gp, sums_tp, suffix_gp, suffix_tp, t,
                                                       params[0, 2], params[0, 3], gram_p, target_p, sym_p, chol_p)
        repaired[k, 2], repaired[k, 3] = _release_into(kinds[1], H, d2, sums_gr, sums_tr, suffix_gr, suffix_tr, t,
                                                       params[1, 2], params[1, 3], gram_r, target_r, sym_r, chol_r)
        plan_into(psi_cols_ptr, psi_cols, psi_rows_ptr, psi_row_ids, psi_values, psi_row_pattern, psi_row_offset, phi_rT,
                  gram_p, target_p, gram_r, target_r, beta_p, beta_r, po, pi, Q, V, phis, work)
        if not po:  # VI: greedy, ties (up to 1e-12 H) broken by the agent's random priorities
            for h in range(H):
                for s in range(S):
                    qmax = Q[h, s, 0]
                    for a in range(1, A):
                        qmax = max(qmax, Q[h, s, a])
                    best_a, best_key = 0, -2.0
                    for a in range(A):
                        key = keys[k, h, s, a] if Q[h, s, a] >= qmax - tol else -1.0
                        if key > best_key:
                            best_a, best_key = a, key
                    greedy[h, s] = best_a
                    for a in range(A):
                        pi[h, s, a] = 1.0 if a == best_a else 0.0
        regret[k] = v_star - _policy_value(P_cols_ptr, P_cols, P_rows_ptr, P_rows, P_values, P_row_pattern, P_row_offset,
                                           r, pi, s1, not po, greedy, Vbuf, PV, chosen, iwork, xg_v, acc_v)
        # the episode: actions from π, transitions and Bernoulli rewards by inverse CDF
        s = s1
        states[0] = s
        for h in range(H):
            if po:
                c = 0.0
                a = A - 1
                for b in range(A):
                    c += pi[h, s, b]
                    if c > a_u[k, h]:
                        a = b
                        break
            else:
                a = greedy[h, s]
            acts[h] = a
            rew[h] = 1.0 if u[k, h, 1] < r[s, a] else 0.0
            s = inverse_cdf(cumP[s, a], u[k, h, 0])  # cumP[..., -1] = 1: stops inside
            states[h + 1] = s
        returns[k] = pairwise_sum(rew, 0, H)
        actions_out[k] = acts
        # end_episode: this user's statistics to the Regularizers (Alg. 1 line 14)
        for h in range(H):
            sh, ah, sn = states[h], acts[h], states[h + 1]
            y = V[h + 1, sn]
            for i in range(d1):
                Cp[h * d1 + i] = phis[h, i, sh * A + ah] * y
                for j in range(d1):
                    Gp[(h * d1 + i) * d1 + j] = phis[h, i, sh * A + ah] * phis[h, j, sh * A + ah]
            for i in range(d2):
                Cr[h * d2 + i] = phi_r[sh * A + ah, i] * rew[h]
                for j in range(d2):
                    Gr[(h * d2 + i) * d2 + j] = phi_r[sh * A + ah, i] * phi_r[sh * A + ah, j]
        zk = z[k]
        _observe(kinds[0], H, d1, Gp, Cp, zk[:o1], zk[o1:o2], params[0, 0], params[0, 1], sums_gp, sums_tp,
                 exact_gp, suffix_gp, exact_tp, suffix_tp, t + 1, ng_p, nt_p, noisy, drawn_p)
        _observe(kinds[1], H, d2, Gr, Cr, zk[o2:o3], zk[o3:], params[1, 0], params[1, 1], sums_gr, sums_tr,
                 exact_gr, suffix_gr, exact_tr, suffix_tr, t + 1, ng_r, nt_r, noisy, drawn_r)
        if po:  # Alg. 2 line 15: π^{k+1}_h ∝ π^k_h exp(η Q^k_h), in log space
            for h in range(H):
                for s in range(S):
                    m = -math.inf
                    for a in range(A):
                        log_policy[h, s, a] = log_policy[h, s, a] + eta * Q[h, s, a]
                        m = max(m, log_policy[h, s, a])
                    tot = 0.0
                    for a in range(A):
                        log_policy[h, s, a] -= m
                        pi[h, s, a] = math.exp(log_policy[h, s, a])
                        tot += pi[h, s, a]
                    lt = math.log(tot)
                    for a in range(A):
                        log_policy[h, s, a] -= lt
                        pi[h, s, a] /= tot  # = exp(log π^{k+1}) up to round-off, one exp fewer


# the kernels above embed kernels of other files (the tree counter, NumPy's pairwise sum):
# flushed when one of those files changes (runner/kernel_cache.py, from the import closure)
drop_stale_closure(__name__)
