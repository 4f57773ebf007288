"""The Python API checks what the config checks: environments, agents, estimators and
privacy helpers refuse NaN, infinity and out-of-range values at construction (a
``ValueError`` naming the parameter) instead of hanging, looping or returning a result
that looks better than it is; ``dprl run-job --spec`` and ``run-bundle`` check a payload
with the config's own checks and write nothing when it is bad."""

from __future__ import annotations

import json
import math
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from dprl.agents.lq.build import build_agent as build_lq
from dprl.agents.linmix.build import build_agent as build_linmix
from dprl.agents.pe.build import EstimationTask
from dprl.agents.pe.build import build_agent as build_pe
from dprl.agents.pe.estimators import DPLSL, DPLSW, LSL, LSW
from dprl.agents.tabular.build import build_agent as build_tabular
from dprl.agents.tabular.private_bai import dp_successive_elimination
from dprl.checks import bracket_upper, check_array, check_number
from dprl.cli import main
from dprl.config.job_spec import check_job_spec
from dprl.config.load import PRESETS, ConfigError, load_config_file
from dprl.envs.bandit import BernoulliBandit, mab
from dprl.envs.linear_mixture import make_env as make_linmix_env
from dprl.envs.lq import LQSystem, double_integrator
from dprl.envs.mrp import FiniteMRP
from dprl.envs.tabular import TabularMDP, riverswim
from dprl.experiments.run import execute
from dprl.privacy.calibration import composed_epsilon, gaussian_mu, gaussian_sigma_tight, laplace_tree_scale
from dprl.privacy.regularizer import NonPrivateRegularizer
from dprl.privacy.setting import PrivacySetting
from dprl.privacy.smooth_sensitivity import gaussian_pair_epsilon, smooth_gaussian_constants
from dprl.runner.job import JobSpec

ROOT = Path(__file__).resolve().parents[2]
NAN, INF = math.nan, math.inf
PUCB_PRIVACY = PrivacySetting(epsilon=1.0, calibration="paper")
APPROX = PrivacySetting(epsilon=1.0, delta=1e-3, calibration="paper")


def _rng() -> np.random.Generator:
    return np.random.default_rng(0)


# ---------------------------------------------------------------------- the shared helper


@pytest.mark.parametrize("value, kw, match", [
    (NAN, {}, "x must be a finite number, got nan"),
    (INF, {"minimum": 0}, "x must be a finite number, got inf"),
    (-INF, {"allow_inf": True, "minimum": 0}, r"x must be >= 0, got -inf"),
    (0.0, {"exclusive_minimum": 0, "maximum": 1}, r"x must be in \(0, 1\], got 0.0"),
    (1.0, {"minimum": 0, "exclusive_maximum": 1}, r"x must be in \[0, 1\), got 1.0"),
    (2.5, {"integer": True}, "x must be an integer, got 2.5"),
    (True, {}, "x must be a number, got True"),
    ("1", {}, "x must be a number, got '1'"),
])
def test_check_number_refuses(value, kw, match):
    with pytest.raises(ValueError, match=match):
        check_number("x", value, **kw)


def test_check_number_returns_the_value_itself():
    # callers store what they were given: an int stays an int, a NumPy float stays one
    for v in (3, 0.25, np.float64(0.5), np.int64(7)):
        assert check_number("x", v, minimum=0) is v
    assert check_number("eps", INF, exclusive_minimum=0, allow_inf=True) == INF


def test_check_array_names_the_first_bad_entry():
    with pytest.raises(ValueError, match=r"R must be finite and in \[0, 1\], got nan at index \(1, 0\)"):
        check_array("R", [[0.5, 0.2], [NAN, 2.0]], minimum=0, maximum=1)
    a = np.arange(4.0)
    assert np.array_equal(check_array("a", a), a)


def test_bracket_search_is_bounded():
    assert bracket_upper("f", lambda x: x < 100.0) == 128.0
    with pytest.raises(ValueError, match="never: no finite bracket"):
        bracket_upper("never", lambda x: True)


