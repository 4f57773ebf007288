"""Declarations of the tabular experiments (Vietri, Balle, Krishnamurthy, Wu 2020).

Import-light: no NumPy work here (imported to validate config.yaml).
"""

from __future__ import annotations

from dataclasses import replace

from dprl.experiments.base import Algorithm, Environment, ExperimentKind, Param, algorithms, environments

PAPER = "tabular"

_AGENT_PARAMS = {
    "beta": Param(0.05, exclusive_minimum=0.0, maximum=0.5, doc="failure probability β of the confidence bounds"),
    "bonus_scale": Param(1.0, exclusive_minimum=0.0, doc="multiplier on conf (1 in claim-testing runs)"),
}
UBEV = Algorithm("ubev", "none", dict(_AGENT_PARAMS), doc="UBEV: Algorithms 2-3 with exact counts and E = 0", label="UBEV")
PUCB = Algorithm(
    "pucb", "pure",
    {**_AGENT_PARAMS, "l1_per_step": Param(2, choices=(1, 2), doc="per-step l1 change of one user: 2 (replacement neighbours, correct) or 1 (paper's Claim 1)")},
    doc="PUCB: Algorithm 2 with Laplace tree counters", label="PUCB", colour="#1f77b4",
    accounting="dprl.experiments.tabular.accounting:pucb", baseline="ubev",
)

RIVERSWIM = Environment("riverswim", {"S": Param(4, minimum=2), "H": Param(6, minimum=1)}, doc="RiverSwim chain", label="RiverSwim")
GARNET = Environment(
    "garnet",
    {"S": Param(6, minimum=1), "A": Param(2, minimum=1), "H": Param(4, minimum=1), "branching": Param(2, minimum=1)},
    doc="random Dirichlet MDP drawn from the seed", label="Garnet", rule="dprl.experiments.tabular.rules:garnet",
)
LOWERBOUND = Environment(
    "lowerbound",
    {"n": Param(2, minimum=1), "m": Param(1, minimum=1), "gap": Param(0.2, exclusive_minimum=0.0, maximum=0.5), "H": Param(2, minimum=1)},
    doc="hard class of Figure 1 (I drawn from the seed)", label="lower-bound MDP",
)
LOWERBOUND_HORIZON = Environment(
    "lowerbound_horizon",
    {"n": Param(2, minimum=1), "m": Param(1, minimum=1), "H": Param(2, minimum=1),
     "T": Param(100000, minimum=4, doc="the horizon the instance is tuned to, and the episodes the job runs"),
     "gap_scale": Param(1.0, exclusive_minimum=0.0, doc="c in the gap α'(T) = c·sqrt(n·m/T); needs α' <= 1/2")},
    doc="Figure 1 instance hard at T: gap α'(T) = gap_scale·sqrt(n·m/T) (envs/tabular.py lowerbound_horizon); "
        "a list of T makes the family indexed by the horizon",
    label="lower-bound MDP tuned to T", rule="dprl.experiments.tabular.rules:lowerbound_horizon",
)
MAB = Environment(
    "mab",
    {"k": Param(4, minimum=2), "best_mean": Param(0.6, exclusive_minimum=0.0, maximum=1.0)},
    doc="Bernoulli BAI instance with one best arm and alpha-suboptimal others (alpha grid in settings)", label="bandit",
)

_RUN_SETTINGS = {
    "episodes": Param(10000, minimum=2, doc="T"),
    "checkpoints": Param(40, minimum=2, maximum=400, doc="log-spaced checkpoints of cumulative regret"),
}

