"""`cruxtui --generations FILE --task output` with Pilot: the pass column, the failures-only key,
and the Sample screen's verdict list; a bad file ends on the error screen, not a traceback."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import CODELLAMA_OUTPUT, wait_for

from cruxtui.core.data.dataset import Dataset
from cruxtui.tui.app import CruxApp
from cruxtui.tui.screens.browse_screen import BrowseScreen, Sort
from cruxtui.tui.screens.error_screen import ErrorScreen
from cruxtui.tui.screens.sample_screen import SampleScreen
from cruxtui.tui.state import TuiOptions
from cruxtui.tui.widgets.sample_table import SampleTable
from cruxtui.tui.widgets.verdict_list import VerdictList

SIZE = (110, 32)


def options(path: Path) -> TuiOptions:
    return TuiOptions(generations=str(path), task="output")


async def test_scored_set_in_browse_and_sample(official: Dataset) -> None:
    reference = json.loads((CODELLAMA_OUTPUT / "scored.json").read_text())["raw_scored_generations"]
    failing = {sid for sid, flags in reference.items() if not all(flags)}
    app = CruxApp(official, options(CODELLAMA_OUTPUT / "generations.json"))
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: "pass" in app.state.columns, what="the pass column")
        scored = app.state.scored
        assert scored is not None and scored.size == 8000
        browse = app.screen
        assert isinstance(browse, BrowseScreen)
        table = browse.query_one(SampleTable)

        await pilot.press("F")
        await wait_for(pilot, lambda: table.row_count < 800, what="failures only")
        assert set(browse.visible_ids) == failing and table.row_count == len(failing)
        await pilot.press("F")
        await wait_for(pilot, lambda: table.row_count == 800, what="every sample again")

        browse.sort = Sort("pass")  # sort by pass rate: the worst samples first
        await pilot.pause()
        worst = browse.visible_ids[0]
        assert not any(reference[worst])
        app.open_sample("sample_130")
        await pilot.pause()
        assert isinstance(app.screen, SampleScreen)
        listing = str(app.screen.query_one(VerdictList).render())
        passed = sum(reference["sample_130"])
        assert f"{passed}/10 pass" in listing
        assert listing.count("wrong") == 10 - passed
        assert "expected" in listing
        await pilot.press("right_square_bracket")  # the list follows the sample shown
        await pilot.pause()
        shown = app.screen.sample.id
        assert f"{sum(reference[shown])}/10 pass" in str(app.screen.query_one(VerdictList).render())


async def test_no_failures_key_and_no_list_without_a_scored_set(official: Dataset) -> None:
    app = CruxApp(official)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("F")
        await pilot.pause()
        assert "failures only" not in app.state.filters
        assert app.screen.check_action("toggle_failures", ()) is False
        app.open_sample("sample_0")
        await pilot.pause()
        assert not app.screen.query_one(VerdictList).display


async def test_bad_generations_file_shows_the_entry(official: Dataset, tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"sample_0": ["1", 2]}))
    app = CruxApp(official, options(bad))
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, ErrorScreen), what="the error")
        text = str(app.screen.query_one("#error-message").render())
        assert "entry 'sample_0'[1]: expected a string, got a number" in text
        assert app.state.scored is None
