"""Per-job resource use from Snakemake ``benchmark:`` files (wall time, peak memory, CPU),
summarised per experiment. The rules' ``resources:`` are set from these measurements.

A job is one Snakemake job: one simulation, or a bundle of ``n`` simulations whose
benchmark file is named ``.../bundles/b<k>-<n>sims.tsv`` (see dprl.runner.bundle)."""

from __future__ import annotations

import io
import logging
import math
import re
from pathlib import Path

import numpy as np

import pandas as pd

from dprl.runner.io import atomic_write_text, frame_to_csv

log = logging.getLogger(__name__)


class BadBenchmark(ValueError):
    """A benchmark file that is missing, empty or cut short (Snakemake writes it after
    the job, not atomically: a full disk leaves it empty or partial)."""

    def __init__(self, path: str | Path, why: str) -> None:
        self.path = str(path)
        super().__init__(f"benchmark file {self.path} is {why}")


def read_benchmark(path: str | Path) -> pd.DataFrame:
    """A Snakemake ``benchmark:`` TSV (a header line, one line per repeat, each ending in a
    newline), or :class:`BadBenchmark` saying what is wrong with it."""
    try:
        raw = Path(path).read_bytes()
    except FileNotFoundError:
        raise BadBenchmark(path, "missing") from None
    if not raw.strip():
        raise BadBenchmark(path, f"empty ({len(raw)} bytes)")
    if not raw.endswith(b"\n"):
        raise BadBenchmark(path, "cut short (no final newline)")
    try:
        bench = pd.read_csv(io.BytesIO(raw), sep="\t")
    except (ValueError, pd.errors.ParserError) as err:
        raise BadBenchmark(path, f"unreadable ({err})") from None
    if "s" not in bench.columns or bench.empty:
        raise BadBenchmark(path, "cut short (no measurement line)")
    if not np.isfinite(pd.to_numeric(bench["s"], errors="coerce")).all():
        raise BadBenchmark(path, "cut short (a measurement without its wall time)")
    return bench


def runtime_table(paths: list[str]) -> pd.DataFrame:
    """One row per job: experiment (from ``.../benchmarks/<experiment>/...``), job, sims
    (simulations it ran), wall_s, max_rss_mb, cpu_s.

    A bad benchmark file (:func:`read_benchmark`) leaves its job out and is named in a
    warning: timing is not a result, and its job's result is not touched (rerunning the
    job measures it again)."""
    rows = []
    for p in map(Path, paths):
        try:
            bench = read_benchmark(p)
        except BadBenchmark as err:
            log.warning("%s: its job is left out of the runtime table (rerun the job to measure it again)", err)
            continue
        parts = p.parts
        exp = parts[parts.index("benchmarks") + 1] if "benchmarks" in parts else p.parent.name
        last = bench.iloc[-1]
        m = re.search(r"-(\d+)sims$", p.stem)
        rows.append({
            "experiment": exp,
            "job": str(p),
            "sims": int(m.group(1)) if m else 1,
            "wall_s": float(last["s"]),
            "max_rss_mb": float(last["max_rss"]) if pd.notna(last.get("max_rss")) else float("nan"),
            "cpu_s": float(last["cpu_time"]) if "cpu_time" in bench and pd.notna(last.get("cpu_time")) else float("nan"),
        })
    return pd.DataFrame(rows, columns=["experiment", "job", "sims", "wall_s", "max_rss_mb", "cpu_s"])


def summary(df: pd.DataFrame) -> pd.DataFrame:
    g = df.groupby("experiment")
    out = pd.DataFrame({
        "jobs": g.size(),
        "sims": g["sims"].sum(),
        "wall_s_median": g["wall_s"].median(),
        "wall_s_p95": g["wall_s"].quantile(0.95),
        "wall_s_max": g["wall_s"].max(),
        "wall_s_total": g["wall_s"].sum(),
        "cpu_s_total": g["cpu_s"].sum(),
        "max_rss_mb_max": g["max_rss_mb"].max(),
        "wall_s_per_sim": g["wall_s"].sum() / g["sims"].sum(),
    }).reset_index()
    return out


def write_runtime_outputs(df: pd.DataFrame, out_csv: str, fig_stem: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import seaborn as sns

    atomic_write_text(out_csv, frame_to_csv(summary(df)))
    stem = Path(fig_stem)
    stem.parent.mkdir(parents=True, exist_ok=True)
    fig, axes = plt.subplots(1, 2, figsize=(11, max(3.0, 0.35 * df["experiment"].nunique() + 1.5)))
    order = sorted(df["experiment"].unique())
    # filled outliers: seaborn's hollow ones, in the whiskers' colour, vanish when they sit
    # next to a whisker (the figure check refuses them)
    fliers = {"marker": "o", "markersize": 3.5, "markerfacecolor": "0.25", "markeredgecolor": "0.25"}
    sns.boxplot(data=df, y="experiment", x="wall_s", order=order, ax=axes[0], color="C0", flierprops=fliers)
    axes[0].set_xscale("log")
    axes[0].set_xlabel("wall time per Snakemake job [s]")
    sns.boxplot(data=df, y="experiment", x="max_rss_mb", order=order, ax=axes[1], color="C1", flierprops=fliers)
    axes[1].set_xlabel("peak memory per job [MB]")
    axes[1].set_ylabel("")
    fig.suptitle(f"Per-job wall time and peak memory ({len(df)} Snakemake jobs, {int(df['sims'].sum())} simulations)")
    fig.tight_layout()
    from dprl.analysis.plotting import save

    save(fig, stem)  # no timestamps in the files


def measured_resources(df: pd.DataFrame, mem_margin: float = 1.5, time_margin: float = 3.0) -> dict:
    """Per-experiment ``resources`` of one simulation from measured jobs: peak RSS ×
    ``mem_margin`` (at least 300 MB), the slowest simulation × ``time_margin`` in minutes
    (at least 2), and ``seconds``, the mean wall time of a simulation (what bundles are
    packed by). Margins cover machines slower than the one measured. For bundles the
    per-simulation time is the bundle's mean."""
    out = {}
    for exp, g in df.groupby("experiment"):
        mem = float(np.nanmax(g["max_rss_mb"])) if g["max_rss_mb"].notna().any() else 500.0
        wall = float((g["wall_s"] / g["sims"]).max())
        out[str(exp)] = {
            "mem_mb": int(max(300, math.ceil(mem * mem_margin / 100.0) * 100)),
            "runtime": int(max(2, math.ceil(wall * time_margin / 60.0))),
            "seconds": round(float(g["wall_s"].sum() / g["sims"].sum()), 2),
        }
    return out
