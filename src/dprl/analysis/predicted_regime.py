"""The regime each private setting of a rate experiment will reach at its configured horizon,
predicted before anything runs (``dprl validate``; src/dprl/README.md, "Regimes").

A kind declares how its jobs predict their burn-in (``ExperimentKind.predicted_burn_in``: the
``T*(k)`` its job records as ``burn_in_episodes``, from the same functions, without building an
agent). A job is predicted to reach its regime when its horizon is at least
:func:`~dprl.analysis.regime.predicted_horizon`: the fixed point ``K >= 10^ONSET_DECADES ·
T*(K) · margin`` of the one criterion (:func:`~dprl.analysis.regime.onset_regime`), with the
no-escape margin of its algorithm (:func:`~dprl.analysis.burn_in.burn_in_margin`, the largest
measured-over-predicted burn-in of the committed run). Such a run reaches its regime if its
burn-in ends no later than any measured so far, and is "not learned" if it never ends; a
shorter one may still reach it (a burn-in that ends earlier than predicted), which only the run
tells. A job without a prediction (non-private, a plug-in declaring no burn-in, a kind without
a rate claim) is left out.

A setting is one algorithm at one (ε, δ, calibration); its instances are its environments
(the horizon of a family tuned to it, ``tabular_hard``'s ``T``, left out) and algorithm
parameters, each judged at its largest horizon over every seed (an instance drawn per seed is
reached when every seed's is: the tabular claims take the largest ``T*`` over seeds, the
linear-mixture ones the median, so this is the conservative reading).
"""

from __future__ import annotations

import json
import math
import statistics
from collections.abc import Iterable
from dataclasses import dataclass

from dprl.analysis.regime import no_escape_at, predicted_horizon
from dprl.experiments.base import BurnIn, load_ref
from dprl.experiments.instances import instance_key
from dprl.experiments.registry import get_kind
from dprl.privacy.setting import PrivacySetting
from dprl.runner.job import JobSpec, canonical_json


def job_burn_in(spec: JobSpec) -> BurnIn | None:
    """The job's predicted burn-in from its kind's declaration (``None``: no prediction)."""
    ref = get_kind(spec.kind).predicted_burn_in
    return None if ref is None else load_ref(ref)(spec)


def no_escape_share(spec: JobSpec, burn_in: BurnIn, t_star: float | None = None) -> float:
    """The job's :func:`~dprl.analysis.regime.no_escape_horizon` at its own horizon over that
    horizon: at most 1 when the job reaches its regime by prediction (``K - 10·T*(K)·margin``
    changes sign once, at :func:`~dprl.analysis.regime.predicted_horizon`, so one evaluation of
    ``T*`` decides what the fixed point would); ``inf`` for a burn-in predicted never to end,
    NaN without a prediction. ``t_star``: ``burn_in.t_star(burn_in.horizon)`` when the caller
    has it already."""
    t = burn_in.t_star(burn_in.horizon) if t_star is None else t_star
    return no_escape_at(lambda _: t, burn_in.horizon, spec.algorithm["name"]) / burn_in.horizon


def reached(share: float) -> bool:
    """Whether a :func:`no_escape_share` is inside the regime (the tolerance of
    :func:`~dprl.analysis.regime.onset_regime`'s no-escape test)."""
    return share * (1 - 1e-9) <= 1


@dataclass(frozen=True)
class SettingRegime:
    """The predicted regime of one private setting over its instances: ``missed`` of
    ``instances`` not reached; ``needed`` (:func:`~dprl.analysis.regime.predicted_horizon`) and
    ``horizon`` are the tightest instance's (largest :func:`no_escape_share`, over its seeds),
    ``where`` names it when there are several; ``t_star`` is the burn-in ``T*(horizon)`` its
    tightest seed predicts, ``t_star_median`` the median over that instance's seeds (the
    linear-mixture claims read the median, the tabular ones the largest)."""

    algorithm: str
    privacy: PrivacySetting
    instances: int
    missed: int
    needed: float
    horizon: int
    symbol: str
    where: str = ""
    t_star: float = math.nan
    t_star_median: float = math.nan

    @property
    def reached(self) -> bool:
        return self.missed == 0

    def text(self) -> str:
        """``eps=0.1: not reached (needs T >= 3.1e8, largest T 8e6)`` or
        ``eps=10: reached (needs 2.5e6 <= T 8e6)``."""
        p = self.privacy
        label = f"eps={short(p.epsilon, 'g')}" + ("" if p.delta is None else f" delta={short(p.delta, 'g')}")
        at = f" on {self.where}" if self.where else ""
        if self.reached:
            return f"{label}: reached (needs {short(self.needed)} <= {self.symbol} {short(self.horizon)}{at})"
        part = "" if self.instances == 1 else f" on {self.missed} of {self.instances} instances"
        need = f"{self.symbol} >= {short(self.needed)}" if self.needed < float("inf") else f"{self.symbol} > 1e15"
        return f"{label}: not reached{part} (needs {need}{at}, largest {self.symbol} {short(self.horizon)})"


