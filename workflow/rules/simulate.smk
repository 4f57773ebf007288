"""One simulation job per (experiment, algorithm, environment, privacy, seed)."""


def _kind(wildcards):
    return job_of(wildcards).spec.kind


rule simulate:
    output:
        f"{RES}/jobs/{{experiment}}/{{job}}.csv",
    log:
        f"{RES}/logs/jobs/{{experiment}}/{{job}}.log",
    benchmark:
        f"{RES}/benchmarks/{{experiment}}/{{job}}.tsv"
    params:
        payload=job_payload,
    resources:
        # per experiment kind, measured from the default run's benchmark files
        # (workflow/resources.yaml, written by `dprl runtimes`); the kind's declared
        # values are the fallback
        mem_mb=lambda wc: job_resources(wc)["mem_mb"],
        runtime=lambda wc: job_resources(wc)["runtime"],
    wildcard_constraints:
        job=".+",
    message:
        "simulate {wildcards.experiment}: {wildcards.job}"
    shell:
        "dprl run-job --spec {params.payload:q} --out {output} 2> {log}"
