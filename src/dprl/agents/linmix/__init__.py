"""Zhou (2022) agents: LinOpt-VI-Reg / LinOpt-PO-Reg with non-private, central-JDP and
local-DP Privatizers.

Modules (the same layout in every paper's package): ``build`` (``build_agent``, the factory
of :mod:`dprl.agents.protocol`, and the Privatizer's noise path), ``episodes``
(``run_episodes``), ``calibration`` (:class:`LinOptCalibration`), ``regime`` (predicted
burn-in), ``linopt`` (the agent), ``loop`` (the episode loop, compiled), ``privacy``
(accounting of the built agent's noise and the audits of its Privatizer)."""
