"""The reasoning pane in the Trace screen: highlight follows the step, `d` jumps to the divergence."""

from __future__ import annotations

from textual.app import App

from cruxtui.core import tracer
from cruxtui.core.dataset import Sample
from cruxtui.core.trace import from_wire
from cruxtui.tui.screens.trace import TraceScreen
from cruxtui.tui.widgets.reasoning_view import ReasoningView, show_reasoning

CODE = "def f(s):\n    count = 0\n    for ch in s:\n        if ch == 'a':\n            count += 1\n    return count"
SAMPLE = Sample("sample_x", CODE, "'aba'", "2")
WRONG = """We start with s = 'aba' and count = 0.
In the first iteration, ch = 'a', so count becomes 1.
In the second iteration, ch is 'b'. Since 'b' == 'a' is True, count becomes 2.
After the loop, count is 3, so the function returns 3."""


class _TraceApp(App[None]):
    def on_mount(self) -> None:
        trace = from_wire(CODE, SAMPLE.call, tracer.run(CODE, SAMPLE.call))
        self.push_screen(TraceScreen(SAMPLE, trace=trace))


async def test_d_jumps_to_first_divergence() -> None:
    app = _TraceApp()
    async with app.run_test(size=(120, 32)) as pilot:
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, TraceScreen)
        view = show_reasoning(screen, WRONG, "test")
        await pilot.pause()
        assert isinstance(view, ReasoningView)
        div = view.alignment.first_divergence
        assert div is not None and div.step == 3  # "'b' == 'a' is True" (reasoning step 3)
        assert screen.index == 0
        await pilot.press("d")
        await pilot.pause()
        assert screen.index == div.trace_step
        assert view.current == div.step
        assert screen.query_one(f"#reasoning-step-{div.step}").has_class("-divergence")
        # Stepping the trace moves the highlight to the step aligned there.
        await pilot.press("home")
        await pilot.pause()
        assert view.current in (None, 0)


async def test_paste_dialog_shows_pane() -> None:
    app = _TraceApp()
    async with app.run_test(size=(120, 32)) as pilot:
        await pilot.pause()
        await pilot.press("r")
        await pilot.pause()
        area = app.screen.query_one("#reasoning-text")
        area.text = WRONG
        await pilot.press("ctrl+s")
        await pilot.pause()
        view = app.screen.query_one(ReasoningView)
        assert view.alignment.first_divergence is not None


def test_snapshot(snap_compare) -> None:  # noqa: ANN001
    async def run_before(pilot) -> None:  # noqa: ANN001
        await pilot.pause()
        show_reasoning(pilot.app.screen, WRONG, "pasted")
        await pilot.pause()
        await pilot.press("d")
        await pilot.pause()

    assert snap_compare(_TraceApp(), terminal_size=(120, 32), run_before=run_before)


async def test_pick_a_stored_generation(tmp_path) -> None:  # noqa: ANN001
    """The dialog lists this sample's generations from the run store; picking one aligns it."""
    from argparse import Namespace

    from cruxtui.core.runs import Generation, RunConfig, RunStore

    path = tmp_path / "runs.sqlite"
    with RunStore(path) as store:
        run = store.open_run(RunConfig(spec={"backend": "replay", "model": "demo"}, task="output",
                                       mode="cot", style="chat", params={"n": 1},
                                       template_version="t1", dataset_digest="d"))
        store.add_generation(run.id, Generation("sample_x", 0, WRONG, "3", "wrong", False, "got 3"))
        store.finish(run.id, "done")

    app = _TraceApp()
    app.options = Namespace(store=str(path))
    async with app.run_test(size=(120, 32)) as pilot:
        await pilot.pause()
        await pilot.press("r")
        await pilot.pause()
        stored = app.screen.query_one("#reasoning-stored")
        stored.focus()
        await pilot.press("enter")
        await pilot.pause()
        await pilot.press("ctrl+s")
        await pilot.pause()
        view = app.screen.query_one(ReasoningView)
        assert run.id in view.source
        assert view.alignment.first_divergence is not None
        assert view.alignment.chain.text == WRONG
