"""The package's accounting check, one claim per paper: every private job's recorded
``accounted_epsilon`` (the exact ε under the paper's replacement relation of the noise the
job's built agent held) is at most its nominal ε, and a ``tight`` job's equals it.

A ``tight`` calibration is one whose exact ε equals the nominal ε to the accountant's
precision, so its ratio must lie in :data:`TIGHT_WINDOW`: a job that adds ten times the
noise it should is as wrong a reproduction as one that adds a tenth (its regret and privacy
cost would be measured at another ε). The ``paper`` calibrations are knowingly conservative
where the papers' constants are loose (LQ, linear mixture): they are judged only against
the bound, and the row states the range of their ratios.

Declared rows only (:class:`~dprl.analysis.base.Rows`): the worked example of
``docs/adding-a-claim.md``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from functools import partial

import numpy as np
import pandas as pd

from dprl.analysis.base import Claim, Group, PlantedBug, RegimeCheck, Rows
from dprl.analysis.selection import JOB_KEYS, final_rows
from dprl.analysis.stats import Estimate, verdict_at_most, verdict_inside

# Algorithms whose calibration is knowingly conservative under every calibration name: judged
# against the bound only, the row stating why (a tight job of theirs is not expected at ratio 1).
CONSERVATIVE = {
    "gs_dp_lsl": "GS-DP-LSL keeps the paper's baseline σ = Δ/a (the smooth mechanism's a) under tight too, so that B4 "
                 "compares smooth against global sensitivity like for like; its exact ε is far below the nominal ε",
}
ROUND_OFF = 1e-9  # the accountant's precision: a ratio this far above 1 is exact, not a leak
TIGHT_WINDOW = (0.99, 1.0 + ROUND_OFF)


def private_jobs(df: pd.DataFrame) -> pd.DataFrame:
    """The rows of every private job that records its ``accounted_epsilon`` (its last
    checkpoint, for a table of checkpoints)."""
    if "accounted_epsilon" not in df:
        return df.iloc[:0]
    fin = final_rows(df) if "episode" in df else df
    return fin[(fin["calibration"] != "none") & fin["accounted_epsilon"].notna()]


def _jobs(g: pd.DataFrame) -> int:
    return len(g.drop_duplicates([k for k in JOB_KEYS if k in g]))


def accounted_ratio(g: pd.DataFrame, check: RegimeCheck) -> Estimate:
    """The worst job's accounted ε / nominal ε, a point (each job's ratio is exact: there is
    no sampling error to put an interval on, and one job off fails the row): for ``tight``
    jobs the ratio farthest from 1 in either direction, for the others the largest."""
    r = (g["accounted_epsilon"] / g["epsilon"]).to_numpy(float)
    exact = (g["calibration"] == "tight").all() and not g["algorithm"].isin(list(CONSERVATIVE)).any() if "algorithm" in g else (
        g["calibration"] == "tight").all()
    worst = r[np.argmax(np.abs(np.log(r)))] if exact else r.max()
    return Estimate.point(float(worst), n=_jobs(g))


def _tight(grp: Group) -> bool:
    """Whether the group's ratio must be 1: a tight calibration of an algorithm not in :data:`CONSERVATIVE`."""
    return grp.key.get("calibration") == "tight" and grp.key.get("algorithm") not in CONSERVATIVE


def rule_for(grp: Group) -> Callable[[Estimate], str]:
    """``tight``: every ratio inside :data:`TIGHT_WINDOW`; any other calibration, or a
    knowingly conservative algorithm (:data:`CONSERVATIVE`): at most 1."""
    if _tight(grp):
        return partial(verdict_inside, low=TIGHT_WINDOW[0], high=TIGHT_WINDOW[1])
    return partial(verdict_at_most, threshold=1.0 + ROUND_OFF)


def _note(grp: Group) -> str:
    epss = ", ".join(f"{e:g}" for e in sorted(grp.rows["epsilon"].unique()))
    r = grp.rows["accounted_epsilon"] / grp.rows["epsilon"]
    conservative = CONSERVATIVE.get(str(grp.key.get("algorithm")))
    want = (f"tight: every ratio in [{TIGHT_WINDOW[0]:g}, 1]" if _tight(grp)
            else f"at most 1 ({conservative})" if conservative
            else "at most 1 (a conservative calibration may add more noise than ε needs)")
    return (f"{grp.table}: accounted ε / nominal ε over its {_jobs(grp.rows)} private jobs (ε ∈ {{{epss}}}): "
            f"{r.min():.4g}-{r.max():.4g} (worst {grp.est.value:.4g}); {want}; exact ε under replacement from the noise each job's "
            f"built agent held")


