"""Tabular private RL (Vietri, Balle, Krishnamurthy, Wu 2020): UBEV/PUCB and private BAI.

Modules (the same layout in every paper's package): ``build`` (``build_agent``, the factory
of :mod:`dprl.agents.protocol`), ``episodes`` (``run_episodes``, the compiled loop),
``calibration`` (:class:`PUCBCalibration`, ``E_ε``), ``regime`` (predicted burn-in),
``agent`` (the agent), ``statistics``/``planner`` (counters and PrivQ kernels),
``private_bai`` and ``privacy`` (accounting of the built agent's noise and its audits)."""
