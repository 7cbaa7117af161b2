"""The guided tour (`--demo`) under Pilot: from its first stop to its last and back, leaving it to
explore and resuming it, what each stop really shows (the replayed answers judged, the trace with
the answer's first divergence, the perturbed truth, the replayed case), and a snapshot of each
stop. On the starter set, offline, as on a stage with nothing but cruxtui installed.

The app works in `gallery/` under the test's own folder (the working directory), a copy of the
example gallery, so the Cases screen names it the same way in every run.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from conftest import wait_for

from cruxtui.core.data.dataset import Dataset, Source, load_dataset
from cruxtui.core.demo.tour import CASE, STOPS, example_gallery
from cruxtui.tui.app import CruxApp
from cruxtui.tui.screens.browse_screen import BrowseScreen
from cruxtui.tui.screens.cases_screen import CasesScreen
from cruxtui.tui.screens.perturb_screen import PerturbScreen
from cruxtui.tui.screens.sample_screen import SampleScreen
from cruxtui.tui.screens.trace_screen import TraceScreen
from cruxtui.tui.state import TuiOptions
from cruxtui.tui.tour_driver import TourCaption
from cruxtui.tui.widgets.reasoning_view import ReasoningView
from cruxtui.tui.widgets.run_panel import RunPanel

SIZE = (110, 34)
LAST = len(STOPS) - 1


@pytest.fixture
def starter() -> Dataset:
    """What a machine with nothing but cruxtui opens: the starter set (offline, no cache)."""
    dataset = load_dataset(offline=True)
    assert dataset.source is Source.STARTER
    return dataset


@pytest.fixture
def demo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> TuiOptions:
    shutil.copytree(example_gallery(), tmp_path / "gallery")
    monkeypatch.chdir(tmp_path)
    return TuiOptions(demo=True, cases="gallery", store=str(tmp_path / "runs.sqlite"))


async def at_stop(pilot, index: int) -> None:  # type: ignore[no-untyped-def]
    tour = pilot.app.tour
    await wait_for(pilot, lambda: tour.ready and tour.index == index, what=f"tour stop {index}")


def caption(app: CruxApp) -> str:
    captions = app.screen.query(TourCaption)
    return str(captions.first().render()) if captions else ""


def shown_bindings(app: CruxApp) -> set[str]:
    return {b.binding.id or "" for b in app.active_bindings.values() if b.enabled}


async def test_tour_from_first_stop_to_last_and_back(starter: Dataset, demo: TuiOptions) -> None:
    app = CruxApp(starter, demo)
    async with app.run_test(size=SIZE) as pilot:
        tour = app.tour
        assert tour is not None and tour.tour.sample.id == CASE
        assert not tour.tour.from_benchmark  # the starter set does not hold sample_12

        await at_stop(pilot, 0)
        assert isinstance(app.screen, BrowseScreen)
        assert "Tour 1/5 · The benchmark" in caption(app)
        assert "40 starter functions" in caption(app)
        assert {"tour.next", "tour.leave"} <= shown_bindings(app)
        assert "tour.prev" not in shown_bindings(app)  # nothing before the first stop

        await pilot.press("pagedown")
        await at_stop(pilot, 1)  # a real failure: the recorded answers, replayed and judged
        screen = app.screen
        assert isinstance(screen, SampleScreen) and screen.sample.id == CASE
        panel = screen.query_one(RunPanel)
        assert panel.run_id is not None and tour.problem is None
        stored = app.state.run_store.generations(panel.run_id, CASE)
        assert len(stored) == 10 and not any(g.passed for g in stored)
        assert {g.answer for g in stored} == {"'If you want to live a happy life!'"}
        assert "Tour 2/5 · A real failure" in caption(app)

        await pilot.press("pagedown")
        await at_stop(pilot, 2)  # the trace, the answer beside it, the first divergence
        trace_screen = app.screen
        assert isinstance(trace_screen, TraceScreen) and trace_screen.trace is not None
        view = trace_screen.query_one(ReasoningView)
        assert view.alignment is not None
        divergence = view.alignment.first_divergence
        assert divergence is not None and divergence.claim.kind == "return"
        assert divergence.true_value == "'If you want to live a happy life! Daniel'"
        assert trace_screen.index == divergence.trace_step  # d was pressed: on the return
        assert trace_screen.trace.steps[trace_screen.index].event == "return"
        assert "reading the prefix test as a suffix test" in caption(app)  # the case's note

        await pilot.press("pagedown")
        await at_stop(pilot, 3)  # a perturbation that changes the answer
        perturb = app.screen
        assert isinstance(perturb, PerturbScreen) and perturb.variant is not None
        assert "!= x" in perturb.variant.sample.code
        assert perturb.variant.sample.output == "'e a happy life! Daniel'"
        assert perturb.variant.sample.output != perturb.sample.output

        await pilot.press("pagedown")
        await at_stop(pilot, LAST)  # the case in the gallery, replayed
        cases = app.screen
        assert isinstance(cases, CasesScreen)
        assert cases.current is not None and cases.current.sample_id == CASE
        assert cases.last_replay is not None and cases.last_replay.status == "reproduced"
        assert "end of the tour" in caption(app)
        assert "tour.next" not in shown_bindings(app)

        await pilot.press("pagedown")  # past the last stop: nothing moves
        await pilot.pause()
        assert tour.index == LAST and isinstance(app.screen, CasesScreen)

        await pilot.press("pageup")
        await at_stop(pilot, 3)
        assert isinstance(app.screen, PerturbScreen)
        assert [type(s) for s in app.screen_stack[1:]] == [
            BrowseScreen,
            SampleScreen,
            PerturbScreen,
        ]


async def test_a_stop_can_be_left_to_explore_and_the_tour_resumed(
    starter: Dataset, demo: TuiOptions
) -> None:
    app = CruxApp(starter, demo)
    async with app.run_test(size=SIZE) as pilot:
        tour = app.tour
        assert tour is not None
        await at_stop(pilot, 0)
        await pilot.press("pagedown", "pagedown")
        await at_stop(pilot, 2)
        assert isinstance(app.screen, TraceScreen)

        await pilot.press("f2")  # explore from here
        await pilot.pause()
        assert not tour.active and not app.screen.query(TourCaption)
        assert "tour.resume" in shown_bindings(app) and "tour.next" not in shown_bindings(app)
        trace_screen = app.screen
        await pilot.press("home")  # the trace's own keys work again
        await pilot.pause()
        assert trace_screen.index == 0
        await pilot.press("pagedown")  # not a tour key while exploring
        await pilot.pause()
        assert tour.index == 2
        await pilot.press("escape", "escape")  # wander back to Browse
        await wait_for(pilot, lambda: isinstance(app.screen, BrowseScreen), what="Browse")

        await pilot.press("f2")  # resume: the stop it left, rebuilt
        await at_stop(pilot, 2)
        assert tour.active and isinstance(app.screen, TraceScreen)
        assert app.screen.query(TourCaption) and "Tour 3/5" in caption(app)
        await pilot.press("pagedown")
        await at_stop(pilot, 3)

        for index in (2, 1, 0):  # back to the start: Browse shows its caption again, once
            await pilot.press("pageup")
            await at_stop(pilot, index)
        assert isinstance(app.screen, BrowseScreen) and tour.problem is None
        assert [len(s.query(TourCaption)) for s in app.screen_stack] == [0, 1]
        assert "Tour 1/5" in caption(app)


@pytest.mark.parametrize("stop", range(len(STOPS)), ids=[s.key for s in STOPS])
def test_tour_snapshots(snap_compare, starter: Dataset, demo: TuiOptions, stop: int) -> None:
    async def run_before(pilot) -> None:  # type: ignore[no-untyped-def]
        await at_stop(pilot, 0)
        for index in range(1, stop + 1):
            await pilot.press("pagedown")
            await at_stop(pilot, index)
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()

    assert snap_compare(CruxApp(starter, demo), terminal_size=SIZE, run_before=run_before)
