"""LinOpt's privacy is audited and accounted where its noise is drawn (``src/dprl/README.md``,
"Privacy audits"): the episode loop and the audit add the Privatizer's noise through the same
compiled kernels (``loop._observe`` -> ``privacy.kernels.gaussian_into``), which report the
σ's they drew with; the job accounts from those and refuses to write results when they are
other than the agent's calibration. Planted in the compiled path (never in the regularizers
the agent holds): a tenth of the noise flips Z1 through the real audit job, and a σ changed in
the loop's call (÷10 or x10) is refused. Ten times the noise in the built agent (which its loop
then draws and reports) is accounted as drawn and flips P3 through real regret jobs."""

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

from dprl.agents.linmix import episodes, loop
from dprl.agents.linmix.build import build_agent
from dprl.agents.linmix import privacy as linmix_privacy
from dprl.analysis.claims.accounting import CLAIMS as ACCOUNTING_CLAIMS
from dprl.analysis.claims.linmix import CLAIMS as LINMIX_CLAIMS
from dprl.experiments.linmix.jobs import build_job_agent
from dprl.experiments.linmix.spec import AGENTS
from dprl.experiments.run import execute
from dprl.privacy.regularizer import NoiseScaleError
from dprl.privacy.setting import PrivacySetting
from dprl.runner.checkpoints import log_checkpoints
from dprl.runner.job import JobContext

Z1 = next(c for c in LINMIX_CLAIMS if c.id == "Z1")
P3 = next(c for c in ACCOUNTING_CLAIMS if c.id == "P3")
TIGHT = {"epsilon": 1.0, "delta": 1e-5, "calibration": "tight"}
REGRET = default_spec("linmix_regret", "private_linopt_vi", "mixture", TIGHT, {"episodes": 8, "checkpoints": 3})
SIGMAS = slice(0, 2)  # the columns σ_gram, σ_target of the kernels' params rows


def _audit(mechanism: str):
    return default_spec("linmix_audit", mechanism, "neighbouring_users", TIGHT, {"runs": 5000})


def _sigmas_call(kernel, factor: float):
    return scaled_call(kernel, ("params",), factor, columns=SIGMAS)


@pytest.mark.parametrize("alg", ["private_linopt_vi", "ldp_linopt_po"])
def test_the_loop_and_the_audit_report_the_sigmas_they_drew_with(alg):
    spec = default_spec("linmix_regret", alg, "mixture", TIGHT, {"episodes": 8, "checkpoints": 3})
    ctx = JobContext(spec)
    env, built = build_job_agent(ctx)
    regs = (built.agent.reg_p, built.agent.reg_r)
    assert not any(np.isfinite(reg.drawn).any() for reg in regs)
    episodes.run_episodes(built, env, 8, ctx.env_rng, log_checkpoints(8, 3))
    for reg in regs:
        c = reg.calibration
        np.testing.assert_array_equal(reg.drawn, [[c.sigma_gram, c.sigma_gram], [c.sigma_target, c.sigma_target]])
    held = linmix_privacy.held_calibration(built)
    np.testing.assert_array_equal(linmix_privacy.drawn_calibration(built).sigmas, held.sigmas)


def test_the_audits_releases_are_the_privatizers_prefix_sums():
    """The compiled audit's central releases average to the exact prefix sums plus the shift."""
    ctx = JobContext(_audit("central_privatizer"))
    feat = linmix_privacy.audit_features(2, 1)
    built = build_agent("private_linopt_vi", AGENTS["private_linopt_vi"].defaults(), PrivacySetting(**TIGHT), feat, 4,
                        ctx.agent_rng, ctx.noise_rng)
    out = linmix_privacy.central_sampler(built, feat)(True, 20_000, np.random.default_rng(0))
    gp, tp, gr, tr = linmix_privacy.neighbouring_statistics(feat, True)
    iu = np.triu_indices(2)
    one = []
    for g, t, reg in ((gp, tp, built.agent.reg_p), (gr, tr, built.agent.reg_r)):
        one += [(g[0] + reg.calibration.shift * np.eye(2))[iu], t[0].ravel()]
    expected = np.tile(np.concatenate(one), 3)
    sigma = max(max(r.calibration.sigma_gram, r.calibration.sigma_target) for r in (built.agent.reg_p, built.agent.reg_r))
    np.testing.assert_allclose(out.mean(0), expected, atol=0.05 * sigma)
    for reg in (built.agent.reg_p, built.agent.reg_r):
        assert reg.drawn[0, 0] == reg.drawn[0, 1] == reg.calibration.sigma_gram


@pytest.mark.parametrize("factor", [0.1, 10.0])
def test_a_noise_scale_changed_in_the_loops_kernel_call_is_refused(factor, monkeypatch):
    """The issue's ÷10 (and a x10) placed where the loop's noise is drawn (the σ's the
    compiled loop is called with), the regularizer untouched: the job refuses to write results."""
    monkeypatch.setattr(episodes, "_run_block", _sigmas_call(loop._run_block, factor))
    with pytest.raises(NoiseScaleError, match=("less noise than" if factor < 1 else "other noise than") + " the calibration requires"):
        execute(REGRET)


@pytest.mark.parametrize("mechanism", ["central_privatizer", "local_randomizer"])
@pytest.mark.parametrize("where", ["sigma passed to the kernel", "inside the noise kernel"])
def test_a_tenth_of_the_noise_in_the_compiled_audit_path_flips_z1(where, mechanism, monkeypatch):
    """The audit job draws through the loop's kernels: a cut of the σ's the kernel is given
    (reported: the row's exact ε is computed from them) or of the noise inside the kernel
    (not reported: only the audited releases show it) flips Z1 by its own rule."""
    spec = _audit(mechanism)
    if where == "sigma passed to the kernel":
        planted = _sigmas_call(loop.audit_releases, 0.1)
    else:
        planted = rejit_chain([loop._observe, loop._audit_user, loop.audit_releases],
                              gaussian_into=cut_gaussian_into(10.0))
    check_audit_flip(Z1, spec, lambda: monkeypatch.setattr(linmix_privacy, "audit_releases", planted),
                     reported=where == "sigma passed to the kernel")


def test_ten_times_the_noise_is_accounted_and_flips_p3(monkeypatch):
    """'tight' is tight: a regret job whose built agent holds (and so whose compiled loop
    draws, as it reports) 10x the noise its ε needs in its regularizers records the accounted ε of
    what it drew (0.081 ε here), and P3's tight row is not reproduced."""
    check_tight_flip(P3, REGRET, lambda: more_noise_in_the_agent(monkeypatch, 10.0))
