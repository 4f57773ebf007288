"""Experiments of the shared privacy mechanisms (``src/dprl/README.md``): ``counter_error``, ``audit``."""

from dataclasses import replace

from dprl.experiments.base import Algorithm, Environment, ExperimentKind, Param, algorithms, environments

_BROKEN = Param("none", choices=("none", "halved", "reused", "unnoised"),
                doc="deliberately broken variant (audit power demonstration only)")

COUNTERS = algorithms(
    Algorithm("laplace_tree", "pure", doc="scalar tree counter, Laplace noise, stream in [0,1] (Vietri et al. 2020 PC(T, ε))",
              label="Laplace tree counter", colour="#9467bd"),
    Algorithm("gaussian_tree_vector", "approx", doc="vector tree counter, Gaussian noise, ℓ2 sensitivity 1",
              label="Gaussian tree counter (vector)", colour="#8c564b"),
    Algorithm("gaussian_tree_matrix", "approx", doc="symmetric-matrix tree counter, Gaussian noise, Frobenius sensitivity 1 (Chowdhury et al. 2021 B1; Zhou 2022)",
              label="Gaussian tree counter (matrix)", colour="#e377c2"),
)

KINDS = [
    ExperimentKind(
        name="counter_error",
        paper="mechanisms",
        run="dprl.experiments.mechanisms.jobs:run_counter_error",
        algorithms=COUNTERS,
        environments=environments(
            Environment("stream", {
                "T": Param(1024, minimum=1, doc="stream length (horizon)"),
                "dim": Param(3, minimum=1, doc="vector length / matrix side (ignored by the scalar counter)"),
                "counters": Param(2000, minimum=1, doc="independent counters simulated together"),
                "rate": Param(0.5, minimum=0.0, maximum=1.0, doc="Bernoulli rate of the stream entries"),
            }, label="counter stream"),
        ),
        settings={
            "beta": Param(0.05, exclusive_minimum=0.0, maximum=0.5, doc="failure probability of the bounds"),
            "checkpoints": Param(40, minimum=2, doc="log-spaced checkpoints recorded"),
        },
        mem_mb=400,
        runtime_min=5,
        work="dprl.experiments.mechanisms.work:counter_error",
        seconds_per_work=1.57e-08,
    ),
    ExperimentKind(
        name="audit",
        paper="mechanisms",
        run="dprl.experiments.mechanisms.jobs:run_audit",
        algorithms=algorithms(*(
            replace(a, params={"broken": _BROKEN}) for a in COUNTERS.values()
        )),
        environments=environments(
            Environment("neighbouring_streams", {
                "T": Param(8, minimum=2, maximum=64, doc="stream length; one user differs at t=1 (in L nodes)"),
                "dim": Param(2, minimum=1, maximum=6, doc="vector length / matrix side"),
            }, label="neighbouring streams"),
        ),
        settings={
            "runs": Param(200000, minimum=1000, doc="mechanism runs per input and per phase (calibration, evaluation)"),
            "alpha": Param(1e-3, exclusive_minimum=0.0, maximum=0.1, doc="Clopper-Pearson level"),
        },
        mem_mb=1200,
        runtime_min=5,
        work="dprl.experiments.mechanisms.work:audit",
        seconds_per_work=2.79e-07,
    ),
]
