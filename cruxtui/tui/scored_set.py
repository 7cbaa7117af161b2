"""A scored generations file in the TUI: `cruxtui --generations FILE --task output|input`.

The app reads and judges the file in a thread worker (the sandbox does the work; the first paint
never waits) and holds the result in `AppState.scored`. Browse then gets a sortable `pass` column
(passed/total per sample), `F` toggles a "failures only" filter there, and the Sample screen lists
each generation with its verdict and reason. This module holds the pieces; `CruxApp` wires them.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING

from rich.text import Text

from cruxtui.core.data.dataset import Dataset, Sample
from cruxtui.tui.columns import Column

if TYPE_CHECKING:
    from cruxtui.core.sandbox.pool import Sandbox
    from cruxtui.core.scoring.scored_file import ScoredSet

KEY = "pass"
FILTER = "failures only"


def score_file(dataset: Dataset, path: str, task: str, sandbox: Sandbox) -> ScoredSet:
    """Read and judge `path` (blocking: call from a thread worker). Raises with a clear message
    when the file is unreadable, malformed or names samples the dataset lacks."""
    # Deferred for start-up speed: scoring is needed only once a file is named.
    from cruxtui.core.scoring.generations_file import check_sample_ids, load_generations
    from cruxtui.core.scoring.scored_file import score_generations

    generations = load_generations(path)
    check_sample_ids(generations, dataset, path)
    return score_generations(dataset, generations, task, sandbox=sandbox)


def pass_column(scored: ScoredSet) -> Column:
    """The Browse column: passed/total per sample, sorted by pass rate (missing last)."""
    return Column(
        KEY, "pass", value=partial(_cell, scored), sort_key=partial(_rate_order, scored), width=7
    )


def failing(scored: ScoredSet) -> Callable[[Sample], bool]:
    """The "failures only" filter: samples with at least one failing generation."""
    return partial(_failing, scored)


def summary(scored: ScoredSet, name: str) -> str:
    """What the notification says when a file is judged."""
    pass1 = scored.pass_at(1)
    official = scored.pass_at(1, official=True)
    score = "n/a" if pass1 is None else f"{pass1:.2f}"
    if official is not None and official != pass1:
        score += f" (official check {official:.2f})"
    return (
        f"{name}: {scored.size} predictions over {len(scored.verdicts)} samples, pass@1 {score}. "
        "F in Browse: failures only."
    )


def _failing(scored: ScoredSet, sample: Sample) -> bool:
    rate = scored.pass_rate(sample.id)
    return rate is not None and rate < 1


def _cell(scored: ScoredSet, sample: Sample) -> Text:
    verdicts = scored.verdicts.get(sample.id)
    if not verdicts:
        return Text("")
    passed = sum(v.passed for v in verdicts)
    style = "green" if passed == len(verdicts) else "red" if passed == 0 else "yellow"
    return Text(f"{passed}/{len(verdicts)}", style=style, no_wrap=True)


def _rate_order(scored: ScoredSet, sample: Sample) -> tuple[bool, float]:
    rate = scored.pass_rate(sample.id)
    return (rate is None, rate or 0.0)
