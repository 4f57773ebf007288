"""Noise distributions shared by every mechanism (``src/dprl/README.md``).

A noise object draws i.i.d. samples of a given shape from a ``numpy.random.Generator``.
``symmetric=True`` (matrices) draws the entries ``p <= q`` i.i.d. and mirrors them so the
released matrix stays symmetric.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dprl.privacy.kernels import laplace_into, sign_words


def _symmetrise(draw: np.ndarray) -> np.ndarray:
    """Keep the upper triangle (diagonal included) of the last two axes and mirror it."""
    upper = np.triu(draw)
    return upper + np.swapaxes(np.triu(draw, 1), -1, -2)


@dataclass(frozen=True)
class LaplaceNoise:
    """i.i.d. ``Lap(scale)`` per coordinate (pure ε-DP)."""

    scale: float

    def __post_init__(self) -> None:
        if not (self.scale > 0 and np.isfinite(self.scale)):
            raise ValueError(f"Laplace scale must be positive and finite, got {self.scale}")

    def sample(self, rng: np.random.Generator, shape: tuple[int, ...], symmetric: bool = False) -> np.ndarray:
        # Lap(b) = ±b·E: a standard exponential per coordinate, then the signs, 53 to a
        # uniform draw (kernels.laplace_into, which the compiled loops call with the same
        # draws in the same order); exactly the Laplace law, faster than Generator.laplace
        e = rng.standard_exponential(shape)
        words = rng.random(sign_words(e.size))
        draw = np.empty(e.size)
        laplace_into(e.reshape(-1), words, self.scale, draw)
        draw = draw.reshape(e.shape)
        return _symmetrise(draw) if symmetric else draw

    @property
    def variance(self) -> float:
        return 2.0 * self.scale**2


@dataclass(frozen=True)
class GaussianNoise:
    """i.i.d. ``N(0, sigma^2)`` per coordinate (zCDP / Gaussian DP)."""

    sigma: float

    def __post_init__(self) -> None:
        if not (self.sigma > 0 and np.isfinite(self.sigma)):
            raise ValueError(f"Gaussian sigma must be positive and finite, got {self.sigma}")

    def sample(self, rng: np.random.Generator, shape: tuple[int, ...], symmetric: bool = False) -> np.ndarray:
        draw = self.sigma * rng.standard_normal(shape)
        return _symmetrise(draw) if symmetric else draw

    @property
    def variance(self) -> float:
        return self.sigma**2


Noise = LaplaceNoise | GaussianNoise
