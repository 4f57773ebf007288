"""Per-experiment aggregation of job results into one tidy table."""

from __future__ import annotations

import logging
import math
from collections.abc import Iterable
from pathlib import Path

import pandas as pd

from dprl.runner.io import CorruptResultError, read_result

log = logging.getLogger(__name__)

IDENTITY = [
    "experiment", "kind", "algorithm", "alg_label", "environment", "env_label",
    "privacy_label", "epsilon", "delta", "calibration", "seed",
]


class CorruptResultsFound(RuntimeError):
    """Some job results were corrupt; they were moved aside for regeneration."""


def identity_columns(meta: dict) -> dict:
    spec, labels = meta["spec"], meta.get("labels", {})
    priv = spec.get("privacy")
    cols = {
        "experiment": spec["experiment"],
        "kind": spec["kind"],
        "algorithm": spec["algorithm"]["name"],
        "alg_label": labels.get("alg_label", spec["algorithm"]["name"]),
        "environment": spec["environment"]["name"],
        "env_label": labels.get("env_label", spec["environment"]["name"]),
        "privacy_label": labels.get("privacy_label", "nonprivate" if priv is None else ""),
        "epsilon": math.inf if priv is None else float(priv["epsilon"]),
        "delta": math.nan if priv is None or priv.get("delta") is None else float(priv["delta"]),
        "calibration": "none" if priv is None else priv["calibration"],
        "seed": int(spec["seed"]),
    }
    for k, v in spec["algorithm"].items():
        if k != "name":
            cols[f"alg.{k}"] = v if not isinstance(v, (list, dict)) else str(v)
    for k, v in spec["environment"].items():
        if k != "name":
            cols[f"env.{k}"] = v if not isinstance(v, (list, dict)) else str(v)
    return cols


def quarantine(path: Path) -> Path:
    """Move a corrupt result aside so that the next ``snakemake`` run regenerates it."""
    bad = path.with_name(path.name + ".corrupt")
    path.replace(bad)
    return bad


def aggregate(paths: Iterable[str | Path]) -> pd.DataFrame:
    """Concatenate job results with their identity columns.

    Every file is verified (checksum footer); all corrupt files are moved aside to
    ``<name>.corrupt`` and reported together in one :class:`CorruptResultError`, so a
    rerun of the workflow regenerates exactly those jobs.
    """
    frames, bad = [], []
    for p in map(Path, paths):
        try:
            df, meta = read_result(p)
        except CorruptResultError as err:
            if p.exists():
                quarantine(p)
            bad.append(str(err))
            continue
        ident = identity_columns(meta)
        n = len(df)
        head = pd.DataFrame({k: [v] * n for k, v in ident.items()})
        frames.append(pd.concat([head, df.reset_index(drop=True)], axis=1))
    if bad:
        raise CorruptResultsFound(
            f"aggregation found {len(bad)} corrupt result file(s) and moved them aside to *.corrupt; "
            "rerun snakemake to regenerate them:\n  " + "\n  ".join(bad)
        )
    if not frames:
        return pd.DataFrame(columns=IDENTITY)
    out = pd.concat(frames, ignore_index=True, sort=False)
    return out.sort_values(["alg_label", "env_label", "privacy_label", "seed"], kind="stable").reset_index(drop=True)
