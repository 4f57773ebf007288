"""The privacy theorems judged under the papers' printed constants (V1, C1, Z1): each audit
job of the ``paper`` calibration also builds an agent with the constants exactly as
printed, and the claim gets a ``printed`` row from it, apart from the package's corrected
and tight rows (``src/dprl/README.md``, "Claims").

Planted bug: a job that builds the "printed" agent with the package's corrected constants
(the flag dropped) would let the printed row pass; the row must then flip to reproduced,
so a printed row that reads "not reproduced" could have read otherwise.
"""

from __future__ import annotations

import pytest

from dprl.analysis.claims.linmix import CLAIMS as LINMIX_CLAIMS
from dprl.analysis.claims.lq import CLAIMS as LQ_CLAIMS
from dprl.analysis.claims.tabular import CLAIMS as TABULAR_CLAIMS
from dprl.experiments.linmix import jobs as linmix_jobs
from dprl.experiments.lq import jobs as lq_jobs
from dprl.experiments.registry import get_kind, job_function
from dprl.experiments.tabular import jobs as tabular_jobs
from dprl.runner.job import JobContext, JobSpec


def _claim(claims, cid):
    return next(c for c in claims if c.id == cid)


def _spec(kind, alg, env, privacy, settings, **env_over):
    k = get_kind(kind)
    a = {"name": alg, **k.algorithms[alg].defaults()}
    e = {"name": env, **k.environments[env].defaults(), **env_over}
    s = {n: p.default for n, p in k.settings.items()}
    s.update(settings)
    return JobSpec(kind, kind, a, e, privacy, s, 0)


def _run(spec):
    """The job's table with the algorithm and privacy columns the aggregation adds to every row."""
    df = job_function(get_kind(spec.kind))(JobContext(spec))
    return df.assign(algorithm=spec.algorithm["name"], **{k: getattr(spec.privacy, k) for k in ("epsilon", "delta", "calibration")})


def _rows(claim, table_name, table):
    return {r.calibration.split(":")[0]: r for r in claim.evaluate({table_name: table})}


def _drop_printed(monkeypatch, module):
    """The planted bug: the job's factory ignores ``printed`` (corrected constants)."""
    real = module.build_agent

    def build(*args, printed=False, **kw):
        return real(*args, **kw)

    monkeypatch.setattr(module, "build_agent", build)


def test_lq_printed_sigmas_fail_under_replacement_from_eps_10(monkeypatch):
    """The printed σ² = 8LΔ² ln(2/δ)/ε² (null-user Δ, zCDP ρ dropped): exact ε under
    replacement 0.65ε at ε = 1, 1.14ε at ε = 10; the corrected ones hold at every ε."""
    spec = _spec("lq_audit", "private_ofu_counters", "audit_stream",
                 {"epsilon": 1.0, "delta": 1e-3, "calibration": "paper"}, {"runs": 2000, "printed_epsilons": [1.0, 10.0]})
    table = _run(spec)
    printed = table[table["constants"] == "printed"]
    assert len(printed) == 3 and printed["eps_lb"].notna().sum() == 1  # audited at ε = 1, accounted at 1 and 10
    ratio = (printed["eps_exact"] / printed["printed_epsilon"]).to_numpy()
    assert ratio[1] == pytest.approx(0.6546, rel=1e-3) and ratio[2] == pytest.approx(1.1444, rel=1e-3)
    rows = _rows(_claim(LQ_CLAIMS, "C1"), "lq_audit", table)
    assert rows["package, corrected"].verdict == "reproduced"
    assert rows["printed"].verdict == "not reproduced" and rows["printed"].epsilon == 10.0
    assert "not private from ε = 10" in rows["printed"].note
    _drop_printed(monkeypatch, lq_jobs)
    assert _rows(_claim(LQ_CLAIMS, "C1"), "lq_audit", _run(spec))["printed"].verdict == "reproduced"


def test_linmix_printed_closed_form_fails_at_large_eps(monkeypatch):
    """Zhou's printed σ = (HΔ/ε)·sqrt(32 m ln(4H/δ)) with add/remove Δ: private at small ε,
    not at large ε on the audit instance; the corrected constants hold at every ε."""
    spec = _spec("linmix_audit", "central_privatizer", "neighbouring_users",
                 {"epsilon": 1.0, "delta": 1e-5, "calibration": "paper"}, {"runs": 2000, "printed_epsilons": [1.0, 300.0]})
    table = _run(spec)
    rows = _rows(_claim(LINMIX_CLAIMS, "Z1"), "linmix_audit", table)
    assert rows["package, corrected"].verdict == "reproduced"
    assert rows["printed"].verdict == "not reproduced" and rows["printed"].epsilon == 300.0
    assert rows["printed"].measured > 2.0  # 2.7ε at ε = 300 (H = 1)
    _drop_printed(monkeypatch, linmix_jobs)
    assert _rows(_claim(LINMIX_CLAIMS, "Z1"), "linmix_audit", _run(spec))["printed"].verdict == "reproduced"


def test_tabular_printed_counter_level_is_2eps(monkeypatch):
    """PUCB's printed ε' = ε/(3H): ℓ1 sensitivity H per count under add/remove, 2H under
    replacement, so the agent built with it is exactly 2ε-DP; the printed row fails on the
    exact accounting even where the audit lacks the power to see it."""
    spec = _spec("tabular_audit", "pucb", "pucb_counters", {"epsilon": 1.0, "calibration": "paper"}, {"runs": 2000}, T=2)
    table = _run(spec)
    printed = table[table["mechanism"] == "episode_printed_eps_3H"]
    assert float(printed["eps_exact"].iloc[0]) == pytest.approx(2.0)
    rows = _rows(_claim(TABULAR_CLAIMS, "V1"), "tabular_audit", table)
    assert rows["package, corrected"].verdict == "reproduced"
    assert rows["printed"].verdict == "not reproduced"
    real = tabular_jobs.build_agent

    def corrected(name, params, *args, **kw):  # the planted bug: ℓ1 = 2 whatever is asked
        return real(name, {**params, "l1_per_step": 2}, *args, **kw)

    monkeypatch.setattr(tabular_jobs, "build_agent", corrected)
    table = _run(spec)
    assert "episode_printed_eps_3H" in set(table["mechanism"])
    assert _rows(_claim(TABULAR_CLAIMS, "V1"), "tabular_audit", table)["printed"].verdict == "reproduced"


def test_readme_headline_lists_the_printed_rows():
    """The README's generated block names each printed row with its verdict, apart from the
    package's calibrations."""
    from dprl.analysis.claims import claims_table
    from dprl.analysis.readme_table import verdict_table

    spec = _spec("tabular_audit", "pucb", "pucb_counters", {"epsilon": 1.0, "calibration": "paper"}, {"runs": 2000}, T=2)
    table = claims_table({"tabular_audit": _run(spec)}, papers=("tabular",))
    block = verdict_table(table, {"preset": "test", "git_commit": "0" * 40, "date_utc": "2026-11-26"})
    assert "- **V1** (Vietri et al. 2020, tabular RL (PUCB, ε-JDP)), printed: ε' = ε/(3H): **not reproduced**." in block
    assert "package, corrected" not in block.split("exactly as printed")[1]
