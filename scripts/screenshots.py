"""Write an SVG screenshot of each screen into screens/, made by the app itself.

Run: `python scripts/screenshots.py` (uses ../shared/data/cruxeval.jsonl or $CRUXTUI_DATASET, else
the starter set). Each entry drives the app with Pilot to the screen it shows; features add theirs
to SHOTS. Screenshots are deterministic (fixed size, no cursor blink, workers awaited).
"""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
from collections.abc import Awaitable, Callable
from pathlib import Path

from textual.pilot import Pilot

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from cruxtui.core.data.dataset import Dataset, load_dataset  # noqa: E402
from cruxtui.tui.app import CruxApp  # noqa: E402
from cruxtui.tui.state import TuiOptions  # noqa: E402

SIZE = (110, 34)
Drive = Callable[[Pilot], Awaitable[None]]


async def browse(pilot: Pilot) -> None:
    await pilot.pause()


async def browse_search(pilot: Pilot) -> None:
    await pilot.press("slash", *"rfind")
    await pilot.pause()


async def sample(pilot: Pilot) -> None:
    await pilot.press("enter")
    await pilot.pause()


async def trace(pilot: Pilot) -> None:
    """Trace screen of the first sample, a few steps in, then on to the line's next visit."""
    await pilot.press("enter")
    await pilot.pause()
    await pilot.press("t")
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()
    await pilot.press("right", "right", "right", "right", "right", "down")
    await pilot.pause()


SAMPLE_0_CHAIN = """We call f with nums = [1, 1, 3, 1, 3, 1] and output = [].
In the first iteration, n = 1 and nums.count(1) is 4, so output becomes [(4, 1)].
In the second iteration, n = 1 again, so output is now [(4, 1), (4, 1)].
In the third iteration, n = 3; 3 appears 3 times, so output becomes [(4, 1), (4, 1), (3, 3)].
After sorting in reverse, the function returns [(4, 1), (4, 1), (4, 1), (4, 1), (3, 3), (3, 3)]."""


async def trace_reasoning(pilot: Pilot) -> None:
    """Trace screen of the first sample with a (wrong) chain of thought aligned beside it."""
    from cruxtui.tui.screens.trace_screen import TraceScreen

    await pilot.press("enter")
    await pilot.pause()
    await pilot.press("t")
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()
    screen = pilot.app.screen
    assert isinstance(screen, TraceScreen)
    screen.show_reasoning(SAMPLE_0_CHAIN, "pasted")
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()
    await pilot.press("d")
    await pilot.pause()


async def cases(pilot: Pilot) -> None:
    """The Cases screen on the example gallery in cases/ (real Code Llama failures)."""
    await pilot.press("C")
    await pilot.pause()


async def cases_replay(pilot: Pilot) -> None:
    """A case replayed (its recorded responses, re-extracted and re-scored), result in view."""
    await cases(pilot)
    await pilot.press("down", "r")
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()
    pilot.app.screen.query_one("#case-detail").scroll_end(animate=False)
    await pilot.pause()


async def perturb(pilot: Pilot) -> None:
    """Perturb screen: sample_12 anonymised, then a comparison flipped; the new output below."""
    from textual.widgets import Input, Select

    pilot.app.open_sample("sample_12")
    await pilot.pause()
    await pilot.press("p")
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()
    screen = pilot.app.screen
    screen.query_one("#perturb-add").press()
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()
    screen.query_one("#perturb-transform", Select).value = "flip-compare"
    await pilot.pause()
    screen.query_one("#perturb-params", Input).value = "1"
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()


async def run_panel(pilot: Pilot) -> None:
    """Run panel on the first sample: a local reasoning model (the test server, right or wrong at
    random, thinking first in `reasoning_content`) streamed three chain-of-thought generations, one
    request at a time; each card shows the thinking in its own section, then the answer and its
    verdict. The run goes to a throwaway store."""
    from textual.widgets import Input, Select

    from cruxtui.testing.fake_openai import CruxevalResponder, FakeOpenAI

    app = pilot.app
    assert isinstance(app, CruxApp)
    thinking = (
        "f collects (count, n) for every n in nums, sorts them in reverse and returns them. "
        "1 appears four times and 3 twice, so the pairs are (4, 1) four times and (2, 3) twice."
    )
    with FakeOpenAI(
        CruxevalResponder(app.state.dataset.samples, "mixed"), chunk_chars=6, think=thinking
    ) as server:
        await pilot.press("enter")
        await pilot.pause()
        await pilot.press("r")
        await pilot.pause()
        panel = app.screen.query_one("#run-panel")
        panel.query_one("#run-endpoint", Input).value = server.url
        panel.query_one("#run-model", Input).value = "fake-model"
        panel.query_one("#run-mode", Select).value = "cot"
        panel.query_one("#run-n", Input).value = "3"
        panel.query_one("#run-concurrency", Input).value = "1"
        panel.query_one("#run-go").press()
        await pilot.pause()
        await app.workers.wait_for_complete()
        panel.query_one("#run-stream").focus()
        await pilot.pause()


