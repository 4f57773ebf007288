# Differentially private RL: one workflow for every figure and table of four papers.
# Usage: `snakemake --cores 8` (default preset), `--config preset=smoke`,
# `--workflow-profile workflow/profiles/slurm` on a SLURM cluster. See README.md.

# Snakemake's own YAML loading keeps the last of two duplicated keys and reports syntax
# errors without a line; read the config files strictly first (file:line:column, exit 2).
from dprl.config.yaml_io import check_config_files_or_exit

check_config_files_or_exit(["config.yaml", *workflow.overwrite_configfiles])


configfile: "config.yaml"


include: "workflow/rules/common.smk"
include: "workflow/rules/simulate.smk"
include: "workflow/rules/aggregate.smk"
include: "workflow/rules/figures.smk"
include: "workflow/rules/report.smk"
include: "workflow/rules/rehearse.smk"


# The report's landing page: workflow/report/workflow.rst rendered with the run's preset,
# commit and verdict totals by rule report_pages (Snakemake's Jinja context for this page
# has the config only, no results).
report: LANDING_PAGE


rule all:
    default_target: True
    input:
        # config `rehearse: True`: the rehearsal slices only (workflow/rules/rehearse.smk)
        REHEARSAL_TARGETS if CFG.rehearse else ALL_TARGETS,
