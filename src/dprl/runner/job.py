"""A job's specification and the context a job function runs in.

Random streams (src/dprl/README.md, "Determinism"): every stream is a ``SeedSequence`` whose
entropy is a hash of the parameters that *should* determine it, and whose spawn key is
the seed. Nothing depends on execution order, core count or executor.

- ``env``: keyed by (environment, seed) only, so for a given seed every algorithm and every
  privacy level sees the same instance and the same environment randomness stream
  (common random numbers).
- ``agent``: keyed by (algorithm, environment, seed): the agent's own non-private
  randomness (tie-breaking, oracle candidates, policy sampling). Shared across privacy
  levels of the same algorithm.
- ``noise``: keyed by (algorithm, environment, privacy, seed): privacy noise only.
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
import time
from functools import cached_property
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from dprl.privacy.setting import PrivacySetting


def canonical_json(obj: Any) -> str:
    """Deterministic JSON (sorted keys, no whitespace) used for hashing and paths."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), default=float)


def stable_hash(obj: Any, nbytes: int = 16) -> int:
    return int.from_bytes(hashlib.sha256(canonical_json(obj).encode()).digest()[:nbytes], "little")


def short_hash(obj: Any, n: int = 8) -> str:
    return hashlib.sha256(canonical_json(obj).encode()).hexdigest()[:n]


def job_path(experiment: str, labels: dict[str, str], seed: int) -> str:
    """A job's result path relative to ``results/<preset>/``: built from its own labels
    and seed only, so adding a sweep value never moves another job's file."""
    return f"jobs/{experiment}/{labels['alg_label']}/{labels['env_label']}/{labels['privacy_label']}/seed{seed}.csv"


@dataclass(frozen=True)
class JobSpec:
    """Everything that determines one job's numbers."""

    experiment: str  # the experiment's key in config.yaml
    kind: str  # the experiment kind (registry name)
    algorithm: dict[str, Any]  # {"name": ..., **params (defaults filled)}
    environment: dict[str, Any]  # {"name": ..., **params (defaults filled)}
    privacy: PrivacySetting | None  # None for a non-private job; a mapping is converted (and checked)
    settings: dict[str, Any]
    seed: int

    def __post_init__(self) -> None:
        if self.privacy is not None and not isinstance(self.privacy, PrivacySetting):
            object.__setattr__(self, "privacy", PrivacySetting.from_mapping(self.privacy))

    def to_dict(self) -> dict[str, Any]:
        """The JSON form (``privacy`` as :meth:`PrivacySetting.to_dict`)."""
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> JobSpec:
        return cls(**d)

    @property
    def epsilon(self) -> float:
        """ε, ``inf`` for a non-private job."""
        return math.inf if self.privacy is None else self.privacy.epsilon

    @property
    def delta(self) -> float | None:
        return None if self.privacy is None else self.privacy.delta

    @property
    def calibration(self) -> str | None:
        return None if self.privacy is None else self.privacy.calibration

    def seed_sequence(self, scope: str, label: str = "") -> np.random.SeedSequence:
        if scope == "env":
            key: Any = ["env", self.environment]
        elif scope == "agent":
            key = ["agent", self.algorithm, self.environment]
        elif scope == "noise":
            key = ["noise", self.algorithm, self.environment, None if self.privacy is None else self.privacy.to_dict()]
        else:
            raise ValueError(f"unknown random stream scope {scope!r}")
        if label:
            key.append(label)
        return np.random.SeedSequence(entropy=stable_hash(key), spawn_key=(int(self.seed),))


@dataclass
class JobContext:
    """Handed to a job function: its spec, its random streams, progress logging."""

    spec: JobSpec
    log: logging.Logger = field(default_factory=lambda: logging.getLogger("dprl.job"))
    progress_interval_s: float = 5.0
    _t0: float = field(default_factory=time.perf_counter)
    _last: float = -math.inf
    # the largest accounted ε of the private agents the job ran (record_accounting)
    accounted_epsilon: float | None = None

    def rng(self, scope: str, label: str = "") -> np.random.Generator:
        """A fresh generator at the start of a stream (scopes: module docstring). Use
        ``label`` for extra independent streams; ``env_rng``/``agent_rng``/``noise_rng``
        are cached generators of the unlabelled streams."""
        return np.random.default_rng(self.spec.seed_sequence(scope, label))

    @cached_property
    def env_rng(self) -> np.random.Generator:
        return self.rng("env")

    @cached_property
    def agent_rng(self) -> np.random.Generator:
        return self.rng("agent")

    @cached_property
    def noise_rng(self) -> np.random.Generator:
        return self.rng("noise")

    @property
    def settings(self) -> dict[str, Any]:
        return self.spec.settings

    def record_accounting(self, calibration: Any) -> None:
        """Record the accounted ε of an agent the job runs, read from the calibration of the
        noise the built agent holds (``agents.<paper>.privacy.held_calibration``; ``None``
        for a non-private agent). A job running several agents records the largest; the
        runner writes it as the column ``accounted_epsilon``."""
        if calibration is None:
            return
        eps = float(calibration.accounted_epsilon)
        self.accounted_epsilon = eps if self.accounted_epsilon is None else max(self.accounted_epsilon, eps)

    def progress(self, done: int, total: int, unit: str = "episodes", **extra: Any) -> None:
        """Log a progress line (done/total, rate) at most every ``progress_interval_s``
        seconds, and always at the end."""
        now = time.perf_counter()
        if done < total and now - self._last < self.progress_interval_s:
            return
        self._last = now
        elapsed = now - self._t0
        rate = done / elapsed if elapsed > 0 else float("nan")
        tail = "".join(f" {k}={v:.4g}" if isinstance(v, float) else f" {k}={v}" for k, v in extra.items())
        self.log.info("progress %d/%d %s (%.1f%%) %.1f %s/s%s", done, total, unit, 100.0 * done / max(total, 1), rate, unit, tail)
