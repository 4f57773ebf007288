"""Rehearsal slices (config `rehearse: true`; dprl.config.rehearse): one Snakemake job per
distinct kind of job, running a bounded slice of its representative with the resources of
the real Snakemake job that runs that representative (rehearsal_request, common.smk), so
that on a cluster the slice is submitted as the real job would be (the SLURM profile: sbatch
with its partition, mem_mb and runtime) and a request too small for the slice itself shows
as the cluster killing it. `dprl rehearse --collect` reads the slices."""

if CFG.rehearse:

    rule rehearse_slice:
        output:
            f"{RES}/rehearsal/slices/{{experiment}}/{{job}}.json",
        log:
            f"{RES}/logs/rehearsal/{{experiment}}/{{job}}.log",
        wildcard_constraints:
            job=".+",
        resources:
            mem_mb=lambda wc: rehearsal_request(wc)["mem_mb"],
            runtime=lambda wc: rehearsal_request(wc)["runtime"],
        params:
            payload=job_payload,
            request=lambda wc: json.dumps(rehearsal_request(wc), sort_keys=True),
            code=lambda wc: code_version_of(wc.experiment),
        message:
            "rehearse {wildcards.experiment}: {wildcards.job}"
        shell:
            "{DPRL} rehearse-slice --spec {params.payload:q} --request {params.request:q} "
            f"--slice {CFG.rehearse_slice} --min-seconds {CFG.rehearse_min_seconds} "
            "--out {output:q} 2> {log:q} || {{ tail -n 1 {log:q} >&2; exit 1; }}"
