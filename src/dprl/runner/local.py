"""Run whole experiments in-process, without Snakemake (development and tests).

``python -m dprl.runner.local --config config.yaml --preset smoke --experiment NAME --out DIR``
runs every job of the named experiments (sequentially, skipping results already in
``DIR``), aggregates them into ``DIR/tables``, draws every figure whose tables are all
available into ``DIR/figures`` and writes the claims rows of those experiments to
``DIR/figures/claims.md``. The same functions as the workflow's rules, so numbers are
identical to a Snakemake run.
"""

from __future__ import annotations

import argparse
import logging
import time
from pathlib import Path

import pandas as pd

from dprl.analysis.aggregate import aggregate
from dprl.analysis.integrity import write_sidecar
from dprl.config.load import load_config_file
from dprl.runner.io import atomic_write_text, frame_to_csv
from dprl.runner.run import run_job, setup_logging

log = logging.getLogger("dprl.local")


def run_experiments(config: str, preset: str | None, experiments: list[str] | None, out: str | Path, force: bool = False) -> dict[str, pd.DataFrame]:
    cfg = load_config_file(config, preset)
    out = Path(out)
    names = experiments or list(cfg.experiments)
    unknown = [n for n in names if n not in cfg.experiments]
    if unknown:
        raise SystemExit(f"unknown experiment(s) {unknown}; configured: {sorted(cfg.experiments)}")
    tables = {}
    for name in names:
        exp = cfg.experiments[name]
        t0 = time.perf_counter()
        paths = []
        for i, job in enumerate(exp.jobs, 1):
            path = out / job.path
            paths.append(path)
            if path.exists() and not force:
                continue
            log.info("[%s %d/%d] %s", name, i, len(exp.jobs), job.path)
            run_job(job.spec, path, job.labels)
        digests: dict[str, str] = {}
        df = aggregate(paths, digests)
        atomic_write_text(out / "tables" / f"{name}.csv", frame_to_csv(df))
        write_sidecar(out / "tables" / f"{name}.csv", digests)
        tables[name] = pd.read_csv(out / "tables" / f"{name}.csv")
        log.info("experiment %s: %d jobs, %.1f s", name, len(exp.jobs), time.perf_counter() - t0)
    return tables


def figures_and_claims(tables: dict[str, pd.DataFrame], out: str | Path) -> pd.DataFrame:
    import matplotlib

    matplotlib.use("Agg")
    from dprl.analysis.claims import all_claims, evaluate, to_markdown, COLUMNS
    from dprl.analysis.figures import all_figures

    figdir = Path(out) / "figures"
    figdir.mkdir(parents=True, exist_ok=True)
    for fid, fig in all_figures().items():
        if all(e in tables for e in fig.experiments):
            fig.make(tables, figdir / fid)
            log.info("figure %s", figdir / fid)
    rows = [r for c in all_claims() if any(e in tables for e in c.experiments) for r in evaluate(c, tables)]
    df = pd.DataFrame(rows, columns=COLUMNS)
    atomic_write_text(figdir / "claims.md", to_markdown(df))
    atomic_write_text(figdir / "claims.csv", frame_to_csv(df))
    return df


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--config", default="config.yaml")
    p.add_argument("--preset", default=None)
    p.add_argument("--experiment", action="append", help="repeatable; default: all")
    p.add_argument("--out", required=True)
    p.add_argument("--force", action="store_true", help="rerun jobs whose results exist")
    args = p.parse_args(argv)
    setup_logging()
    tables = run_experiments(args.config, args.preset, args.experiment, args.out, args.force)
    df = figures_and_claims(tables, args.out)
    print(df[["claim", "calibration", "measured", "ci_low", "ci_high", "verdict"]].to_string(index=False))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
