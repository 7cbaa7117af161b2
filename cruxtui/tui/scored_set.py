"""A scored generations file in the TUI: `cruxtui --generations FILE --task output|input`.

The file is read and judged in a thread worker (the sandbox does the work; the first paint never
waits). When it is done, Browse gets a sortable `pass` column (passed/total per sample), `F`
toggles a "failures only" filter there, and the Sample screen lists each generation with its
verdict and reason.
"""

from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.text import Text
from textual.worker import get_current_worker

from cruxtui.tui.columns import Column

if TYPE_CHECKING:
    from cruxtui.core.scoring.scored_file import ScoredSet
    from cruxtui.tui.app import CruxApp

KEY = "pass"
FILTER = "failures only"
_ATTR = "_crux_scored_set"


def scored_set_of(app: Any) -> ScoredSet | None:
    """The scored set the app holds (None until one is loaded and judged)."""
    return getattr(app, _ATTR, None)


def install(app: CruxApp) -> None:
    """On start-up: judge the generations file the command line named, if any."""
    path = getattr(app.options, "generations", None)
    if path:
        load(app, path, getattr(app.options, "task", None) or "output")


def load(app: CruxApp, path: str, task: str) -> None:
    """Read and judge `path` in a thread worker; errors reach the app's error screen."""
    app.notify(f"Scoring {Path(path).name} ({task} task)…", timeout=4)
    app.run_worker(
        partial(_score, app, path, task),
        thread=True,
        name=f"Scoring {Path(path).name}",
        group=KEY,
        exclusive=True,
        exit_on_error=False,
    )


def _score(app: CruxApp, path: str, task: str) -> None:
    from cruxtui.core.sandbox.pool import default_sandbox
    from cruxtui.core.scoring.generations_file import check_sample_ids, load_generations
    from cruxtui.core.scoring.scored_file import score_generations

    worker = get_current_worker()
    generations = load_generations(path)
    check_sample_ids(generations, app.dataset, path)
    scored = score_generations(app.dataset, generations, task, sandbox=default_sandbox())
    if not worker.is_cancelled:
        app.call_from_thread(show, app, scored, Path(path).name)


def show(app: CruxApp, scored: ScoredSet, name: str = "") -> None:
    """Hold `scored` on the app: the Browse column, the filter key and the Sample list use it."""
    setattr(app, _ATTR, scored)
    app.set_column(
        Column(
            KEY,
            "pass",
            value=partial(_cell, scored),
            sort_key=partial(_rate_order, scored),
            width=7,
        )
    )
    if FILTER in app.extra_filters:
        app.set_filter(FILTER, partial(_failing, scored))
    for screen in app.screen_stack:
        screen.refresh_bindings()  # Browse's F (failures only) appears now
    pass1 = scored.pass_at(1)
    official = scored.pass_at(1, official=True)
    score = "n/a" if pass1 is None else f"{pass1:.2f}"
    if official is not None and official != pass1:
        score += f" (official check {official:.2f})"
    app.notify(
        f"{name}: {scored.size} predictions over {len(scored.verdicts)} samples, pass@1 {score}. "
        "F in Browse: failures only.",
        title="Scored",
        timeout=8,
    )


def toggle_failures(app: CruxApp) -> None:
    """Browse's one-key filter: only samples with at least one failing generation (and back)."""
    scored = scored_set_of(app)
    if scored is None:
        app.notify(
            "No scored generations: start with --generations FILE --task output|input.",
            severity="warning",
        )
        return
    if FILTER in app.extra_filters:
        app.set_filter(FILTER, None)
    else:
        app.set_filter(FILTER, partial(_failing, scored))


def _failing(scored: ScoredSet, sample: Any) -> bool:
    rate = scored.pass_rate(sample.id)
    return rate is not None and rate < 1


def _cell(scored: ScoredSet, sample: Any) -> Text:
    verdicts = scored.verdicts.get(sample.id)
    if not verdicts:
        return Text("")
    passed = sum(v.passed for v in verdicts)
    style = "green" if passed == len(verdicts) else "red" if passed == 0 else "yellow"
    return Text(f"{passed}/{len(verdicts)}", style=style, no_wrap=True)


def _rate_order(scored: ScoredSet, sample: Any) -> tuple[bool, float]:
    rate = scored.pass_rate(sample.id)
    return (rate is None, rate or 0.0)