ROWS = Rows(select=private_jobs, by=("calibration",), statistic=accounted_ratio, rule=rule_for, rule_of_group=True, note=_note,
            empty="no private job recorded its accounted ε")


def accounting_claim(cid: str, paper: str, tables: Sequence[str], bugs: tuple[PlantedBug, ...],
                     by: tuple[str, ...] = ("calibration",)) -> Claim:
    """The accounting check of one paper over the tables whose jobs record ``accounted_epsilon``
    (rows by ``by``: per algorithm where one of them is :data:`CONSERVATIVE`)."""
    rows = ROWS if by == ROWS.by else dataclasses.replace(ROWS, by=by)
    return Claim(id=cid, paper=paper,
                 statement="Package check: every private job's accounted ε is at most its nominal ε, and a tight "
                           "job's equals it",
                 reads=(), optional=tuple(tables), metric="accounted ε / nominal ε over a table's private jobs",
                 expected=f"tight: in [{TIGHT_WINDOW[0]:g}, 1]; otherwise <= 1", rows=rows, finding=True,
                 planted_bugs=bugs)



# per paper: the tables whose jobs record accounted_epsilon (those a preset did not run are skipped)
CLAIMS: list[Claim] = [
    accounting_claim("P1", "tabular", ("tabular_regret", "tabular_regret_eps1", "tabular_pac", "tabular_hard",
                                       "tabular_hard_cost", "tabular_hard_eps", "tabular_scaling", "private_mab"), (
        PlantedBug("a tight job whose agent held 10x the noise its ε needs (accounted ε = ε/10), or half of it "
                   "(accounted ε = 2ε)", "tests/core/test_accounting_claims.py::test_the_accounting_check_flips_on_noise_x10_or_halved"),
        PlantedBug("a real regret job whose built PUCB held 10x the Laplace scale: its compiled loop drew with it and the "
                   "job recorded ε/10 (a cut or 10x in the loop's own call is refused: tests/tabular/test_privacy_path.py)",
                   "tests/tabular/test_privacy_path.py::test_ten_times_the_noise_in_the_built_agent_is_accounted_and_flips_p1"),
    )),
    accounting_claim("P2", "lq", ("lq_regret", "lq_regime", "lq_regime_eps10", "lq_regime_long"), (
        PlantedBug("a tight job whose agent held 10x the noise its ε needs, or half of it",
                   "tests/core/test_accounting_claims.py::test_the_accounting_check_flips_on_noise_x10_or_halved"),
        PlantedBug("real tight lq_regret jobs whose built agent holds 10x the noise (drawn and reported so by "
                   "the compiled loop): accounted from the σ's drawn with (0.061 ε)",
                   "tests/lq/test_noise_path.py::test_ten_times_the_noise_is_accounted_and_flips_p2"),
    )),
    accounting_claim("P3", "linmix", ("linmix_regret", "linmix_regime_eps10", "linmix_regime_long", "linmix_hard",
                                      "linmix_hard_long", "linmix_hard_ldp", "linmix_ldp", "linmix_states"), (
        PlantedBug("a tight job whose agent held 10x the noise its ε needs, or half of it",
                   "tests/core/test_accounting_claims.py::test_the_accounting_check_flips_on_noise_x10_or_halved"),
        PlantedBug("real tight linmix_regret jobs whose built agent holds 10x the noise (drawn and reported so "
                   "by the compiled loop): accounted from the σ's drawn with (0.081 ε)",
                   "tests/linmix/test_noise_path.py::test_ten_times_the_noise_is_accounted_and_flips_p3"),
    )),
    accounting_claim("P4", "pe", ("pe_batch", "pe_batch_long", "pe_lambda", "pe_audit", "pe_audit_tight"), (
        PlantedBug("a job whose estimator's σ is half its calibration's (accounted ε above ε)",
                   "tests/core/test_accounting_claims.py::test_the_accounting_check_flips_on_noise_x10_or_halved"),
        PlantedBug("real tight pe_batch jobs of DP-LSW and DP-LSL drawing 10x the noise (the σ handed to "
                   "estimators.add_noise, or the estimator's own noise): accounted from the σ drawn with (0.55 ε)",
                   "tests/pe/test_pe_noise_path.py::test_ten_times_the_noise_is_accounted_and_flips_p4"),
        PlantedBug("a 10x noise cut in the release path of a real tight pe_audit job (still private on its pairs): "
                   "its rows account the σ drawn with (10 ε)", "tests/pe/test_pe_noise_path.py::"
                   "test_a_tenth_of_the_noise_in_the_release_path_keeps_the_audit_pairs_private_and_flips_p4"),
    ), by=("calibration", "algorithm")),  # per estimator: GS-DP-LSL is knowingly conservative
]
