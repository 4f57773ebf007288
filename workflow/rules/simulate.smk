"""Simulations: one Snakemake job per (experiment, algorithm, environment, privacy,
seed) with `bundle_seconds: 0`, or one per bundle of them (config.yaml: 60 s; the SLURM profile:
120 s)."""

if not BUNDLES:

    rule simulate:
        output:
            f"{RES}/jobs/{{experiment}}/{{job}}.csv",
        log:
            f"{RES}/logs/jobs/{{experiment}}/{{job}}.log",
        benchmark:
            f"{RES}/benchmarks/{{experiment}}/{{job}}.tsv"
        wildcard_constraints:
            job=".+",
        resources:
            # per job (dprl.config.resources, common.smk): measured on the default run
            # (workflow/resources.yaml), projected by the preset's committed rehearsal, or scaled
            mem_mb=lambda wc: job_resources(wc)["mem_mb"],
            runtime=lambda wc: job_resources(wc)["runtime"],
        params:
            payload=job_payload,
            # not used by the command: its change reruns the job (see common.smk)
            code=lambda wc: code_version_of(wc.experiment),
        message:
            "simulate {wildcards.experiment}: {wildcards.job}"
        shell:
            # on failure the log's last line (job, log path, the error's first line) on the console
            "{DPRL} run-job --spec {params.payload:q} --out {output:q} --log {log:q} 2> {log:q} "
            "|| {{ tail -n 1 {log:q} >&2; exit 1; }}"


# A bundle's outputs are the per-simulation result files of its members, so downstream
# rules are the same either way. Rules are generated (one per bundle) because a rule's
# output count is fixed; their names are simulate_<experiment>_b<k>.
for _b in BUNDLES:

    rule:
        name:
            _b.rule_name
        output:
            [f"{RES}/{p}" for p in _b.paths],
        log:
            f"{RES}/logs/jobs/{_b.experiment}/bundles/{_b.tag}.log",
        benchmark:
            bundle_benchmark(_b)
        # longest bundles first (LPT order), so that the last ones to finish are short
        # and few cores idle at the end of a run
        priority: int(_b.seconds)
        resources:
            **bundle_resources(_b),  # common.smk (also what a rehearsal's slice requests)
        params:
            payload=bundle_payload(_b),
            code=code_version_of(_b.experiment),
        message:
            f"simulate {_b.experiment}: bundle {_b.index} of {len(_b.paths)} simulations (~{_b.seconds:.0f} s)"
        shell:
            "{DPRL} run-bundle --specs {params.payload:q} --log {log:q} 2> {log:q} "
            "|| {{ tail -n 1 {log:q} >&2; exit 1; }}"


# Above every bundle's: an experiment's table is made as soon as its last simulation ends,
# between simulations, instead of all 26 after the last one (2026-11-28: 80 s of a default
# run's 172 s tail, one cheap job at a time).
TABLE_PRIORITY = 1 + max((int(_b.seconds) for _b in BUNDLES), default=0)
