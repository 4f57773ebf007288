"""One rule per registered figure (so that each has its own report caption). Each figure
also reads the claims table: the verdicts of the claims it tests (catalog
`FIGURES[fid].claims`) go in its title."""

from dprl.analysis.report_captions import figure_caption

for _fid, _fig in FIGURES.items():

    rule:
        name:
            f"figure_{_fid}"
        input:
            tables=figure_tables(_fig),
            checksums=[sidecar_of(t) for t in figure_tables(_fig)],
            claims=f"{FIG}/claims.csv",
        output:
            pdf=f"{FIG}/{_fid}.pdf",
            png=report(
                f"{FIG}/{_fid}.png",
                caption=f"../report/{_fig.caption}",
                category=_fig.paper,
                labels={"figure": _fid, "claims": ", ".join(_fig.claims) or "none"},
            ),
        log:
            f"{RES}/logs/figures/{_fid}.log",
        localrule: True
        resources:
            mem_mb=1500,
            runtime=5,
        params:
            fid=_fid,
            stem=subpath(output.png, strip_suffix=".png"),
            # what the caption states: seeds and settings of this preset, the claims tested
            caption=figure_caption(_fig, PRESET, EXPERIMENTS),
        message:
            f"figure {_fid}"
        shell:
            "{DPRL} figure --id {params.fid:q} --out {params.stem:q} --claims {input.claims:q} {input.tables:q} 2> {log:q}"
