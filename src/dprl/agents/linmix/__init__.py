"""Zhou (2022) agents: LinOpt-VI-Reg / LinOpt-PO-Reg with non-private, central-JDP and
local-DP regularizers (``linopt``), their calibrations (``calibration``), and the episode
loop (``simulate``)."""
