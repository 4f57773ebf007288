"""The typed privacy setting (dprl.privacy.setting) and its use by JobSpec."""

from __future__ import annotations

import math

import pytest

from dprl.privacy.setting import PrivacySetting
from dprl.runner.job import JobSpec, stable_hash


@pytest.mark.parametrize("kwargs, message", [
    ({"epsilon": 0.0, "calibration": "tight"}, r"epsilon must be positive and finite, got 0\.0"),
    ({"epsilon": -1, "calibration": "tight"}, r"epsilon must be positive and finite, got -1\.0"),
    ({"epsilon": math.inf, "calibration": "tight"}, r"epsilon must be positive and finite, got inf"),
    ({"epsilon": math.nan, "calibration": "tight"}, r"epsilon must be positive and finite, got nan"),
    ({"epsilon": "1", "calibration": "tight"}, r"epsilon must be a number, got '1'"),
    ({"epsilon": True, "calibration": "tight"}, r"epsilon must be a number, got True"),
    ({"epsilon": 1.0, "delta": 0.0, "calibration": "tight"}, r"delta must be in \(0, 1\).*got 0\.0"),
    ({"epsilon": 1.0, "delta": 1.0, "calibration": "tight"}, r"delta must be in \(0, 1\).*got 1\.0"),
    ({"epsilon": 1.0, "calibration": "tigth"}, r"calibration must be one of \['paper', 'tight'\], got 'tigth'"),
])
def test_bad_values_are_named(kwargs, message):
    with pytest.raises((ValueError, TypeError), match=message):
        PrivacySetting(**kwargs)


def test_mapping_round_trip_and_bad_keys():
    p = PrivacySetting(epsilon=1, delta=1e-5, calibration="paper")
    assert isinstance(p.epsilon, float) and not p.pure
    assert PrivacySetting.from_mapping(p.to_dict()) == p
    assert PrivacySetting.from_mapping({"epsilon": 2.0, "calibration": "tight"}).pure
    with pytest.raises(ValueError, match=r"unknown keys \['eps'\], missing keys \['epsilon'\]"):
        PrivacySetting.from_mapping({"eps": 1.0, "calibration": "tight"})
    with pytest.raises(TypeError, match="a privacy setting is a mapping"):
        PrivacySetting.from_mapping([1.0, "tight"])  # type: ignore[arg-type]
    with pytest.raises(AttributeError):
        p.epsilon = 2.0  # type: ignore[misc]  # frozen


def _spec(privacy) -> JobSpec:
    return JobSpec("x", "k", {"name": "a"}, {"name": "e"}, privacy, {}, 4)


def test_jobspec_holds_a_setting_with_the_same_json_and_streams():
    """A spec built from the privacy block as a mapping holds a PrivacySetting; its JSON
    and its noise stream are those of the mapping the specs held before the typed
    setting (so results stay bit-identical)."""
    block = {"epsilon": 1.0, "delta": 1e-5, "calibration": "tight"}
    spec = _spec(block)
    assert spec.privacy == PrivacySetting(epsilon=1.0, delta=1e-5, calibration="tight") and spec == _spec(spec.privacy)
    assert (spec.epsilon, spec.delta, spec.calibration) == (1.0, 1e-5, "tight")
    assert spec.to_dict()["privacy"] == block and JobSpec.from_dict(spec.to_dict()) == spec
    old_key = ["noise", spec.algorithm, spec.environment, block]
    assert spec.seed_sequence("noise").entropy == stable_hash(old_key)
    pure = {"epsilon": 2.0, "delta": None, "calibration": "paper"}  # what config expansion held for pure DP
    assert _spec(pure).seed_sequence("noise").entropy == stable_hash(["noise", spec.algorithm, spec.environment, pure])
    nonprivate = _spec(None)
    assert nonprivate.epsilon == math.inf and nonprivate.delta is None and nonprivate.calibration is None
    assert nonprivate.seed_sequence("noise").entropy == stable_hash(["noise", spec.algorithm, spec.environment, None])
    with pytest.raises(ValueError, match=r"delta must be in \(0, 1\).*got 2\.0"):
        _spec({"epsilon": 1.0, "delta": 2.0, "calibration": "tight"})
