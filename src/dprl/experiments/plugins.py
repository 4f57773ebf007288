"""What every setting's jobs do with a plug-in algorithm (``dprl.experiments.registry``):
find its declaration, build its agent with its own factory, and account the noise the
built agent holds. The runners are :mod:`dprl.agents.plugin`'s."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from dprl.agents.protocol import BuiltAgent
from dprl.experiments.base import Algorithm, load_ref
from dprl.experiments.registry import get_kind, plugin_origin
from dprl.runner.job import JobContext, JobSpec


def plugin_of(spec: JobSpec) -> Algorithm | None:
    """The job's algorithm declaration if it is a plug-in (it has a factory), else ``None``."""
    decl = get_kind(spec.kind).algorithms[spec.algorithm["name"]]
    return decl if decl.factory else None


class PluginBuildError(RuntimeError):
    """A plug-in's factory raised: the message names the algorithm, its entry point, the
    factory and the first line of the error (the traceback is chained)."""


def first_line(err: BaseException) -> str:
    """``Type: first line of the message`` of an exception."""
    text = str(err).strip().splitlines()
    return f"{type(err).__name__}: {text[0]}" if text else type(err).__name__


def build_plugin(plugin: Algorithm, ctx: JobContext, env: object, n_episodes: int,
                 noise_rng: np.random.Generator | None) -> BuiltAgent:
    """The plug-in's agent from its own factory (``Algorithm.factory``), called as a paper's
    ``build_agent`` is, without the name: ``factory(params, privacy, env, n_episodes,
    agent_rng, noise_rng)``. :class:`PluginBuildError` if the factory raises."""
    params = {k: v for k, v in ctx.spec.algorithm.items() if k != "name"}
    try:
        return load_ref(plugin.factory)(params, ctx.spec.privacy, env, n_episodes, ctx.agent_rng, noise_rng)
    except Exception as err:  # the user's code: say whose and where before its traceback
        raise PluginBuildError(f"plug-in algorithm {plugin.name!r} ({plugin_origin(plugin.name)}): its factory "
                               f"{plugin.factory} raised {first_line(err)}") from err


# Where a plug-in's agent exposes the dprl noise objects it releases through, per setting,
# and the paper's reader of the calibration those objects hold (``held_calibration``).
HELD = {
    "tabular": ("source", "dprl.agents.tabular.privacy:held_calibration"),  # PrivateStats
    "lq": ("regularizer", "dprl.agents.lq.privacy:held_calibration"),  # Private-OFU-RL's counters
    "linmix": ("reg_p", "dprl.agents.linmix.privacy:held_calibration"),  # the Privatizer's (reg_p, reg_r)
}


def plugin_calibration(built: BuiltAgent, spec: JobSpec) -> object:
    """The calibration a plug-in's built agent runs with, what its job records and what
    validation accounts: read from the noise objects the agent exposes (:data:`HELD`), so the
    σ's it really adds count, not the ones its calibration states; the stated calibration
    for an agent that exposes none. A clear error for a private plug-in that holds none (it
    is accounted from its noise, never trusted)."""
    if spec.privacy is not None and built.calibration is None:
        raise ValueError(f"plug-in {spec.algorithm['name']!r} is declared private but its built agent holds no calibration")
    if built.calibration is None:
        return None
    setting = get_kind(spec.kind).algorithms[spec.algorithm["name"]].setting
    attribute, reader = HELD[setting]
    held = load_ref(reader)(built) if hasattr(built.agent, attribute) else None
    return built.calibration if held is None else held


def held_epsilon(spec: JobSpec, build_job_agent: Callable[[JobContext], tuple[object, BuiltAgent]]) -> float | None:
    """A private plug-in's accounted ε (the registry's default ``accounting``): its agent built
    by its own factory as the job builds it (the setting's ``build_job_agent``), read by
    :func:`plugin_calibration`."""
    cal = plugin_calibration(build_job_agent(JobContext(spec))[1], spec)
    return None if cal is None else float(cal.accounted_epsilon)
