"""Planting a bug *in the compiled noise path* of Private-OFU-RL and LinOpt (tests of
``src/dprl/README.md``, "Privacy audits"): not in the noise objects the agents hold, but in
the Numba kernels their episode loops and audits run.

- :func:`rejit`: a kernel compiled again (uncached) with some of the kernels it calls
  replaced, so a planted callee is compiled into it (Numba freezes callees at compile time:
  replacing a module attribute does not reach an already compiled caller); :func:`rejit_chain`
  along a call path.
- :func:`cut_gaussian_into`: :func:`dprl.privacy.kernels.gaussian_into` whose output is
  divided by ``cut`` after it recorded the σ it was given: a noise cut the σ report cannot
  see, which only an audit drawing through the same kernel can catch.
- :func:`scaled_call`: a Python wrapper of a compiled kernel that multiplies the σ arguments
  it is called with (the σ the compiled loop draws with, not the calibration the agent
  holds): what the loop reports and the job checks.
- :func:`more_noise_in_the_agent`: the noise object itself changed (the regularizers built).
"""

from __future__ import annotations

import dataclasses
import inspect
import types
from collections.abc import Callable, Sequence

import pandas as pd
from numba import njit

from dprl.analysis.aggregate import identity_columns
from dprl.analysis.claims import evaluate
from dprl.experiments.registry import get_kind
from dprl.experiments.run import execute
from dprl.privacy.kernels import gaussian_into
from dprl.privacy.regularizer import CentralRegularizer
from dprl.runner.job import JobSpec


def rejit(kernel, **callees):
    """``kernel`` compiled afresh (no disk cache) with the globals ``callees`` replaced."""
    f = kernel.py_func
    scope = dict(f.__globals__)
    scope.update(callees)
    return njit(types.FunctionType(f.__code__, scope, f.__name__, f.__defaults__, f.__closure__))


def rejit_chain(chain: Sequence, **callees):
    """The last kernel of ``chain`` compiled afresh with ``callees`` replaced in the first,
    the first (so planted) in the second, and so on: ``chain`` is a call path from the
    kernel that calls the replaced one out to the kernel a test swaps in."""
    for kernel in chain:
        new = rejit(kernel, **callees)
        callees = {kernel.py_func.__name__: new}
    return new


def cut_gaussian_into(cut: float):
    """``gaussian_into`` drawing ``1/cut`` of its noise while reporting the σ it was given."""
    divide = float(cut)

    @njit
    def planted(z, scale, d, out, drawn, slot):
        gaussian_into(z, scale, d, out, drawn, slot)
        for c in range(out.shape[0]):
            out[c] = out[c] / divide

    return planted


def scaled_call(kernel, names: Sequence[str], factor: float, columns: slice | None = None) -> Callable:
    """``kernel`` called with its arguments ``names`` (the σ's, passed positionally) times
    ``factor``; with ``columns``, those columns of an array argument (LinOpt's ``params``
    rows ``[σ_gram, σ_target, shift, λ_min]``)."""
    params = list(inspect.signature(kernel.py_func).parameters)
    positions = [params.index(n) for n in names]

    def planted(*args):
        args = list(args)
        for i in positions:
            if columns is None:
                args[i] = args[i] * factor
            else:
                args[i] = args[i].copy()
                args[i][..., columns] *= factor
        return kernel(*args)

    return planted


def more_noise_in_the_agent(monkeypatch, factor: float) -> None:
    """Every :class:`CentralRegularizer` built holds ``factor`` times its calibration's σ's
    (the noise object the agent holds, which its compiled loop then reads)."""
    init = CentralRegularizer.__init__

    def more(self, batch_shape, p, q, max_users, calibration, rng, noise=True):
        calibration = dataclasses.replace(calibration, sigma_gram=factor * calibration.sigma_gram,
                                          sigma_target=factor * calibration.sigma_target)
        init(self, batch_shape, p, q, max_users, calibration, rng, noise)

    monkeypatch.setattr(CentralRegularizer, "__init__", more)


def default_spec(kind: str, alg: str, env: str, privacy: dict | None, settings: dict, **env_over) -> JobSpec:
    """A job of ``kind`` with the declared defaults of its algorithm, environment and
    settings, overridden by ``settings`` and ``env_over``."""
    k = get_kind(kind)
    a = {"name": alg, **{n: p.default for n, p in k.algorithms[alg].params.items()}}
    e = {"name": env, **{n: p.default for n, p in k.environments[env].params.items()}, **env_over}
    s = {**{n: p.default for n, p in k.settings.items()}, **settings}
    return JobSpec(kind, kind, a, e, privacy, s, 0)


def job_table(spec: JobSpec) -> pd.DataFrame:
    """What the runner writes for ``spec`` (:func:`dprl.experiments.run.execute`: refused
    jobs raise), with the identity columns the aggregation adds."""
    return execute(spec).assign(**identity_columns({"spec": spec.to_dict()}))


def verdicts(claim, table: str, df: pd.DataFrame) -> dict[str, str]:
    """The claim's verdict per calibration label, by its own rule."""
    return {r["calibration"]: r["verdict"] for r in evaluate(claim, {table: df})}


def two_seeds(spec: JobSpec) -> pd.DataFrame:
    """Seeds 0 and 1 of ``spec`` as the runner writes them (a P row judges at least two jobs)."""
    return pd.concat([job_table(dataclasses.replace(spec, seed=seed)) for seed in (0, 1)], ignore_index=True)


def check_audit_flip(claim, spec: JobSpec, plant: Callable[[], None], reported: bool) -> None:
    """The audit job of ``spec`` reproduces ``claim`` (V1/C1/Z1), and after ``plant()`` (a cut
    of the noise in the compiled path) does not, by the claim's own rule: every audit's
    ``ε_lb`` above its claim; the rows' exact ε (from the σ's drawn with) moves only when the
    cut is ``reported`` by the kernel."""
    control = job_table(spec)
    assert set(verdicts(claim, spec.kind, control).values()) == {"reproduced"}, control
    plant()
    df = job_table(spec)
    assert set(verdicts(claim, spec.kind, df).values()) == {"not reproduced"}, df
    assert (df["eps_lb"] > df["claimed_epsilon"]).all(), df[["eps_lb", "claimed_epsilon"]]
    assert (df["eps_exact"] > 2 * control["eps_exact"]).all() == reported, df[["eps_exact"]]


def check_tight_flip(claim, spec: JobSpec, plant: Callable[[], None]) -> None:
    """Two seeds of the tight regret job ``spec`` are accounted at their nominal ε and pass
    ``claim`` (P1-P4); after ``plant()`` (10x the noise) each records an accounted ε below a
    fifth of it and the tight row is not reproduced."""
    control = two_seeds(spec)
    assert (abs(control["accounted_epsilon"] / spec.epsilon - 1) < 1e-9).all(), control["accounted_epsilon"]
    assert verdicts(claim, spec.kind, control) == {"tight": "reproduced"}
    plant()
    df = two_seeds(spec)
    assert (df["accounted_epsilon"] / spec.epsilon < 0.2).all(), df["accounted_epsilon"]
    assert verdicts(claim, spec.kind, df) == {"tight": "not reproduced"}
