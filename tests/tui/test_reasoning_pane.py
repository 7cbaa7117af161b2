"""The reasoning pane in the Trace screen: highlight follows the step, `d` jumps to the divergence,
the pane re-aligns when another call is traced, and stored generations can be picked."""

from __future__ import annotations

from argparse import Namespace

from textual.app import App

from cruxtui.core.data.dataset import Sample
from cruxtui.core.sandbox.jobs import tracer
from cruxtui.core.trace.steps import from_wire
from cruxtui.tui.screens.trace_screen import TraceScreen
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


async def _settle(pilot) -> None:  # noqa: ANN001
    await pilot.pause()
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()


async def test_d_jumps_to_first_divergence() -> None:
    app = _TraceApp()
    async with app.run_test(size=(120, 32)) as pilot:
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, TraceScreen)
        view = show_reasoning(screen, WRONG, "test")
        await _settle(pilot)
        assert isinstance(view, ReasoningView) and view.alignment is not None
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


async def test_realigns_when_another_call_is_traced() -> None:
    """The same chain is right for f('aba') but wrong for f('bbb') once that call is traced."""
    right = "count = 0. First iteration: ch = 'a', count becomes 1. The function returns 2."
    app = _TraceApp()
    async with app.run_test(size=(120, 32)) as pilot:
        await pilot.pause()
        view = show_reasoning(app.screen, right, "test")
        await _settle(pilot)
        assert view is not None and view.alignment is not None
        assert view.alignment.first_divergence is None
        app.screen.run_trace("f('bbb')")
        await _settle(pilot)
        assert view.alignment.trace.call == "f('bbb')"
        assert view.alignment.first_divergence is not None


async def test_paste_dialog_shows_pane() -> None:
    app = _TraceApp()
    async with app.run_test(size=(120, 32)) as pilot:
        await pilot.pause()
        await pilot.press("r")
        await pilot.pause()
        area = app.screen.query_one("#reasoning-text")
        area.text = WRONG
        await pilot.press("ctrl+s")
        await _settle(pilot)
        view = app.screen.query_one(ReasoningView)
        assert view.alignment is not None and view.alignment.first_divergence is not None
        assert view.source == "pasted"


async def test_pick_a_stored_generation(tmp_path) -> None:  # noqa: ANN001
    """The dialog lists this sample's generations from the run store; picking one aligns it. An
    input-task generation makes the screen trace the call from its answer."""
    from cruxtui.core.runs.store import Generation, RunConfig, RunStore

    path = tmp_path / "runs.sqlite"
    input_chain = (
        "s = 'aa' gives count = 2, so f('aa') == 2.\n[ANSWER]\nassert f('aa') == 2\n[/ANSWER]"
    )
    with RunStore(path) as store:
        runs = {}
        for task, raw in (("output", WRONG), ("input", input_chain)):
            run = store.open_run(
                RunConfig(
                    spec={"backend": "replay", "model": "demo"},
                    task=task,
                    mode="cot",
                    style="chat",
                    params={"n": 1},
                    template_version="t1",
                    dataset_digest="d",
                )
            )
            store.add_generation(run.id, Generation("sample_x", 0, raw, "x", "wrong", False, "r"))
            store.finish(run.id, "done")
            runs[task] = run.id

    app = _TraceApp()
    app.options = Namespace(store=str(path))
    async with app.run_test(size=(120, 32)) as pilot:
        await pilot.pause()
        for task in ("output", "input"):
            await pilot.press("r")
            await pilot.pause()
            stored = app.screen.query_one("#reasoning-stored")
            labels = [str(stored.get_option_at_index(i).prompt) for i in range(stored.option_count)]
            stored.focus()
            stored.highlighted = next(i for i, label in enumerate(labels) if runs[task] in label)
            await pilot.press("enter")
            await pilot.pause()
            await pilot.press("ctrl+s")
            await _settle(pilot)
            view = app.screen.query_one(ReasoningView)
            assert runs[task] in view.source
        assert app.screen.call == "f('aa')"  # the input task's answer was traced
        assert view.alignment is not None and view.alignment.trace.call == "f('aa')"
        assert view.alignment.first_divergence is None


def test_snapshot(snap_compare) -> None:  # noqa: ANN001
    async def run_before(pilot) -> None:  # noqa: ANN001
        await pilot.pause()
        show_reasoning(pilot.app.screen, WRONG, "pasted")
        await _settle(pilot)
        await pilot.press("d")
        await pilot.pause()

    assert snap_compare(_TraceApp(), terminal_size=(120, 32), run_before=run_before)
