"""counter_error's matrix jobs screen eigvalsh with the Frobenius norm between checkpoints
(experiments/mechanisms/jobs.py, ``_screened_error``): the coverage they report must be the
one the exact operator norm gives."""

import numpy as np
import pandas as pd

from dprl.config.load import load_config
from dprl.experiments.mechanisms import jobs
from dprl.experiments.run import execute


def _symmetric(rng: np.random.Generator, n: int, dim: int) -> np.ndarray:
    g = rng.normal(size=(n, dim, dim))
    return (g + np.swapaxes(g, 1, 2)) / 2


def test_screened_error_decides_every_bound_at_or_above_its_own_like_the_exact_norm():
    rng = np.random.default_rng(0)
    diff = _symmetric(rng, 20000, 3)
    exact = jobs._error("gaussian_tree_matrix", diff)
    frob = np.linalg.norm(diff, axis=(1, 2))
    bound = float(np.median(exact))  # half the matrices above it: the screen must work hard
    screened = jobs._screened_error("gaussian_tree_matrix", diff, bound)
    near = frob * (1 + jobs._SCREEN_MARGIN) > bound
    assert np.array_equal(screened[near], exact[near])  # exact wherever the bound is in reach
    for b in np.quantile(exact, [0.5, 0.6, 0.9, 0.99, 1.0]):
        assert np.array_equal(screened <= b, exact <= b)
    # the test can fail: the Frobenius norm alone (no eigvalsh near the bound) decides
    # differently for thousands of these matrices
    assert np.sum((frob <= bound) != (exact <= bound)) > 1000


def test_scalar_and_vector_errors_are_not_screened():
    rng = np.random.default_rng(1)
    for alg, shape in (("laplace_tree", (50,)), ("gaussian_tree_vector", (50, 3))):
        d = rng.normal(size=shape)
        assert np.array_equal(jobs._screened_error(alg, d, 0.1), jobs._error(alg, d))


def test_matrix_job_reports_what_the_unscreened_job_reports(monkeypatch):
    cfg = {"experiments": {"counter_error": {
        "algorithms": [{"name": "gaussian_tree_matrix"}],
        "environments": [{"name": "stream", "T": 300, "dim": 3, "counters": 400}],
        "privacy": {"epsilon": [1.0], "delta": [1e-5], "calibration": ["paper", "tight"]},
        "settings": {"checkpoints": 8},
        "seeds": {"count": 1}}}}
    specs = [job.spec for job in load_config(cfg).jobs.values()]
    screened = [execute(s) for s in specs]
    monkeypatch.setattr(jobs, "_screened_error", lambda alg, diff, bound: jobs._error(alg, diff))
    for s, got in zip(specs, screened):
        pd.testing.assert_frame_equal(got, execute(s), check_exact=True)
