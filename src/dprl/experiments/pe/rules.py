"""Rules across the parameters of the policy-evaluation experiments, checked at validation
(named by the declarations in ``spec.py``); each restates a check of ``jobs.py``."""

from __future__ import annotations

from typing import Any

from dprl.experiments.base import Problem, at_least

# run_batch samples m_max trajectories and evaluates the nested batches m_min .. m_max
batch_grid = at_least("m_max", "m_min", "; experiments/pe/jobs.py samples m_max trajectories")


def lambda_grid(p: dict[str, Any]) -> list[Problem]:
    # run_lambda(): "the c and p grids need max >= min"
    return at_least("m_max", "m_min")(p) + at_least("log10_c_max", "log10_c_min")(p) + at_least("p_max", "p_min")(p)


def calibrations(environment: dict[str, Any], settings: dict[str, Any], privacy: Any) -> list[tuple[tuple[Any, ...], str]]:
    # agents/pe/estimators.py: the calibrations of the 2016 estimators (LSW_NORMS, LSL_NORMS)
    from dprl.agents.pe.estimators import LSW_NORMS

    if privacy is not None and privacy.calibration not in LSW_NORMS:
        return [(("privacy", "calibration"),
                 f"the policy-evaluation experiments have the calibrations {list(LSW_NORMS)}; got {privacy.calibration!r}")]
    return []
