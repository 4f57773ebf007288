"""Per-experiment aggregation of job results into tidy tables, each result checked
against its job (dprl.analysis.integrity)."""


rule aggregate:
    input:
        jobs=lambda wc: job_files(wc.experiment),
        specs=lambda wc: specs_file(wc.experiment),
    output:
        table=f"{RES}/tables/{{experiment}}.csv",
        # SHA-256 of the table and of each input, checked by figures, claims and `dprl verify`
        inputs=f"{RES}/tables/{{experiment}}.inputs.json",
    log:
        f"{RES}/logs/aggregate/{{experiment}}.log",
    priority: TABLE_PRIORITY
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        n=lambda wc: len(EXPERIMENTS[wc.experiment].jobs),
        preset_dir=subpath(output.table, ancestor=2),  # results/<preset>
    message:
        "aggregate {wildcards.experiment}: verify and concatenate {params.n} job results"
    shell:
        # Checks every input (checksum, header vs path and config); on a bad one, every job
        # file of the preset, naming each bad file on the console (and in the log) and
        # moving it aside so that the rerun regenerates it.
        "{DPRL} aggregate --out {output.table:q} --specs {input.specs:q} --preset-dir {params.preset_dir:q} 2>&1 | tee {log:q} >&2"


# Each table is published beside the figures (committed with them for the default preset),
# so that a reader can audit every regime number and `dprl claims` can rebuild the claims
# table without simulating.
rule publish_table:
    input:
        table=rules.aggregate.output.table,
        inputs=rules.aggregate.output.inputs,
    output:
        table=f"{FIG}/tables/{{experiment}}.csv",
        inputs=f"{FIG}/tables/{{experiment}}.inputs.json",
    log:
        f"{RES}/logs/publish/{{experiment}}.log",
    priority: TABLE_PRIORITY
    resources:
        mem_mb=300,
        runtime=2,
    message:
        "publish the {wildcards.experiment} table beside the figures"
    shell:
        "{DPRL} publish-table --out {output.table:q} {input.table:q} 2> {log:q}"


ALL_TARGETS += [f"{FIG}/tables/{e}.csv" for e in EXPERIMENTS]


localrules:
    aggregate,
    publish_table,
