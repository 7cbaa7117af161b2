"""A scored set as slicing sees it: per sample, how many generations and how many passed.

Every source of verdicts (a stored run, a generations file judged in the sandbox, several runs
pooled) comes down to the same few numbers, so one slicing serves all of them and a table from a
run and one from a file mean the same thing.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from cruxtui.core.util.natural import natural_key

if TYPE_CHECKING:
    from cruxtui.core.runs.store import RunInfo, RunStore
    from cruxtui.core.scoring.scored_file import ScoredSet


class InsightsError(Exception):
    """Results that cannot be sliced as asked (message for users)."""


FILE_MODE = "imported"
"""The prompt mode of a generations file: unknown, and named as imported runs name it."""


@dataclass(frozen=True)
class Outcome:
    """One sample's result in one scored set."""

    sample_id: str
    n: int
    """Generations (predictions) judged; always at least 1."""
    passed: int
    mode: str = ""
    """The prompt mode that produced them (direct, cot, scratchpad, imported)."""

    @property
    def rate(self) -> float:
        """Fraction of the generations that passed: this sample's pass@1."""
        return self.passed / self.n


@dataclass(frozen=True)
class Results:
    """Outcomes of one scored set (or several pooled), with a label for tables and figures."""

    label: str
    task: str
    outcomes: tuple[Outcome, ...]

    @property
    def predictions(self) -> int:
        return sum(o.n for o in self.outcomes)

    @property
    def unique(self) -> bool:
        """True if no sample appears twice (always, except for pooled runs sharing samples)."""
        return len({o.sample_id for o in self.outcomes}) == len(self.outcomes)

    def by_sample(self) -> dict[str, Outcome]:
        """Sample id -> outcome; only meaningful when `unique`."""
        return {o.sample_id: o for o in self.outcomes}


def from_counts(
    label: str, task: str, counts: Iterable[tuple[str, int, int]], mode: str = ""
) -> Results:
    """Results from (sample id, generations, passed) triples, in natural order of the ids
    (`sample_2` before `sample_12`, as lists of samples are shown); samples without generations
    dropped."""
    outcomes = [Outcome(sid, n, c, mode) for sid, n, c in counts if n > 0]
    outcomes.sort(key=lambda o: natural_key(o.sample_id))
    return Results(label, task, tuple(outcomes))


def from_run(store: RunStore, ref: str) -> tuple[RunInfo, Results]:
    """A stored run (id or unique prefix) and its results; `RunStoreError` if there is no such run."""
    info = store.run(ref)
    counts = store.counts(info.id)
    results = from_counts(
        f"{info.id} {info.label}",
        info.config.task,
        ((sid, n, c) for sid, (n, c) in counts.items()),
        info.config.mode,
    )
    return info, results


def from_scored(scored: ScoredSet, label: str, mode: str = FILE_MODE) -> Results:
    """A judged generations file (`score_generations`), with our verdicts."""
    return from_counts(
        label,
        scored.task,
        ((sid, len(vs), sum(v.passed for v in vs)) for sid, vs in scored.verdicts.items()),
        mode,
    )


def pooled(results: Sequence[Results]) -> Results:
    """Several scored sets as one: each set's result on a sample stays one outcome of its own.

    What slicing by prompt mode needs (a direct and a CoT run side by side). A sample both sets
    ran counts once in each, so `samples` then counts sample results, not distinct samples.
    """
    if len(results) == 1:
        return results[0]
    tasks = {r.task for r in results}
    if len(tasks) > 1:
        raise InsightsError(f"cannot pool runs of different tasks ({', '.join(sorted(tasks))})")
    outcomes = tuple(o for r in results for o in r.outcomes)
    return Results(" + ".join(r.label for r in results), results[0].task, outcomes)
