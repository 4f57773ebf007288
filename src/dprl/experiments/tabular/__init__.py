"""Vietri et al. (2020) experiments."""
