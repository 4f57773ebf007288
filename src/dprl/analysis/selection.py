"""Row selections shared by the claims and the figures of every paper: the rows at each
job's last checkpoint, and the seed-paired privacy cost (private minus non-private result
of the same seed, which saw the same instance and environment uniforms: common random
numbers).

One job of an aggregated table is one ``(alg_label, env_label, privacy_label, seed)``
(:data:`JOB_KEYS`, the order :func:`dprl.analysis.aggregate.aggregate` sorts by).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pandas as pd

from dprl.experiments.registry import declared, plugins

JOB_KEYS = ("alg_label", "env_label", "privacy_label", "seed")


def present_tables(tables: Mapping[str, pd.DataFrame], names: Sequence[str]) -> list[tuple[str, pd.DataFrame]]:
    """``(name, table)`` of each of ``names`` (in that order) that the run produced with rows:
    the optional tables a claim or figure reads beside its main one (a preset may not run them)."""
    return [(name, df) for name in names if (df := tables.get(name)) is not None and not df.empty]


def stacked_final_rows(tables: Mapping[str, pd.DataFrame], names: Sequence[str]) -> pd.DataFrame:
    """The :func:`final_rows` of each present table of ``names``, stacked: one grid split
    across experiments (e.g. the long horizons of some algorithms only). Each table's jobs are
    told apart within it, since two experiments may label different jobs alike."""
    parts = [final_rows(df) for _, df in present_tables(tables, names)]
    return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()


def final_rows(df: pd.DataFrame, step: str = "episode", keys: Sequence[str] = JOB_KEYS) -> pd.DataFrame:
    """Rows at each job's last checkpoint (largest ``step``), in table order.

    ``keys`` identify a job; rows whose keys are missing (NaN) are dropped, as in a pandas
    ``groupby``. Raises ``KeyError`` naming the missing columns."""
    missing = [c for c in (step, *keys) if c not in df.columns]
    if missing:
        raise KeyError(f"final_rows: table has no column(s) {missing}")
    last = df.groupby(list(keys))[step].transform("max")
    return df[df[step] == last]


def paired_cost(private: pd.DataFrame, baseline: pd.DataFrame, on: Sequence[str], baseline_column: str,
                value: str = "regret") -> pd.DataFrame:
    """``private`` rows (order kept) joined to the ``baseline`` row with the same ``on``
    keys (inner join: unpaired rows dropped), with the baseline's ``value`` as
    ``baseline_column`` and ``cost = value − baseline_column``.

    Raises ``pandas.errors.MergeError`` when a key matches more than one baseline row (the
    pairing would be ambiguous)."""
    base = baseline[[*on, value]].rename(columns={value: baseline_column})
    out = private.merge(base, on=list(on), how="inner", validate="many_to_one")
    out["cost"] = out[value] - out[baseline_column]
    return out


def privacy_costs(df: pd.DataFrame, on: Sequence[str], value: str = "regret") -> pd.DataFrame:
    """Every private algorithm's rows paired by ``on`` with its declared non-private baseline
    (``Algorithm.baseline``: PUCB with UBEV, Private-OFU-RL with OFU-RL, a plug-in with the
    one it names) in the same table: :func:`paired_cost` per algorithm, with the baseline's
    name in ``baseline`` and its ``value`` in ``regret_baseline``. Algorithms without a
    baseline, or whose baseline did not run, give no rows."""
    baselines = declared("algorithms", "baseline")
    parts = []
    for alg, g in df.groupby("algorithm", sort=True):
        base = baselines.get(alg, "")
        ref = df[df["algorithm"] == base] if base else df.iloc[:0]
        if len(ref):
            parts.append(paired_cost(g, ref, on, "regret_baseline", value).assign(baseline=base))
    if not parts:
        return df.iloc[:0].assign(regret_baseline=pd.Series(dtype=float), cost=pd.Series(dtype=float),
                                  baseline=pd.Series(dtype=str))
    return pd.concat(parts, ignore_index=True)


def builtin_or_plugin(df: pd.DataFrame) -> pd.Series:
    """A grouping key per row: ``""`` for every built-in algorithm (a paper's rows pool its
    own algorithms or mechanisms; also a table without an ``algorithm`` column), the name for
    a plug-in (its rows are its own)."""
    if "algorithm" not in df:
        return pd.Series("", index=df.index)
    return df["algorithm"].where(df["algorithm"].isin(list(plugins())), "")


def privacy_cost(df: pd.DataFrame, final: bool = False) -> pd.DataFrame:
    """Each private algorithm's regret minus its declared baseline's (PUCB: UBEV,
    Private-OFU-RL: OFU-RL, the VI family: UCRL-VTR, a plug-in: the one it names), paired by
    environment and seed (common random numbers: both see the same instance and noise):
    :func:`privacy_costs`. At every checkpoint, paired by episode too; with ``final``, at
    each job's last checkpoint only (a baseline run to its own horizon still pairs). The one
    definition every paper's claims and figures use."""
    if final:
        return privacy_costs(final_rows(df), ["env_label", "seed"])
    return privacy_costs(df, ["env_label", "seed", "episode"])
