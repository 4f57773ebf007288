"""Experiments of Balle, Gomrokchi, Precup (2016), *Differentially Private Policy Evaluation*
(spec ``balle2016-policy-evaluation.md``): ``pe_batch``, ``pe_lambda``, ``pe_audit``, ``pe_exact``.

The DP estimators are (ε, δ)-DP ("approx") under two calibrations: ``paper`` (the spec's
Frobenius constants) and ``tight`` (operator norms; the argument in ``agents/pe/bounds.py``,
checked exactly by ``pe_exact``). Validation (``rules.calibrations``) and the jobs refuse any other.
"""

from dataclasses import replace

from dprl.experiments.base import Algorithm, Environment, ExperimentKind, Param, algorithms, environments

_C = Param(1.0, exclusive_minimum=0.0, doc="c in λ = ||ρ||_∞||Φ||_F² + c·m^p (must be > 0)")
_P = Param(0.5, minimum=0.0, maximum=2.0, doc="p in λ = ||ρ||_∞||Φ||_F² + c·m^p")
_ACCOUNTING = "dprl.experiments.pe.accounting:estimator"
_CALIBRATIONS = "dprl.experiments.pe.rules:calibrations"
DP_LSW = Algorithm("dp_lsw", "approx", doc="LSW + smooth-sensitivity Gaussian output perturbation", label="DP-LSW",
                   colour="#1f77b4", accounting=_ACCOUNTING)
DP_LSL = Algorithm("dp_lsl", "approx", {"c": _C, "p": _P}, doc="LSL + smooth-sensitivity Gaussian output perturbation",
                   label="DP-LSL", colour="#d62728", accounting=_ACCOUNTING)

CHAIN = Environment("chain", {
    "n_states": Param(40, minimum=3, maximum=2000, doc="N: states 0..N-1, N-1 absorbing, N-2 the goal"),
    "p_right": Param(0.5, exclusive_minimum=0.0, maximum=1.0, doc="probability that the evaluated policy moves right"),
    "gamma": Param(0.99, minimum=0.0, maximum=0.999, doc="discount γ (F_max = R_max/(1-γ))"),
    "max_len": Param(200, minimum=1, doc="transitions after which a trajectory is cut"),
}, doc="the chain of the paper's experiments, R_max = 1 on every transition into the goal", label="chain MRP")

# pe_exact's small chains: one declaration per feature map (a string parameter cannot be
# read back from a job's label), named small_chain (identity), small_chain_pairs, small_chain_dense
SMALL_CHAIN_FEATURES = {"small_chain": "identity", "small_chain_pairs": "pairs", "small_chain_dense": "dense"}
SMALL_CHAINS = tuple(
    Environment(name, {"N": Param(4, minimum=2, maximum=6, doc="N states, the last absorbing (ρ = 0), ρ uniform over the rest")},
                doc=f"a small chain with {feat} features"
                + (" (d = 2 columns, entries uniform in [-1, 1], fixed seed)" if feat == "dense" else "")
                + ": every replacement pair of batches of m trajectories (any visit sets, first-visit returns at the "
                "vertices of [0, F_max]) enumerated",
                label=f"small chain, {feat} features")
    for name, feat in SMALL_CHAIN_FEATURES.items())

_BATCH_GRID = {
    "m_min": Param(10, minimum=1, doc="smallest batch size m"),
    "m_max": Param(10000, minimum=1, doc="largest batch size m (>= m_min); the job samples m_max trajectories"),
    "points_per_decade": Param(3, minimum=1, maximum=20, doc="log-spaced batch sizes per decade of m"),
}

