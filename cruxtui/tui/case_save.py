"""`s` anywhere a failure is on screen: find it, ask for tags and a note, save it as a case file.

The failure is the sample's generations in the run being watched (the run panel's run), else in
the scored generations file the Sample screen lists (`--generations`), else in the newest stored run
in which the sample failed. Finding it traces the sample and aligns the
reasoning, so that happens in a thread while the screen stays live.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from textual.screen import Screen
from textual.worker import Worker

from cruxtui.core.cases.build import case_from_scored, latest_failure
from cruxtui.core.cases.case_file import (
    CaseError,
    FailureCase,
    case_path,
    load_case,
    merge_tags,
    save_case,
)
from cruxtui.core.data.dataset import Sample
from cruxtui.tui.screens.case_form_screen import CaseFormScreen
from cruxtui.tui.state import AppState


def save_failure(
    screen: Screen[Any], state: AppState, sample: Sample, run_id: str | None = None
) -> Worker[Path | None]:
    """Start the save flow for `sample` on `screen`; a worker, since it waits for the modal. A
    variant made on the Perturb screen is saved with its transform chain and base sample."""

    async def work() -> Path | None:
        return await _save(screen, state, sample, run_id)

    # A function, not a coroutine made here: a worker cancelled before it starts (a second `s`
    # replaces it) then leaves no coroutine that was never awaited.
    worker: Worker[Path | None] = screen.run_worker(  # annotated: mypy cannot infer it
        work,
        name="Save case",
        group="save-case",
        exclusive=True,
        exit_on_error=False,
    )
    return worker


async def _save(
    screen: Screen[Any], state: AppState, sample: Sample, run_id: str | None
) -> Path | None:
    app = screen.app
    variant = state.variants.get(sample.id)
    try:
        draft = await asyncio.to_thread(_scored_failure, state, sample) if run_id is None else None
        if draft is None:
            draft = await asyncio.to_thread(
                latest_failure, state.run_store, state.dataset, sample.id, run_id, variant
            )
    except ValueError as exc:
        app.notify(str(exc), title="Save case", severity="error")
        return None
    if draft is None:
        app.notify(
            f"No failure of {sample.id} in the stored runs: run a model on it first (r).",
            title="Save case",
            severity="warning",
        )
        return None
    folder = state.cases_dir
    existing = _existing(case_path(draft, folder))
    summary = (
        f"{draft.sample_id} · {draft.task}/{draft.mode} · {draft.model.model}\n"
        f"failed {draft.failures} of {len(draft.generations)} response(s)"
        + ("\n(already saved: this updates it)" if existing else "")
    )
    answer = await app.push_screen_wait(
        CaseFormScreen(
            "Save this failure as a case",
            summary,
            tags=existing.tags if existing else [],
            note=existing.note if existing else "",
        )
    )
    if answer is None:
        return None
    draft.tags, draft.note = merge_tags([], answer[0]), answer[1]
    if existing is not None:
        draft.created = existing.created
    try:
        path = await asyncio.to_thread(save_case, draft, folder)
    except OSError as exc:
        app.notify(
            f"{folder}: cannot write ({exc.strerror or exc})", title="Save case", severity="error"
        )
        return None
    app.notify(f"Saved {path.name} in {folder}", title="Case saved")
    return path


def _scored_failure(state: AppState, sample: Sample) -> FailureCase | None:
    """The sample's generations in the scored set the Sample screen lists (`--generations`)."""
    scored = state.scored
    if scored is None or sample.id not in scored.verdicts or sample.id not in scored.generations:
        return None
    path = state.scored_path or Path("generations.json")
    return case_from_scored(
        sample,
        scored.task,
        scored.generations[sample.id],
        scored.verdicts[sample.id],
        model=path.parent.name or path.stem,
        source=str(path),
    )


def _existing(path: Path) -> FailureCase | None:
    try:
        return load_case(path) if path.exists() else None
    except CaseError:
        return None
