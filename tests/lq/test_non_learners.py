"""C2 (Theorem 2, regret Õ(√K)) refutes an LQ controller that does not learn, in real jobs
(``src/dprl/README.md``, "Regimes"): small ``lq_regret`` jobs of OFU-RL and Private-OFU-RL
run by the runner as ``snakemake`` runs them (:func:`planted_kernels.job_table`), with a
non-learner planted in the compiled episode loop, then C2's own rule on the table.

Certainty equivalence is not a non-learner in LQ (process noise excites the system, so the
data identify ``Θ*`` whatever the gains), so the plants remove learning itself:

- *first gain for ever*: the policy of the first episode is played in every episode (the
  estimate is still updated, and not used);
- *never updates its estimate*: every episode plans from the first release ``(V_1, U_1)``
  (``Θ̂ = 0``, the first confidence set), drawing fresh oracle candidates.

Private-OFU-RL runs at ε = 10⁶ (tight), so that its predicted burn-in ``T* = 270Λ`` is 760
episodes and K = 12,000 is past both the regime (a decade past the burn-in) and the
no-escape horizon ``10·T*·margin``: the correct runs are reproduced there, each planted one
is not reproduced, OFU-RL's row and Private-OFU-RL's. Stopped before the no-escape horizon,
a planted run is inconclusive (it cannot be told from one still in its burn-in), and so is
a correct run stopped before its predicted burn-in, each with the horizon it needs.
"""

from __future__ import annotations

import dataclasses
from functools import cache

import numpy as np
import pandas as pd
import pytest
from numba import carray, njit, types
from numba.extending import intrinsic
from planted_kernels import default_spec, job_table, rejit_chain

from dprl.agents.lq import episodes, loop
from dprl.agents.lq.ofu import plan_step
from dprl.analysis.claims import claim, evaluate
from dprl.analysis.regime import median_onset

PRIVATE = {"epsilon": 1e6, "delta": 1e-3, "calibration": "tight"}
N, D, H = 2, 1, 10
P = N + D
K = 12_000  # a decade past the burn-in (760 predicted, <= 899 measured) and past 10·T*·margin (7.7e3)
SEEDS = (0, 1, 2)


def _spec(alg: str, privacy: dict | None, episodes_: int):
    return default_spec("lq_regret", alg, "random_lq", privacy, {"episodes": episodes_, "checkpoints": 30},
                        n=N, d=D, horizon=H)


def _table(alg: str, privacy: dict | None, episodes_: int = K) -> pd.DataFrame:
    spec = _spec(alg, privacy, episodes_)
    return pd.concat([job_table(dataclasses.replace(spec, seed=s)) for s in SEEDS], ignore_index=True)


def _c2_rows() -> list[dict]:
    """C2's rows, by its own rule (regime made inconclusive outside it), on OFU-RL's jobs as
    ``lq_regret`` and Private-OFU-RL's as ``lq_regime`` (both inside their regime)."""
    return evaluate(claim("C2"), {"lq_regret": _table("ofu_rl", None), "lq_regime": _table("private_ofu_rl", PRIVATE)})


@intrinsic
def _address(typingctx, addr):
    """A ``float64*`` at the integer address ``addr`` (the planted kernel's memory)."""
    sig = types.CPointer(types.float64)(types.intp)

    def codegen(context, builder, signature, args):
        return builder.inttoptr(args[0], context.get_value_type(types.CPointer(types.float64)))

    return sig, codegen


# The planted controllers' memory across episodes and blocks (a compiled kernel keeps no
# state, and a global array is frozen read-only): [which plant, armed, V_1, K_h(Θ̃_1), Θ̃_1]
_MEMORY = np.zeros(2 + P * P + H * D * N + P * N)
_ADDR = _MEMORY.ctypes.data
_G, _K, _T = 2, 2 + P * P, 2 + P * P + H * D * N


@njit
def _first_release(target: np.ndarray) -> bool:
    """Episode 1's release: ``U_1 = 0`` exactly (no user fed, no noise drawn yet); every
    later release carries data or noise."""
    for v in target.ravel():
        if v != 0.0:
            return False
    return True


