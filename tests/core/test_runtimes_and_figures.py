"""Per-job runtime statistics (one simulation or a bundle per Snakemake job), and the
figure catalog the Snakefile reads at every start-up."""

from __future__ import annotations

import subprocess
import sys

import pytest

from dprl.analysis.runtimes import measured_resources, runtime_table, summary


def _bench(path, s, rss, cpu):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("s\th:m:s\tmax_rss\tmax_vms\tmax_uss\tmax_pss\tio_in\tio_out\tmean_load\tcpu_time\n"
                    f"{s}\t0:00:01\t{rss}\t1\t1\t1\t0\t0\t50\t{cpu}\n")
    return str(path)


def test_bundle_benchmarks_count_their_simulations(tmp_path):
    b = tmp_path / "results/default/benchmarks"
    paths = [
        _bench(b / "lq_regret/ofu/env/nonprivate/seed0.tsv", 6.0, 200.0, 5.0),
        _bench(b / "lq_regret/ofu/env/nonprivate/seed1.tsv", 8.0, 210.0, 7.0),
        _bench(b / "pe_batch/bundles/b000-10sims.tsv", 20.0, 150.0, 18.0),
        _bench(b / "pe_batch/bundles/b001-5sims.tsv", 15.0, 160.0, 14.0),
    ]
    df = runtime_table(paths)
    assert list(df["experiment"]) == ["lq_regret"] * 2 + ["pe_batch"] * 2
    assert list(df["sims"]) == [1, 1, 10, 5]
    s = summary(df).set_index("experiment")
    assert s.loc["pe_batch", "jobs"] == 2 and s.loc["pe_batch", "sims"] == 15
    assert s.loc["pe_batch", "wall_s_per_sim"] == pytest.approx(35.0 / 15)
    res = measured_resources(df)
    assert res["pe_batch"]["seconds"] == pytest.approx(35.0 / 15, abs=0.01)
    assert res["lq_regret"]["seconds"] == pytest.approx(7.0)
    # slowest simulation x 3, in minutes, at least 2; per simulation for bundles
    assert res["lq_regret"]["runtime"] == 2 and res["pe_batch"]["runtime"] == 2
    assert res["lq_regret"]["mem_mb"] == 400  # 210 MB x 1.5, rounded up to 100 MB


def test_figure_catalog_resolves_and_is_light():
    from dprl.analysis.figures import all_figures

    figs = all_figures()
    assert len(figs) >= 20
    for fig in figs.values():
        assert callable(fig.function()), fig.id
    # what the Snakefile imports must not pull in the plotting and statistics stack
    # (it is parsed by every Snakemake process, two per cluster job)
    code = "import sys, dprl.analysis.figures, dprl.config.load, dprl.runner.bundle; " \
           "print(sorted(m for m in ('matplotlib', 'seaborn', 'scipy.stats', 'pandas') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == "[]", out