def short(x: float, style: str = ".2g") -> str:
    """A number in ``style`` (two significant digits), its exponent without ``+`` or leading
    zeros (``3.1e8``, ``1e-5``)."""
    mant, _, exp = format(float(x), style).partition("e")
    return mant if not exp else f"{mant}e{int(exp)}"


def setting_regimes(specs: Iterable[JobSpec]) -> list[SettingRegime]:
    """:class:`SettingRegime` of every private setting of ``specs`` (one experiment's jobs)
    with a predicted burn-in, in the order of the jobs. An instance is judged by its jobs at its
    largest horizon (a smaller horizon of its grid changes nothing there), one ``T*`` each, in
    the order of their instances (:func:`~dprl.experiments.instances.instance_key`: each is
    built once); the fixed point is solved once per setting, for its tightest instance."""
    settings: dict[tuple, dict[str, list[tuple[JobSpec, BurnIn]]]] = {}
    for spec in specs:
        b = job_burn_in(spec)
        if b is None or spec.privacy is None:
            continue
        key = (spec.algorithm["name"], spec.privacy.epsilon, spec.privacy.delta, spec.privacy.calibration)
        env = {k: v for k, v in spec.environment.items() if k != b.horizon_param}
        algo = {k: v for k, v in spec.algorithm.items() if k != "name"}
        settings.setdefault(key, {}).setdefault(canonical_json([env, algo]), []).append((spec, b))
    judged = [(spec, b) for instances in settings.values() for jobs in instances.values()
              for top in [max(c.horizon for _, c in jobs)] for spec, b in jobs if b.horizon == top]
    t_star = {id(b): b.t_star(b.horizon) for spec, b in sorted(judged, key=lambda j: instance_key(j[0]))}
    share = {id(b): no_escape_share(spec, b, t_star[id(b)]) for spec, b in judged}
    out = []
    for (alg, eps, delta, cal), instances in settings.items():
        worst = {}  # per instance, its tightest seed (NaN: no prediction)
        for name, jobs in instances.items():
            scored = [(share[id(b)], spec, b) for spec, b in jobs if not math.isnan(share.get(id(b), math.nan))]
            if scored:
                worst[name] = max(scored, key=lambda j: j[0])
        if not worst:
            continue
        name = max(worst, key=lambda n: worst[n][0])
        _, spec, b = worst[name]
        seeds = [t_star[id(c)] for _, c in instances[name] if id(c) in t_star and not math.isnan(t_star[id(c)])]
        out.append(SettingRegime(alg, PrivacySetting(epsilon=eps, delta=delta, calibration=cal), len(worst),
                                 sum(not reached(w[0]) for w in worst.values()), predicted_horizon(b.t_star, alg),
                                 b.horizon, b.symbol, _instance_label(name, list(worst)) if len(worst) > 1 else "",
                                 t_star[id(b)], float(statistics.median(seeds))))
    return out


def _instance_label(name: str, names: list[str]) -> str:
    """Instance ``name``'s environment and the parameters in which it differs from the other
    instances of that environment (``lowerbound_horizon n=4 m=2``)."""
    env, algo = json.loads(name)
    others = [json.loads(n) for n in names if n != name]
    same_env = [(e, a) for e, a in others if e["name"] == env["name"]]
    differs = [f"{k}={v:g}" if isinstance(v, float) else f"{k}={v}"
               for i, part in enumerate((env, algo)) for k, v in part.items()
               if k != "name" and any(o[i].get(k) != v for o in same_env)]
    return " ".join([env["name"], *differs])


LINE_WIDTH = 150  # a setting's line longer than this lists its privacy levels one per line


def regime_lines(specs: Iterable[JobSpec], indent: str = "    ") -> list[str]:
    """What ``dprl validate`` prints under an experiment: per (algorithm, calibration) of
    :func:`setting_regimes`, its privacy levels in turn on one line (one per line when that is
    longer than :data:`LINE_WIDTH`)."""
    rows: dict[tuple[str, str], list[SettingRegime]] = {}
    for r in setting_regimes(specs):
        rows.setdefault((r.algorithm, r.privacy.calibration), []).append(r)
    out = []
    for (alg, cal), rs in rows.items():
        head = f"{indent}regime {alg} {cal}:"
        line = f"{head} " + "   ".join(r.text() for r in rs)
        out += [line] if len(line) <= LINE_WIDTH else [head, *(f"{indent}  {r.text()}" for r in rs)]
    return out