# ---------------------------------------------------------------------- privacy helpers


def test_privacy_helpers_name_their_parameter():
    with pytest.raises(ValueError, match="epsilon must be a finite number, got inf"):
        gaussian_mu(INF, 1e-5)  # used to double its bracket forever (the profile is NaN at ε = inf)
    with pytest.raises(ValueError, match="mu must be a finite number, got nan"):
        composed_epsilon(NAN, 1e-5)  # used to return 0.0
    with pytest.raises(ValueError, match="mu must be a finite number, got inf"):
        composed_epsilon(INF, 1e-5)
    with pytest.raises(ValueError, match="delta must be a finite number, got nan"):
        composed_epsilon(1.0, NAN)
    with pytest.raises(ValueError, match=r"sensitivity must be finite and >= 0, got nan at index \(\)"):
        gaussian_sigma_tight(1.0, 1e-5, NAN)
    with pytest.raises(ValueError, match="l1_sensitivity must be a finite number, got nan"):
        laplace_tree_scale(1.0, 3, NAN)
    with pytest.raises(ValueError, match="epsilon must be a number, not NaN, got nan"):
        smooth_gaussian_constants(NAN, 0.1, 2)
    with pytest.raises(ValueError, match="sigma1 must be a finite number, got inf"):
        gaussian_pair_epsilon(1e-3, 0.4, 1.0, INF, 2)
    with pytest.raises(ValueError, match="ridge parameter lam must be a finite number, got nan"):
        NonPrivateRegularizer((), 2, 1, NAN)
    # valid values: unchanged (ε = inf stays the documented non-private limit of the smooth mechanism)
    assert composed_epsilon(0.0, 1e-5) == 0.0
    assert smooth_gaussian_constants(INF, 0.1, 3).a == INF