KINDS: list[ExperimentKind] = [
    ExperimentKind(
        "tabular_regret", PAPER, "dprl.experiments.tabular.jobs:run_regret",
        # LOWERBOUND: a Figure 1 instance at a fixed gap run to T with checkpoints (tabular_gaps:
        # the worst case over a grid of gaps at each T, V9's minimax rate)
        algorithms(UBEV, PUCB), environments(RIVERSWIM, GARNET, LOWERBOUND), dict(_RUN_SETTINGS),
        doc="cumulative exact regret vs T", mem_mb=600, runtime_min=30,
        work="dprl.experiments.tabular.work:regret", seconds_per_work=2.46e-08, plugins="tabular",
        predicted_burn_in="dprl.experiments.tabular.regime:burn_in",
    ),
    ExperimentKind(
        "tabular_pac", PAPER, "dprl.experiments.tabular.jobs:run_pac",
        algorithms(UBEV, PUCB), environments(LOWERBOUND), dict(_RUN_SETTINGS),
        doc="alpha-suboptimal episodes on Figure 1 instances, alpha = H gap / (4 n)", mem_mb=600, runtime_min=30,
        work="dprl.experiments.tabular.work:regret", seconds_per_work=1.92e-08, plugins="tabular",
        predicted_burn_in="dprl.experiments.tabular.regime:burn_in",
    ),
    ExperimentKind(
        "tabular_hard", PAPER, "dprl.experiments.tabular.jobs:run_hard",
        algorithms(UBEV, PUCB), environments(LOWERBOUND_HORIZON),
        {"checkpoints": Param(10, minimum=2, maximum=400, doc="log-spaced checkpoints of cumulative regret")},
        doc="regret at T on the Figure 1 instance tuned to T (one job per T), Theorem 6", mem_mb=600, runtime_min=30,
        # measured: 1e6 episodes of n=2 m=1 H=2, 2.2 s (UBEV) to 3.7 s (PUCB)
        work="dprl.experiments.tabular.work:hard", seconds_per_work=4.6e-08, plugins="tabular",
        predicted_burn_in="dprl.experiments.tabular.regime:burn_in",
    ),
    ExperimentKind(
        "tabular_scaling", PAPER, "dprl.experiments.tabular.jobs:run_regret",
        algorithms(UBEV, PUCB), environments(GARNET), dict(_RUN_SETTINGS),
        doc="regret at fixed T vs S (privacy cost)", mem_mb=1200, runtime_min=30,
        work="dprl.experiments.tabular.work:regret", seconds_per_work=3.06e-08, plugins="tabular",
        predicted_burn_in="dprl.experiments.tabular.regime:burn_in",
    ),
    ExperimentKind(
        "private_mab", PAPER, "dprl.experiments.tabular.jobs:run_private_mab",
        algorithms(Algorithm("dp_se", "pure", {"beta": Param(0.05, exclusive_minimum=0.0, maximum=0.2499)}, doc="DP successive elimination",
                             label="DP successive elimination", colour="#1f77b4", accounting="dprl.experiments.tabular.accounting:dp_se")),
        environments(MAB),
        {"alphas": Param([0.05, 0.1, 0.2], doc="gaps alpha of the suboptimal arms"), "runs": Param(2000, minimum=1)},
        doc="pulls of alpha-suboptimal arms vs Lemma 8", mem_mb=300, runtime_min=10,
        work="dprl.experiments.tabular.work:private_mab", seconds_per_work=1.27e-06,
        job_rule="dprl.experiments.tabular.rules:private_mab_gaps",
        # gaps α of the suboptimal arms (envs/bandit.py mab(): 0 < α <= best_mean)
        item_params={"alphas": Param(0.1, exclusive_minimum=0.0, maximum=1.0)},
    ),
    ExperimentKind(
        "tabular_audit", PAPER, "dprl.experiments.tabular.jobs:run_audit",
        # the audit records its own exact ε; its jobs are not refused by the accounting check
        algorithms(replace(PUCB, accounting=None)),
        environments(Environment("pucb_counters", {"S": Param(2, minimum=2), "A": Param(1, minimum=1), "H": Param(1, minimum=1), "T": Param(4, minimum=2)},
                                 doc="smallest counter set", label="PUCB counters")),
        {"runs": Param(100000, minimum=1000)},
        doc="audits of PUCB's counters (per counter and whole episode), and of a plug-in's that releases through them",
        mem_mb=2000, runtime_min=10, work="dprl.experiments.tabular.work:audit", seconds_per_work=6.78e-07,
        plugins="tabular", audit=True, plugin_check="dprl.experiments.tabular.jobs:check_audited_plugin",
    ),
]
