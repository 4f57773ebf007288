"""Refuse, before any job, private jobs whose accounted ε exceeds their nominal ε.

Separate from :mod:`dprl.config.load` because accounting builds calibrations (NumPy,
SciPy): Snakemake parses the workflow in every process (two per cluster job) and must stay
light, so this check runs in ``dprl validate`` and once per workflow run (``onstart``).
"""

from __future__ import annotations

from typing import Any

from dprl.config.load import PRESETS, ConfigError, resolve_all_presets, validate_schema
from dprl.experiments.accounting import check_accounting


def check_privacy_accounting(raw: dict[str, Any], presets: tuple[str, ...] = PRESETS) -> None:
    """Raise :class:`ConfigError` naming every offending ``experiments.<name>.privacy``
    entry (in every preset of ``presets``: ``dprl validate`` checks all, a workflow run the
    one it runs) with its accounted ε."""
    cfg = validate_schema(raw)
    per_preset = resolve_all_presets(cfg)
    problems = check_accounting(
        (preset, name, job.spec)
        for preset in presets
        for name, exp in per_preset[preset].items()
        for job in exp.jobs
    )
    if problems:
        raise ConfigError(problems)
