"""Per-experiment aggregation of job results into one tidy table."""

from __future__ import annotations

import logging
import math
from collections.abc import Iterable
from pathlib import Path

import pandas as pd

from dprl.analysis.integrity import check_job_file, quarantine, quarantine_all, scan_job_files, sha256_file
from dprl.privacy.setting import PrivacySetting

log = logging.getLogger(__name__)

IDENTITY = [
    "experiment", "kind", "algorithm", "alg_label", "environment", "env_label",
    "privacy_label", "epsilon", "delta", "calibration", "seed",
]


class CorruptResultsFound(RuntimeError):
    """Some job results were corrupt; they were moved aside for regeneration."""


def identity_columns(meta: dict) -> dict:
    spec, labels = meta["spec"], meta.get("labels", {})
    priv = None if spec.get("privacy") is None else PrivacySetting.from_mapping(spec["privacy"])
    cols = {
        "experiment": spec["experiment"],
        "kind": spec["kind"],
        "algorithm": spec["algorithm"]["name"],
        "alg_label": labels.get("alg_label", spec["algorithm"]["name"]),
        "environment": spec["environment"]["name"],
        "env_label": labels.get("env_label", spec["environment"]["name"]),
        "privacy_label": labels.get("privacy_label", "nonprivate" if priv is None else ""),
        "epsilon": math.inf if priv is None else priv.epsilon,
        "delta": math.nan if priv is None or priv.delta is None else priv.delta,
        "calibration": "none" if priv is None else priv.calibration,
        "seed": int(spec["seed"]),
    }
    for k, v in spec["algorithm"].items():
        if k != "name":
            cols[f"alg.{k}"] = v if not isinstance(v, (list, dict)) else str(v)
    for k, v in spec["environment"].items():
        if k != "name":
            cols[f"env.{k}"] = v if not isinstance(v, (list, dict)) else str(v)
    return cols


def aggregate(
    paths: Iterable[str | Path],
    digests: dict[str, str] | None = None,
    expected: dict[str, dict] | None = None,
    preset_dir: str | Path | None = None,
) -> pd.DataFrame:
    """Concatenate job results with their identity columns; ``digests`` (if given) gets
    each input's SHA-256 (for the table's sidecar, :func:`dprl.analysis.integrity.write_sidecar`).

    Every file is verified (:func:`dprl.analysis.integrity.check_job_file`): checksum
    footer; the path its stored spec builds must be its own (a result copied over another
    job's is caught); with ``expected`` (path -> ``{spec, labels}`` from the config), the
    header must equal the config's job. If any file is bad, every job file under
    ``preset_dir`` (other experiments too) is checked, so that one run names every bad
    file; all bad files, and the tables built from them, are moved aside to
    ``<name>.corrupt`` and reported together in one :class:`CorruptResultsFound`, so a
    rerun of the workflow regenerates exactly those jobs.
    """
    paths = [Path(p) for p in paths]
    frames, bad, bad_files = [], [], []
    digests = {} if digests is None else digests
    for p in paths:
        problems, got = check_job_file(p, None if expected is None else expected.get(str(p)))
        if expected is not None and str(p) not in expected:
            problems = problems or [f"{p}: not a job of this experiment in the current config"]
        if problems:
            bad += problems
            bad_files.append(p)
            continue
        df, meta = got
        digests[str(p)] = sha256_file(p)
        ident = identity_columns(meta)
        n = len(df)
        head = pd.DataFrame({k: [v] * n for k, v in ident.items()})
        frames.append(pd.concat([head, df.reset_index(drop=True)], axis=1))
    if bad:
        root = Path(preset_dir) if preset_dir is not None else None
        if root is not None:
            mine = {p.relative_to(root / "jobs").parts[0] for p in paths if root / "jobs" in p.parents}
            for f, problems in scan_job_files(root, skip=next(iter(mine)) if len(mine) == 1 else None):
                if f not in bad_files:
                    bad += problems
                    bad_files.append(f)
            quarantine_all(root, bad_files)
        else:
            for p in bad_files:
                quarantine(p)
        raise CorruptResultsFound(
            f"aggregation found {len(bad)} bad result file(s) and moved them aside to *.corrupt "
            "(with the tables built from them); rerun snakemake to regenerate them:\n  " + "\n  ".join(bad)
        )
    if not frames:
        return pd.DataFrame(columns=IDENTITY)
    out = pd.concat(frames, ignore_index=True, sort=False)
    return out.sort_values(["alg_label", "env_label", "privacy_label", "seed"], kind="stable").reset_index(drop=True)
