"""Batch policy-evaluation estimators of Balle, Gomrokchi, Precup (2016): LSW, LSL and their
smooth-sensitivity DP versions (``estimators``), their smooth bounds (``bounds``), features
and weights (``features``)."""
