"""Claims table, per-job runtime statistics and the manifest of a run."""


rule claims:
    input:
        tables=[f"{RES}/tables/{e}.csv" for e in EXPERIMENTS],
        checksums=[f"{RES}/tables/{e}.inputs.json" for e in EXPERIMENTS],
    output:
        csv=report(f"{FIG}/claims.csv", caption="../report/claims.rst", category="claims"),
        md=f"{FIG}/claims.md",
        tex=f"{FIG}/claims.tex",
    log:
        f"{RES}/logs/claims.log",
    resources:
        mem_mb=2000,
        runtime=10,
    params:
        out=subpath(output.csv, parent=True),
    message:
        "claims table: evaluate every registered claim on the aggregated tables"
    shell:
        "{DPRL} claims --out-dir {params.out} {input.tables} 2>&1 | tee {log} >&2"


rule runtimes:
    input:
        # the jobs' result files; BENCHMARK_FILES are the benchmark files of the
        # Snakemake jobs that wrote them (one per simulation, or one per bundle)
        [f"{RES}/{j}" for j in JOBS],
    output:
        table=f"{RES}/tables/job_runtimes.csv",
        png=report(f"{FIG}/job_runtimes.png", caption="../report/job_runtimes.rst", category="runtime"),
        pdf=f"{FIG}/job_runtimes.pdf",
    log:
        f"{RES}/logs/runtimes.log",
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        benchmarks=BENCHMARK_FILES,
        n=len(BENCHMARK_FILES),
        stem=subpath(output.png, strip_suffix=".png"),
        resources_out=lambda wc: f"{RES}/tables/measured_resources.yaml",
    message:
        "per-job runtime and memory statistics from {params.n} benchmark files"
    shell:
        "{DPRL} runtimes --out {output.table} --figure {params.stem} "
        "--resources-out {params.resources_out} {params.benchmarks} 2> {log}"


rule manifest:
    input:
        claims=rules.claims.output.csv,
        runtimes=rules.runtimes.output.table,
        figures=[f"{FIG}/{fid}.png" for fid in FIGURES],
    output:
        f"{FIG}/manifest.json",
    log:
        f"{RES}/logs/manifest.log",
    resources:
        mem_mb=200,
        runtime=2,
    params:
        preset=PRESET,
        jobs_dir=f"{RES}/jobs",
        cores=total_cores,
        config_hash=CONFIG_HASH,
    message:
        "manifest: git commit, config hash, date, wall time, cores"
    shell:
        "{DPRL} manifest --out {output} --preset {params.preset} --jobs-dir {params.jobs_dir} "
        "--cores {params.cores} --runtimes {input.runtimes} --config-hash {params.config_hash} 2> {log}"


localrules:
    claims,
    runtimes,
    manifest,
