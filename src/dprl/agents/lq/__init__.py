"""Agents of Chowdhury, Zhou, Shroff (2021): OFU-RL and Private-OFU-RL for episodic LQ control.

Modules (the same layout in every paper's package): ``build`` (``build_agent``, the factory
of :mod:`dprl.agents.protocol`), ``episodes`` (``run_episodes``: the loop with exact regret
into a checkpoint table), ``calibration`` (:class:`PrivateOFUCalibration`: σ1, σ2, Λ, η,
λ_min, λ_max, ν for the ``paper`` and ``tight`` calibrations), ``regime`` (predicted
burn-in), ``ofu`` (the agent, β_k), ``oracle`` (the optimistic step, eq. 9), ``loop`` (the
episode loop, compiled), ``privacy`` (accounting of the built agent's noise and the audit
of its two counters). The estimator under
changing regularizers is the shared :mod:`dprl.privacy.regularizer`.

Choices and deviations from the paper (each documented where it is made):

- Optimistic step (eq. 9, non-convex, no algorithm given): random search over ``N``
  candidates of the confidence ellipsoid projected onto ``||Θ||_F <= 1``, infeasible
  projections discarded, ``J*`` by a Riccati recursion vectorised over candidates; the
  agent's ``J*`` uses the noise covariance ``(C_w²/n) I`` (the true ``W`` is unknown to it).
  Refinement by projected gradient (optional in the spec) is not implemented.
- Private substitute in ``β_k``: ``ln det V_k − (n+d) ln λ_min`` (released statistics only)
  replaces ``ln det(I + ZᵀZ/λ_min)``; it is an upper bound on the good event and equal for
  ``H_k = λI``.
- Noisy ``V_k`` below ``λ_min`` (off the good event) is eigenvalue-floored, counted and
  logged by the regularizer (post-processing).
- Sensitivity: the agent clips ``z`` to ``1+γ`` and ``x_{h+1}`` to 1 before sending its
  statistics (Lemma 2's bounds), so ``Δ1, Δ2`` hold for every trajectory; clips are counted.
- Tree depth: ``L = floor(log2 K) + 1`` nodes per episode instead of the paper's
  ``m = ceil(log2 K)`` (which undercounts by one when K is a power of two).
- Neighbouring relation: the paper's ``Δ1 = H(1+γ)²``, ``Δ2 = H(1+γ)`` bound the change when
  a user is replaced by a null user (zero statistics); replacing one real user by another
  moves the pair of counters by a joint weight of ``4.5`` instead of ``2``
  (:mod:`dprl.privacy.replacement`). Both calibrations are calibrated for replacement
  (Definition 2): ``paper`` multiplies the printed σ's by ``1.5``; the audits use the worst
  replacement pairs (:mod:`dprl.agents.lq.calibration`).
- ``tight``: exact analytic-Gaussian calibration of both counters jointly under
  replacement, χ²/Frobenius noise bounds at the paper's failure probabilities.
"""
