"""The privacy level a private job runs at: one typed, validated value.

A job's ``privacy`` block (``config.yaml``, docs/sweeps.md) expands into
one :class:`PrivacySetting` per (ε, δ, calibration); job specifications, agent factories,
job functions, the papers' calibration builders (``private_ofu_calibration``,
``linopt_calibration``, PUCB's ``PrivateStats`` and ``count_error_bounds``) and regime
predictions take it whole instead of loose ε, δ and calibration arguments. As in Google's
dp-accounting (``dp_accounting.dp_event``), the value is a frozen dataclass that checks
itself on construction, with errors that name the bad value.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from numbers import Real
from typing import Any

CALIBRATIONS = ("paper", "tight")  # src/dprl/README.md, "Two calibrations": the paper's constants, or the tight analysis


@dataclass(frozen=True, kw_only=True)
class PrivacySetting:
    """ε (> 0, finite), δ (``None`` for pure ε-DP, else in (0, 1)) and the noise
    ``calibration`` (``"paper"`` or ``"tight"``) of one private job."""

    epsilon: float
    delta: float | None = None
    calibration: str

    def __post_init__(self) -> None:
        # floats, so that the spec's JSON (hence its random streams and result header)
        # does not depend on whether a caller wrote 1 or 1.0
        object.__setattr__(self, "epsilon", _number("epsilon", self.epsilon))
        if not (math.isfinite(self.epsilon) and self.epsilon > 0):
            raise ValueError(f"privacy epsilon must be positive and finite, got {self.epsilon!r}")
        if self.delta is not None:
            object.__setattr__(self, "delta", _number("delta", self.delta))
            if not 0.0 < self.delta < 1.0:
                raise ValueError(f"privacy delta must be in (0, 1) (or None for pure epsilon-DP), got {self.delta!r}")
        if self.calibration not in CALIBRATIONS:
            raise ValueError(f"privacy calibration must be one of {list(CALIBRATIONS)}, got {self.calibration!r}")

    @property
    def pure(self) -> bool:
        """Pure ε-DP (no δ)."""
        return self.delta is None

    def to_dict(self) -> dict[str, Any]:
        """The JSON form (job specs, result headers, stream keys): every field, ``delta``
        included when ``None``."""
        return {"epsilon": self.epsilon, "delta": self.delta, "calibration": self.calibration}

    @classmethod
    def from_mapping(cls, block: Mapping[str, Any]) -> PrivacySetting:
        """From the JSON form (``delta`` may be missing: pure ε-DP); unknown keys are errors."""
        if not isinstance(block, Mapping):
            raise TypeError(f"a privacy setting is a mapping with epsilon, delta, calibration; got {block!r}")
        unknown = sorted(set(block) - {"epsilon", "delta", "calibration"})
        missing = sorted({"epsilon", "calibration"} - set(block))
        if unknown or missing:
            raise ValueError(f"privacy setting {dict(block)!r}: unknown keys {unknown}, missing keys {missing}")
        return cls(epsilon=block["epsilon"], delta=block.get("delta"), calibration=block["calibration"])


def _number(name: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, Real):
        raise TypeError(f"privacy {name} must be a number, got {value!r}")
    return float(value)
