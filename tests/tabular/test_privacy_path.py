"""PUCB's privacy is audited and accounted where the noise is drawn (``src/dprl/README.md``,
"Privacy audits"): the compiled episode loop (``episodes._run_block``), ``PrivateStats.update``
and the audits draw the counters' Laplace noise through one kernel,
:func:`dprl.agents.tabular.statistics.draw_laplace`, which records the scale it drew with;
a job accounts that scale and refuses to write results when it is not the one held and
accounted before the run (:func:`dprl.agents.tabular.privacy.ran_calibration`).

Bugs are planted in the compiled code itself, the noise object (``PrivateStats``) untouched:
a copy of the kernel or of the loop with one line changed (:func:`_line_changed`) or the
kernel wrapped, compiled into the loop (``planted_kernels.rejit``), and the real job functions
run at a tiny size."""

from __future__ import annotations

import dataclasses
import inspect
import textwrap

import numpy as np
import pandas as pd
import pytest
from numba import njit
from planted_kernels import default_spec, job_table, rejit, verdicts

from dprl.agents.tabular import episodes, statistics
from dprl.agents.tabular.build import build_agent
from dprl.agents.tabular.privacy import audit_episode, drawn_calibration, ran_calibration
from dprl.agents.tabular.statistics import PrivateStats, draw_laplace
from dprl.analysis.aggregate import identity_columns
from dprl.analysis.claims.accounting import CLAIMS as ACCOUNTING_CLAIMS
from dprl.analysis.claims.tabular import CLAIMS as TABULAR_CLAIMS
from dprl.envs.tabular import riverswim
from dprl.experiments.registry import get_kind, job_function
from dprl.experiments.run import execute
from dprl.privacy.setting import PrivacySetting
from dprl.runner.job import JobContext, JobSpec
from dprl.runner.online import EpisodeRecord

RUN_BLOCK = episodes._run_block  # the original, planted from
V1 = next(c for c in TABULAR_CLAIMS if c.id == "V1")
P1 = next(c for c in ACCOUNTING_CLAIMS if c.id == "P1")
CUT = 10.0
TIGHT = {"epsilon": 1.0, "calibration": "tight"}
AUDIT = default_spec("tabular_audit", "pucb", "pucb_counters", TIGHT, {"runs": 20000}, T=2)
REGRET = default_spec("tabular_regret", "pucb", "riverswim", TIGHT, {"episodes": 64, "checkpoints": 4}, S=3, H=3)


def _line_changed(func, old: str, new: str):
    """The compiled ``func`` recompiled (uncached) from its source with the one line holding
    ``old`` changed to ``new``."""
    src = textwrap.dedent(inspect.getsource(func.py_func))
    assert src.count(old) == 1, f"{old!r} is not one place in {func.__name__}"
    namespace = dict(func.py_func.__globals__)
    exec(compile(src.replace(old, new)[src.index("def "):], f"<{func.__name__}, planted>", "exec"), namespace)
    return njit(namespace[func.__name__])


def _plant_kernel(monkeypatch, kernel) -> None:
    """``kernel`` in place of :func:`draw_laplace` on every noisy path: the audits and
    ``PrivateStats`` (which call it through the module) and the compiled loop (recompiled
    with it)."""
    monkeypatch.setattr(statistics, "draw_laplace", kernel)
    monkeypatch.setattr(episodes, "_run_block", rejit(RUN_BLOCK, draw_laplace=kernel))


def _cut_after_the_record(cut: float):
    """:func:`draw_laplace` whose noise is divided by ``cut`` after it recorded the scale: a
    cut the record cannot see, which only the audit drawing through the kernel can catch."""
    divide = float(cut)

    @njit
    def planted(noise_rng, scale, e, words, noise, drawn, t):
        draw_laplace(noise_rng, scale, e, words, noise, drawn, t)
        for c in range(noise.shape[0]):
            noise[c] = noise[c] / divide

    return planted


def _audit_verdicts() -> tuple[set[str], pd.DataFrame]:
    """Run the real audit job and judge its table by V1's own rule."""
    df = job_function(get_kind(AUDIT.kind))(JobContext(AUDIT))
    return set(verdicts(V1, AUDIT.kind, df.assign(**identity_columns({"spec": AUDIT.to_dict()}))).values()), df


def _p1_verdicts(spec: JobSpec) -> dict[str, str]:
    """Run the real regret job through the runner (its accounting checks included) at two
    seeds (a row judges at least two jobs) and judge their table by P1's own rule."""
    df = pd.concat([job_table(dataclasses.replace(spec, seed=seed)) for seed in (0, 1)], ignore_index=True)
    return verdicts(P1, spec.kind, df)


def _pucb(T: int) -> tuple:
    env = riverswim(S=3, H=3)
    built = build_agent("pucb", {"beta": 0.05, "bonus_scale": 1.0, "l1_per_step": 2}, PrivacySetting(**TIGHT), env, T,
                        np.random.default_rng(1), np.random.default_rng(2))
    return env, built


