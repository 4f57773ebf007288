"""Deliberately broken noise sources, used only to show that the privacy audits have power
(``src/dprl/README.md``: an audit must fail on a broken mechanism). Never used by an agent.

- ``halved``: the noise scale divided by two (a calibration bug).
- ``reused``: one draw reused for every node (a stateful-RNG bug); differences of
  releases then cancel the noise exactly.
- ``unnoised``: the first coordinate of every draw left at zero (an indexing bug).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np

from dprl.privacy.noise import GaussianNoise, LaplaceNoise, Noise

BROKEN_KINDS = ("none", "halved", "reused", "unnoised")


@dataclass
class ReusedNoise:
    base: Noise
    _cache: dict = field(default_factory=dict)

    @property
    def variance(self) -> float:
        return self.base.variance

    def sample(self, rng: np.random.Generator, shape: tuple[int, ...], symmetric: bool = False) -> np.ndarray:
        key = (tuple(shape), symmetric)
        if key not in self._cache:
            self._cache[key] = self.base.sample(rng, shape, symmetric)
        return self._cache[key]


@dataclass
class UnnoisedCoordinate:
    base: Noise

    @property
    def variance(self) -> float:
        return self.base.variance

    def sample(self, rng: np.random.Generator, shape: tuple[int, ...], symmetric: bool = False) -> np.ndarray:
        draw = self.base.sample(rng, shape, symmetric).copy()
        draw.reshape(shape[0], -1)[:, 0] = 0.0  # first coordinate of every counter
        return draw


def break_noise(noise: Noise, how: str) -> Noise | ReusedNoise | UnnoisedCoordinate:
    if how == "none":
        return noise
    if how == "halved":
        if isinstance(noise, LaplaceNoise):
            return replace(noise, scale=noise.scale / 2)
        if isinstance(noise, GaussianNoise):
            return replace(noise, sigma=noise.sigma / 2)
    if how == "reused":
        return ReusedNoise(noise)
    if how == "unnoised":
        return UnnoisedCoordinate(noise)
    raise ValueError(f"unknown breakage {how!r}; one of {BROKEN_KINDS}")
