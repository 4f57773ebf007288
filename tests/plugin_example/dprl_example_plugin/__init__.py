"""The declaration of the example plug-in (import-light: dprl validates configs with it).

The entry point ``hoeffding_ucbvi`` in the group ``dprl.algorithms`` names this object; its name,
setting, privacy kind, parameters, display name, colour and factory are all dprl needs;
the baseline (a non-private algorithm of the setting, here UBEV) gives it privacy-cost rows.
"""

from dprl.experiments.base import Algorithm, Param

HOEFFDING_UCBVI = Algorithm(
    "hoeffding_ucbvi", "pure",
    {"beta": Param(0.05, exclusive_minimum=0.0, maximum=0.5, doc="failure probability of the confidence bonuses"),
     "bonus_scale": Param(1.0, exclusive_minimum=0.0, doc="multiplier on the Hoeffding bonus")},
    doc="private UCB-VI with Hoeffding bonuses on dprl's Laplace tree counters (PUCB's PrivateStats), ε-JDP",
    label="Hoeffding UCB-VI (example plug-in)", colour="#9467bd",
    setting="tabular", factory="dprl_example_plugin.agent:build", baseline="ubev",
)
