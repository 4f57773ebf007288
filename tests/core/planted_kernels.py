"""Planting a bug *in the compiled noise path* of Private-OFU-RL and LinOpt (tests of
``src/dprl/README.md``, "Privacy audits"): not in the noise objects the agents hold, but in
the Numba kernels their episode loops and audits run.

- :func:`rejit`: a kernel compiled again (uncached) with some of the kernels it calls
  replaced, so a planted callee is compiled into it (Numba freezes callees at compile time:
  replacing a module attribute does not reach an already compiled caller).
- :func:`cut_gaussian_into`: :func:`dprl.privacy.kernels.gaussian_into` whose output is
  divided by ``cut`` after it recorded the σ it was given: a noise cut the σ report cannot
  see, which only an audit drawing through the same kernel can catch.
- :func:`scaled_call`: a Python wrapper of a compiled kernel that multiplies the σ arguments
  it is called with (the σ the compiled loop draws with, not the calibration the agent
  holds): what the loop reports and the job checks.
"""

from __future__ import annotations

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
from dprl.runner.job import JobSpec


def rejit(kernel, **callees):
    """``kernel`` compiled afresh (no disk cache) with the globals ``callees`` replaced."""
    f = kernel.py_func
    scope = dict(f.__globals__)
    scope.update(callees)
    return njit(types.FunctionType(f.__code__, scope, f.__name__, f.__defaults__, f.__closure__))


def cut_gaussian_into(cut: float):
    """``gaussian_into`` drawing ``1/cut`` of its noise while reporting the σ it was given."""
    divide = float(cut)

    @njit
    def planted(z, scale, d, out, drawn, slot):
        gaussian_into(z, scale, d, out, drawn, slot)
        for c in range(out.shape[0]):
            out[c] = out[c] / divide

    return planted


def scaled_call(kernel, names: Sequence[str], factor: float) -> Callable:
    """``kernel`` called with its arguments ``names`` (the σ's, passed positionally) times
    ``factor``."""
    params = list(inspect.signature(kernel.py_func).parameters)
    positions = [params.index(n) for n in names]

    def planted(*args):
        args = list(args)
        for i in positions:
            args[i] = args[i] * factor
        return kernel(*args)

    return planted


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
