"""Declarations of the Zhou (2022) experiments (import-light: no NumPy work here)."""

from dprl.experiments.base import Algorithm, Environment, ExperimentKind, Param, algorithms, environments

_ALPHA = Param(0.05, exclusive_minimum=0.0, maximum=1.0, doc="confidence level α of β_p(α), β_r(α) (Lemma 3.1)")
_LAM = Param(1.0, exclusive_minimum=0.0, doc="ridge parameter λ of the non-private regularizer Z = λI")
_ETA = Param(1.0, exclusive_minimum=0.0, doc="multiplier of OPPO's η = sqrt(2 log|A| / (H² K))")

VI = {"alpha": _ALPHA}
PO = {"alpha": _ALPHA, "eta_scale": _ETA}

_LINOPT = "dprl.experiments.linmix.accounting:linopt"
AGENTS = algorithms(
    Algorithm("ucrl_vtr", "none", {**VI, "lam": _LAM}, "LinOpt-VI-Reg with Z = λI (UCRL-VTR), Alg. 1", label="UCRL-VTR"),
    Algorithm("private_linopt_vi", "approx", VI, "Private-LinOpt-VI: Alg. 1 + central Privatizer (Sec. 6.1), (ε,δ)-JDP",
              label="Private-LinOpt-VI", colour="#1f77b4", accounting=_LINOPT, baseline="ucrl_vtr"),
    Algorithm("ldp_linopt_vi", "approx", VI, "Alg. 1 + local Privatizer (Remark 6.9), (ε,δ)-LDP",
              label="LDP-LinOpt-VI", colour="#2ca02c", accounting=_LINOPT, baseline="ucrl_vtr"),
    Algorithm("oppo", "none", {**PO, "lam": _LAM}, "LinOpt-PO-Reg with Z = λI (OPPO, bandit feedback), Alg. 2",
              label="OPPO", colour="#555555"),
    Algorithm("private_linopt_po", "approx", PO, "Private-LinOpt-PO: Alg. 2 + central Privatizer, (ε,δ)-JDP",
              label="Private-LinOpt-PO", colour="#ff7f0e", accounting=_LINOPT, baseline="oppo"),
    Algorithm("ldp_linopt_po", "approx", PO, "Alg. 2 + local Privatizer (Remark 6.9), (ε,δ)-LDP",
              label="LDP-LinOpt-PO", colour="#d62728", accounting=_LINOPT, baseline="oppo"),
)
_MIXTURE_RULE = "dprl.experiments.linmix.rules:mixture"  # S >= d2: one state per reward cluster

_D1 = Param(2, minimum=1, doc="number of base kernels (transition feature dimension)")

ENVS = environments(
    Environment("mixture", {
        "S": Param(10, minimum=1, doc="number of states (free: d stays fixed; lumpable, so regret cannot depend on S)"),
        "A": Param(3, minimum=1, doc="number of actions"),
        "d1": _D1,
        "d2": Param(2, minimum=1, doc="reward feature dimension = number of state clusters (needs S >= d2)"),
        "H": Param(2, minimum=1, doc="horizon"),
        "concentration": Param(0.5, exclusive_minimum=0.0, doc="Dirichlet concentration inside a target cluster"),
    }, "d1 random base kernels mixed by θ_p in the simplex, lumpable onto d2 clusters (envs/linear_mixture.py)",
        label="linear mixture", rule=_MIXTURE_RULE),
    Environment("spread_mixture", {
        "S": Param(10, minimum=1, doc="number of states (instances paired across S: same θ, cluster kernels and shared rows)"),
        "A": Param(3, minimum=1, doc="number of actions (nested: the instance with A actions contains the one with fewer)"),
        "d1": _D1,
        "d2": Param(2, minimum=1, doc="number of state clusters (reward dimension for rewards=cluster; needs S >= d2)"),
        "H": Param(3, minimum=1, doc="horizon (>= 3 for states after the first to matter)"),
        "concentration": Param(0.5, exclusive_minimum=0.0, doc="Dirichlet concentration of the cluster weights"),
        "mix": Param(0.5, minimum=0.0, maximum=1.0, doc="weight of the per-(s,a) cluster weights (0: lumpable)"),
    }, "non-lumpable mixture with ψ on every state, paired across S and nested in A (envs/linear_mixture.py)",
        label="spread mixture", rule=_MIXTURE_RULE),
    Environment("hard_linear", {
        "d": Param(3, minimum=2, maximum=8, doc="feature dimension (A = 2^(d-1) actions)"),
        "H": Param(3, minimum=1, doc="horizon (S = H + 2)"),
        "K_ref": Param(1000, minimum=1, doc="episode count the gap Δ = sqrt(δ/K_ref)/(4 sqrt 2) is tuned for"),
    }, "hard instance of Zhou, Gu, Szepesvári (2021)", label="hard linear mixture",
        rule="dprl.experiments.linmix.rules:hard_linear"),
    Environment("tabular_as_linear", {
        "S": Param(3, minimum=1, doc="number of states"),
        "A": Param(2, minimum=1, doc="number of actions (d1 = S²A must be <= 4096)"),
        "H": Param(2, minimum=1, doc="horizon"),
    }, "random tabular MDP with one-hot features", label="tabular as linear mixture",
        rule="dprl.experiments.linmix.rules:tabular_as_linear"),
)

