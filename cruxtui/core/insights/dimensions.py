"""What a sample can be grouped by, and the groups each outcome falls in.

A sample can be in several groups of one dimension: one that calls `split` and `join` counts in
both method groups (the paper's per-method analysis does the same), a variant made by a chain of
two transforms counts under each. Groups in parentheses are the catch-alls: `(none)` (calls no
known method), `(untagged)`, `(unknown)` (a sample the open dataset does not have).

A perturbed sample (`sample_12~anon`) is described by its parent's code for method, type, lines
and numsteps: a run stores only the variant's id, and renaming or flipping a comparison keeps
what those dimensions measure about the program.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from cruxtui.core.insights.results import InsightsError, Outcome

if TYPE_CHECKING:
    from cruxtui.core.data.dataset import Dataset, Sample

DIMENSIONS = ("method", "type", "lines", "numsteps", "transform", "mode", "tag")

NUMSTEPS_EDGES = (30, 40, 50, 70, 100, 150, 250)
"""Bucket edges: each of the 8 buckets holds 5-25% of the 800 benchmark samples (median 54)."""

NONE, UNTAGGED, UNKNOWN, ORIGINAL = "(none)", "(untagged)", "(unknown)", "original"

ORDINAL = frozenset({"lines", "numsteps"})
"""Dimensions whose groups have a natural order (shown in it, not by size)."""


class MissingFacts(InsightsError):
    """A dimension needs facts the caller did not supply (numsteps counts); message for users."""


def numsteps_bucket(steps: int) -> str:
    """`<30`, `30-39`, ..., `>=250`: the bucket label of a step count."""
    index = bisect.bisect_right(NUMSTEPS_EDGES, steps)
    if index == 0:
        return f"<{NUMSTEPS_EDGES[0]}"
    if index == len(NUMSTEPS_EDGES):
        return f">={NUMSTEPS_EDGES[-1]}"
    return f"{NUMSTEPS_EDGES[index - 1]}-{NUMSTEPS_EDGES[index] - 1}"


_BUCKETS = [numsteps_bucket(0), *(numsteps_bucket(edge) for edge in NUMSTEPS_EDGES)]


def base_id(sample_id: str) -> str:
    """The benchmark sample a variant id was derived from (`sample_12~anon` -> `sample_12`)."""
    return sample_id.split("~", 1)[0]


@dataclass(frozen=True)
class SampleFacts:
    """What the dimensions read about samples, beyond the outcomes themselves."""

    dataset: Dataset
    numsteps: Mapping[str, int] | None = None
    """Step counts by sample id (`cruxtui.core.trace.numsteps`); needed only for `numsteps`."""
    tags: Mapping[str, Sequence[str]] = field(default_factory=dict)
    """Tags by benchmark sample id (see `gallery_tags`)."""

    def sample(self, sample_id: str) -> Sample | None:
        """The sample, or for a variant its parent; None if the dataset has neither."""
        return self.dataset.get(sample_id) or self.dataset.get(base_id(sample_id))


def gallery_tags(cases: Iterable[Any]) -> dict[str, tuple[str, ...]]:
    """Benchmark sample id -> the tags of every saved failure case on it (or on a variant of it).

    A tag names something about the program (`prefix`, `off-by-one`), so it labels the sample
    whichever model failed on it; `cases` are `FailureCase`s (anything with those two fields).
    """
    out: dict[str, list[str]] = {}
    for case in cases:
        tags = out.setdefault(case.base_sample_id, [])
        tags.extend(t for t in case.tags if t not in tags)
    return {sid: tuple(tags) for sid, tags in out.items() if tags}


Keyer = Callable[[Outcome, SampleFacts], tuple[str, ...]]


def _method(outcome: Outcome, facts: SampleFacts) -> tuple[str, ...]:
    sample = facts.sample(outcome.sample_id)
    if sample is None:
        return (UNKNOWN,)
    return sample.methods or (NONE,)


def _type(outcome: Outcome, facts: SampleFacts) -> tuple[str, ...]:
    sample = facts.sample(outcome.sample_id)
    return (sample.output_type if sample else UNKNOWN,)


def _lines(outcome: Outcome, facts: SampleFacts) -> tuple[str, ...]:
    sample = facts.sample(outcome.sample_id)
    return (str(sample.lines) if sample else UNKNOWN,)


def _numsteps(outcome: Outcome, facts: SampleFacts) -> tuple[str, ...]:
    counts = facts.numsteps
    if counts is None:
        raise MissingFacts("slicing by numsteps needs every sample's step count")
    steps = counts.get(outcome.sample_id, counts.get(base_id(outcome.sample_id)))
    return (UNKNOWN,) if steps is None else (numsteps_bucket(steps),)


def _transform(outcome: Outcome, facts: SampleFacts) -> tuple[str, ...]:
    if "~" not in outcome.sample_id:
        return (ORIGINAL,)
    from cruxtui.core.perturb.chain import transforms_in  # libcst: only for this dimension

    return tuple(dict.fromkeys(transforms_in(outcome.sample_id)))


def _mode(outcome: Outcome, facts: SampleFacts) -> tuple[str, ...]:
    return (outcome.mode or UNKNOWN,)


def _tag(outcome: Outcome, facts: SampleFacts) -> tuple[str, ...]:
    return tuple(facts.tags.get(base_id(outcome.sample_id), ())) or (UNTAGGED,)


KEYERS: dict[str, Keyer] = {
    "method": _method,
    "type": _type,
    "lines": _lines,
    "numsteps": _numsteps,
    "transform": _transform,
    "mode": _mode,
    "tag": _tag,
}


def groups_of(dimension: str, outcome: Outcome, facts: SampleFacts) -> tuple[str, ...]:
    """The groups `outcome` belongs to along `dimension` (at least one, each once)."""
    try:
        keyer = KEYERS[dimension]
    except KeyError:
        raise InsightsError(
            f"unknown dimension {dimension!r} (known: {', '.join(DIMENSIONS)})"
        ) from None
    return keyer(outcome, facts)


def natural_order(dimension: str, group: str) -> tuple[int, float, str]:
    """Sort key: numbers and buckets in order for ordinal dimensions, catch-alls last."""
    if group.startswith("("):
        return (2, 0.0, group)
    if dimension == "lines" and group.isdigit():
        return (0, float(group), group)
    if dimension == "numsteps" and group in _BUCKETS:
        return (0, float(_BUCKETS.index(group)), group)
    return (1 if dimension in ORDINAL else 0, 0.0, group)
