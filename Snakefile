# Differentially private RL: one workflow for every figure and table of four papers.
# Usage: `snakemake --cores 8` (default preset), `--config preset=smoke`,
# `--workflow-profile workflow/profiles/slurm` on a SLURM cluster. See README.md.

configfile: "config.yaml"


include: "workflow/rules/common.smk"
include: "workflow/rules/simulate.smk"
include: "workflow/rules/aggregate.smk"
include: "workflow/rules/figures.smk"
include: "workflow/rules/report.smk"


rule all:
    input:
        ALL_TARGETS,
    default_target: True
