"""Refuse, before any job, private jobs whose accounted ε exceeds their nominal ε.

Separate from :mod:`dprl.config.load` because accounting builds calibrations (NumPy,
SciPy): Snakemake parses the workflow in every process (two per cluster job) and must stay
light, so this check runs in ``dprl validate`` and once per workflow run (``onstart``).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from dprl.config.load import PRESETS, ConfigError, Experiment, resolve_all_presets, validate_schema
from dprl.experiments.accounting import check_accounting


def check_privacy_accounting(raw: dict[str, Any], selected: str | None = None) -> None:
    """``dprl validate``: raise :class:`ConfigError` naming every offending
    ``experiments.<name>.privacy`` entry, in every preset, with its accounted ε (an
    experiment over the limits in a preset other than ``selected`` is not run there, so not
    checked there; :func:`load_config` has already warned about it)."""
    per_preset = resolve_all_presets(validate_schema(raw), selected, report=False)
    check_experiments((preset, per_preset[preset]) for preset in PRESETS)


def check_experiments(presets: Iterable[tuple[str, dict[str, Experiment]]]) -> None:
    """The same check on experiments already resolved (a workflow run passes its own
    preset's, so nothing is validated twice)."""
    problems = check_accounting(
        (preset, name, job.spec)
        for preset, experiments in presets
        for name, exp in experiments.items()
        for job in exp.jobs
    )
    if problems:
        raise ConfigError(problems)
