"""Claims table, per-job runtime statistics, the manifest of a run and the report's pages."""


rule claims:
    input:
        tables=[f"{RES}/tables/{e}.csv" for e in EXPERIMENTS],
        checksums=[f"{RES}/tables/{e}.inputs.json" for e in EXPERIMENTS],
    output:
        csv=f"{FIG}/claims.csv",
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
        "{DPRL} claims --out-dir {params.out:q} {input.tables:q} 2>&1 | tee {log:q} >&2"


rule runtimes:
    input:
        # the jobs' result files; BENCHMARK_FILES are the benchmark files of the
        # Snakemake jobs that wrote them (one per simulation, or one per bundle)
        [f"{RES}/{j}" for j in JOBS],
    output:
        table=f"{RES}/tables/job_runtimes.csv",
        png=report(
            f"{FIG}/job_runtimes.png",
            caption="../report/job_runtimes.rst",
            category="runtime",
            labels={"figure": "job_runtimes", "preset": PRESET},
        ),
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
        "{DPRL} runtimes --out {output.table:q} --figure {params.stem:q} "
        "--resources-out {params.resources_out:q} {params.benchmarks:q} 2> {log:q}"


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
        "{DPRL} manifest --out {output:q} --preset {params.preset:q} --jobs-dir {params.jobs_dir:q} "
        "--cores {params.cores:q} --runtimes {input.runtimes:q} --config-hash {params.config_hash:q} 2> {log:q}"


# The report (`snakemake --report report.html`): its landing page is the `report:`
# description in the Snakefile, LANDING_PAGE; the claims table is shown inline as HTML.
LANDING_PAGE = f"{RES}/report/workflow.rst"
ALL_TARGETS += [f"{FIG}/claims.html", LANDING_PAGE]


rule report_pages:
    input:
        claims=rules.claims.output.csv,
        manifest=rules.manifest.output[0],
        template="workflow/report/workflow.rst",
    output:
        html=report(
            f"{FIG}/claims.html",
            caption="../report/claims.rst",
            category="Claims",
            labels={"table": "claims", "preset": PRESET},
        ),
        landing=LANDING_PAGE,
    log:
        f"{RES}/logs/report_pages.log",
    resources:
        mem_mb=500,
        runtime=2,
    message:
        "report pages: the claims table as HTML and the landing page (preset, commit, verdict totals)"
    shell:
        "{DPRL} report-pages --claims {input.claims:q} --manifest {input.manifest:q} --template {input.template:q} "
        "--html {output.html:q} --landing {output.landing:q} 2> {log:q}"


localrules:
    claims,
    runtimes,
    manifest,
    report_pages,
