"""Plotting helpers shared by every paper's figures."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def save(fig: plt.Figure, stem: Path) -> None:
    """Write ``stem.pdf`` and ``stem.png`` (tight bounding box) and close the figure."""
    fig.savefig(stem.with_suffix(".pdf"), bbox_inches="tight")
    fig.savefig(stem.with_suffix(".png"), dpi=130, bbox_inches="tight")
    plt.close(fig)