def test_the_loop_and_the_audit_record_the_scale_they_drew_with():
    """The kernel reads one counter's noise per stream element, in the compiled loop, the
    step-by-step agent and the audit alike: the scale recorded is the held one to the last
    digits, from standard exponentials, and the job accounts it (the nominal ε)."""
    env, built = _pucb(3000)
    episodes.feed_episodes(built.agent, env, 3000, np.random.default_rng(3), EpisodeRecord())
    drawn = built.agent.source.drawn_noise()
    assert drawn.draws == 3000 and drawn.scale == pytest.approx(built.agent.source.scale, rel=1e-13)
    assert abs(drawn.mean_exponential - 1) < 5 / np.sqrt(3000) and drawn.exponentials_standard()
    assert ran_calibration(built) == built.calibration and ran_calibration(built).accounted_epsilon == pytest.approx(1.0)
    # the step-by-step agent (plug-ins, end-to-end audits) draws through the same kernel
    env, step = _pucb(3000)
    states, rng = np.zeros(4, dtype=np.int64), np.random.default_rng(5)
    for _ in range(20):
        step.agent.observe(states, step.agent.policy()[:, 0], rng.random(3))
    assert step.agent.source.drawn_noise().draws == 20
    env, audited = _pucb(8)
    audit_episode(audited, 200, np.random.default_rng(0))
    assert audited.agent.source.drawn_noise().scale == pytest.approx(audited.agent.source.scale, rel=1e-13)
    assert drawn_calibration(audited.agent.source) == audited.calibration
    ubev = build_agent("ubev", {"beta": 0.05, "bonus_scale": 1.0}, None, env, 8, np.random.default_rng(1), None)
    assert ran_calibration(ubev) is None


def test_a_noise_cut_in_the_loops_kernel_flips_v1_and_the_jobs_refuse(monkeypatch):
    """The issue's bug moved into the kernel: ``laplace_into`` called with a tenth of the scale
    inside :func:`draw_laplace`. The audit draws through it: ε_lb rises past ε (the audit's
    own statistic) and the exact ε of the scale drawn is 10ε, so V1 flips; the regret job,
    whose compiled loop runs the same kernel, refuses to write its result."""
    verdicts_, df = _audit_verdicts()
    assert verdicts_ == {"reproduced"} and df["eps_exact"].tolist() == [1.0, 1.0, 2.0], df
    _plant_kernel(monkeypatch, _line_changed(statistics.draw_laplace, "laplace_into(e, words, scale, noise)",
                                             "laplace_into(e, words, scale / 10.0, noise)"))
    verdicts_, df = _audit_verdicts()
    assert verdicts_ == {"not reproduced"}, df
    episode = df[df["mechanism"] == "episode_l1x2"].iloc[0]
    assert episode["eps_lb"] > episode["claimed_epsilon"] and not episode["passed"]
    assert df["eps_exact"].tolist() == pytest.approx([CUT, CUT, 2 * CUT])  # counter, episode, printed ε/(3H)
    with pytest.raises(ValueError, match="drew their Laplace noise with scale 12.6, but the agent holds and was "
                                         "accounted with scale 126"):
        execute(REGRET)


def test_a_cut_the_kernels_record_cannot_see_flips_v1_through_the_audit(monkeypatch):
    """The noise divided by 10 after :func:`draw_laplace` recorded its scale: the exact ε of the
    scale recorded stays ε, but the audit, drawing through the same kernel, measures ε_lb
    past ε and V1 flips."""
    _plant_kernel(monkeypatch, _cut_after_the_record(CUT))
    verdicts_, df = _audit_verdicts()
    assert verdicts_ == {"not reproduced"}, df
    assert df["eps_exact"].tolist() == [1.0, 1.0, 2.0]
    assert (df["eps_lb"] > df["claimed_epsilon"]).all()


def test_exponentials_cut_in_the_kernel_flip_v1_and_the_jobs_refuse(monkeypatch):
    """The exponentials themselves a tenth (``±b·E/10``; the scale's ratio cannot see it): the
    audit's statistic flips V1, and the job's check of the exponentials refuses the job."""
    _plant_kernel(monkeypatch, _line_changed(statistics.draw_laplace, "e[c] = noise_rng.standard_exponential()",
                                             "e[c] = noise_rng.standard_exponential() / 10.0"))
    verdicts_, df = _audit_verdicts()
    assert verdicts_ == {"not reproduced"} and df["eps_exact"].tolist() == [1.0, 1.0, 2.0], df
    with pytest.raises(ValueError, match="drew 64 exponentials of mean 0.0"):
        execute(REGRET)


def test_the_issues_cut_in_the_compiled_loop_is_refused(monkeypatch):
    """The bug of the issue, in the loop: the noise kernel called with a tenth of the scale
    (then ``laplace_into``'s call in ``_run_block``). It left the audit table bit-identical and
    ``accounted_epsilon`` at the nominal ε; now the job refuses to write its result, naming
    both scales. Ten times the noise there is refused as well: not the noise accounted."""
    assert set(_p1_verdicts(REGRET).values()) == {"reproduced"}
    for factor, drawn in (("/ 10.0", "12.6"), ("* 10.0", "1260")):
        monkeypatch.setattr(episodes, "_run_block", _line_changed(RUN_BLOCK, "draw_laplace(noise_rng, scale, ",
                                                                  f"draw_laplace(noise_rng, scale {factor}, "))
        with pytest.raises(ValueError, match=f"drew their Laplace noise with scale {drawn}, but the agent holds and was "
                                             "accounted with scale 126 .*result not written"):
            execute(REGRET)


def test_ten_times_the_noise_in_the_built_agent_is_accounted_and_flips_p1(monkeypatch):
    """The built agent holding 10x the noise its ε needs (a tight calibration that is not
    tight): its loop draws with that scale, the real regret job records ε/10, and P1's
    tight row flips."""
    init = PrivateStats.__init__

    def tenfold(self, *args, **kwargs):
        init(self, *args, **kwargs)
        self.scale *= CUT

    monkeypatch.setattr(PrivateStats, "__init__", tenfold)
    ctx = JobContext(REGRET)
    job_function(get_kind(REGRET.kind))(ctx)
    assert ctx.accounted_epsilon == pytest.approx(REGRET.epsilon / CUT, rel=1e-12)
    assert _p1_verdicts(REGRET) == {"tight": "not reproduced"}
