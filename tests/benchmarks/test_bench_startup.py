"""Process start-up of one private job per paper (the target: a job's process start-up stays
under 2 s): the whole ``dprl run-job --spec`` process, as the Snakemake rule starts it, for
a smoke-preset job cut to a tiny size (10 episodes, or a single batch size), so that what
is measured is the start-up: interpreter, imports (NumPy, pandas, Numba, the SciPy
submodules the calibration needs), the calibration and accounting, the Numba cache load
(warm: one process runs first to fill it) and writing the result.

The asserted time is the child's CPU time (the machine's two cores are shared; the wall
time under load says more about the neighbours), the wall time is in ``extra_info``.
Skipped in the normal test run; run with
``pytest tests/benchmarks/test_bench_startup.py --benchmark-only -o addopts=""``.
Where the time goes: ``python -X importtime -m dprl run-job --spec ...``.
"""

import json
import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest

from dprl.config.load import load_config_file

ROOT = Path(__file__).resolve().parents[2]

# paper -> (experiment kind, algorithm, settings that make the job tiny)
JOBS = {
    "vietri2020_pucb": ("tabular_regret", "pucb", {"episodes": 10}),
    "chowdhury2021_private_ofu_rl": ("lq_regret", "private_ofu_rl", {"episodes": 10}),
    "zhou2022_private_linopt_vi": ("linmix_regret", "private_linopt_vi", {"episodes": 10}),
    "zhou2022_private_linopt_po": ("linmix_regret", "private_linopt_po", {"episodes": 10}),
    "balle2016_dp_lsw": ("pe_batch", "dp_lsw", {"m_min": 10, "m_max": 10}),
}


def _payload(kind: str, algorithm: str, settings: dict) -> str:
    """The ``--spec`` JSON of the first smoke job of ``kind`` running ``algorithm`` (PO: the
    VI job with the algorithm swapped, when the smoke preset has no PO job), made tiny."""
    cfg = load_config_file(str(ROOT / "config.yaml"), "smoke")
    jobs = [j for j in cfg.jobs.values() if j.spec.kind == kind and j.spec.privacy is not None]
    job = next((j for j in jobs if j.spec.algorithm["name"] == algorithm), None)
    if job is None and algorithm.endswith("_po"):
        job = next(j for j in jobs if j.spec.algorithm["name"] == algorithm.replace("_po", "_vi"))
    assert job is not None, f"no private {kind} job of {algorithm} in the smoke preset"
    spec = job.spec.to_dict()
    spec["algorithm"]["name"] = algorithm
    spec["settings"].update(settings)
    return json.dumps({"spec": spec, "labels": job.labels})


@pytest.mark.parametrize("paper", list(JOBS))
def test_bench_job_startup(benchmark, paper, tmp_path):
    payload = _payload(*JOBS[paper])
    cmd = [sys.executable, "-m", "dprl", "run-job", "--spec", payload, "--out", str(tmp_path / "r.csv")]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT / "src"), os.environ.get("PYTHONPATH", "")]))
    subprocess.run(cmd, check=True, capture_output=True, env=env)  # fills the Numba cache if cold

    cpus = []

    def start():
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        subprocess.run(cmd, check=True, capture_output=True, env=env)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpus.append((after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime))

    benchmark.pedantic(start, rounds=3, iterations=1)
    benchmark.extra_info.update(process_cpu_s=min(cpus), process_wall_s=benchmark.stats.stats.min, target_s=2.0)
    assert min(cpus) < 2.0, benchmark.extra_info
