"""Search keystroke to Browse table updated, 800 samples, in the real app (headless). Goal: < 50 ms.

For realistic queries typed one character at a time, it measures the work a keystroke causes:
the search (core), rebuilding the table's rows, and rendering every visible line of the table.
It also reports the end-to-end time through Pilot (key press -> app idle), which includes
Pilot's own fixed waits for the next frame and is an upper bound.
Usage: python benchmarks/bench_browse_search.py [DATASET]
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import time
from pathlib import Path

from textual.app import App, ComposeResult
from textual.widgets import Input

from cruxtui.core.data.dataset import load_dataset
from cruxtui.tui.app import CruxApp
from cruxtui.tui.screens.browse_screen import BrowseScreen
from cruxtui.tui.widgets.sample_table import SampleTable

REPO = Path(__file__).resolve().parent.parent
DEFAULT = REPO.parent / "shared" / "data" / "cruxeval.jsonl"
QUERIES = ["rfind", "removeprefix", "sort reverse", "method:count", "sample_42", "rfnid", "zzqx"]


def summary(name: str, times: list[float]) -> str:
    times = sorted(times)
    p95 = times[max(0, int(len(times) * 0.95) - 1)]
    return (
        f"{name}: median {statistics.median(times):.1f} ms, p95 {p95:.1f} ms, "
        f"max {times[-1]:.1f} ms over {len(times)} keystrokes"
    )


class _BareInput(App[None]):
    """Baseline: an app with nothing but an Input, to measure Pilot's own fixed cost per key."""

    def compose(self) -> ComposeResult:
        yield Input()


async def pilot_baseline(n: int) -> list[float]:
    times = []
    async with _BareInput().run_test() as pilot:
        for i in range(n):
            t0 = time.perf_counter()
            await pilot.press("abcdefghij"[i % 10])
            times.append((time.perf_counter() - t0) * 1000)
    return times


async def main(path: str) -> None:
    app = CruxApp(load_dataset(path, offline=True))
    work: list[float] = []
    end_to_end: list[float] = []
    async with app.run_test(size=(110, 34)) as pilot:
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, BrowseScreen)
        table = screen.query_one(SampleTable)
        search = screen.query_one("#search", Input)
        with search.prevent(Input.Changed):
            for query in QUERIES:
                for i in range(1, len(query) + 1):
                    search.value = query[:i]
                    t0 = time.perf_counter()
                    screen._apply_search()
                    for y in range(table.size.height):
                        table.render_line(y)
                    work.append((time.perf_counter() - t0) * 1000)
                    assert table.row_count == len(screen.visible_ids)
                search.value = ""
        for query in QUERIES:
            await pilot.press("slash")
            for ch in query:
                t0 = time.perf_counter()
                await pilot.press("space" if ch == " " else ch)
                end_to_end.append((time.perf_counter() - t0) * 1000)
            await pilot.press("escape")
    print(
        summary("keystroke work (search + rebuild + render visible lines)", work)
        + " (goal < 50 ms)"
    )
    print(summary("end to end through Pilot (includes Pilot's frame waits)", end_to_end))
    print(
        summary(
            "same Pilot key press on a bare one-Input app (Pilot's fixed cost)",
            await pilot_baseline(len(end_to_end)),
        )
    )


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1] if len(sys.argv) > 1 else str(DEFAULT)))