KINDS = [
    ExperimentKind(
        name="pe_batch",
        paper="pe",
        run="dprl.experiments.pe.jobs:run_batch",
        algorithms=algorithms(
            Algorithm("lsw", "none", doc="first-visit MC + least squares with fixed weights ρ", label="LSW"),
            Algorithm("lsl", "none", {"c": _C, "p": _P}, doc="first-visit MC + ridge with weights ρ m_s/m", label="LSL",
                      colour="#777777"),
            DP_LSW,
            DP_LSL,
            Algorithm("gs_dp_lsl", "approx", {"c": _C, "p": _P}, doc="LSL + global-sensitivity Gaussian output perturbation",
                      label="GS-DP-LSL", colour="#2ca02c", accounting=_ACCOUNTING),
        ),
        environments=environments(CHAIN),
        settings={
            **_BATCH_GRID,
            "features": Param("both", choices=("identity", "pairs", "both"),
                              doc="feature maps evaluated on the same batches (identity: d=N; pairs: d=N/2)"),
        },
        doc="RMSE ||V - Φθ||_ρ and noise scale σ_X vs batch size m (nested batches of one sample)",
        mem_mb=600,  # measured peak ~0.18 GB, also at 10^6 trajectories (trajectories are streamed)
        runtime_min=5,
        work="dprl.experiments.pe.work:batch",
        seconds_per_work=1.41e-08,
        settings_rule="dprl.experiments.pe.rules:batch_grid",
        job_rule=_CALIBRATIONS,
    ),
    ExperimentKind(
        name="pe_lambda",
        paper="pe",
        run="dprl.experiments.pe.jobs:run_lambda",
        algorithms=algorithms(
            replace(DP_LSL, params={}, doc="DP-LSL over the (c, p) grid of the settings"),
        ),
        environments=environments(CHAIN),
        settings={
            "m_min": Param(100, minimum=1, doc="smallest batch size m"),
            "m_max": Param(10000, minimum=1, doc="largest batch size m (>= m_min)"),
            "points_per_decade": Param(1, minimum=1, maximum=20, doc="log-spaced batch sizes per decade of m"),
            "features": Param("identity", choices=("identity", "pairs")),
            "log10_c_min": Param(-1.0, minimum=-6.0, maximum=8.0, doc="smallest c = 10^log10_c_min"),
            "log10_c_max": Param(4.0, minimum=-6.0, maximum=8.0, doc="largest c (>= smallest)"),
            "c_points": Param(6, minimum=1, maximum=30, doc="log-spaced values of c"),
            "p_min": Param(0.0, minimum=0.0, maximum=2.0, doc="smallest exponent p"),
            "p_max": Param(1.0, minimum=0.0, maximum=2.0, doc="largest exponent p (>= p_min)"),
            "p_points": Param(5, minimum=1, maximum=30, doc="evenly spaced values of p"),
        },
        doc="DP-LSL RMSE over λ = ||ρ||_∞||Φ||_F² + c·m^p",
        mem_mb=600,
        runtime_min=5,
        work="dprl.experiments.pe.work:lambda_grid",
        seconds_per_work=7.84e-09,
        settings_rule="dprl.experiments.pe.rules:lambda_grid",
        job_rule=_CALIBRATIONS,
    ),
    ExperimentKind(
        name="pe_audit",
        paper="pe",
        run="dprl.experiments.pe.jobs:run_audit",
        algorithms=algorithms(
            # the audits record their own exact ε (no accounting: not refused by the check)
            replace(DP_LSW, doc="DP-LSW on adversarial neighbouring batches", accounting=None),
            replace(DP_LSL, params={"c": Param(10000.0, exclusive_minimum=0.0, doc="c in λ (large c: the return-change pair is nearly tight; small c: the local sensitivity varies most with the counts)"),
                                    "p": Param(0.0, minimum=0.0, maximum=2.0)},
                    doc="DP-LSL on adversarial neighbouring batches", accounting=None),
        ),
        environments=environments(
            Environment("adversarial", {
                "d": Param(2, minimum=1, maximum=16, doc="feature dimension: d non-absorbing states with identity features, ρ = 1/d each"),
                "f_max": Param(1.0, exclusive_minimum=0.0, doc="return bound F_max (changed returns go 0 -> F_max)"),
            }, doc="replacement pairs: a return changed 0 -> F_max (m = 1), every visit count 2 -> 1 (m = 2) and 1 -> 0 (m = 1)",
                label="adversarial MRP"),
        ),
        settings={
            "runs": Param(200000, minimum=1000, doc="mechanism runs per input and per phase (calibration, evaluation)"),
            "alpha": Param(1e-3, exclusive_minimum=0.0, maximum=0.1, doc="Clopper-Pearson level"),
        },
        doc="statistical lower bound on ε of DP-LSW / DP-LSL output perturbation on replacement pairs, correct "
            "and negative controls (local-sensitivity noise, inverted β, the old k cap)",
        mem_mb=800,
        runtime_min=5,
        work="dprl.experiments.pe.work:audit",
        seconds_per_work=1.31e-07,
        job_rule=_CALIBRATIONS,
    ),
    ExperimentKind(
        name="pe_exact",
        paper="pe",
        run="dprl.experiments.pe.jobs:run_exact",
        algorithms=algorithms(
            # no privacy grid: a bound's ratio to the true change does not depend on (ε, δ)
            Algorithm("dp_lsw", "none", doc="DP-LSW's sensitivity bounds (paper, tight, as published, tight halved)",
                      label="DP-LSW", colour=DP_LSW.colour),
            Algorithm("dp_lsl", "none", {"c": _C, "p": _P},
                      doc="DP-LSL's sensitivity bounds (paper, tight, as published, tight halved)", label="DP-LSL",
                      colour=DP_LSL.colour),
        ),
        environments=environments(*SMALL_CHAINS),
        settings={
            "m_max": Param(2, minimum=1, maximum=3, doc="batch sizes m = 1 .. m_max ((9(2m-1))^(N-1) pairs each)"),
        },
        doc="exact check of the sensitivity bounds: max over every replacement pair of the true ||θ_X - θ_X'|| over "
            "each bound at X (<= 1: valid), for paper, tight, the authors' published constants and tight halved",
        mem_mb=800,
        runtime_min=5,
        work="dprl.experiments.pe.work:exact",
        seconds_per_work=2.0e-06,
    ),
]
