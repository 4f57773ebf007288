"""``dprl`` command line: what the Snakemake rules call, usable without Snakemake.

Subcommands:
  validate   check config.yaml and print the job counts per experiment, and the regime each
             private setting of a rate experiment is predicted to reach at its horizon
  jobs       list job result paths (relative to results/<preset>/)
  run-job    run one job (by --spec JSON or by --job path in --config) and write its result
  run-bundle run several jobs in one process (a Snakemake job of a bundled workflow)
  rehearse   time a slice of every distinct kind of job of a preset, project it to its
             horizon, compare with the workflow's requests (non-zero exit naming a job over);
             --collect: the slices the workflow ran (config rehearse: true, e.g. on SLURM)
  rehearse-slice  run one rehearsal slice (the workflow's rule rehearse_slice)
  parts      a preset cut into parts (by paper or experiment): CPU-hours, claims decided,
             the Snakemake targets that run (and resume) each
  verify     check every job file and aggregate table of a preset (checksums, spec vs path
             and config, tables vs their inputs); names every bad file
  aggregate  verify and concatenate job results into one tidy table (+ checksums of its inputs)
  figure     draw one registered figure from aggregated tables
  claims     evaluate the claims registry into claims.csv/.md/.tex
  report-pages  the claims table as HTML and the report's landing page (from claims and manifest)
  runtimes   summarise Snakemake benchmark files into a per-job runtime table
  manifest   record git commit, config hash, date, wall time, cores, CPU and its reference speed, and package versions of a run
  readme-table  write (or --check) every generated block of README.md and docs/ from the committed data
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
from pathlib import Path

# One BLAS thread per job: Snakemake runs one job per core, and a fixed thread count
# keeps floating-point reductions (hence results) independent of the machine's cores.
for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMEXPR_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

log = logging.getLogger("dprl.cli")


class _StderrHandler(logging.StreamHandler):
    """A handler writing to whatever ``sys.stderr`` is when a record is emitted, not the stream
    of the first call (a captured stream a test closed would turn every later record into a
    "Logging error")."""

    @property
    def stream(self):  # type: ignore[override]
        return sys.stderr

    @stream.setter
    def stream(self, value) -> None:
        pass


def setup_logging(level: int = logging.INFO) -> None:
    """One stderr handler on the root logger (added once: tests call ``main`` repeatedly)."""
    root = logging.getLogger()
    if not any(getattr(h, "_dprl", False) for h in root.handlers):
        handler = _StderrHandler()
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
        handler._dprl = True  # type: ignore[attr-defined]
        root.addHandler(handler)
    root.setLevel(level)


def _tables(paths: list[str]) -> dict:
    """The aggregate tables, each checked against the checksums recorded when it was
    aggregated (its own and its inputs'); a bad table is moved aside so that the next
    run re-aggregates it."""
    import pandas as pd

    from dprl.analysis.integrity import IntegrityError, check_table, inputs_unreachable, quarantine_all

    problems = []
    for p in paths:
        bad = check_table(p)
        if bad and inputs_unreachable(p):
            raise IntegrityError([f"{p}: none of its recorded inputs exists from {Path.cwd()}; run from the "
                                  "workflow directory (the paths its checksums record are relative to it)"],
                                 "table check (nothing moved)")
        if bad:
            quarantine_all(Path(p).parent.parent, [Path(p)])
        problems += bad
    if problems:
        raise IntegrityError(problems, "table check (moved the bad tables aside to *.corrupt; rerun snakemake to re-aggregate)")
    return {Path(p).stem: pd.read_csv(p) for p in paths}


def _config_from_args(args: argparse.Namespace):
    """The config of ``--config-json`` (what a rule passes: Snakemake's merged config)
    or of ``--config`` (a file)."""
    from dprl.config.load import load_config, load_config_file

    if getattr(args, "config_json", None):
        return load_config(json.loads(args.config_json), args.preset)
    return load_config_file(args.config, args.preset)


def cmd_verify(args: argparse.Namespace) -> int:
    from dprl.analysis.integrity import IntegrityError, verify_jobs, verify_preset

    cfg = _config_from_args(args)
    rep = verify_jobs(cfg) if args.jobs_only else verify_preset(cfg)
    for p in rep.strays:
        log.warning("not a job of the current config (ignored): %s", p)
    summary = f"preset {cfg.preset}: {rep.checked_jobs} job files checked ({rep.missing_jobs} not run yet), {rep.checked_tables} tables checked"
    if rep.problems:
        if args.quarantine:
            from dprl.analysis.integrity import quarantine_all

            quarantine_all(cfg.preset_dir, rep.bad_files)
        hint = "; bad files (and the tables built from them) moved aside to *.corrupt, rerun snakemake to regenerate them" if args.quarantine else "; `dprl verify --quarantine` moves them aside so that snakemake regenerates them"
        what = f"verify ({summary}{hint})"
        raise IntegrityError(rep.problems, what)
    if args.stamp:
        from dprl.runner.io import atomic_write_text

        atomic_write_text(args.stamp, summary + "\n")
    print(f"{summary}: all good")
    return 0


def cmd_validate(args: argparse.Namespace) -> int:
    from dprl.config.load import load_config_file

    from dprl.config.load import read_config
    from dprl.config.privacy_check import check_privacy_accounting

    from dprl.config.resources import preset_resources
    from dprl.config.load import ConfigError

    try:
        cfg = load_config_file(args.config, args.preset)
        check_privacy_accounting(read_config(args.config), cfg.preset)  # accounted ε <= nominal ε, every preset
    except (RecursionError, MemoryError) as err:  # reading bounds both (yaml_io); a hostile file is still one line
        raise ConfigError(f"{args.config}: {type(err).__name__} while validating; the file is nested too deeply or too large") from None
    from dprl.analysis.predicted_regime import regime_lines

    # job-hours: what the workflow requests by (dprl.config.resources): the default run's
    # measurements, a committed rehearsal's projections, or the work models' scaling
    hours = preset_resources(cfg.preset, args.config, args.resources)
    total, total_h = 0, 0.0
    for name, exp in cfg.experiments.items():
        h = hours.get(name, {}).get("hours", float("nan"))
        how = {"model": " (work model only: nothing of this kind measured)",
               "rehearsed": " (projected by the rehearsal)"}.get(hours.get(name, {}).get("source", ""), "")
        print(f"{name:24s} {exp.kind.paper:10s} {len(exp.jobs):6d} jobs {h:9.2f} h{how}")
        # the regime each private setting reaches at this horizon, predicted (docs/regimes.md)
        for line in regime_lines([j.spec for j in exp.jobs]):
            print(line)
        total += len(exp.jobs)
        total_h += 0.0 if h != h else h
    from dprl.analysis.doc_blocks import rehearsal_provenance

    rehearsed = sum(r.get("source") == "rehearsed" for r in hours.values())
    record = rehearsal_provenance(cfg.figures_dir, cfg.preset) if rehearsed else None
    src = (f"; {rehearsed} experiments projected by the committed rehearsal, measured at "
           f"{str(record['measured_at_commit'])[:7]}" if record else "")
    print(f"{'total':24s} {'':10s} {total:6d} jobs {total_h:9.2f} h (preset {cfg.preset}; estimated CPU-hours{src})")
    return 0


def cmd_rehearse(args: argparse.Namespace) -> int:
    from dprl.config.resources import preset_resources
    from dprl.config.load import load_config_file
    from dprl.config.load import ConfigError
    from dprl.config.rehearse import RehearsalFailed, per_experiment, problems, rehearse, write_provenance, write_table

    preset = args.preset or load_config_file(args.config).preset
    out = args.out or f"results/{preset}/rehearsal.csv"
    if args.update and (args.collect or not args.experiment or not Path(out).is_file()):
        raise ConfigError(f"--update re-measures --experiment locally into an existing --out table ({out}); "
                          "not with --collect (its per-job table is the whole workflow's)")
    # what `dprl validate` estimates and the workflow requests now (a committed rehearsal's
    # projections, if any: read before `out` may replace it), and the work models' estimate
    validate_h = {e: r["hours"] for e, r in preset_resources(preset, args.config, args.resources).items()}
    model_h = {e: r["hours"] for e, r in preset_resources(preset, args.config, args.resources, rehearsed=False).items()}
    missing: list[str] = []
    if args.collect:  # the slices the workflow ran (config `rehearse: true`), e.g. through the SLURM profile
        from dprl.config.rehearse import collect

        table, real_jobs, missing = collect(preset, args.config, args.resources, args.results, args.experiment or ())
        write_table(real_jobs, out[: -len(".csv")] + "_jobs.csv" if out.endswith(".csv") else out + ".jobs")
    else:
        table = rehearse(preset, args.config, args.resources, args.slice, args.workers, args.experiment or (), args.min_seconds)
    how = "slices run by the workflow (`--config rehearse=true`)" if args.collect else f"local processes, slice {args.slice}"
    if args.update:  # re-measure --experiment only, keep the committed table's other rows
        from dprl.config.rehearse import record_update, replace_experiments

        import pandas as pd

        committed = pd.read_csv(out)
        write_table(replace_experiments(committed, table, list(load_config_file(args.config, preset).experiments)), out)
        record_update(out, sorted(set(table["experiment"])), how, table.attrs.get("commits", ()))
    else:
        write_table(table, out)
        write_provenance(out, preset, how, table.attrs.get("commits", ()))
    if table.empty:
        for line in missing:
            print(f"over: {line}", file=sys.stderr)
        raise RehearsalFailed(missing or ["no job rehearsed"])
    summary = per_experiment(table, validate_h, model_h)
    for r in summary.itertuples(index=False):
        default = f" (default run measured {r.measured_default_mean_s:.2f} s: x{r.default_ratio:.2f})" if preset == "default" else ""
        print(f"{r.experiment:24s} {r.jobs:6d} jobs projected {r.projected_h:9.3f} h   validate {r.validate_h:9.3f} h   "
              f"ratio {r.ratio:6.2f}   work model {r.model_h:9.3f} h   mean job {r.projected_mean_s:8.2f} s{default}")
    print(f"{'total':24s} {summary.jobs.sum():6d} jobs projected {summary.projected_h.sum():9.3f} h   validate "
          f"{summary.validate_h.sum():9.3f} h   work model {summary.model_h.sum():9.3f} h (preset {preset}; {how}; table {out})")
    bad = missing + problems(real_jobs if args.collect else table, args.config)
    if bad:
        for line in bad:
            print(f"over: {line}", file=sys.stderr)
        raise RehearsalFailed(bad)
    return 0


def cmd_parts(args: argparse.Namespace) -> int:
    from dprl.analysis.parts import preset_parts, targets
    from dprl.config.load import ConfigError, load_config_file

    cfg = load_config_file(args.config, args.preset)
    ps = preset_parts(cfg.preset, args.by, args.config, args.resources)
    if args.targets:
        chosen = [p for p in ps if p.name == args.targets]
        if not chosen:
            raise ConfigError(f"--targets {args.targets}: no such part by {args.by}; parts: {', '.join(p.name for p in ps)}")
        print(" ".join(targets(cfg.preset_dir, chosen[0])))
        return 0
    run, config = "snakemake --workflow-profile workflow/profiles/slurm", f"--config preset={cfg.preset}"
    # the targets before --config: Snakemake reads every word after it as a key=value override
    print(f"preset {cfg.preset} by {args.by}: run (and, after an interruption, resume) a part with\n"
          f"  {run} $(dprl parts --preset {cfg.preset} --by {args.by} --targets PART) {config}\n"
          f"then everything else (figures, claims) with `{run} {config}`; hours: `dprl validate`'s estimate\n")
    print(f"{'part':24s} {'exps':>4s} {'jobs':>6s} {'CPU-h':>9s}  decides | with other parts | adds rows to")
    for p in ps:
        others = ", ".join(f"{c} (+{'+'.join(q)})" for c, q in p.with_others.items())
        print(f"{p.name:24s} {len(p.experiments):4d} {p.jobs:6d} {p.hours:9.2f}  {' '.join(p.decides) or '-'} | "
              f"{others or '-'} | {' '.join(p.adds_rows) or '-'}")
    print(f"{'total':24s} {sum(len(p.experiments) for p in ps):4d} {sum(p.jobs for p in ps):6d} "
          f"{sum(p.hours for p in ps):9.2f}")
    return 0


def cmd_rehearse_slice(args: argparse.Namespace) -> int:
    from dprl.config.rehearse import run_slice

    rec = run_slice(_json_payload(args.spec, "--spec"), args.slice, args.min_seconds,
                    _json_payload(args.request, "--request"), args.out)
    m = rec["measurement"]
    log.info("rehearsal slice: %s = %d of %d in %.3g s, peak %.0f MB; granted %s", m["horizon_key"] or "whole job",
             m["n2"], m["horizon"], m["t2"], m["rss_mb"], rec["granted"] or "(not a SLURM job)")
    return 0


def cmd_jobs(args: argparse.Namespace) -> int:
    from dprl.config.load import load_config_file

    cfg = load_config_file(args.config, args.preset)
    for path, job in cfg.jobs.items():
        if args.experiment in (None, job.spec.experiment):
            print(path)
    return 0


def _json_payload(text: str, option: str):
    """``text`` parsed as JSON (``NaN`` and ``Infinity`` parse too: the payload check
    refuses them with their key), or a :class:`ConfigError` naming ``option``."""
    from dprl.config.load import ConfigError

    try:
        return json.loads(text)
    except json.JSONDecodeError as err:
        raise ConfigError(f"{option}: not valid JSON ({err})") from None


def _run_or_report(spec, out: str, labels: dict, log_path: str | None, what: str = "") -> int:
    """Run one job; if it fails, its traceback (for the job log) and then one line naming
    the job, its log and the error's first line: the workflow rule copies that last line to
    the console, where a plug-in's error (a float policy, an action out of range) would
    otherwise show only as the rule's failure. 0, or 1 on failure."""
    import traceback

    from dprl.config.load import ConfigError
    from dprl.experiments.plugins import first_line
    from dprl.experiments.run import run_job
    from dprl.runner.io import storage_error

    try:
        run_job(spec, out, labels)
    except Exception as err:
        if isinstance(err, ConfigError) or storage_error(err) is not None:
            raise  # main's one-line errors
        traceback.print_exc()
        where = f", log {log_path}" if log_path else ""
        print(f"dprl: error: job {out}{what} failed{where}: {first_line(err)}", file=sys.stderr, flush=True)
        return 1
    return 0


def cmd_run_job(args: argparse.Namespace) -> int:
    if args.spec:
        from dprl.config.job_spec import check_job_spec

        # the same checks as a job expanded from config.yaml, before anything runs or is written
        spec, labels = check_job_spec(_json_payload(args.spec, "--spec"))
        out = args.out
    else:
        from dprl.config.load import load_config_file

        cfg = load_config_file(args.config, args.preset)
        if args.job not in cfg.jobs:
            raise SystemExit(f"no job {args.job!r} in {args.config} (preset {cfg.preset}); see `dprl jobs`")
        job = cfg.jobs[args.job]
        spec, labels = job.spec, job.labels
        out = args.out or f"{cfg.preset_dir}/{job.path}"
    if not out:
        raise SystemExit("--out is required with --spec")
    return _run_or_report(spec, out, labels, args.log)


def cmd_run_bundle(args: argparse.Namespace) -> int:
    import time

    from dprl.config.job_spec import check_job_spec
    from dprl.config.load import ConfigError

    members = _json_payload(args.specs, "--specs")
    if not isinstance(members, list):
        raise ConfigError(f"--specs: must be a JSON list of {{spec, labels, out}}, got {type(members).__name__}")
    # check every member (as run-job --spec does) before running any, so a bad payload
    # fails before simulating
    todo = []
    for i, m in enumerate(members):
        try:
            spec, labels = check_job_spec(m)
            if not isinstance(m.get("out"), str):
                raise ConfigError("out: missing (the member's result path)")
        except ConfigError as err:
            raise ConfigError(f"--specs[{i}]: {err}") from None
        todo.append((spec, labels, m["out"]))
    t0 = time.perf_counter()
    for i, (spec, labels, out) in enumerate(todo, 1):
        if _run_or_report(spec, out, labels, args.log, f" (simulation {i} of {len(todo)} of the bundle)"):
            return 1
        el = time.perf_counter() - t0
        log.info("bundle: %d/%d simulations done, %.1f s, %.2f simulations/min", i, len(todo), el, 60 * i / el)
    return 0


def cmd_aggregate(args: argparse.Namespace) -> int:
    from dprl.analysis.aggregate import aggregate
    from dprl.runner.io import atomic_write_text, frame_to_csv

    from dprl.analysis.integrity import write_sidecar

    paths = list(args.inputs)
    if args.input_list:
        paths += [line.strip() for line in Path(args.input_list).read_text().splitlines() if line.strip()]
    expected = None
    if args.specs:
        # {path relative to the preset directory: {spec, labels}} of the experiment's jobs
        specs = json.loads(Path(args.specs).read_text())
        expected = {f"{args.preset_dir}/{rel}": member for rel, member in specs.items()}
        if not paths:
            paths = sorted(expected)
    digests: dict[str, str] = {}
    df = aggregate(paths, digests, expected, args.preset_dir)
    atomic_write_text(args.out, frame_to_csv(df))
    write_sidecar(args.out, digests)
    log.info("aggregated %d job files into %s (%d rows)", len(paths), args.out, len(df))
    return 0


def cmd_figure(args: argparse.Namespace) -> int:
    import matplotlib

    matplotlib.use("Agg")
    from dprl.analysis.figures import all_figures

    fig = all_figures()[args.id]
    stem = Path(args.out)
    stem.parent.mkdir(parents=True, exist_ok=True)
    from dprl.analysis.readme_table import read_claims

    claims = read_claims(args.claims) if args.claims else None  # verdicts for the figure's title
    fig.make(_tables(args.tables), stem, claims)
    for suffix in (".pdf", ".png"):
        if not stem.with_suffix(suffix).exists():
            raise SystemExit(f"figure {args.id} did not write {stem.with_suffix(suffix)}")
    log.info("figure %s written to %s.{pdf,png}", args.id, stem)
    return 0


def cmd_claims(args: argparse.Namespace) -> int:
    from dprl.analysis.burn_in import burn_in_check
    from dprl.analysis.claims import claims_table, to_latex, to_markdown
    from dprl.runner.io import atomic_write_text

    tables = _tables(args.tables)
    df = claims_table(tables)
    out = Path(args.out_dir)
    # floats in their shortest exact form (repr): ε = 0.1 reads 0.1, not 0.10000000000000001
    atomic_write_text(out / "claims.csv", df.to_csv(index=False, lineterminator="\n"))
    atomic_write_text(out / "claims.md", to_markdown(df, burn_in_check(tables)))
    atomic_write_text(out / "claims.tex", to_latex(df))
    counts = df["verdict"].value_counts().to_dict()
    log.info("claims table: %d rows %s", len(df), counts)
    return 0


def cmd_publish_table(args: argparse.Namespace) -> int:
    from dprl.analysis.integrity import publish_table

    publish_table(args.table, args.out)
    log.info("table %s published as %s", args.table, args.out)
    return 0


def cmd_report_pages(args: argparse.Namespace) -> int:
    from dprl.analysis.report_pages import write_report_pages

    write_report_pages(args.claims, args.manifest, args.template, args.html, args.landing)
    return 0


def cmd_runtimes(args: argparse.Namespace) -> int:
    from dprl.analysis.runtimes import runtime_table, write_runtime_outputs

    df = runtime_table(args.benchmarks)
    write_runtime_outputs(df, args.out, args.figure)
    if args.resources_out:
        from dprl.analysis.runtimes import measured_resources
        from dprl.runner.io import atomic_write_text
        import yaml

        atomic_write_text(args.resources_out, yaml.safe_dump(measured_resources(df), sort_keys=True))
    return 0


def cmd_manifest(args: argparse.Namespace) -> int:
    from dprl.analysis.manifest import build_manifest
    from dprl.runner.io import atomic_write_text

    man = build_manifest(args.preset, args.jobs_dir, args.cores, args.runtimes, args.config_hash, args.reference_episodes)
    atomic_write_text(args.out, json.dumps(man, indent=2, sort_keys=True) + "\n")
    return 0


def cmd_readme_table(args: argparse.Namespace) -> int:
    from dprl.analysis.doc_blocks import Sources, update_docs

    changed = update_docs(args.root, Sources(args.root, args.claims, args.manifest), check=args.check)
    if args.check and changed:
        log.error("generated blocks out of date in %s; run `dprl readme-table`", ", ".join(changed))
        return 1
    log.info("generated blocks of README.md and docs/: %s", f"rewrote {', '.join(changed)}" if changed else "up to date")
    return 0


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="dprl", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("-v", "--verbose", action="store_true")
    sub = p.add_subparsers(dest="cmd", required=True)

    def cfg_args(sp: argparse.ArgumentParser) -> None:
        sp.add_argument("--config", default="config.yaml")
        sp.add_argument("--preset", default=None, help="smoke, default or full (default: the config's)")

    sp = sub.add_parser("validate", help="validate config.yaml, count jobs and estimate their CPU-hours")
    cfg_args(sp)
    sp.add_argument("--resources", default="workflow/resources.yaml",
                    help="measured per-simulation resources of the default run (for the CPU-hour estimate)")
    sp.set_defaults(func=cmd_validate)

    sp = sub.add_parser("rehearse", help="time a slice of every distinct kind of job, project it to the full horizon and compare with the workflow's requests")
    cfg_args(sp)
    sp.add_argument("--resources", default="workflow/resources.yaml", help="measured per-simulation resources of the default run")
    sp.add_argument("--slice", type=int, default=20_000, help="horizon units (episodes, runs, ...) of the timed slice (a quarter of it is timed too)")
    sp.add_argument("--min-seconds", type=float, default=2.0, help="the slice grows 4x until t(n2) - t(n1) lasts this long (or is the whole job)")
    sp.add_argument("--workers", type=int, default=1, help="representatives measured at a time (one process each)")
    sp.add_argument("--experiment", action="append", help="only this experiment (repeatable)")
    sp.add_argument("--out", help="the table (CSV, written atomically; default results/<preset>/rehearsal.csv)")
    sp.add_argument("--collect", action="store_true",
                    help="read the slices the workflow ran under `--config rehearse=true` (e.g. with the SLURM profile) "
                         "instead of running them here; also writes <out>_jobs.csv, one row per real Snakemake job")
    sp.add_argument("--results", help="with --collect: the preset's results directory (default: the config's)")
    sp.add_argument("--update", action="store_true",
                    help="with --experiment: replace only these experiments' rows of the --out table (e.g. one "
                         "added to the preset) and record it in <out>.json, keeping the others' measurement")
    sp.set_defaults(func=cmd_rehearse)

    sp = sub.add_parser("parts", help="a preset cut into parts (by paper or experiment): cost, claims decided, targets")
    cfg_args(sp)
    sp.add_argument("--resources", default="workflow/resources.yaml", help="measured per-simulation resources of the default run")
    sp.add_argument("--by", choices=("paper", "experiment"), default="paper")
    sp.add_argument("--targets", metavar="PART", help="print only this part's Snakemake targets (its experiments' tables)")
    sp.set_defaults(func=cmd_parts)

    sp = sub.add_parser("rehearse-slice", help="run one rehearsal slice (what the workflow's rule rehearse_slice calls)")
    sp.add_argument("--spec", required=True, help="JSON {spec, labels} of the representative job")
    sp.add_argument("--request", required=True, help="JSON {name, mem_mb, runtime} of the real Snakemake job that runs it")
    sp.add_argument("--slice", type=int, default=20_000)
    sp.add_argument("--min-seconds", type=float, default=2.0)
    sp.add_argument("--out", required=True)
    sp.set_defaults(func=cmd_rehearse_slice)

    sp = sub.add_parser("verify", help="check every job file and table of a preset")
    cfg_args(sp)
    sp.add_argument("--config-json", help="the config as JSON (instead of --config; what the workflow passes)")
    sp.add_argument("--jobs-only", action="store_true", help="check the job files only, not the tables")
    sp.add_argument("--quarantine", action="store_true", help="move bad files aside (*.corrupt), with the tables built from bad job files, so that snakemake regenerates them")
    sp.add_argument("--stamp", help="on success, write a one-line summary here (for the workflow)")
    sp.set_defaults(func=cmd_verify)

    sp = sub.add_parser("jobs", help="list job paths")
    cfg_args(sp)
    sp.add_argument("--experiment")
    sp.set_defaults(func=cmd_jobs)

    sp = sub.add_parser("run-job", help="run one job")
    cfg_args(sp)
    which = sp.add_mutually_exclusive_group(required=True)  # alone, `dprl run-job` names no job
    which.add_argument("--spec", help="JSON {spec, labels} (what the Snakemake rule passes)")
    which.add_argument("--job", help="job path as listed by `dprl jobs`")
    sp.add_argument("--out")
    log_help = "the job's log file (named in the one-line failure message; the rule redirects stderr to it)"
    sp.add_argument("--log", help=log_help)
    sp.set_defaults(func=cmd_run_job)

    sp = sub.add_parser("run-bundle", help="run several jobs in one process")
    sp.add_argument("--specs", required=True, help="JSON list of {spec, labels, out} (what a bundle rule passes)")
    sp.add_argument("--log", help=log_help)
    sp.set_defaults(func=cmd_run_bundle)

    sp = sub.add_parser("aggregate", help="aggregate job results")
    sp.add_argument("--out", required=True)
    sp.add_argument("--input-list", help="file with one result path per line")
    sp.add_argument("--specs", help="JSON {path: {spec, labels}} of the experiment's jobs (paths relative to --preset-dir): each file's header must match")
    sp.add_argument("--preset-dir", help="results/<preset>: on a bad file, every job file under it is checked and every bad one named and moved aside")
    sp.add_argument("inputs", nargs="*")
    sp.set_defaults(func=cmd_aggregate)

    sp = sub.add_parser("figure", help="draw a figure")
    sp.add_argument("--id", required=True)
    sp.add_argument("--out", required=True, help="output stem (writes .pdf and .png)")
    sp.add_argument("--claims", help="the claims table (claims.csv): the verdicts of the claims the figure tests go in its title")
    sp.add_argument("tables", nargs="+", help="aggregated tables <experiment>.csv")
    sp.set_defaults(func=cmd_figure)

    sp = sub.add_parser("claims", help="build the claims table")
    sp.add_argument("--out-dir", required=True)
    sp.add_argument("tables", nargs="*")
    sp.set_defaults(func=cmd_claims)

    sp = sub.add_parser("publish-table", help="copy a checked aggregate table beside the figures, with its checksum")
    sp.add_argument("--out", required=True, help="<figures>/tables/<experiment>.csv")
    sp.add_argument("table", help="results/<preset>/tables/<experiment>.csv")
    sp.set_defaults(func=cmd_publish_table)

    sp = sub.add_parser("report-pages", help="claims table as HTML and the report's landing page")
    sp.add_argument("--claims", required=True, help="claims.csv (dprl claims)")
    sp.add_argument("--manifest", required=True, help="manifest.json (dprl manifest)")
    sp.add_argument("--template", required=True, help="landing-page template (workflow/report/workflow.rst)")
    sp.add_argument("--html", required=True, help="write the claims table as HTML here")
    sp.add_argument("--landing", required=True, help="write the rendered landing page (reST) here")
    sp.set_defaults(func=cmd_report_pages)

    sp = sub.add_parser("runtimes", help="per-job runtime statistics from benchmark files")
    sp.add_argument("--out", required=True)
    sp.add_argument("--figure", required=True, help="output stem of the runtime figure")
    sp.add_argument("--resources-out", help="write measured per-experiment resources (YAML) here")
    sp.add_argument("benchmarks", nargs="*")
    sp.set_defaults(func=cmd_runtimes)

    sp = sub.add_parser("manifest", help="write the run manifest (commit, config hash, date, wall time, cores)")
    sp.add_argument("--out", required=True)
    sp.add_argument("--preset", required=True)
    sp.add_argument("--jobs-dir", required=True)
    sp.add_argument("--cores", type=int, required=True)
    sp.add_argument("--runtimes", required=True, help="per-job runtime table (dprl runtimes)")
    sp.add_argument("--config-hash", required=True)
    sp.add_argument("--reference-episodes", type=int, default=500_000,
                    help="episodes of the reference workload timed for the machine's speed (0: skip)")
    sp.set_defaults(func=cmd_manifest)

    sp = sub.add_parser("readme-table", help="write every generated block of README.md and docs/ (verdicts, claims, "
                        "the committed run's provenance, full's cost, each experiment's predicted regimes and "
                        "recorded burn-ins) from the committed data")
    sp.add_argument("--root", default=".", help="the repository whose README.md and docs/*.md are written")
    sp.add_argument("--claims", help="claims table (default: ROOT/paper_figures/claims.csv)")
    sp.add_argument("--manifest", help="run manifest (default: ROOT/paper_figures/manifest.json)")
    sp.add_argument("--check", action="store_true", help="only compare; exit status 1 if a block is out of date")
    sp.set_defaults(func=cmd_readme_table)
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    setup_logging(logging.DEBUG if args.verbose else logging.INFO)
    try:
        return args.func(args)
    except Exception as err:
        from dprl.analysis.aggregate import CorruptResultsFound
        from dprl.analysis.integrity import IntegrityError
        from dprl.config.load import ConfigError

        from dprl.config.rehearse import RehearsalFailed

        if isinstance(err, (ConfigError, CorruptResultsFound, IntegrityError, RehearsalFailed)):
            print(f"dprl: error: {err}", file=sys.stderr)
            return 2
        from dprl.runner.io import storage_error

        if (why := storage_error(err)) is not None:  # a full disk is not a bug: no traceback
            print(f"dprl: error: {why}", file=sys.stderr)
            return 2
        raise


if __name__ == "__main__":
    sys.exit(main())
