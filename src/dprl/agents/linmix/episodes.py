"""Running LinOpt episodes with exact regret (the runner of :mod:`dprl.agents.protocol`;
src/dprl/README.md, "Regret is exact": regret from the exact value of the committed policy). The agents are built by
:mod:`dprl.agents.linmix.build`."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pandas as pd

from dprl.agents.linmix.calibration import LinOptCalibration
from dprl.agents.linmix.linopt import LinOptAgent, confidence_radii
from dprl.agents.linmix.loop import CENTRAL, LOCAL, NONPRIVATE, _run_block, pattern_rows, psi_rows
from dprl.agents.protocol import BuiltAgent, checked_checkpoints
from dprl.envs.linear_mixture import LinearMixtureMDP
from dprl.privacy.regularizer import (
    CentralRegularizer,
    LocalRegularizer,
    NonPrivateRegularizer,
    Regularizer,
)


def _kernel_regularizer(reg: Regularizer) -> tuple[int, list[float], bool, np.random.Generator | None, int, tuple[np.ndarray, ...]]:
    """A Regularizer as the compiled loop takes it: kind, ``[σ_gram, σ_target, shift, λ_min]``,
    noisy, noise generator, users so far, and views of its own state arrays (updated in place)."""
    empty1, empty2 = np.zeros(0), np.zeros((1, 0))
    if type(reg) is NonPrivateRegularizer:
        return NONPRIVATE, [0.0, 0.0, reg.lam, reg.lam], False, None, reg.n_users, (
            reg._gram.reshape(-1), reg._target.reshape(-1), empty2, empty2, empty2, empty2)
    if type(reg) is CentralRegularizer:
        c, g, t = reg.calibration, reg.gram_counter, reg.target_counter
        return CENTRAL, [c.sigma_gram, c.sigma_target, c.shift, c.lam_min], g.noise is not None, g.rng, g.t, (
            empty1, empty1, *g.node_arrays(), *t.node_arrays())
    if type(reg) is LocalRegularizer:
        c = reg.calibration
        return LOCAL, [c.sigma_gram, c.sigma_target, c.shift, c.lam_min], reg.noise, reg.rng, reg.n_users, (
            reg._gram.reshape(-1), reg._target.reshape(-1), empty2, empty2, empty2, empty2)
    raise TypeError(f"the compiled loop runs NonPrivate/Central/LocalRegularizer, not {type(reg).__name__}")


def run_episodes(
    built: BuiltAgent[LinOptAgent, LinOptCalibration],
    env: LinearMixtureMDP,
    n_episodes: int,
    env_rng: np.random.Generator,
    checkpoints: np.ndarray,
    progress: Callable[[int, int], None] | None = None,
    *,
    record_actions: bool = False,
) -> pd.DataFrame:
    """Run ``K = n_episodes`` episodes (compiled, :func:`dprl.agents.linmix.loop._run_block`;
    the runner of :mod:`dprl.agents.protocol`); one row per checkpoint with cumulative exact
    regret. ``record_actions``: every episode's actions in ``df.attrs["actions"]`` (tests).

    Environment randomness: ``2H`` uniforms per episode from ``env_rng`` (next state,
    reward), drawn whether or not used, so all agents see the same stream (CRN). The agent's
    own generator (``LinOptAgent.rng``, the ``agent_rng`` it was built with) gives the VI tie
    priorities and the PO action uniforms (each mode draws only one of the two). Memory is
    bounded by one block of episodes, whatever ``K``. The σ's the loop drew each
    regularizer's noise with are recorded in its ``drawn``
    (:meth:`~dprl.privacy.regularizer.Regularizer.drawn_calibration`: what the job accounts from).
    """
    K = n_episodes
    marks = checked_checkpoints(checkpoints, K)
    agent = built.agent
    agent_rng = agent.rng
    feat = agent.feat
    H, S, A, d1, d2 = feat.horizon, feat.S, feat.A, feat.d1, feat.d2
    kp, params_p, noisy_p, rng_p, t_p, arr_p = _kernel_regularizer(agent.reg_p)
    kr, params_r, noisy_r, rng_r, t_r, arr_r = _kernel_regularizer(agent.reg_r)
    if (kp, noisy_p, t_p) != (kr, noisy_r, t_r) or rng_p is not rng_r:
        raise ValueError("both regressions must use the same privatizer, noise generator and number of users")
    if kp == CENTRAL and t_p + K > agent.reg_p.gram_counter.max_elements:
        raise ValueError(f"{K} more episodes exceed the tree counters' horizon {agent.reg_p.gram_counter.max_elements}")
    noisy = noisy_p and kp != NONPRIVATE
    n_noise = H * (d1 * d1 + d1 + d2 * d2 + d2) if noisy else 0
    beta = confidence_radii(agent.reg_p.bounds, agent.reg_r.bounds, d1, d2, agent.K, H, agent.alpha)
    agent.beta = beta
    v_star = float(env.optimal_values()[0, env.s1])
    po = agent.mode == "po"
    log_policy = agent.log_policy if po else np.zeros((H, S, A))
    pi = np.exp(log_policy) if po else np.zeros((H, S, A))  # π^k, as LinOptAgent.policy computes it
    eta = float(agent.eta)
    model = (*psi_rows(feat), np.ascontiguousarray(feat.phi_r.reshape(S * A, d2), dtype=float),
             *pattern_rows(env.P.reshape(S * A, S)), env.r, env._cumP, int(env.s1))
    kinds = np.array([kp, kr], dtype=np.int64)
    params = np.array([params_p, params_r])
    block = max(1, min(1024, (1 << 20) // max(1, H * S * A, n_noise)))
    regret, returns = np.empty(block), np.empty(block)
    repaired = np.zeros((block, 4), dtype=np.int64)
    actions = np.empty((K if record_actions else block, H), dtype=np.int64)
    rows = []
    cum_regret = cum_return = 0.0
    n_rep = [agent.reg_p.n_repaired, agent.reg_p.n_not_pd, agent.reg_r.n_repaired, agent.reg_r.n_not_pd]
    done, m = 0, 0
    while done < K:
        b = min(block, K - done)
        keys = agent.rng.random((b, H, S, A)) if not po else np.zeros((b, 1, 1, 1))
        u = env_rng.random((b, H, 2))
        a_u = agent_rng.random((b, H)) if po else np.zeros((b, 0))
        z = rng_p.standard_normal((b, n_noise)) if noisy else np.zeros((b, 0))
        acts = actions[done : done + b] if record_actions else actions[:b]
        _run_block(*model, d1, kinds, params, noisy, t_p + done, *arr_p, *arr_r, agent.reg_p.drawn, agent.reg_r.drawn,
                   po, log_policy, pi, eta, beta[0], beta[1], v_star, keys, u, a_u, z, regret[:b], returns[:b], repaired[:b], acts)
        # the NumPy loop's running sums, one episode at a time
        cr = np.cumsum(np.concatenate(([cum_regret], regret[:b])))[1:]
        cs = np.cumsum(np.concatenate(([cum_return], returns[:b])))[1:]
        rep = np.cumsum(repaired[:b], axis=0) + n_rep
        while m < marks.size and marks[m] <= done + b:
            j = int(marks[m]) - 1 - done
            rows.append({"episode": int(marks[m]), "T": int(marks[m]) * H, "regret": cr[j], "sampled_return": cs[j],
                         "optimal_value": v_star, "beta_p": beta[0], "beta_r": beta[1], "n_repaired": int(rep[j, 0] + rep[j, 2]), "n_not_pd": int(rep[j, 1] + rep[j, 3])})
            m += 1
        cum_regret, cum_return, n_rep = cr[-1], cs[-1], list(rep[-1])
        done += b
        if progress is not None:
            progress(done, K)
    _sync_users(agent.reg_p, K, n_rep[0], n_rep[1])
    _sync_users(agent.reg_r, K, n_rep[2], n_rep[3])
    df = pd.DataFrame(rows)
    if record_actions:
        df.attrs["actions"] = actions
    return df


def _sync_users(reg: Regularizer, K: int, n_repaired: int, n_not_pd: int) -> None:
    """The Python side of a Regularizer after ``K`` compiled episodes (its arrays were
    updated in place)."""
    reg.n_users += K
    reg.n_repaired, reg.n_not_pd = int(n_repaired), int(n_not_pd)
    if type(reg) is CentralRegularizer:
        reg.gram_counter.t += K
        reg.target_counter.t += K
