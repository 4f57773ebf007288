"""Tabular private RL (Vietri, Balle, Krishnamurthy, Wu 2020): UBEV/PUCB and private BAI."""
