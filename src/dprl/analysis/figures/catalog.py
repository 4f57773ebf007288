"""Every figure the workflow draws: id, paper, the experiments it needs, and its plot.

Declarations only, so that the Snakefile (parsed once by every Snakemake instance,
including the one inside each cluster job) can list figures without importing
matplotlib, seaborn and SciPy; the plot function is imported when a figure is drawn.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class Figure:
    """``make(tables, stem)`` writes ``stem.pdf`` and ``stem.png``. ``plot`` names the
    function (``module:function`` under ``dprl.analysis.figures``); ``caption`` is the
    report caption file under ``workflow/report/`` (default ``<id>.rst``)."""

    id: str
    paper: str
    experiments: tuple[str, ...]
    plot: str
    optional: tuple[str, ...] = ()  # tables used when their experiments are in the config

    @property
    def caption(self) -> str:
        return f"{self.id}.rst"

    def function(self):
        module, _, name = self.plot.partition(":")
        return getattr(importlib.import_module(f"dprl.analysis.figures.{module}"), name)

    def make(self, tables: Any, stem: Path) -> None:
        self.function()(tables, stem)


FIGURES: tuple[Figure, ...] = (
    # shared mechanisms
    Figure("mechanisms_counter_error", "mechanisms", ("counter_error",), "mechanisms:counter_error"),
    Figure("mechanisms_audit", "mechanisms", ("audit",), "mechanisms:audit", optional=("audit_broken",)),
    # PUCB / private UCB-VI for tabular MDPs (2020)
    Figure("tabular_regret_loglog", "tabular", ("tabular_regret",), "tabular:regret_loglog"),
    Figure("tabular_privacy_cost_eps", "tabular", ("tabular_regret",), "tabular:privacy_cost_eps"),
    Figure("tabular_pac_counts", "tabular", ("tabular_pac",), "tabular:pac_counts"),
    Figure("tabular_scaling_S", "tabular", ("tabular_scaling",), "tabular:scaling_S"),
    Figure("tabular_mab_pulls", "tabular", ("private_mab",), "tabular:mab_pulls"),
    Figure("tabular_regime", "tabular", ("tabular_regret",), "tabular:regime"),
    # Private-OFU-RL for LQ control (2021)
    Figure("lq_regret_loglog", "lq", ("lq_regret",), "lq:regret_loglog"),
    Figure("lq_privacy_cost", "lq", ("lq_regret",), "lq:privacy_cost"),
    Figure("lq_oracle_size", "lq", ("lq_oracle",), "lq:oracle_size"),
    Figure("lq_audit", "lq", ("lq_audit",), "lq:audit"),
    Figure("lq_regime", "lq", ("lq_regret",), "lq:regime", optional=("lq_regime",)),
    # private RL in linear mixture MDPs (2022)
    Figure("linmix_regret_loglog", "linmix", ("linmix_regret",), "linmix:regret_loglog"),
    Figure("linmix_privacy_cost", "linmix", ("linmix_regret",), "linmix:privacy_cost_fig"),
    Figure("linmix_regime", "linmix", ("linmix_regret",), "linmix:regime"),
    Figure("linmix_states", "linmix", ("linmix_states",), "linmix:states_fig"),
    Figure("linmix_actions", "linmix", ("linmix_actions",), "linmix:actions_fig"),
    Figure("linmix_ldp", "linmix", ("linmix_ldp",), "linmix:ldp_fig"),
    Figure("linmix_audit", "linmix", ("linmix_audit",), "linmix:audit_fig"),
    # private policy evaluation (2016)
    Figure("pe_rmse_loglog", "pe", ("pe_batch",), "pe:rmse_loglog"),
    Figure("pe_noise_scale", "pe", ("pe_batch",), "pe:noise_scale"),
    Figure("pe_lambda_heatmap", "pe", ("pe_lambda",), "pe:lambda_heatmap"),
    Figure("pe_audit", "pe", ("pe_audit",), "pe:audit"),
    Figure("pe_regime", "pe", ("pe_batch",), "pe:regime"),
)
