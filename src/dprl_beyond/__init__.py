"""Algorithms beyond dprl's papers, as dprl plug-ins (entry-point group ``dprl.algorithms``).

Import-light: dprl validates configs with these declarations; the agents live in the
modules their factories name.
"""

from dprl.experiments.base import Algorithm, Param

_BETA = {"beta": Param(0.05, exclusive_minimum=0.0, maximum=0.5, doc="failure probability β of the bonus's ι = log(30HSAK/β)")}

DP_UCBVI = Algorithm(
    "dp_ucbvi", "pure", dict(_BETA),
    doc="DP-UCBVI (Qiao & Wang 2023, Algorithm 1): private Bernstein-type bonuses on the Central Privatizer, "
        "post-processing dprl's Laplace tree counters (PUCB's PrivateStats), ε-JDP",
    label="DP-UCBVI", colour="#17becf",
    setting="tabular", factory="dprl_beyond.dp_ucbvi:build", baseline="ucbvi_bernstein", block_protocol=True,
    burn_in="dprl_beyond.dp_ucbvi:burn_in",
)
UCBVI_BERNSTEIN = Algorithm(
    "ucbvi_bernstein", "none", dict(_BETA),
    doc="UCBVI with Bernstein-type bonuses: DP-UCBVI's planner on exact counts (E = 0), non-private",
    label="UCBVI-Bernstein", colour="#7f7f7f",
    setting="tabular", factory="dprl_beyond.dp_ucbvi:build_exact", block_protocol=True,
    burn_in="dprl_beyond.dp_ucbvi:burn_in",
)


def _ucb_vi(name: str, privacy: str, doc: str, label: str, colour: str, factory: str, baseline: str = "") -> Algorithm:
    """A declaration of ``dprl_beyond.private_ucb_vi`` (one parameter, the confidence β)."""
    beta = Param(0.05, exclusive_minimum=0.0, maximum=0.5, doc="confidence β of the Hoeffding bonuses' ι = ln(4SAHK/β)")
    return Algorithm(name, privacy, {"beta": beta}, doc=doc, label=label, colour=colour, setting="tabular",
                     factory=f"dprl_beyond.private_ucb_vi:{factory}", baseline=baseline, block_protocol=True,
                     burn_in="dprl_beyond.private_ucb_vi:burn_in")


PRIVATE_UCB_VI = _ucb_vi(
    "private_ucb_vi", "pure",
    "Private-UCB-VI (Chowdhury & Zhou 2022): optimistic value iteration on the Central Privatizer's private counts, "
    "dprl's Laplace tree counters (PUCB's PrivateStats), ε-JDP",
    "Private-UCB-VI", "#bcbd22", "build", baseline="ucb_vi")
UCB_VI = _ucb_vi("ucb_vi", "none", "UCB-VI with Hoeffding bonuses: Private-UCB-VI's planner on exact counts (E = 0), non-private",
                 "UCB-VI", "#8c8c8c", "build_exact")
