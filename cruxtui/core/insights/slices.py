"""Slices: a scored set grouped along one dimension, each group with pass@1 and its interval.

pass@1 of a group is the mean over its samples of each sample's fraction of passing generations
(x100, as `cruxtui score` reports it); the interval resamples the group's samples (the unit the
benchmark averages over), 2.5 and 97.5 percentiles. Against a second run, both are measured on
the samples they share, the difference is this run minus the other, and its interval resamples
samples in pairs (the per-sample differences), which is what says whether one run is really
better on that group. A sample *passes* a run when at least half its generations pass (as
`cruxtui compare` decides its disagreements), which gives the contingency table: what passes in
both, in this run only (what it fixed), in the other only (what it broke), in neither.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from cruxtui.core.insights.dimensions import (
    DIMENSIONS,
    ORDINAL,
    SampleFacts,
    groups_of,
    natural_order,
)
from cruxtui.core.insights.results import InsightsError, Outcome, Results
from cruxtui.core.scoring.passk import interval, paired_intervals

ALL = "(all)"
"""The name of the row over every sample of the slice."""

PASS_SHARE = 0.5
"""A sample passes a run when at least this share of its generations pass."""

SORTS = ("natural", "samples", "pass", "delta", "name")

MIN_SAMPLES_TO_CALL = 10
"""Fewer samples than this and a difference is never called real: the bootstrap interval of a
tiny group is too narrow (one sample's is a single point) to say anything."""


def passes(outcome: Outcome) -> bool:
    return outcome.rate >= PASS_SHARE


@dataclass(frozen=True)
class Contingency:
    """Samples by whether each run passes them (see `passes`)."""

    both: tuple[str, ...]
    a_only: tuple[str, ...]
    """Passes in this run, fails in the other: what this run fixed."""
    b_only: tuple[str, ...]
    """Fails in this run, passes in the other: what this run broke."""
    neither: tuple[str, ...]

    def to_json(self) -> dict[str, int]:
        return {
            "both": len(self.both),
            "a_only": len(self.a_only),
            "b_only": len(self.b_only),
            "neither": len(self.neither),
        }


@dataclass(frozen=True)
class Paired:
    """The other run on the same samples of a group, and the difference."""

    predictions: int
    pass_at_1: float
    interval: tuple[float, float]
    delta: float
    """This run's pass@1 minus the other's, x100."""
    delta_interval: tuple[float, float]
    contingency: Contingency


@dataclass(frozen=True)
class Group:
    name: str
    sample_ids: tuple[str, ...]
    """Distinct sample ids in the group, in the scored set's order (a Browse filter uses them)."""
    samples: int
    """Outcomes in the group: distinct samples, except in a pool of runs sharing samples."""
    predictions: int
    pass_at_1: float
    """x100."""
    interval: tuple[float, float]
    paired: Paired | None = None

    @property
    def direction(self) -> int:
        """+1 if this run is clearly better on the group (the paired interval is above 0), -1 if
        clearly worse, 0 if the interval covers 0, there is no comparison, or the group is too
        small to tell (`MIN_SAMPLES_TO_CALL`). What tables and figures colour a difference by."""
        if self.paired is None or self.samples < MIN_SAMPLES_TO_CALL:
            return 0
        lo, hi = self.paired.delta_interval
        return 1 if lo > 0 else -1 if hi < 0 else 0

    def to_json(self, by: str) -> dict[str, Any]:
        """One `cruxtui stats --json` line."""
        row: dict[str, Any] = {
            "by": by,
            "group": self.name,
            "total": self.name == ALL,
            "samples": self.samples,
            "predictions": self.predictions,
            "pass_at_1": self.pass_at_1,
            "interval": list(self.interval),
        }
        if self.paired is not None:
            p = self.paired
            row |= {
                "predictions_against": p.predictions,
                "pass_at_1_against": p.pass_at_1,
                "interval_against": list(p.interval),
                "delta": p.delta,
                "delta_interval": list(p.delta_interval),
                "contingency": p.contingency.to_json(),
            }
        return row


@dataclass(frozen=True)
class Slice:
    by: str
    label: str
    task: str
    total: Group
    groups: tuple[Group, ...]
    """In natural order: ordinal dimensions in their order, others largest first."""
    against: str | None = None
    """The other run's label; then every number is on the samples both share."""

    def rows(self) -> list[Group]:
        """The groups, then the total."""
        return [*self.groups, self.total]

    def sorted(self, key: str = "natural", min_samples: int = 1) -> list[Group]:
        """Groups with at least `min_samples`, ordered by `key` (one of `SORTS`)."""
        kept = [g for g in self.groups if g.samples >= min_samples]
        if key == "natural":
            return kept
        if key == "samples":
            return sorted(kept, key=lambda g: -g.samples)
        if key == "pass":
            return sorted(kept, key=lambda g: g.pass_at_1)
        if key == "delta":
            return sorted(kept, key=lambda g: g.paired.delta if g.paired else 0.0)
        if key == "name":
            return sorted(kept, key=lambda g: natural_order(self.by, g.name))
        raise InsightsError(f"unknown sort {key!r} (known: {', '.join(SORTS)})")


def slice_results(
    results: Results,
    by: str,
    facts: SampleFacts,
    *,
    against: Results | None = None,
    resamples: int = 1000,
    seed: int = 0,
) -> Slice:
    """Group `results` along `by`; with `against`, on the shared samples, with the differences."""
    if by not in DIMENSIONS:
        raise InsightsError(f"unknown dimension {by!r} (known: {', '.join(DIMENSIONS)})")
    outcomes: Sequence[Outcome] = results.outcomes
    other: dict[str, Outcome] | None = None
    if against is not None:
        if not results.unique or not against.unique:
            raise InsightsError("a comparison needs each run to have one result per sample")
        other = against.by_sample()
        outcomes = [o for o in outcomes if o.sample_id in other]
        if not outcomes:
            raise InsightsError(f"{results.label} and {against.label} have no sample in common")
    members: dict[str, list[Outcome]] = {}
    for outcome in outcomes:
        for name in groups_of(by, outcome, facts):
            members.setdefault(name, []).append(outcome)
    stats = [
        _group(name, group, other, resamples, seed) for name, group in members.items() if group
    ]
    if by in ORDINAL:
        stats.sort(key=lambda g: natural_order(by, g.name))
    else:
        stats.sort(key=lambda g: (g.name.startswith("("), -g.samples, natural_order(by, g.name)))
    return Slice(
        by=by,
        label=results.label,
        task=results.task,
        total=_group(ALL, outcomes, other, resamples, seed),
        groups=tuple(stats),
        against=against.label if against is not None else None,
    )


def _group(
    name: str,
    outcomes: Sequence[Outcome],
    other: dict[str, Outcome] | None,
    resamples: int,
    seed: int,
) -> Group:
    rates = [o.rate for o in outcomes]
    paired = None
    if other is not None:
        theirs = [other[o.sample_id] for o in outcomes]
        their_rates = [o.rate for o in theirs]
        mine, their_interval, delta = paired_intervals(rates, their_rates, resamples, seed)
        paired = Paired(
            predictions=sum(o.n for o in theirs),
            pass_at_1=_pct(_mean(their_rates)),
            interval=_pct_pair(their_interval),
            delta=_pct(_mean(rates) - _mean(their_rates)),
            delta_interval=_pct_pair(delta),
            contingency=contingency(zip(outcomes, theirs, strict=True)),
        )
    else:
        mine = interval(rates, resamples, seed)
    return Group(
        name=name,
        sample_ids=tuple(dict.fromkeys(o.sample_id for o in outcomes)),
        samples=len(outcomes),
        predictions=sum(o.n for o in outcomes),
        pass_at_1=_pct(_mean(rates)),
        interval=_pct_pair(mine),
        paired=paired,
    )


def contingency(pairs: Iterable[tuple[Outcome, Outcome]]) -> Contingency:
    """Sample ids by (passes in a, passes in b) for outcomes of the same samples in two runs."""
    cells: dict[tuple[bool, bool], list[str]] = {
        (True, True): [],
        (True, False): [],
        (False, True): [],
        (False, False): [],
    }
    for a, b in pairs:
        cells[(passes(a), passes(b))].append(a.sample_id)
    return Contingency(
        both=tuple(cells[(True, True)]),
        a_only=tuple(cells[(True, False)]),
        b_only=tuple(cells[(False, True)]),
        neither=tuple(cells[(False, False)]),
    )


def _mean(values: Sequence[float]) -> float:
    return sum(values) / len(values) if values else 0.0


def _pct(value: float) -> float:
    return 100 * value


def _pct_pair(pair: tuple[float, float]) -> tuple[float, float]:
    return (100 * pair[0], 100 * pair[1])
