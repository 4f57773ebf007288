"""Per-experiment aggregation of job results into tidy tables."""


rule aggregate:
    input:
        lambda wc: job_files(wc.experiment),
    output:
        f"{RES}/tables/{{experiment}}.csv",
    log:
        f"{RES}/logs/aggregate/{{experiment}}.log",
    resources:
        mem_mb=1000,
        runtime=5,
    message:
        "aggregate {wildcards.experiment}: verify and concatenate {params.n} job results"
    params:
        n=lambda wc: len(EXPERIMENTS[wc.experiment].jobs),
    shell:
        "dprl aggregate --out {output} {input} 2> {log}"


localrules:
    aggregate,