async def runs(pilot: Pilot) -> None:
    """Runs screen: a direct and a chain-of-thought run of a local model over 60 samples,
    compared (pass@1 with intervals, the samples where they disagree)."""
    from cruxtui.core.models import ModelSpec, SamplingParams, make_backend
    from cruxtui.core.runs.runner import Runner, prepare_run
    from cruxtui.testing.fake_openai import CruxevalResponder, FakeOpenAI

    app = pilot.app
    assert isinstance(app, CruxApp)
    store = app.state.run_store
    samples = {s.id: s for s in app.state.dataset.samples[:60]}
    with FakeOpenAI(CruxevalResponder(samples.values(), "mixed", accuracy=0.6)) as server:
        for seed, mode in enumerate(("direct", "cot")):
            backend = make_backend(ModelSpec("openai", "fake-model", server.url, "chat"))
            _, plan = prepare_run(
                store,
                backend,
                dataset_digest=app.state.dataset.digest,
                task="output",
                mode=mode,
                style="chat",
                params=SamplingParams(n=3, seed=seed),
            )
            await Runner(plan, store, samples).run(list(samples))
            await backend.aclose()
    await pilot.press("R", "space", "down", "space", "c")
    await pilot.pause()


SHARED = Path(os.environ.get("CRUXTUI_SHARED_DATA") or REPO.parent / "shared" / "data")
CODELLAMA_OUTPUT = SHARED / "generations" / "codellama-7b_temp0.2_output"


async def scored(pilot: Pilot) -> None:
    """Browse with Code Llama 7B's released output generations scored: failures only, worst first."""
    assert isinstance(pilot.app, CruxApp)
    pilot.app.load_generations(str(CODELLAMA_OUTPUT / "generations.json"), "output")
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()
    await pilot.press("F", "o", "o", "o", "o", "o")  # failures only; sort by the pass column
    await pilot.pause()


async def sample_scored(pilot: Pilot) -> None:
    """A sample's ten generations from that set, each with its verdict and reason."""
    assert isinstance(pilot.app, CruxApp)
    pilot.app.load_generations(str(CODELLAMA_OUTPUT / "generations.json"), "output")
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()
    pilot.app.open_sample("sample_85")
    await pilot.pause()


async def insights(pilot: Pilot) -> None:
    """Insights on Code Llama 7B's released output generations (--generations): pass@1 per
    method called."""
    assert isinstance(pilot.app, CruxApp)
    app = pilot.app
    while app.state.scored is None:  # judged in a worker started after the first refresh
        await pilot.pause(0.1)
    await pilot.press("I")
    await app.workers.wait_for_complete()
    await pilot.pause()


async def insights_compare(pilot: Pilot) -> None:
    """Insights of the two runs of the Runs shot by output type: CoT (marked first) as A, direct
    as B, so A−B is what chain-of-thought changes."""
    from textual.widgets import Select

    await runs(pilot)
    await pilot.press("I")
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()
    pilot.app.screen.query_one("#insights-by", Select).value = "type"
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()


def throwaway_store() -> TuiOptions:
    return TuiOptions(store=str(Path(tempfile.mkdtemp()) / "runs.sqlite"))


OPTIONS: dict[str, Callable[[], TuiOptions]] = {
    "run-panel": throwaway_store,
    "runs": throwaway_store,
    "insights": lambda: TuiOptions(
        generations=str(CODELLAMA_OUTPUT / "generations.json"), task="output"
    ),
    "insights-compare": throwaway_store,
    "cases": lambda: TuiOptions(cases=str(REPO / "cases")),
    "cases-replay": lambda: TuiOptions(cases=str(REPO / "cases")),
}
"""The options a shot's app starts with (the command line's flags), where it needs any."""

SHOTS: dict[str, Drive] = {
    "insights": insights,
    "insights-compare": insights_compare,
    "scored": scored,
    "sample-scored": sample_scored,
    "run-panel": run_panel,
    "runs": runs,
    "perturb": perturb,
    "cases": cases,
    "cases-replay": cases_replay,
    "trace": trace,
    "trace-reasoning": trace_reasoning,
    "browse": browse,
    "browse-search": browse_search,
    "sample": sample,
}


def default_dataset() -> Dataset:
    shared = SHARED / "cruxeval.jsonl"
    path = os.environ.get("CRUXTUI_DATASET") or (str(shared) if shared.exists() else None)
    return load_dataset(path, offline=True)


async def shoot(name: str, drive: Drive, out: Path) -> Path:
    app = CruxApp(default_dataset(), OPTIONS.get(name, TuiOptions)())
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await drive(pilot)
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()
        path = out / f"{name}.svg"
        app.save_screenshot(filename=path.name, path=str(out))
    return path


async def main(names: list[str]) -> None:
    out = REPO / "screens"
    out.mkdir(exist_ok=True)
    for name in names or list(SHOTS):
        print(await shoot(name, SHOTS[name], out))


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1:]))
