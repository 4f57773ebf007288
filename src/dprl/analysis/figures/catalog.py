"""Every figure the workflow draws: id, paper, the experiments it needs, the claims it
tests (their verdicts go in its title; report captions read the same ids), and its plot.

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
    """``make(tables, stem, claims)`` writes ``stem.pdf`` and ``stem.png``. ``plot`` names the
    function that draws the figure from the tables and returns it: ``module:function`` under
    ``dprl.analysis.figures``, or ``package.module:function`` in an installed package (a
    plug-in's figure, named as its ``Algorithm(factory=...)`` is: dprl never imports it by
    name); ``claims`` are the ids of the claims it tests; ``caption`` is the report caption
    file under ``workflow/report/`` (default ``<id>.rst``)."""

    id: str
    paper: str
    experiments: tuple[str, ...]
    plot: str
    claims: tuple[str, ...] = ()
    optional: tuple[str, ...] = ()  # tables used when their experiments are in the config

    @property
    def caption(self) -> str:
        return f"{self.id}.rst"

    def function(self):
        module, _, name = self.plot.partition(":")
        # a bare module is one of dprl's figure modules, a dotted path a plug-in's own
        return getattr(importlib.import_module(module if "." in module else f"dprl.analysis.figures.{module}"), name)

    def make(self, tables: Any, stem: Path, claims: Any = None) -> None:
        """Draw through the one plotting entry point (:func:`dprl.analysis.plotting.render`):
        ``claims`` (the claims table, optional) puts this figure's verdicts in its title."""
        from dprl.analysis.plotting import render

        render(self.function(), tables, Path(stem), self.claims, claims)


def _register(*figures: Figure) -> dict[str, Figure]:
    out: dict[str, Figure] = {}
    for fig in figures:
        if fig.id in out:
            raise RuntimeError(f"figure id {fig.id!r} declared twice")
        out[fig.id] = fig
    return out


# figure id -> Figure; ``FIGURES[fid].claims`` are the claim ids the figure tests
FIGURES: dict[str, Figure] = _register(
    # shared mechanisms
    Figure("mechanisms_counter_error", "mechanisms", ("counter_error",), "mechanisms:counter_error", ("M2", "M3")),
    Figure("mechanisms_audit", "mechanisms", ("audit",), "mechanisms:audit", ("M1",), optional=("audit_broken",)),
    # PUCB / private UCB-VI for tabular MDPs (2020)
    Figure("tabular_audit", "tabular", ("tabular_audit",), "tabular:audit", ("V1",)),
    Figure("tabular_regret_loglog", "tabular", ("tabular_regret",), "tabular:regret_loglog", ("V2", "F1"),
           optional=("tabular_regret_eps1",)),
    Figure("tabular_privacy_cost_eps", "tabular", ("tabular_regret",), "tabular:privacy_cost_eps", ("V3",),
           optional=("tabular_regret_eps1", "tabular_hard_cost", "tabular_hard_eps")),
    Figure("tabular_pac_counts", "tabular", ("tabular_pac",), "tabular:pac_counts", ("V5",)),
    Figure("tabular_scaling_S", "tabular", ("tabular_hard_cost",), "tabular:scaling_S", ("V7",),
           optional=("tabular_scaling",)),
    Figure("tabular_mab_pulls", "tabular", ("private_mab",), "tabular:mab_pulls", ("V6",)),
    Figure("tabular_regime", "tabular", ("tabular_regret",), "tabular:regime", ("V2", "V3", "F1"),
           optional=("tabular_regret_eps1",)),
    Figure("tabular_hard_regret", "tabular", ("tabular_hard",), "tabular:hard_regret", ("V8", "V9"),
           optional=("tabular_hard_short",)),
    # every private tabular algorithm (PUCB and the plug-ins beyond the four papers) against
    # the non-private baseline it declares, on garnet and on the Figure 1 family hard at T
    Figure("beyond_regret_comparison", "beyond", ("beyond_regret",), "beyond:regret_comparison",
           optional=("beyond_hard", "beyond_hard_dp")),
    # L3, DP-UCBVI's privacy for free: the seed-paired cost ratio against ε and its crossover
    # ε_c(T) against T (drawn by the plug-in package that declares the claim, from its own fit)
    Figure("beyond_free_threshold", "beyond", ("beyond_free_hard",), "dprl_beyond.figures:free_threshold", ("L3",),
           optional=("beyond_free",)),
    # Private-OFU-RL for LQ control (2021)
    Figure("lq_regret_loglog", "lq", ("lq_regret",), "lq:regret_loglog", ("C2",)),
    Figure("lq_privacy_cost", "lq", ("lq_regret",), "lq:privacy_cost", ("C3", "F2")),
    Figure("lq_oracle_size", "lq", ("lq_oracle",), "lq:oracle_size"),
    Figure("lq_audit", "lq", ("lq_audit",), "lq:audit", ("C1",)),
    Figure("lq_regime", "lq", ("lq_regret",), "lq:regime", ("C2", "C3"), optional=("lq_regime", "lq_regime_eps10", "lq_regime_long")),
    # private RL in linear mixture MDPs (2022)
    Figure("linmix_regret_loglog", "linmix", ("linmix_regret",), "linmix:regret_loglog", ("Z2",)),
    Figure("linmix_privacy_cost", "linmix", ("linmix_regret",), "linmix:privacy_cost_fig", ("Z3", "F3"),
           optional=("linmix_regime_eps10",)),
    Figure("linmix_regime", "linmix", ("linmix_regret",), "linmix:regime", ("Z2", "Z3")),
    Figure("linmix_hard_regret", "linmix", ("linmix_hard",), "linmix:hard_regret", ("Z7", "Z8"),
           optional=("linmix_hard_long", "linmix_hard_gaps", "linmix_hard_gaps_private")),
    Figure("linmix_states", "linmix", ("linmix_states",), "linmix:states_fig", ("Z4",)),
    Figure("linmix_actions", "linmix", ("linmix_actions",), "linmix:actions_fig", ("Z5",)),
    Figure("linmix_ldp", "linmix", ("linmix_ldp",), "linmix:ldp_fig", ("Z6",), optional=("linmix_hard_ldp",)),
    Figure("linmix_audit", "linmix", ("linmix_audit",), "linmix:audit_fig", ("Z1",)),
    # private policy evaluation (2016)
    Figure("pe_rmse_loglog", "pe", ("pe_batch",), "pe:rmse_loglog", ("B3",)),
    Figure("pe_noise_scale", "pe", ("pe_batch",), "pe:noise_scale", ("B2", "B4", "F4")),
    Figure("pe_lambda_heatmap", "pe", ("pe_lambda",), "pe:lambda_heatmap", ("B5",)),
    Figure("pe_audit", "pe", ("pe_audit",), "pe:audit", ("B1",)),
    Figure("pe_regime", "pe", ("pe_batch",), "pe:regime", ("B2", "B5")),
)