@njit
def _non_learner(gram, target, lam_min, lam_max, nu, n, noise_radius, alpha, q, r, x1, w_cov, horizon,
                 n_candidates, rng):
    """:func:`plan_step` of a controller that does not learn (the plant in ``_MEMORY[0]``):
    1, its policy is the first episode's in every episode (its estimate is updated and not
    used); 2, it plans from the first release ``(V_1, U_1 = 0)`` in every episode."""
    mem = carray(_address(_ADDR), (_MEMORY.size,))
    first = _first_release(target)
    if first:
        mem[1] = 1.0
        mem[_G:_K] = gram.ravel()
    if mem[0] == 2.0:
        return plan_step(mem[_G:_K].copy().reshape(gram.shape), np.zeros_like(target), lam_min, lam_max, nu, n,
                         noise_radius, alpha, q, r, x1, w_cov, horizon, n_candidates, rng)
    theta_hat, beta, theta, gains, n_feasible, fallback = plan_step(
        gram, target, lam_min, lam_max, nu, n, noise_radius, alpha, q, r, x1, w_cov, horizon, n_candidates, rng)
    if first:
        mem[_K:_T] = gains.ravel()
        mem[_T:] = theta.ravel()
    return theta_hat, beta, mem[_T:].copy().reshape(theta.shape), mem[_K:_T].copy().reshape(gains.shape), n_feasible, fallback


NON_LEARNERS = {"first gain for ever": 1.0, "never updates its estimate": 2.0}


@cache
def _planted_loop():
    """The episode loop compiled once with :func:`_non_learner` as its planning step."""
    return rejit_chain([loop.run_block], plan_step=_non_learner)


@pytest.fixture(scope="module")
def correct_rows() -> list[dict]:
    return _c2_rows()


def test_correct_runs_are_reproduced_in_the_small_regime(correct_rows):
    """The control: the same jobs without a plant reproduce C2, Private-OFU-RL inside its regime."""
    assert [(r["calibration"], r["regime"], r["verdict"]) for r in correct_rows] == [
        ("n/a", "n/a", "reproduced"), ("tight", "reached", "reproduced")]


@pytest.mark.parametrize("plant", list(NON_LEARNERS))
def test_a_controller_that_does_not_learn_is_not_reproduced(plant, monkeypatch):
    """A planted non-learner (module docstring), in both algorithms' compiled loops: every C2
    row is not reproduced, OFU-RL's by its slope and Private-OFU-RL's inside the regime (no
    onset by 10·T*·margin: did not learn), never inconclusive."""
    _MEMORY[:] = 0.0
    _MEMORY[0] = NON_LEARNERS[plant]
    monkeypatch.setattr(episodes, "run_block", _planted_loop())
    rows = _c2_rows()
    assert _MEMORY[1] == 1.0  # the plant ran
    assert [(r["calibration"], r["verdict"]) for r in rows] == [
        ("n/a", "not reproduced"), ("tight", "not reproduced")], rows
    private = rows[-1]
    # inside the regime by the no-escape rule: no seed's burn-in ended by 10·T*·margin
    assert private["regime"] == "reached" and "past the horizon the theory gives" in private["note"], private["note"]
    assert private["measured"] > 0.9  # linear regret, each seed's own slope too
    # the same non-learner stopped before the no-escape horizon (K = 3,000 < 10·T*) cannot be
    # told from a run still in its burn-in: not reached, inconclusive, with the horizon it needs
    short = _table("private_ofu_rl", PRIVATE, 3_000)
    assert 3_000 < 10 * float(short["burn_in_episodes"].max())
    row = next(r for r in evaluate(claim("C2"), {"lq_regret": short, "lq_regime": short}) if r["calibration"] == "tight")
    assert (row["regime"], row["verdict"]) == ("not reached", "inconclusive") and row["horizon_needed"] > 3_000, row


def test_a_correct_run_stopped_before_its_burn_in_is_inconclusive_with_the_horizon_it_needs():
    """Private-OFU-RL stopped at K = 400 (before its predicted burn-in T* itself):
    the row is not reached, inconclusive, and names the horizon the jobs' fixed point gives
    (``horizon_needed``, K >= 10·T*(K)); the no-escape rule does not reach it."""
    table = _table("private_ofu_rl", PRIVATE, 400)
    t_star = float(table["burn_in_episodes"].max())
    assert 400 < t_star
    rows = [r for r in evaluate(claim("C2"), {"lq_regret": _table("ofu_rl", None, 400), "lq_regime": table})
            if r["calibration"] == "tight"]
    (row,) = rows
    assert row["verdict"] == "inconclusive" and row["regime"] == "not reached", row
    onset = median_onset(table)  # the burn-in's measured end (median over seeds; none: K)
    burn_in = max(t_star, onset if np.isfinite(onset) else 400)
    assert row["horizon_needed"] == pytest.approx(max(10 * burn_in, float(table["horizon_needed"].max())))
    assert row["horizon_needed"] > 400 and "did not learn" not in row["note"]