# the family hard at K: its own kind only (run_hard reads K and d from it)
HARD_ENVS = environments(
    Environment("hard_linear_horizon", {
        "d": Param(3, minimum=2, maximum=8, doc="feature dimension (A = 2^(d-1) actions)"),
        "H": Param(2, minimum=1, doc="horizon (S = H + 2)"),
        "K": Param(100000, minimum=10, doc="episodes K, and the K the gap Δ = gap_scale·sqrt(δ/K)/(4 sqrt 2) is tuned to"),
        "gap_scale": Param(1.0, exclusive_minimum=0.0, doc="multiplies Δ (1: the paper's construction; larger: a gap "
                                                           "a learner partly resolves within K, still ∝ 1/√K)"),
    }, "the Zhou, Gu, Szepesvári (2021) instance hard at K, run for K episodes (one job per K)",
        label="hard linear mixture tuned to K", rule="dprl.experiments.linmix.rules:hard_linear_horizon")
)

_BURN_IN = "dprl.experiments.linmix.regime:burn_in"  # the burn-in its jobs record, before they run

_REGRET_SETTINGS = {
    "episodes": Param(2000, minimum=2, doc="number of episodes K"),
    "checkpoints": Param(30, minimum=2, doc="log-spaced checkpoints of cumulative regret"),
}

KINDS = [
    ExperimentKind(name, "linmix", "dprl.experiments.linmix.jobs:run_regret", AGENTS, ENVS, dict(_REGRET_SETTINGS), doc, mem_mb=500,
                   runtime_min=20, work="dprl.experiments.linmix.work:regret", seconds_per_work=seconds, plugins=setting,
                   predicted_burn_in=_BURN_IN)
    # plug-ins of the setting join the kinds whose claims apply to any linear-mixture algorithm
    for name, doc, seconds, setting in (
        ("linmix_regret", "regret vs T for the four algorithms, ε/δ grid, both calibrations (Z2, Z3)", 4.69e-09, "linmix"),
        ("linmix_states", "regret at fixed T vs |S| with d fixed, paired instances (Z4)", 5.96e-10, ""),
        ("linmix_actions", "Private-LinOpt-PO regret vs |A| (Z5)", 1.74e-09, ""),
        ("linmix_ldp", "central JDP vs local DP privatizer (Z6)", 1.69e-08, ""),
    )
] + [
    ExperimentKind(
        "linmix_hard", "linmix", "dprl.experiments.linmix.jobs:run_hard", AGENTS, HARD_ENVS,
        {"checkpoints": _REGRET_SETTINGS["checkpoints"]},
        "regret at K on the instance hard at K (one job per K, hard_linear_horizon): the √K rate two-sided (Z7) "
        "and its growth with d (Z8)", mem_mb=500, runtime_min=20,
        # not yet measured: linmix_regret's (the same loop)
        work="dprl.experiments.linmix.work:regret", seconds_per_work=4.69e-09, plugins="linmix",
        predicted_burn_in=_BURN_IN,
    ),
    ExperimentKind(
        name="linmix_audit",
        paper="linmix",
        run="dprl.experiments.linmix.jobs:run_audit",
        algorithms=algorithms(
            Algorithm("central_privatizer", "approx", {}, "the 4H tree counters of Sec. 6.1 as one mechanism (releases after 1..K-1 users)",
                      label="central privatizer", colour="#1f77b4"),
            Algorithm("local_randomizer", "approx", {}, "one user's local Gaussian randomiser (Remark 6.9)",
                      label="local randomizer", colour="#2ca02c"),
        ),
        environments=environments(
            Environment("neighbouring_users", {
                "K": Param(4, minimum=2, maximum=16, doc="users (episodes); the first user differs"),
                "d": Param(2, minimum=1, maximum=3, doc="d1 = d2 of the tiny mixture whose features fix the sensitivities"),
                "H": Param(1, minimum=1, maximum=2, doc="horizon (streams per user = 4H)"),
            }, "hardest neighbouring pair: user 1 at the maximal vs the minimal statistics", label="neighbouring users"),
        ),
        settings={
            "runs": Param(100000, minimum=1000, doc="mechanism runs per input and per phase"),
            "alpha": Param(1e-3, exclusive_minimum=0.0, maximum=0.1, doc="Clopper-Pearson level"),
            "printed_epsilons": Param([1.0, 10.0, 30.0, 100.0, 300.0, 1000.0],
                                      doc="ε at which the paper's printed constants are accounted exactly under "
                                          "replacement (paper calibration jobs; claim Z1's printed row)"),
        },
        mem_mb=1500,
        runtime_min=5,
        work="dprl.experiments.linmix.work:audit",
        seconds_per_work=1.91e-07,
        plugins="linmix",
        audit=True,
    ),
]
