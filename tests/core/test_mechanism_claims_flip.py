"""Claims M1-M3 (``dprl.analysis.claims.mechanisms``), each shown able to fail through its own
code: the smoke preset's real ``audit`` / ``counter_error`` jobs are run to their job paths,
aggregated as the workflow aggregates them and read back from CSV; the unbroken jobs give
"reproduced", and the same jobs with one plausible bug planted in ``experiments/mechanisms/
jobs.py``'s calibration or bounds give "not reproduced"."""

from __future__ import annotations

import io
from collections.abc import Callable
from functools import cache
from pathlib import Path
from types import SimpleNamespace

import pandas as pd
import pytest

from dprl.analysis.aggregate import aggregate
from dprl.analysis.claims import evaluate
from dprl.analysis.claims.mechanisms import CLAIMS
from dprl.config.load import load_config_file
from dprl.experiments.mechanisms import jobs
from dprl.experiments.run import run_job
from dprl.privacy import calibration as cal
from dprl.runner.io import frame_to_csv
from dprl.runner.job import JobSpec

CONFIG = Path(__file__).resolve().parents[2] / "config.yaml"


@cache
def _smoke_jobs() -> dict:
    return load_config_file(str(CONFIG), "smoke").jobs


def _run(root: Path, experiment: str, select: Callable[[JobSpec], bool] = lambda spec: True) -> dict[str, dict]:
    """Run the smoke preset's jobs of ``experiment`` (those ``select`` takes), each by
    ``run_job`` to its own job path under ``root``; ``{path: {spec, labels}}`` of the config's
    jobs, as ``dprl aggregate --specs`` checks them."""
    out = {}
    for key, job in _smoke_jobs().items():
        if job.spec.experiment == experiment and select(job.spec):
            path = root / key
            path.parent.mkdir(parents=True, exist_ok=True)
            run_job(job.spec, path, job.labels)
            out[str(path)] = {"spec": job.spec.to_dict(), "labels": job.labels}
    assert out, f"the smoke preset has no such {experiment} jobs"
    return out


def _aggregate(expected: dict[str, dict]) -> pd.DataFrame:
    """The job files aggregated (each checked against its config job) and read back from
    the table's CSV text, as ``dprl claims`` reads it."""
    return pd.read_csv(io.StringIO(frame_to_csv(aggregate(list(expected), expected=expected))))


def _table(root: Path, experiment: str) -> pd.DataFrame:
    return _aggregate(_run(root, experiment))


def _verdicts(cid: str, experiment: str, table: pd.DataFrame) -> dict[str, str]:
    """``{calibration: verdict}`` of claim ``cid``'s rows, evaluated through the registry."""
    claim = next(c for c in CLAIMS if c.id == cid)
    return {r["calibration"]: r["verdict"] for r in evaluate(claim, {experiment: table})}


def test_m1_flips_when_the_laplace_tree_noise_is_halved(tmp_path, monkeypatch):
    """Planted bug: the tree counter's Laplace scale is L/(2ε) instead of L/ε (exact ε 2) while its rows claim ε."""
    control = _run(tmp_path / "control", "audit")
    assert _verdicts("M1", "audit", _aggregate(control)) == {"tight": "reproduced"}

    halved = cal.laplace_tree_scale
    monkeypatch.setattr(cal, "laplace_tree_scale", lambda *a, **k: halved(*a, **k) / 2)

    def laplace(spec: JobSpec) -> bool:
        return spec.algorithm["name"] == "laplace_tree"

    # only the Laplace job reads laplace_tree_scale: the Gaussian jobs' files are reused
    rerun = _run(tmp_path / "planted", "audit", laplace)
    planted = _aggregate(
        {**{p: m for p, m in control.items() if m["spec"]["algorithm"]["name"] != "laplace_tree"}, **rerun}
    )
    lap = planted[planted["mechanism"] == "laplace_tree"]
    assert len(planted) == len(control)
    # the bug is in the mechanism the job ran, and its row still claims the nominal ε
    assert list(lap["pair_epsilon"]) == pytest.approx([2.0]) and list(lap["claimed_epsilon"]) == [1.0]
    assert _verdicts("M1", "audit", planted) == {"tight": "not reproduced"}