def test_no_hang_on_infinite_inputs():
    """In a child with a time limit: before the checks, the first call never returned
    (pinv of a matrix holding inf) and the second doubled its bracket forever."""
    code = textwrap.dedent("""
        import math
        import numpy as np
        from dprl.agents.pe.estimators import LSW
        from dprl.privacy.calibration import gaussian_mu
        phi = np.eye(3); phi[1, 1] = math.inf
        for call in (lambda: LSW(phi, np.full(3, 1 / 3)), lambda: gaussian_mu(math.inf, 1e-5)):
            try:
                call()
            except ValueError as err:
                print(err)
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == [
        "features phi must be finite, got inf at index (1, 1)",
        "epsilon must be a finite number, got inf",
    ]


# ---------------------------------------------------------------------- environments


def test_tabular_mdp_refuses_a_nan_reward():
    env = riverswim(S=3, H=2)
    R = env.R.copy()
    R[1, 2, 1] = NAN  # used to be accepted and give NaN regret
    with pytest.raises(ValueError, match=r"mean rewards R must be finite and in \[0, 1\], got nan at index \(1, 2, 1\)"):
        TabularMDP(env.P, R, env.p0)
    with pytest.raises(ValueError, match="next_reward must be finite"):
        TabularMDP(env.P, R, env.p0, next_reward=np.array([0.0, NAN, 1.0]))


@pytest.mark.parametrize("build, match", [
    (lambda: BernoulliBandit(np.array([0.5, NAN])), "Bernoulli arm means must be finite"),
    (lambda: mab(_rng(), k=NAN), "mab k must be a finite number"),
    (lambda: riverswim(S=4, H=NAN), "riverswim H must be a finite number"),
    (lambda: FiniteMRP(np.eye(2), np.array([[NAN, 0.0], [0.0, 0.0]]), np.array([1.0, 0.0]), 0.9, 1, 10, 1.0), "rewards R must be finite"),
    (lambda: FiniteMRP(np.eye(2), np.zeros((2, 2)), np.array([1.0, 0.0]), 0.9, 1, NAN, 1.0), "max_len must be a finite number"),
    (lambda: double_integrator(5, c_a=NAN), "C_A must be a finite number"),
    (lambda: double_integrator(5, tau=INF), "A must be finite"),
    (lambda: make_linmix_env("mixture", {"S": 4, "A": 2, "d1": 2, "d2": 2, "H": 2, "concentration": NAN}, _rng()),
     "Dirichlet concentration must be a finite number"),
])
def test_environments_name_the_bad_parameter(build, match):
    with pytest.raises(ValueError, match=match):
        build()


def test_lq_system_refuses_nan_matrices():
    sys0 = double_integrator(5)
    a = sys0.a.copy()
    a[0, 1] = NAN  # NaN passes every norm test of Assumption 1 (comparisons are false)
    with pytest.raises(ValueError, match="A must be finite, got nan at index"):
        LQSystem(a, sys0.b, sys0.q, sys0.r, sys0.x1, sys0.horizon, sys0.noise_radius, sys0.c_a, sys0.c_b)


# ---------------------------------------------------------------------- agents and estimators


@pytest.mark.parametrize("name, params, match", [
    ("ubev", {"beta": NAN, "bonus_scale": 1.0}, "beta must be a finite number, got nan"),
    ("ubev", {"beta": 0.05, "bonus_scale": NAN}, "bonus_scale must be a finite number, got nan"),
    ("ubev", {"beta": 0.05, "bonus_scale": -1.0}, "bonus_scale must be > 0, got -1.0"),
    ("ubev", {"beta": 1.0, "bonus_scale": 1.0}, r"beta must be in \(0, 1\), got 1.0"),
    ("pucb", {"beta": 0.05, "bonus_scale": 1.0, "l1_per_step": NAN}, "l1_per_step must be a finite number, got nan"),
    ("pucb", {"beta": INF, "bonus_scale": 1.0, "l1_per_step": 2}, "beta must be a finite number, got inf"),
])
def test_tabular_agents_name_the_bad_parameter(name, params, match):
    env = riverswim(S=3, H=2)
    with pytest.raises(ValueError, match=match):
        build_tabular(name, params, PUCB_PRIVACY if name == "pucb" else None, env, 50, _rng(), _rng())


def test_ubev_with_nan_beta_fails_through_the_job_function():
    """The whole Python API path (``execute``): a NaN β used to report a regret of 2.4
    where the valid job's is about 400; it now fails naming β."""
    spec = JobSpec("tabular_regret", "tabular_regret", {"name": "ubev", "beta": NAN, "bonus_scale": 1.0},
                   {"name": "riverswim", "S": 4, "H": 6}, None, {"episodes": 50, "checkpoints": 5}, 0)
    with pytest.raises(ValueError, match="beta must be a finite number, got nan"):
        execute(spec)


def test_dp_successive_elimination_names_beta():
    with pytest.raises(ValueError, match="beta must be a finite number, got nan"):
        dp_successive_elimination(mab(_rng()), 1.0, NAN, _rng(), _rng())


def _task(phi: np.ndarray | None = None, rho: np.ndarray | None = None) -> EstimationTask:
    return EstimationTask(np.eye(3) if phi is None else phi, np.full(3, 1 / 3) if rho is None else rho, 10.0)


@pytest.mark.parametrize("name", ["lsw", "lsl", "dp_lsw", "dp_lsl", "gs_dp_lsl"])
@pytest.mark.parametrize("where, bad, match", [
    ("phi", INF, r"features phi must be finite, got inf at index \(1, 1\)"),
    ("phi", NAN, r"features phi must be finite, got nan at index \(1, 1\)"),
    ("rho", INF, r"state weights rho must be finite and >= 0, got inf at index \(1,\)"),
])
def test_pe_estimators_refuse_non_finite_features_and_weights(name, where, bad, match):
    phi, rho = np.eye(3), np.full(3, 1 / 3)
    (phi if where == "phi" else rho)[(1, 1) if where == "phi" else 1] = bad
    with pytest.raises(ValueError, match=match):
        build_pe(name, {"c": 1.0, "p": 0.5}, APPROX if name.startswith(("dp", "gs")) else None, _task(phi, rho))


def test_dp_lsl_refuses_infinite_c():
    # used to release NaN weights with noise scale 0 and accounted ε = 1
    with pytest.raises(ValueError, match="the regularization constant c must be a finite number, got inf"):
        DPLSL(np.eye(3), np.full(3, 1 / 3), INF, 0.5, 10.0, 1.0, 1e-3)
    with pytest.raises(ValueError, match="the regularization exponent p must be a finite number, got nan"):
        LSL(np.eye(3), np.full(3, 1 / 3), 1.0, NAN)
    with pytest.raises(ValueError, match="F_max must be a finite number, got nan"):
        DPLSW(np.eye(3), np.full(3, 1 / 3), NAN, 1.0, 1e-3)
    assert LSW(np.eye(3), np.full(3, 1 / 3)).dim == 3


def test_lq_and_linmix_agents_name_the_bad_parameter():
    system = double_integrator(5)
    with pytest.raises(ValueError, match="n_candidates must be a finite number, got nan"):
        build_lq("ofu_rl", {"n_candidates": NAN, "alpha": 0.1, "lam": 0.1}, None, system, 10, _rng(), None)
    with pytest.raises(ValueError, match="ridge parameter lam must be a finite number, got nan"):
        build_lq("ofu_rl", {"n_candidates": 8, "alpha": 0.1, "lam": NAN}, None, system, 10, _rng(), None)
    env = make_linmix_env("mixture", {"S": 4, "A": 2, "d1": 2, "d2": 2, "H": 2, "concentration": 0.5}, _rng())
    with pytest.raises(ValueError, match="eta_scale must be a finite number, got nan"):
        build_linmix("oppo", {"alpha": 0.05, "eta_scale": NAN, "lam": 1.0}, None, env, 10, _rng(), None)
    with pytest.raises(ValueError, match="ridge parameter lam must be a finite number, got nan"):
        build_linmix("ucrl_vtr", {"alpha": 0.05, "lam": NAN}, None, env, 10, _rng(), None)


# ---------------------------------------------------------------------- valid jobs unchanged

# Digests of the numeric columns of small smoke jobs' result tables, measured with the
# code before these checks existed: valid parameters must give bit-identical results.
UNCHANGED = {
    # re-measured when the tabular burn-in became the end of the clamp: onset_episode is that
    # end, the old onset (first untied episode) moved to first_untie_episode unchanged, and
    # horizon_needed is the decade past T* (was 3·T*); every other column identical
    "jobs/tabular_regret/ubev/riverswim_H3_S3/nonprivate/seed0.csv": "d279004cc8cdd828",
    "jobs/tabular_regret/pucb/riverswim_H3_S3/eps10_tight/seed0.csv": "0b1c85c347e7c3c6",
    # re-measured when the job gained its trimmed-mean column and the smoke grid became α=0.2
    # only: the α=0.2 row's earlier columns are byte-identical to the old job's
    "jobs/private_mab/dp_se/mab/eps1_tight/seed0.csv": "829c5955fdeddc2d",
    "jobs/linmix_regret/private_linopt_vi/mixture/eps1000_delta1e-05_tight/seed0.csv": "a31a55c22c886838",
    "jobs/pe_batch/dp_lsl/chain/eps1_delta0.1_paper/seed0.csv": "778ded0462438eb2",
}


def _digest(df) -> str:
    import hashlib

    num = df.select_dtypes("number")
    return hashlib.sha256(num.to_csv(index=False, float_format="%.17g").encode()).hexdigest()[:16]


@pytest.mark.parametrize("path", sorted(UNCHANGED))
def test_valid_jobs_give_unchanged_results(path):
    job = load_config_file(str(ROOT / "config.yaml"), "smoke").jobs[path]
    assert _digest(execute(job.spec)) == UNCHANGED[path]


# Jobs that solve linear systems through LAPACK, whose OpenBLAS kernel is chosen by the CPU at
# run time (DYNAMIC_ARCH): kernels differ in the last bit, so a bit-exact digest holds on one
# CPU type only. Their numeric columns are compared with a stored table at a relative 1e-9.
# - LQ (Riccati equations, least squares): OPENBLAS_CORETYPE=Prescott moves theta_hat_error
#   by 1.1e-16 relative and leaves the regret identical. Values of the code at f1cf0c3, before
#   the checks, and today: identical on the machine that stored them. Regenerated at 445522c,
#   when the LQ burn-in became the onset at 270Λ: burn_in_episodes changed and horizon_needed
#   was added; every other column was equal to the stored one at rtol 1e-9. Regenerated when the
#   oracle's map of the unit ball became L^{-T} (Cholesky) instead of V^{-1/2} (eigh): the
#   checkpoints up to episode 32 and the columns that do not depend on the candidates drawn
#   (β, the calibration, the counts) were equal to the stored ones at rtol 1e-9; regret and
#   the estimates differ from episode 63 (other candidates of the same law).
# - LSW policy evaluation (weighted least squares): its digest fe1393f527469efb, stored before
#   the checks, holds under the Haswell and Zen kernels and not under SkylakeX (an AVX-512
#   EPYC's default, 2026-11-28: 6.2e-16 relative apart). The table was stored under
#   OPENBLAS_CORETYPE=Haswell, where it gives that digest.
NEAR_UNCHANGED = {
    "jobs/lq_regret/private_ofu_rl/random_lq/eps1_delta0.001_tight/seed0.csv":
        Path(__file__).parent / "data" / "lq_regret_smoke_seed0.csv",
    "jobs/pe_batch/lsw/chain/nonprivate/seed0.csv": Path(__file__).parent / "data" / "pe_batch_lsw_smoke_seed0.csv",
}


@pytest.mark.parametrize("path", sorted(NEAR_UNCHANGED))
def test_valid_linear_algebra_jobs_give_unchanged_results(path):
    got = execute(load_config_file(str(ROOT / "config.yaml"), "smoke").jobs[path].spec).select_dtypes("number")
    want = pd.read_csv(NEAR_UNCHANGED[path])
    assert list(got.columns) == list(want.columns)
    np.testing.assert_allclose(got.to_numpy(float), want.to_numpy(float), rtol=1e-9, atol=1e-12)


# ---------------------------------------------------------------------- run-job --spec


@pytest.fixture(scope="module")
def smoke_payload() -> dict:
    """A valid ``{spec, labels}`` of a small UBEV job of the smoke preset."""
    cfg = load_config_file(str(ROOT / "config.yaml"), "smoke")
    job = next(j for j in cfg.jobs.values() if j.spec.algorithm["name"] == "ubev")
    return json.loads(json.dumps({"spec": job.spec.to_dict(), "labels": job.labels}))


@pytest.mark.parametrize("preset", PRESETS)
def test_every_job_of_the_config_passes_the_payload_check_unchanged(preset):
    cfg = load_config_file(str(ROOT / "config.yaml"), preset)
    for job in cfg.jobs.values():
        spec, labels = check_job_spec(json.loads(json.dumps({"spec": job.spec.to_dict(), "labels": job.labels})))
        assert spec == job.spec and labels == job.labels


def _edit(payload: dict, keys: tuple, value) -> dict:
    out = json.loads(json.dumps(payload))
    node = out
    for k in keys[:-1]:
        node = node[k]
    if value is KeyError:
        del node[keys[-1]]
    else:
        node[keys[-1]] = value
    return out


@pytest.mark.parametrize("keys, value, message", [
    (("spec", "algorithm", "beta"), NAN, "spec.algorithm.beta: must be a finite number, got nan"),
    (("spec", "algorithm", "bonus_scale"), INF, "spec.algorithm.bonus_scale: must be a finite number, got inf"),
    (("spec", "algorithm", "beta"), 0.9, "spec.algorithm.beta: must be <= 0.5, got 0.9"),
    (("spec", "algorithm", "beta"), [0.05, 0.1], "spec.algorithm.beta: a job spec takes one value, not a sweep"),
    (("spec", "algorithm", "gamma"), 1.0, "spec.algorithm.gamma: unknown parameter of algorithm 'ubev'"),
    (("spec", "algorithm", "bonus_scale"), KeyError, "spec.algorithm.bonus_scale: missing parameter of algorithm 'ubev'"),
    (("spec", "algorithm", "name"), "pucbb", "spec.algorithm.name: unknown algorithm 'pucbb'"),
    (("spec", "environment", "S"), 2.5, "spec.environment.S: must be an integer, got 2.5"),
    (("spec", "settings", "checkpoints"), 1, "spec.settings.checkpoints: must be >= 2, got 1"),
    (("spec", "privacy"), {"epsilon": 1.0, "delta": None, "calibration": "paper"}, "spec.privacy: algorithm 'ubev' is not private"),
    (("spec", "seed"), -1, "spec.seed: must be an integer >= 0, got -1"),
    (("spec", "kind"), "tabular_regrets", "spec.kind: unknown experiment kind"),
    (("labels", "alg_label"), "a/b", "labels.alg_label: 'a/b' is not a safe path component"),
])
def test_run_job_spec_is_checked_like_the_config(tmp_path, capsys, smoke_payload, keys, value, message):
    out = tmp_path / "out" / "seed0.csv"
    code = main(["run-job", "--spec", json.dumps(_edit(smoke_payload, keys, value)), "--out", str(out)])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2
    assert err[-1].startswith(f"dprl: error: {message}"), err
    assert len([line for line in err if line.startswith("dprl: error")]) == 1
    assert not out.parent.exists()  # nothing written


def test_run_job_spec_private_job_needs_its_privacy_kind(smoke_payload):
    cfg = load_config_file(str(ROOT / "config.yaml"), "smoke")
    job = next(j for j in cfg.jobs.values() if j.spec.algorithm["name"] == "private_ofu_rl")
    payload = json.loads(json.dumps({"spec": job.spec.to_dict(), "labels": job.labels}))
    with pytest.raises(ConfigError, match=r"spec.privacy.delta: algorithm 'private_ofu_rl' is approx DP and needs a delta"):
        check_job_spec(_edit(payload, ("spec", "privacy", "delta"), None))
    with pytest.raises(ConfigError, match="spec.privacy.epsilon: must be a finite number, got nan"):
        check_job_spec(_edit(payload, ("spec", "privacy", "epsilon"), NAN))
    with pytest.raises(ConfigError, match=r"spec.privacy: privacy epsilon must be positive and finite, got -1.0"):
        check_job_spec(_edit(payload, ("spec", "privacy", "epsilon"), -1.0))


def test_run_bundle_checks_every_member_before_running(tmp_path, capsys, smoke_payload):
    good = {**smoke_payload, "out": str(tmp_path / "a.csv")}
    bad = {**_edit(smoke_payload, ("spec", "algorithm", "beta"), NAN), "out": str(tmp_path / "b.csv")}
    assert main(["run-bundle", "--specs", json.dumps([good, bad])]) == 2
    assert "dprl: error: --specs[1]: spec.algorithm.beta: must be a finite number, got nan" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []  # the valid first member did not run either


def test_run_job_spec_valid_payload_still_runs(tmp_path, smoke_payload):
    out = tmp_path / "seed0.csv"
    spec = _edit(smoke_payload, ("spec", "settings", "episodes"), 20)
    assert main(["run-job", "--spec", json.dumps(spec), "--out", str(out)]) == 0
    assert out.exists()
