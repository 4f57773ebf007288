"""The NumPy code path of :meth:`dprl.envs.mrp.FiniteMRP.iter_first_visit` before its step and
backward pass were compiled (:func:`dprl.envs.mrp.step_into`, :func:`dprl.envs.mrp.first_visit_into`),
kept only as a test oracle and a benchmark reference. It makes the same random draws in the
same order (``rng.choice`` for the starts, one ``rng.random(c)`` per step until every
trajectory of the chunk is absorbed), so the two give the same numbers."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from dprl.envs.mrp import FiniteMRP, FirstVisitData


def iter_first_visit(mrp: FiniteMRP, m: int, rng: np.random.Generator, chunk: int) -> Iterator[FirstVisitData]:
    support, cum = mrp._sparse_rows()
    n, T = mrp.n_states, mrp.max_len
    for lo in range(0, m, chunk):
        c = min(lo + chunk, m) - lo
        states = np.empty((c, T + 1), dtype=np.int64)
        states[:, 0] = rng.choice(n, size=c, p=mrp.p0)
        steps = T
        for t in range(T):
            s = states[:, t]
            u = rng.random(c)
            j = (u[:, None] > cum[s]).sum(axis=1)
            states[:, t + 1] = support[s, j]
            if np.all(states[:, t + 1] == mrp.absorbing):
                steps = t + 1
                break
        rows = np.arange(c)
        g = np.zeros(c)
        ret, vis = np.zeros((c, n)), np.zeros((c, n), dtype=bool)
        for t in range(steps - 1, -1, -1):
            s, s_next = states[:, t], states[:, t + 1]
            g = mrp.R[s, s_next] + mrp.gamma * g
            live = s != mrp.absorbing
            ret[rows[live], s[live]] = g[live]
            vis[rows[live], s[live]] = True
        yield FirstVisitData(ret, vis)