# the bounds error_bounds computes through ``cal`` (``jobs.cal``), each called as
# ``f(scale × sqrt(nodes), dim, b)`` or, for Laplace, ``f(scale, nodes, b)`` with ``b = β/T``
_GAUSSIAN_BOUNDS = (
    "chi2_norm_bound",
    "laurent_massart_norm_bound",
    "symmetric_gaussian_norm_bound_paper",
    "symmetric_gaussian_norm_bound_tight",
)
# bug -> (one-line description, M2 verdicts it gives on the smoke preset)
M2_BUGS = {
    "beta_not_over_T": (
        "error_bounds passes β per step instead of β/T (the union bound over t <= T dropped)",
        # the papers' bounds (L nodes, Laurent-Massart and log(T)^2.5 slack) still cover 99%
        {"paper": "reproduced", "tight": "not reproduced"},
    ),
    "one_node": (
        "error_bounds bounds one node's noise, not the sum over the release's nodes (√L, √popcount(t) or k forgotten)",
        {"paper": "not reproduced", "tight": "not reproduced"},
    ),
}


def _planted_error_bounds(bug: str, monkeypatch: pytest.MonkeyPatch):
    """``jobs.error_bounds`` with ``bug`` of :data:`M2_BUGS` planted in the arguments it passes to ``cal``."""
    error_bounds = jobs.error_bounds

    def planted(algorithm, noise, T, t, dim, beta, epsilon):
        scale = jobs._scale(noise)

        def wrap(name, f):
            if bug == "beta_not_over_T" and name in (*_GAUSSIAN_BOUNDS, "laplace_sum_tail"):
                return lambda *args: f(*args[:-1], args[-1] * T)
            if bug == "one_node" and name in _GAUSSIAN_BOUNDS:
                return lambda sigma, dim, b: f(scale, dim, b)
            if bug == "one_node" and name == "laplace_sum_tail":
                return lambda b_scale, nodes, b: f(b_scale, 1, b)
            return f

        proxy = SimpleNamespace(**{n: wrap(n, getattr(cal, n)) for n in dir(cal) if not n.startswith("__")})
        with monkeypatch.context() as m:
            m.setattr(jobs, "cal", proxy)
            return error_bounds(algorithm, noise, T, t, dim, beta, epsilon)

    return planted


@pytest.mark.parametrize("bug", sorted(M2_BUGS))
def test_m2_flips_when_the_error_bound_is_too_small(tmp_path, monkeypatch, bug):
    """Planted bug (per parameter, M2_BUGS): the union bound over t dropped (β, not β/T), or one node's noise bounded instead of the release's sum."""
    control = _table(tmp_path / "control", "counter_error")
    assert _verdicts("M2", "counter_error", control) == {"paper": "reproduced", "tight": "reproduced"}

    monkeypatch.setattr(jobs, "error_bounds", _planted_error_bounds(bug, monkeypatch))
    planted = _table(tmp_path / "planted", "counter_error")
    # the bug makes bounds smaller, never larger, and leaves the noise alone
    assert (planted["bound_tight"] <= control["bound_tight"]).all() and (
        planted["bound_tight"] < control["bound_tight"]
    ).any()
    assert (planted["bound_paper"] <= control["bound_paper"]).all()
    assert planted["noise_scale"].equals(control["noise_scale"])
    assert _verdicts("M2", "counter_error", planted) == M2_BUGS[bug][1]


def test_m3_flips_when_the_tight_gaussian_calibration_composes_twice_as_often(tmp_path, monkeypatch):
    """Planted bug: gaussian_sigma_tight counts 2L compositions instead of L, making tight σ √2 larger (above paper's)."""
    assert _verdicts("M3", "counter_error", _table(tmp_path / "control", "counter_error")) == {"both": "reproduced"}

    sigma_tight = cal.gaussian_sigma_tight

    def doubled(epsilon, delta, sensitivity, compositions=1.0):
        return sigma_tight(epsilon, delta, sensitivity, compositions=2 * compositions)

    monkeypatch.setattr(cal, "gaussian_sigma_tight", doubled)
    planted = _table(tmp_path / "planted", "counter_error")
    last = planted[planted["t"] == planted["t"].max()]
    ratio = last.groupby(["algorithm", "calibration"])["noise_scale"].first().unstack()
    assert ((ratio["tight"] / ratio["paper"]).drop("laplace_tree") > 1).all()
    assert _verdicts("M3", "counter_error", planted) == {"both": "not reproduced"}
