"""`full` puts the tabular rate claims inside their regime at every ε >= 1, at larger S and A
than `default` (docs/presets.md), checked from the config's own jobs by the predicted
horizon (the fixed point ``T >= 10·T*(T)`` the jobs record as ``horizon_needed``) times
the largest measured-over-predicted end of the clamp seen so far (1.3-1.5x T*,
docs/experiments.md, ``tabular_hard`` and ``tabular_regret_eps1``). ``full`` is too
large to run here (about 128 CPU-hours); these are the horizons its grids were chosen
from, so a grid edited below them fails here, not after a cluster run."""

from __future__ import annotations

import pytest

from dprl.agents.regime import burn_in_episodes as fixed_point
from dprl.agents.tabular.regime import ONSET_DECADES, job_burn_in
from dprl.config.load import load_config_file
from dprl.envs.tabular import make_tabular_env
from dprl.experiments.tabular import jobs
from dprl.runner.job import JobContext, JobSpec

MEASURED_OVER_PREDICTED = 1.5  # the measured end of the clamp over T*, at most, in the runs so far


@pytest.fixture(scope="module")
def full():
    return load_config_file("config.yaml", "full").experiments


def _needed(spec: JobSpec) -> float:
    """The horizon the job's rate needs: its predicted fixed point, with the margin."""
    env = make_tabular_env(spec.environment["name"], spec.environment, jobs._instance_rng(JobContext(spec)))
    a = spec.algorithm
    need = fixed_point(lambda k: job_burn_in(env, spec.privacy, k, a["beta"], a["bonus_scale"], a.get("l1_per_step"))[1],
                       10**ONSET_DECADES)
    return MEASURED_OVER_PREDICTED * need


def _private(exp, **match) -> list[JobSpec]:
    return [j.spec for j in exp.jobs if j.spec.privacy is not None
            and all(j.spec.environment.get(k) == v for k, v in match.items())]


@pytest.mark.parametrize("n, m, gap_scale", [(2, 1, 1.0), (2, 1, 10), (4, 2, 1.0)])
def test_v9_has_two_horizons_inside_the_regime_at_the_smallest_eps_of_each_family(full, n, m, gap_scale):
    """V9 fits a family's exponent over the T inside the regime; the smallest ε >= 1 needs
    the longest burn-in (E ∝ 1/ε), so two T past it hold every ε >= 1 of the grid."""
    specs = [s for s in _private(full["tabular_hard"], n=n, m=m) if s.environment.get("gap_scale", 1.0) == gap_scale]
    eps = min(s.privacy.epsilon for s in specs if s.privacy.epsilon >= 1)
    assert eps == 1.0
    at = [s for s in specs if s.privacy.epsilon == eps and s.seed == 0]
    need = _needed(at[0])
    inside = sorted(s.environment["T"] for s in at if s.environment["T"] >= need)
    assert len(inside) >= 2, (n, m, gap_scale, need, inside)


def test_v7_on_garnet_holds_s_up_to_4_at_eps_1_and_every_s_at_eps_10(full):
    """V7 fits the S inside their regime: at ε = 1, S <= 4 (S = 8 would need ~1.6e9); at
    ε = 10, every S of the grid. Garnet is drawn per seed: the first two draws."""
    exp = full["tabular_scaling"]
    T = {s.settings["episodes"] for s in _private(exp)}
    assert len(T) == 1
    T = T.pop()
    for eps, sizes in ((1.0, (4,)), (10.0, (8,))):
        for spec in (s for s in _private(exp, S=sizes[0]) if s.privacy.epsilon == eps and s.seed < 2):
            assert _needed(spec) <= T, (eps, spec.environment, spec.seed)
    assert {s.environment["S"] for s in _private(exp)} >= {2, 3, 4, 6, 8}
