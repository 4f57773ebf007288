"""The report's landing page and claims page, written from the results of a run.

Snakemake renders the ``report:`` workflow description with Jinja, but its context holds
only ``snakemake.config`` (the raw config, presets unresolved), the report's categories and
files: no results. So the rule ``report_pages`` renders the landing-page template
``workflow/report/workflow.rst`` here, from the run's manifest (preset, git commit, date,
jobs) and claims table (verdict and regime totals), and the Snakefile's ``report:``
directive points at the rendered file. Snakemake's own Jinja pass over it is then a no-op
(:func:`landing_page` refuses output that still holds Jinja syntax).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd
from jinja2 import Environment, StrictUndefined

from dprl.analysis.base import REGIMES, kind_totals, paper_claims, verdict_totals
from dprl.analysis.report_table import claims_html


def regime_totals(df: pd.DataFrame) -> dict[str, int]:
    counts = df["regime"].fillna("n/a").value_counts()
    return {r: int(counts.get(r, 0)) for r in REGIMES}


def landing_context(claims: pd.DataFrame, manifest: dict[str, Any]) -> dict[str, Any]:
    """The values the landing page states, all read from the run's outputs."""
    wall = manifest.get("wall_time_s")
    return {
        "preset": manifest["preset"],
        "commit": manifest["git_commit"],
        "dirty": bool(manifest.get("git_dirty", False)),
        "date": manifest.get("date_utc", "unknown"),
        "jobs": manifest.get("jobs", "unknown"),
        "cores": manifest.get("cores", "unknown"),
        # manifests written before the two were told apart recorded the request only
        "cores_requested": manifest.get("cores_requested", manifest.get("cores", "unknown")),
        "cpus": manifest.get("cpus_available", "unknown"),
        "wall_min": f"{wall / 60:.1f}" if isinstance(wall, (int, float)) else "unknown",
        "config_hash": manifest.get("config_hash", "unknown"),
        # the papers' claims only: the package's own findings are never counted against them
        "n_claims": int(paper_claims(claims)["claim"].nunique()),
        "n_rows": len(paper_claims(claims)),
        "verdicts": verdict_totals(paper_claims(claims)),
        "regimes": regime_totals(paper_claims(claims)),
        "kinds": kind_totals(paper_claims(claims)),
    }


def landing_page(template: str, claims: pd.DataFrame, manifest: dict[str, Any]) -> str:
    """Render the landing-page template (reStructuredText with Jinja placeholders)."""
    env = Environment(undefined=StrictUndefined, trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True)
    text = env.from_string(template).render(**landing_context(claims, manifest))
    # Snakemake renders the description with Jinja again: it must come out unchanged
    if "{{" in text or "{%" in text:
        raise ValueError("rendered landing page still contains Jinja syntax")
    return text


def write_report_pages(claims_csv: str, manifest_json: str, template: str, html_out: str, landing_out: str) -> None:
    from dprl.runner.io import atomic_write_text

    from dprl.analysis.readme_table import read_claims

    claims = read_claims(claims_csv)  # "n/a" (a calibration, a regime) stays text, never NaN
    manifest = json.loads(Path(manifest_json).read_text())
    atomic_write_text(html_out, claims_html(claims, title=f"Claims ({manifest['preset']} preset)"))
    atomic_write_text(landing_out, landing_page(Path(template).read_text(), claims, manifest))
