"""Benchmarks of the policy-evaluation experiments (Balle et al. 2016).

Run: ``pytest tests/benchmarks/test_bench_pe.py --benchmark-only -o addopts=""``.
Target: the whole default ``pe_batch`` (80 jobs) in under 2 CPU-minutes, i.e. well under
1.5 s of work per job (a job samples 10^4 trajectories once and evaluates 10 batch sizes
× 2 feature maps).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np
import pytest

from dprl.agents.pe.bounds import lsl_psi, lsw_psi
from dprl.envs.mrp import chain_mrp
from dprl.experiments.pe import jobs
from dprl.experiments.registry import get_kind
from dprl.runner.job import JobContext, JobSpec

sys.path.insert(0, str(Path(__file__).parents[1] / "pe"))  # the sampler's NumPy reference (a test helper)
import mrp_reference  # noqa: E402


def _spec(alg: str, privacy: dict | None) -> JobSpec:
    k = get_kind("pe_batch")
    a = {"name": alg, **{n: p.default for n, p in k.algorithms[alg].params.items()}}
    e = {"name": "chain", **{n: p.default for n, p in k.environments["chain"].params.items()}}
    s = {n: p.default for n, p in k.settings.items()}
    return JobSpec("pe_batch", "pe_batch", a, e, privacy, s, 0)


@pytest.mark.parametrize("alg", ["dp_lsw", "dp_lsl"])
def test_bench_pe_batch_job(benchmark, alg):
    spec = _spec(alg, {"epsilon": 0.1, "delta": 0.1, "calibration": "paper"})
    df = benchmark(lambda: jobs.run_batch(JobContext(spec)))
    assert len(df) == 20


def test_bench_pe_batch_one_seed(benchmark):
    """The 8 jobs of one seed of the default pe_batch (2 non-private + 3 DP × 2 ε); the
    default preset runs 10 seeds, so 10× this is the experiment's compute (no start-up)."""
    specs = [_spec("lsw", None), _spec("lsl", None)] + [
        _spec(a, {"epsilon": e, "delta": 0.1, "calibration": "paper"})
        for a in ("dp_lsw", "dp_lsl", "gs_dp_lsl") for e in (0.1, 1.0)
    ]
    out = benchmark(lambda: [jobs.run_batch(JobContext(s)) for s in specs])
    assert len(out) == 8


def test_bench_sample_first_visit_1e4(benchmark):
    mrp = chain_mrp()
    sizes = jobs.batch_sizes(10, 10_000, 3)
    st = benchmark(lambda: mrp.sample_prefix_stats(sizes, np.random.default_rng(0)))
    assert st.m[-1] == 10_000


@pytest.mark.benchmark(timer=time.process_time)
def test_bench_sampler_compiled_against_numpy_1e5(benchmark):
    """The sampler's compiled step and backward pass against its NumPy reference
    (``tests/pe/mrp_reference.py``), 10^5 chain trajectories, both measured in this run (CPU time).
    Measured 2026-11-28: 0.10 s against 0.29 s (3.0x; the draws, shared by both, are about
    a third of the compiled time). Before the kernels (row-major states, NumPy), 0.54 s."""
    mrp = chain_mrp()

    def run() -> int:
        return sum(c.m for c in mrp.iter_first_visit(100_000, np.random.default_rng(0)))

    assert benchmark.pedantic(run, rounds=3, iterations=1, warmup_rounds=1) == 100_000
    t = time.process_time()
    sum(c.m for c in mrp_reference.iter_first_visit(mrp, 100_000, np.random.default_rng(0), 8192))
    reference = time.process_time() - t
    benchmark.extra_info.update(reference_s=reference, ratio=reference / benchmark.stats.stats.mean)
    assert benchmark.stats.stats.mean < reference, benchmark.extra_info


@pytest.fixture(scope="module")
def big_counts():
    mrp = chain_mrp()
    sizes = jobs.batch_sizes(10, 100_000, 3)
    return mrp.sample_prefix_stats(sizes, np.random.default_rng(0))


def test_bench_lsw_psi_up_to_1e5(benchmark, big_counts):
    rho = np.full(40, 1 / 39)
    rho[39] = 0
    psi = benchmark(lambda: lsw_psi(big_counts.counts, rho, 5.8e-4))
    assert np.all(psi > 0)


def test_bench_lsl_psi_up_to_1e5(benchmark, big_counts):
    rho = np.full(40, 1 / 39)
    rho[39] = 0
    m = big_counts.m.astype(float)
    c_lam = 0.16 / np.sqrt(2 * (1 + m**0.5))
    psi = benchmark(lambda: lsl_psi(big_counts.counts, m, rho, c_lam, 5.8e-4))
    assert np.all(psi > 0)
