"""One agent factory and one episode runner, the same for every episodic paper.

Each episodic paper's agent package (``tabular``, ``lq``, ``linmix``) exposes, in modules of
the same names

- ``build.build_agent(name, params, privacy, env, n_episodes, agent_rng, noise_rng) -> BuiltAgent``:
  the algorithm ``name`` with its config parameters ``params`` at the privacy setting
  ``privacy`` (``None``: non-private), sized for ``n_episodes`` episodes of ``env``; and
- ``episodes.run_episodes(built, env, n_episodes, env_rng, checkpoints, progress=None) -> DataFrame``:
  runs the episodes (compiled loops inside) and returns one row per checkpoint episode,
  starting with the columns ``episode`` and ``regret`` (cumulative exact regret); and, in
  all four papers' packages,
- ``privacy.held_calibration(built, ...) -> calibration | None``: the calibration of the noise
  the built agent holds, read from its noise objects, with ``accounted_epsilon`` and
  ``accounted_delta`` under the paper's relation (what jobs record and validation checks),
  beside the neighbouring inputs and samplers of the paper's privacy audit.

The job functions (``dprl.experiments.*.jobs``) build and run agents only through the
first two. Paper-specific
options come after ``progress`` as keywords (e.g. the LQ ridge check, the linear-mixture
action record). The policy-evaluation paper (Balle et al. 2016) has no episodes: its
estimators are built by the same factory's head (:func:`dprl.agents.pe.build.build_agent`,
``env`` an :class:`~dprl.agents.pe.build.EstimationTask`: feature map, state weights, return
bound) and evaluated on nested batches of trajectories instead of being run.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Generic, Protocol, TypeVar

import numpy as np
import pandas as pd

from dprl.privacy.setting import PrivacySetting

AgentT = TypeVar("AgentT")
CalibrationT = TypeVar("CalibrationT")
EnvT = TypeVar("EnvT", contravariant=True)


@dataclass
class BuiltAgent(Generic[AgentT, CalibrationT]):
    """An agent ready to run, and the calibration of its privacy noise (``None`` for a
    non-private agent): the noise scales, confidence constants and accounting the job
    records next to its results."""

    agent: AgentT
    calibration: CalibrationT | None


class AgentFactory(Protocol[EnvT]):
    """``build_agent`` of a paper."""

    def __call__(self, name: str, params: Mapping[str, Any], privacy: PrivacySetting | None, env: EnvT,
                 n_episodes: int, agent_rng: np.random.Generator,
                 noise_rng: np.random.Generator | None) -> BuiltAgent: ...


class EpisodeRunner(Protocol[EnvT]):
    """``run_episodes`` of an episodic paper."""

    def __call__(self, built: BuiltAgent, env: EnvT, n_episodes: int, env_rng: np.random.Generator,
                 checkpoints: np.ndarray, progress: Callable[[int, int], None] | None = None) -> pd.DataFrame: ...


def checked_checkpoints(checkpoints: np.ndarray, n_episodes: int) -> np.ndarray:
    """The checkpoint episodes a runner reports, as a sorted array of distinct ints in
    ``1..n_episodes``; a clear error for anything else (before any episode runs)."""
    marks = np.asarray(checkpoints)
    if marks.ndim != 1 or marks.size == 0 or not np.issubdtype(marks.dtype, np.integer):
        raise ValueError(f"checkpoints must be a non-empty 1-d array of episode numbers, got {checkpoints!r}")
    if marks[0] < 1 or marks[-1] > n_episodes or np.any(np.diff(marks) <= 0):
        raise ValueError(f"checkpoints must increase strictly within 1..{n_episodes}, got {marks.tolist()}")
    return marks.astype(np.int64)
