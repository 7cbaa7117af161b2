"""The reasoning pane in the Trace screen: highlight follows the step, `d` jumps to the divergence,
the pane re-aligns when another call is traced, and stored generations can be picked."""

from __future__ import annotations

from conftest import wait_for
from textual.app import App

from cruxtui.core.data.dataset import Dataset, Sample, Source
from cruxtui.core.sandbox.jobs import tracer
from cruxtui.core.trace.steps import from_wire
from cruxtui.tui.screens.trace_screen import TraceScreen
from cruxtui.tui.state import AppState, TuiOptions
from cruxtui.tui.widgets.reasoning_view import ReasoningView

CODE = "def f(s):\n    count = 0\n    for ch in s:\n        if ch == 'a':\n            count += 1\n    return count"
SAMPLE = Sample("sample_x", CODE, "'aba'", "2")
WRONG = """We start with s = 'aba' and count = 0.
In the first iteration, ch = 'a', so count becomes 1.
In the second iteration, ch is 'b'. Since 'b' == 'a' is True, count becomes 2.
After the loop, count is 3, so the function returns 3."""


class _TraceApp(App[None]):
    """The Trace screen alone, on one sample: screens take their state, not the whole app."""

    def __init__(self, options: TuiOptions | None = None) -> None:
        super().__init__()
        self.state = AppState(Dataset([SAMPLE], Source.PATH, "test.jsonl"), options or TuiOptions())

    def on_mount(self) -> None:
        trace = from_wire(CODE, SAMPLE.call, tracer.run(CODE, SAMPLE.call))
        self.push_screen(TraceScreen(self.state, SAMPLE, trace=trace))


async def aligned(pilot, view: ReasoningView | None) -> ReasoningView:  # noqa: ANN001
    """Wait until `view` shows its alignment with the screen's current trace."""
    assert view is not None
    screen = pilot.app.screen
    await wait_for(
        pilot,
        lambda: view.alignment is not None and view.alignment.trace is screen.trace,
        what="the alignment",
    )
    return view


async def test_d_jumps_to_first_divergence() -> None:
    app = _TraceApp()
    async with app.run_test(size=(120, 32)) as pilot:
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, TraceScreen)
        view = await aligned(pilot, screen.show_reasoning(WRONG, "test"))
        assert view.alignment is not None
        div = view.alignment.first_divergence
        assert div is not None and div.step == 3  # "'b' == 'a' is True" (reasoning step 3)
        assert screen.index == 0
        await pilot.press("d")
        await wait_for(pilot, lambda: screen.index == div.trace_step, what="the divergence")
        assert view.current == div.step
        assert screen.query_one(f"#reasoning-step-{div.step}").has_class("-divergence")
        # The header names both numberings: the reasoning step and the trace step d goes to.
        header = str(screen.query_one("#reasoning-header").render())
        assert f"reasoning step {div.step} = trace step {div.trace_step}" in header
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
        screen = app.screen
        assert isinstance(screen, TraceScreen)
        view = await aligned(pilot, screen.show_reasoning(right, "test"))
        assert view.alignment is not None and view.alignment.first_divergence is None
        screen.run_trace("f('bbb')")
        await wait_for(
            pilot,
            lambda: screen.trace is not None and screen.trace.call == "f('bbb')",
            what="the new trace",
        )
        await aligned(pilot, view)
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
        await wait_for(pilot, lambda: app.screen.query(ReasoningView), what="the pane")
        view = await aligned(pilot, app.screen.query_one(ReasoningView))
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

    app = _TraceApp(TuiOptions(store=str(path)))
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
            await wait_for(pilot, lambda: app.screen.query(ReasoningView), what="the pane")
            view = app.screen.query_one(ReasoningView)
            picked = runs[task]
            # Awaited within the iteration, so the loop variables are the ones meant.
            await wait_for(pilot, lambda: picked in view.source, what="the chain")  # noqa: B023
        screen = app.screen
        assert isinstance(screen, TraceScreen)
        assert screen.call == "f('aa')"  # the input task's answer was traced
        await wait_for(pilot, lambda: screen.trace is not None and screen.trace.call == "f('aa')")
        await aligned(pilot, view)
        assert view.alignment is not None and view.alignment.trace.call == "f('aa')"
        assert view.alignment.first_divergence is None


