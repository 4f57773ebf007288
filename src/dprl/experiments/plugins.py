"""What every setting's jobs do with a plug-in algorithm (``dprl.experiments.registry``):
find its declaration, build its agent with its own factory, and account the noise the
built agent holds. The runners are :mod:`dprl.agents.plugin`'s."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from dprl.agents.protocol import BuiltAgent
from dprl.experiments.base import Algorithm, load_ref
from dprl.experiments.registry import get_kind
from dprl.runner.job import JobContext, JobSpec


def plugin_of(spec: JobSpec) -> Algorithm | None:
    """The job's algorithm declaration if it is a plug-in (it has a factory), else ``None``."""
    decl = get_kind(spec.kind).algorithms[spec.algorithm["name"]]
    return decl if decl.factory else None


def build_plugin(plugin: Algorithm, ctx: JobContext, env: object, n_episodes: int,
                 noise_rng: np.random.Generator | None) -> BuiltAgent:
    """The plug-in's agent from its own factory (``Algorithm.factory``), called as a paper's
    ``build_agent`` is, without the name: ``factory(params, privacy, env, n_episodes,
    agent_rng, noise_rng)``."""
    params = {k: v for k, v in ctx.spec.algorithm.items() if k != "name"}
    return load_ref(plugin.factory)(params, ctx.spec.privacy, env, n_episodes, ctx.agent_rng, noise_rng)


def checked_calibration(built: BuiltAgent, spec: JobSpec) -> object:
    """The calibration a private plug-in's built agent holds; a clear error when it holds none
    (a private plug-in is accounted from its noise, never trusted)."""
    if spec.privacy is not None and built.calibration is None:
        raise ValueError(f"plug-in {spec.algorithm['name']!r} is declared private but its built agent holds no calibration")
    return built.calibration


def held_epsilon(spec: JobSpec, build_job_agent: Callable[[JobContext], tuple[object, BuiltAgent]],
                 held: Callable[[BuiltAgent], object] | None = None) -> float | None:
    """A private plug-in's accounted ε (the registry's default ``accounting``): its agent built
    by its own factory as the job builds it (the setting's ``build_job_agent``), read from the
    calibration the built agent holds (``accounted_epsilon``, e.g. a ``PUCBCalibration`` of
    dprl's ``PrivateStats``). ``held``: the setting's reader of the noise objects an agent
    exposes (an LQ agent's ``regularizer``, a linear-mixture agent's ``reg_p``/``reg_r``),
    used when the agent exposes them, so the σ's it really adds are accounted, not the ones
    its calibration states."""
    built = build_job_agent(JobContext(spec))[1]
    cal = checked_calibration(built, spec)
    if cal is not None and held is not None:
        cal = held(built)
    return None if cal is None else float(cal.accounted_epsilon)
