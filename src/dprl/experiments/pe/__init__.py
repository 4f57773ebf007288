"""Experiments of Balle, Gomrokchi, Precup (2016), differentially private policy evaluation."""