def test_snapshot(snap_compare) -> None:  # noqa: ANN001
    async def run_before(pilot) -> None:  # noqa: ANN001
        await pilot.pause()
        screen = pilot.app.screen
        await aligned(pilot, screen.show_reasoning(WRONG, "pasted"))
        await pilot.press("d")
        await wait_for(pilot, lambda: screen.index > 0, what="the divergence")

    assert snap_compare(_TraceApp(), terminal_size=(120, 32), run_before=run_before)


EXPRESSIONS = """We start with s = 'aba': len(s) is 3 and s[1] is 'b'.
In the first iteration ch == 'a' is True, so count becomes 1.
In the second iteration ch == 'a' is False and count stays 1.
Then s.count('a') gives 3, so the function returns 3."""


async def test_expression_claims_show_the_value_the_program_computed() -> None:
    app = _TraceApp()
    async with app.run_test(size=(120, 32)) as pilot:
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, TraceScreen)
        view = await aligned(pilot, screen.show_reasoning(EXPRESSIONS, "test"))
        first = str(screen.query_one("#reasoning-step-0").render())
        assert "len(s) -> 3" in first and "= 3 in the run" in first
        assert "s[1] -> 'b'" in first and "= 'b' in the run" in first
        last = str(screen.query_one("#reasoning-step-3").render())
        assert "s.count('a') -> 3" in last and "true: 2" in last
        assert view.alignment is not None and view.alignment.first_divergence is not None
        assert view.alignment.first_divergence.claim.name == "s.count('a')"


async def test_m_turns_model_extraction_on_and_off(monkeypatch) -> None:  # noqa: ANN001
    import json

    from cruxtui.testing.fake_openai import FakeOpenAI

    chain = "The loop sees 'a' twice, which is 3 times in all."
    reply = json.dumps([{"sentence": "which is 3 times", "subject": "s.count('a')", "value": "3"}])
    monkeypatch.delenv("CRUXTUI_EXTRACT_WITH", raising=False)
    monkeypatch.setenv("CRUXTUI_CONFIG_DIR", "/nonexistent-cruxtui-config")
    app = _TraceApp()
    async with app.run_test(size=(120, 32)) as pilot:
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, TraceScreen)
        view = await aligned(pilot, screen.show_reasoning(chain, "test"))
        assert view.alignment is not None and view.alignment.first_divergence is None
        view.focus()
        await pilot.press("m")  # no endpoint anywhere: a warning, nothing changes
        assert view.extract_with is None
        with FakeOpenAI(lambda _r: reply) as server:
            monkeypatch.setenv("CRUXTUI_EXTRACT_WITH", server.url)
            await pilot.press("m")
            await wait_for(
                pilot,
                lambda: view.alignment is not None and view.alignment.first_divergence is not None,
                what="the model's claim judged",
            )
        div = view.alignment.first_divergence
        assert div.claim.source == "model" and div.true_value == "2"
        assert "[model]" in str(screen.query_one(f"#reasoning-step-{div.step}").render())
        await pilot.press("m")
        await wait_for(
            pilot,
            lambda: view.alignment is not None and view.alignment.first_divergence is None,
            what="the text-only alignment",
        )


def test_snapshot_expression_claims(snap_compare) -> None:  # noqa: ANN001
    async def run_before(pilot) -> None:  # noqa: ANN001
        await pilot.pause()
        screen = pilot.app.screen
        await aligned(pilot, screen.show_reasoning(EXPRESSIONS, "pasted"))
        await pilot.press("d")
        await wait_for(pilot, lambda: screen.index > 0, what="the divergence")

    assert snap_compare(_TraceApp(), terminal_size=(120, 32), run_before=run_before)


async def test_an_input_task_chain_is_held_to_the_output_asked_for() -> None:
    """For the input task, proposing f(x) claims f(x) gives the sample's output: the pane aligns
    with that target, as `cruxtui align --task input` does, so a proposed input that gives
    another output is the divergence even when the chain never writes the output down."""
    from cruxtui.tui.widgets.reasoning_view import Reasoning

    app = _TraceApp()
    chain = "An 'a' counts one, so two of them are needed: f('ab').\n[ANSWER]\nf('ab')\n[/ANSWER]"
    async with app.run_test(size=(120, 32)) as pilot:
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, TraceScreen)
        view = screen.show_generation(Reasoning(chain, "demo", "input"))
        await wait_for(pilot, lambda: screen.trace is not None and screen.trace.call == "f('ab')")
        view = await aligned(pilot, view)
        assert view.target == SAMPLE.output
        assert view.alignment is not None
        div = view.alignment.first_divergence
        assert div is not None and div.claim.kind == "return" and div.true_value == "1"
