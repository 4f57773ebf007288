"""Batch policy-evaluation estimators of Balle, Gomrokchi, Precup (2016): LSW, LSL and their
smooth-sensitivity DP versions (``estimators``), built by ``build`` (``build_agent``, the
factory of :mod:`dprl.agents.protocol`), their smooth bounds (``bounds``), features and
weights (``features``), predicted regimes (``regime``), and ``privacy`` (accounting of
the built estimator's noise and the audit of its output perturbation)."""
