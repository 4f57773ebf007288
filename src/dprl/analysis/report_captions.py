"""What a figure's report caption (``workflow/report/<figure>.rst``) may use.

Snakemake renders each caption with Jinja, with ``snakemake.params`` of the rule that made
the file; the figure rules pass :func:`caption_values` as ``params.caption``, so that a
caption states the seed counts and settings of the preset actually run (never "8 seeds"
typed into the text) and names the claims the figure tests from the figure catalog
(``Figure.claims``, :mod:`dprl.analysis.figures.catalog`), not from a second list::

    {% set c = snakemake.params.caption %}
    ... over {{ c.seeds.tabular_regret }} seeds ({{ c.preset }} preset). {{ c.tests }}

This module is imported by the Snakefile: it imports nothing heavy (the claims registry
imports SciPy, so the ids come from the declarations-only catalog).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

def tests_sentence(claims: Sequence[str]) -> str:
    """"Tests claims **V2** and **V3**" (no full stop: a caption may go on with what they
    state); their rows and verdicts are in the Claims table."""
    if not claims:
        return "Tests no claim of the claims table"
    ids = [f"**{c}**" for c in claims]
    listed = ids[0] if len(ids) == 1 else ", ".join(ids[:-1]) + " and " + ids[-1]
    return f"Tests claim{'s' if len(ids) > 1 else ''} {listed}"


def _distinct(values: Iterable[Any]) -> Any:
    """The one value of a setting across an experiment's jobs, or the sorted list of them."""
    by_repr = {repr(v): v for v in values}  # settings may be lists (unhashable)
    out = [by_repr[k] for k in sorted(by_repr)]
    return out[0] if len(out) == 1 else out


def experiment_values(experiment: Any) -> dict[str, Any]:
    """Seed count, settings and ε grid of one resolved experiment (``config.load.Experiment``)."""
    specs = [j.spec for j in experiment.jobs]
    keys = sorted({k for s in specs for k in s.settings})
    return {
        "seeds": len({s.seed for s in specs}),
        "jobs": len(specs),
        "settings": {k: _distinct(s.settings.get(k) for s in specs) for k in keys},
        "epsilons": sorted({s.epsilon for s in specs if s.privacy is not None}),
    }


class CaptionValues(dict):
    """The caption context (a dict: Jinja reads ``c.seeds.tabular_regret`` from it) whose
    text is readable: Snakemake's report shows every param of a rule as ``name=str(value)``
    in the result's information pane, where a dict's repr (with the ``**bold**`` of
    :func:`tests_sentence`) was unreadable. E.g. ``preset smoke; claims V2, V4;
    tabular_regret: 12 jobs, 2 seeds, ε = 10``."""

    def __str__(self) -> str:
        parts = [f"preset {self['preset']}", f"claims {self['claims'] or 'none'}"]
        for name, seeds in self["seeds"].items():
            eps = self["epsilons"][name]
            text = f"{name}: {self['jobs'][name]} jobs, {seeds} seed{'s' if seeds != 1 else ''}"
            parts.append(text + (f", ε = {', '.join(f'{e:g}' for e in eps)}" if eps else ""))
        return "; ".join(parts)


def caption_values(claims: Sequence[str], preset: str, experiments: Mapping[str, Any]) -> dict[str, Any]:
    """The Jinja context of one figure's caption: ``preset``; ``seeds``, ``settings``,
    ``epsilons`` and ``jobs`` per experiment of ``experiments`` (the figure's, resolved for
    the preset); ``claims`` (the ids the figure tests, ``Figure.claims`` of the catalog)
    and ``tests`` (a sentence naming them)."""
    per = {name: experiment_values(e) for name, e in experiments.items()}
    return CaptionValues({
        "preset": preset,
        "seeds": {n: v["seeds"] for n, v in per.items()},
        "jobs": {n: v["jobs"] for n, v in per.items()},
        "settings": {n: v["settings"] for n, v in per.items()},
        "epsilons": {n: v["epsilons"] for n, v in per.items()},
        "claims": ", ".join(claims),
        "tests": tests_sentence(claims),
    })


def figure_caption(fig: Any, preset: str, experiments: Mapping[str, Any]) -> dict[str, Any]:
    """:func:`caption_values` of a catalog ``Figure``: its experiments (and the optional
    ones the config runs) resolved for ``preset``, and the claims it tests."""
    used = [*fig.experiments, *(e for e in fig.optional if e in experiments)]
    return caption_values(fig.claims, preset, {e: experiments[e] for e in used})
