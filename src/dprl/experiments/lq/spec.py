"""Declarations of the LQ experiments (Chowdhury, Zhou, Shroff 2021). Import-light."""

from __future__ import annotations

from dprl.experiments.base import Algorithm, Environment, ExperimentKind, Param, algorithms, environments

PAPER = "lq"

_AGENT_PARAMS = {
    "n_candidates": Param(32, minimum=1, doc="N: candidates of the optimistic oracle (eq. 9; 32: agents/lq/oracle.py)"),
    "alpha": Param(0.1, exclusive_minimum=0.0, maximum=1.0, doc="confidence level α of C_k(α)"),
}

_ALGORITHMS = algorithms(
    Algorithm("ofu_rl", "none", {**_AGENT_PARAMS, "lam": Param(0.1, exclusive_minimum=0.0, doc="ridge λ (H_k = λI)")},
              doc="OFU-RL, Sec. III-A with H_k = λI, L_k = 0", label="OFU-RL"),
    Algorithm("private_ofu_rl", "approx", dict(_AGENT_PARAMS), doc="Private-OFU-RL, Algorithm 1 (two Gaussian tree counters)",
              label="Private-OFU-RL", colour="#1f77b4", accounting="dprl.experiments.lq.accounting:private_ofu_rl",
              baseline="ofu_rl"),
)

_SYSTEM_PARAMS = {
    "horizon": Param(10, minimum=1, doc="episode length H"),
    "c_a": Param(0.8, exclusive_minimum=0.0, maximum=0.999, doc="C_A >= ||A*|| (Assumption 1b)"),
    "c_b": Param(0.6, exclusive_minimum=0.0, maximum=0.999, doc="C_B >= ||B*|| (Assumption 1b)"),
    "noise_radius": Param(0.05, exclusive_minimum=0.0, maximum=0.999, doc="C_w >= ||w|| (Assumption 1d)"),
}

_ENVIRONMENTS = environments(
    Environment("random_lq", {
        "n": Param(2, minimum=1, maximum=20, doc="state dimension"),
        "d": Param(1, minimum=1, maximum=20, doc="control dimension"),
        **_SYSTEM_PARAMS,
    }, doc="seeded random system meeting Assumption 1 (envs.lq.random_system)", label="random LQ"),
    Environment("double_integrator", {
        **_SYSTEM_PARAMS,
        "c_a": Param(0.75, exclusive_minimum=0.0, maximum=0.999, doc="C_A = ||A*||"),
        "c_b": Param(0.4, exclusive_minimum=0.0, maximum=0.999, doc="C_B = ||B*||"),
        "tau": Param(0.5, exclusive_minimum=0.0, maximum=10.0, doc="discretisation step"),
    }, doc="fixed scaled, discretised double integrator (envs.lq.double_integrator)", label="double integrator"),
)

_REGRET_SETTINGS = {
    "episodes": Param(2000, minimum=1, doc="K"),
    "checkpoints": Param(40, minimum=2, maximum=400, doc="log-spaced checkpoints of cumulative regret"),
}

KINDS = [
    ExperimentKind(
        "lq_regret", PAPER, "dprl.experiments.lq.jobs:run_regret", _ALGORITHMS, _ENVIRONMENTS, dict(_REGRET_SETTINGS),
        doc="cumulative exact regret vs K for OFU-RL and Private-OFU-RL (claims C2, C3, C4)", mem_mb=300, runtime_min=5,
        work="dprl.experiments.lq.work:regret", seconds_per_work=1.6e-08, plugins="lq",
        predicted_burn_in="dprl.experiments.lq.regime:burn_in",
    ),
    ExperimentKind(
        "lq_oracle", PAPER, "dprl.experiments.lq.jobs:run_regret", _ALGORITHMS, _ENVIRONMENTS, dict(_REGRET_SETTINGS),
        doc="regret vs the number N of optimistic-oracle candidates", mem_mb=300, runtime_min=5,
        work="dprl.experiments.lq.work:regret", seconds_per_work=2.1e-08,
    ),
    ExperimentKind(
        "lq_audit", PAPER, "dprl.experiments.lq.jobs:run_audit",
        algorithms(Algorithm("private_ofu_counters", "approx", {"alpha": _AGENT_PARAMS["alpha"]},
                             doc="Private-OFU-RL's counters B1 (Gram) and B2 (target)",
                             label="Private-OFU-RL counters", colour="#1f77b4")),
        environments(Environment("audit_stream", {
            "n": Param(2, minimum=1, maximum=6), "d": Param(1, minimum=1, maximum=6),
            "horizon": Param(10, minimum=1), "gamma": Param(1.0, exclusive_minimum=0.0, doc="γ of Assumption 1e"),
            "episodes": Param(8, minimum=1, maximum=64, doc="stream length K (tree of floor(log2 K)+1 levels)"),
        }, doc="neighbouring streams: all-null users vs one maximal user at episode 1", label="audit stream")),
        {"runs": Param(100_000, minimum=1000, doc="runs per input for calibration and again for evaluation"),
         "confidence": Param(1e-3, exclusive_minimum=0.0, maximum=0.5, doc="Clopper-Pearson α"),
         "printed_epsilons": Param([1.0, 4.0, 10.0, 100.0, 1000.0],
                                   doc="ε at which the paper's printed σ's are accounted exactly under replacement "
                                       "(paper calibration jobs; claim C1's printed row)")},
        doc="privacy audit of Private-OFU-RL's two Gaussian tree counters (claim C1)", mem_mb=2000, runtime_min=5,
        work="dprl.experiments.lq.work:audit", seconds_per_work=7.25e-07, plugins="lq", audit=True,
    ),
]
