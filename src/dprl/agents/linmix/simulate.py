"""Build a LinOpt agent from a job's algorithm/privacy description and run the episode
loop with exact regret (contract: regret from the exact value of the committed policy)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pandas as pd

from dprl.agents.linmix.calibration import PrivatizerCalibration, privatizer_calibration
from dprl.agents.linmix.linopt import LinOptAgent
from dprl.envs.linear_mixture import KnownFeatures, LinearMixtureMDP
from dprl.privacy.regularizer import (
    CentralRegularizer,
    LocalRegularizer,
    NonPrivateRegularizer,
    Regularizer,
    RegularizerCalibration,
)

# algorithm name -> (mode, privatizer)
ALGORITHMS: dict[str, tuple[str, str]] = {
    "ucrl_vtr": ("vi", "none"),
    "private_linopt_vi": ("vi", "central"),
    "ldp_linopt_vi": ("vi", "local"),
    "oppo": ("po", "none"),
    "private_linopt_po": ("po", "central"),
    "ldp_linopt_po": ("po", "local"),
}


@dataclass
class AgentSetup:
    agent: LinOptAgent
    calibration: PrivatizerCalibration | None


def privatizers(
    scheme: str, cal_p: RegularizerCalibration, cal_r: RegularizerCalibration, feat: KnownFeatures, K: int,
    rng: np.random.Generator | None, noise: bool = True, batch_shape: tuple[int, ...] = (),
) -> tuple[Regularizer, Regularizer]:
    """The Privatizer's noise path (Sec. 6.1 central, Remark 6.9 local): one Regularizer for
    the transition regression (``p = d1``) and one for the reward (``p = d2``), each with a
    regression per step ``h``. The agent uses ``batch_shape=()``; audits and privacy tests
    build the same objects with a leading batch of independent runs."""
    H = feat.horizon
    shape = (*batch_shape, H)
    if scheme == "central":
        return (CentralRegularizer(shape, feat.d1, 1, K, cal_p, rng, noise=noise),
                CentralRegularizer(shape, feat.d2, 1, K, cal_r, rng, noise=noise))
    if scheme == "local":
        return (LocalRegularizer(shape, feat.d1, 1, cal_p, rng, noise=noise),
                LocalRegularizer(shape, feat.d2, 1, cal_r, rng, noise=noise))
    raise ValueError(f"unknown privatizer scheme {scheme!r}")


def build_agent(
    name: str,
    feat: KnownFeatures,
    K: int,
    alg_params: dict,
    privacy: dict | None,
    agent_rng: np.random.Generator,
    noise_rng: np.random.Generator,
    noise: bool = True,
    override: tuple[RegularizerCalibration, RegularizerCalibration] | None = None,
) -> AgentSetup:
    """``override``: explicit (p, r) calibrations (tests: noise-free central privatizer)."""
    mode, scheme = ALGORITHMS[name]
    H, d1, d2 = feat.horizon, feat.d1, feat.d2
    alpha = float(alg_params.get("alpha", 0.05))
    eta = None
    if mode == "po":
        A = feat.A
        eta = float(alg_params.get("eta_scale", 1.0)) * np.sqrt(2.0 * np.log(max(A, 2)) / (H**2 * K))
    cal = None
    if scheme == "none":
        lam = float(alg_params.get("lam", 1.0))
        reg_p = NonPrivateRegularizer((H,), d1, 1, lam)
        reg_r = NonPrivateRegularizer((H,), d2, 1, lam)
    else:
        if override is not None:
            cal_p, cal_r = override
        else:
            if privacy is None:
                raise ValueError(f"{name} is private and needs epsilon, delta and calibration")
            cal = privatizer_calibration(scheme, privacy["calibration"], float(privacy["epsilon"]), float(privacy["delta"]), K, feat, alpha)
            cal_p, cal_r = cal.p, cal.r
        reg_p, reg_r = privatizers(scheme, cal_p, cal_r, feat, K, noise_rng, noise=noise)
    agent = LinOptAgent(feat, K, reg_p, reg_r, mode, alpha, agent_rng, eta)
    return AgentSetup(agent, cal)


def checkpoints(K: int, n: int) -> np.ndarray:
    """About ``n`` log-spaced episode counts in ``1..K`` (always including ``K``)."""
    pts = np.unique(np.round(np.geomspace(1, K, max(n, 2))).astype(int))
    return pts[(pts >= 1) & (pts <= K)]


def run_episodes(
    env: LinearMixtureMDP,
    setup: AgentSetup,
    K: int,
    env_rng: np.random.Generator,
    agent_rng: np.random.Generator,
    n_checkpoints: int = 30,
    progress: Callable[[int, int], None] | None = None,
    record_actions: bool = False,
) -> pd.DataFrame:
    """Run ``K`` episodes; one row per checkpoint with cumulative exact regret.

    Environment randomness: ``2H`` uniforms per episode from ``env_rng`` (next state,
    reward), drawn whether or not used, so all agents see the same stream (CRN).
    """
    agent = setup.agent
    H = env.horizon
    v_star = float(env.optimal_values()[0, env.s1])
    marks = set(checkpoints(K, n_checkpoints).tolist())
    rows = []
    cum_regret = cum_return = 0.0
    states = np.empty(H + 1, dtype=np.int64)
    actions = np.empty(H, dtype=np.int64)
    rewards = np.empty(H)
    self_actions = []
    for k in range(1, K + 1):
        agent.begin_episode()
        pi = agent.act_policy()
        value = env.policy_value(pi)
        cum_regret += v_star - value
        u = env_rng.random((H, 2))
        a_u = agent_rng.random(H) if agent.mode == "po" else None
        s = env.s1
        states[0] = s
        for h in range(H):
            if a_u is None:
                a = int(pi[h, s].argmax())
            else:
                a = int(min(np.searchsorted(np.cumsum(pi[h, s]), a_u[h], side="right"), env.A - 1))
            actions[h] = a
            rewards[h], s = env.step(s, a, u[h, 0], u[h, 1])
            states[h + 1] = s
        cum_return += rewards.sum()
        if record_actions:
            self_actions.append(actions.copy())
        agent.end_episode(states, actions, rewards)
        if k in marks:
            rows.append({
                "episode": k,
                "T": k * H,
                "regret": cum_regret,
                "sampled_return": cum_return,
                "v_star": v_star,
                "beta_p": agent.beta[0],
                "beta_r": agent.beta[1],
                "repaired": agent.reg_p.n_repaired + agent.reg_r.n_repaired,
            })
        if progress is not None:
            progress(k, K)
    df = pd.DataFrame(rows)
    if record_actions:
        df.attrs["actions"] = np.array(self_actions)
    return df
