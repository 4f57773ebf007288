"""Accounted ε of a private simulation job under its paper's neighbouring relation
(replacement of one user by another; ``src/dprl/README.md``, "Neighbouring relations: replacement").

Each function builds the job's agent exactly as the job does, without running it, and
reads the accounting of the noise the built agent holds (``held_calibration`` of the
paper's ``agents/<paper>/privacy.py``: the ℓ1 sum for Laplace noise, the exact Gaussian-DP
profile (PLD) for Gaussian noise, from the scales in its ``PrivateStats``, regularizers or
estimator constants); nothing is recomputed from the config. Jobs record the number read
from the agent they ran (``JobContext.record_accounting``; column ``accounted_epsilon``);
:func:`check_accounting` refuses, before any job runs, a private job whose accounted ε
exceeds its nominal ε.

Imports NumPy/SciPy: called by ``dprl validate`` and once per workflow run (``onstart``),
never when Snakemake merely parses the workflow.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from dprl.experiments.base import load_ref
from dprl.experiments.plugins import PluginBuildError, first_line
from dprl.experiments.registry import get_kind
from dprl.runner.job import JobSpec

# relative tolerance for floating-point round-off in "accounted <= nominal"
TOLERANCE = 1e-9


def read_epsilon(calibration) -> float | None:
    """The accounted ε of a held calibration (``None``: the agent adds no noise)."""
    return None if calibration is None else float(calibration.accounted_epsilon)


def accounting_of(spec: JobSpec) -> Callable[[JobSpec], float | None] | None:
    """The accounting the job's algorithm declares (``Algorithm.accounting``), or ``None``.
    Audit kinds declare none: they exist to show that printed variants fail, and record
    their own exact ε."""
    ref = get_kind(spec.kind).algorithms[spec.algorithm["name"]].accounting
    return None if ref is None else load_ref(ref)


def accounted_epsilon(spec: JobSpec) -> float | None:
    """The job's accounted ε under replacement, or ``None`` (non-private, or an algorithm
    that declares no accounting: the audits, which record their own exact ε)."""
    if spec.privacy is None and not get_kind(spec.kind).algorithms[spec.algorithm["name"]].factory:
        return None
    fn = accounting_of(spec)  # a non-private plug-in's is built too: its factory must not raise in a job
    acc = None if fn is None else fn(spec)
    return None if acc is None or spec.privacy is None else float(acc)


def check_accounting(experiments: Iterable[tuple[str, str, JobSpec]]) -> list[str]:
    """Problems (one line each) for private jobs whose accounted ε exceeds the nominal ε.

    ``experiments`` yields ``(preset, experiment, spec)``; the seed does not enter a
    calibration, so each distinct spec-without-seed is accounted once.
    """
    seen: dict[str, float | None] = {}
    problems = []
    for preset, name, spec in experiments:
        key = repr((spec.kind, spec.algorithm, spec.environment, spec.privacy, spec.settings))
        if key not in seen:
            alg = ", ".join(f"{k}={v}" for k, v in spec.algorithm.items())
            in_preset = "" if preset == "default" else f" (preset {preset})"
            try:
                seen[key] = accounted_epsilon(spec)
            except (PluginBuildError, ValueError) as err:
                if not get_kind(spec.kind).algorithms[spec.algorithm["name"]].factory:
                    raise  # a built-in's accounting failing is dprl's bug: its traceback
                seen[key] = None  # a plug-in's: the user's, named with the key it comes from
                problems.append(f"experiments.{name}.algorithms{in_preset}: {alg} on {spec.environment['name']} "
                                f"(experiment kind {spec.kind}) is refused: {err if isinstance(err, PluginBuildError) else first_line(err)}")
                continue
            acc = seen[key]
            if acc is not None and acc > spec.epsilon * (1.0 + TOLERANCE):
                where = f"experiments.{name}.privacy{in_preset}"
                problems.append(
                    f"{where}: {alg} on {spec.environment['name']} at epsilon={spec.epsilon:g}"
                    f"{'' if spec.delta is None else f', delta={spec.delta:g}'}, calibration={spec.calibration}: "
                    f"accounted epsilon under replacement (the paper's neighbouring relation) is {acc:.6g} > {spec.epsilon:g}; "
                    f"this calibration is not private at the nominal epsilon")
    return problems
