"""Private-OFU-RL's privacy is audited and accounted where its noise is drawn
(``src/dprl/README.md``, "Privacy audits"): the episode loop and the audit add their noise
through the same compiled kernels (``loop._observe_central`` ->
``privacy.kernels.gaussian_into``), which report the σ's they drew with; the job accounts
from those and refuses to write results when they differ from the agent's calibration.
Planted in the compiled path (never in the regularizer the agent holds): a tenth of the noise
flips C1 through the real audit job, and a σ changed in the loop's call (÷10 or x10) is
refused. Ten times the noise in the built agent (which its loop then draws and reports) is
accounted as drawn and flips P2 through real regret jobs."""

from __future__ import annotations


import numpy as np
import pytest
from planted_kernels import (
    check_audit_flip,
    check_tight_flip,
    cut_gaussian_into,
    default_spec,
    more_noise_in_the_agent,
    rejit_chain,
    scaled_call,
)

from dprl.agents.lq import episodes, loop
from dprl.agents.lq import privacy as lq_privacy
from dprl.analysis.claims.accounting import CLAIMS as ACCOUNTING_CLAIMS
from dprl.analysis.claims.lq import CLAIMS as LQ_CLAIMS
from dprl.experiments.lq.jobs import build_job_agent
from dprl.experiments.run import execute
from dprl.privacy.regularizer import NoiseScaleError, undrawn_scales
from dprl.runner.checkpoints import log_checkpoints
from dprl.runner.job import JobContext

C1 = next(c for c in LQ_CLAIMS if c.id == "C1")
P2 = next(c for c in ACCOUNTING_CLAIMS if c.id == "P2")
TIGHT = {"epsilon": 1.0, "delta": 1e-3, "calibration": "tight"}
AUDIT = default_spec("lq_audit", "private_ofu_counters", "audit_stream", TIGHT, {"runs": 5000})
REGRET = default_spec("lq_regret", "private_ofu_rl", "double_integrator", TIGHT, {"episodes": 16, "checkpoints": 3})
SIGMAS = ("sigma_gram", "sigma_target")


def test_the_loop_and_the_audit_report_the_sigmas_they_drew_with():
    ctx = JobContext(REGRET)
    system, built = build_job_agent(ctx)
    reg = built.agent.regularizer
    c = reg.calibration
    assert not np.isfinite(reg.drawn).any()  # nothing drawn yet
    episodes.run_episodes(built, system, 16, ctx.env_rng, log_checkpoints(16, 3))
    np.testing.assert_array_equal(reg.drawn, [[c.sigma_gram, c.sigma_gram], [c.sigma_target, c.sigma_target]])
    assert lq_privacy.drawn_calibration(built) == lq_privacy.held_calibration(built)
    # the audit's releases come through the same kernels, and are recorded alike
    first, _ = lq_privacy.replacement_pair("joint", system.n, system.d, system.horizon, system.gamma)
    reg.drawn[:] = undrawn_scales()
    out = lq_privacy.regularizer_releases(reg, first, 3, np.random.default_rng(0), "joint")
    assert out.shape == (3, 16 * (6 + 6))
    np.testing.assert_array_equal(reg.drawn, [[c.sigma_gram, c.sigma_gram], [c.sigma_target, c.sigma_target]])


def test_fed_users_without_a_reported_draw_are_refused():
    ctx = JobContext(REGRET)
    _, built = build_job_agent(ctx)
    built.agent.regularizer.n_users = 3  # fed by a path that drew nothing
    with pytest.raises(NoiseScaleError, match="reported no Gaussian draw"):
        lq_privacy.drawn_calibration(built)


@pytest.mark.parametrize("factor", [0.1, 10.0])
def test_a_noise_scale_changed_in_the_loops_kernel_call_is_refused(factor, monkeypatch):
    """The issue's ÷10 (and a x10) placed where the loop's noise is drawn (the σ's the
    compiled loop is called with), the regularizer untouched: the job refuses to write results."""
    monkeypatch.setattr(episodes, "run_block", scaled_call(loop.run_block, SIGMAS, factor))
    with pytest.raises(NoiseScaleError, match=("less noise than" if factor < 1 else "other noise than") + " the calibration requires"):
        execute(REGRET)


@pytest.mark.parametrize("where", ["sigma passed to the kernel", "inside the noise kernel"])
def test_a_tenth_of_the_noise_in_the_compiled_audit_path_flips_c1(where, monkeypatch):
    """The audit job draws through the loop's kernels: a cut of the σ the kernel is given
    (reported: the exact ε of the rows is computed from it) or of the noise inside the
    kernel (not reported: only the audited releases show it) flips C1 by its own rule."""
    if where == "sigma passed to the kernel":
        planted = scaled_call(loop.audit_releases, SIGMAS, 0.1)
    else:
        planted = rejit_chain([loop._observe_central, loop.audit_releases], gaussian_into=cut_gaussian_into(10.0))
    check_audit_flip(C1, AUDIT, lambda: monkeypatch.setattr(lq_privacy, "audit_releases", planted),
                     reported=where == "sigma passed to the kernel")


def test_ten_times_the_noise_is_accounted_and_flips_p2(monkeypatch):
    """'tight' is tight: a regret job whose built agent holds (and so whose compiled loop
    draws, as it reports) 10x the noise its ε needs in its regularizer records the accounted ε of
    what it drew (0.061 ε here), and P2's tight row is not reproduced."""
    check_tight_flip(P2, REGRET, lambda: more_noise_in_the_agent(monkeypatch, 10.0))
