"""Constraints between parameters, and the items of list settings, checked at validation.

The rules themselves are declared with the experiments they constrain (an environment's
``rule``, a kind's ``settings_rule``, ``job_rule`` and ``item_params`` in
``experiments/<paper>/spec.py``, the functions in ``experiments/<paper>/rules.py``); this
module only looks them up. Each restates a limit enforced again where the job builds its
environment or estimator, so that a config breaking it is refused before any job runs
instead of failing inside one.

A rule gets the resolved parameters (defaults filled) and returns ``(key, message)``
pairs; ``key`` is the parameter the message is attached to (its key path is the one the
user wrote, or the entry's own path when it was a default).
"""

from __future__ import annotations

from typing import Any

from dprl.experiments.base import Environment, ExperimentKind, Rule, load_ref
from dprl.privacy.setting import PrivacySetting


def environment_rule(environment: Environment) -> Rule | None:
    return None if environment.rule is None else load_ref(environment.rule)


def settings_rule(kind: ExperimentKind) -> Rule | None:
    return None if kind.settings_rule is None else load_ref(kind.settings_rule)


def job_problems(kind: ExperimentKind, environment: dict[str, Any], settings: dict[str, Any],
                 privacy: PrivacySetting | None) -> list[tuple[tuple[Any, ...], str]]:
    """The kind's rule across the parts of one job; returns (relative key path, message)."""
    return [] if kind.job_rule is None else list(load_ref(kind.job_rule)(environment, settings, privacy))
