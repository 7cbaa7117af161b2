"""Trace: step through what `f` really does on an input, line by line, with its locals.

Opened from the Sample screen (`t`) on the sample's own call, or by any feature with another call
(a model's predicted input, a perturbed variant). The panes sit in one Horizontal (`#trace-panes`)
so a feature can add a pane beside the code and the locals with `add_pane`; every pane added that
way receives `StepChanged` whenever the current step (the reactive `index`) changes, and may post
`GotoStep` to move it. The reasoning pane (`show_reasoning`, `r`) is one such pane.
"""

from __future__ import annotations

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.reactive import var
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Footer, Header, Input, Static
from textual.worker import get_current_worker

from cruxtui.core.data.dataset import Sample
from cruxtui.core.reasoning.alignment import call_to_trace
from cruxtui.core.sandbox.jobs.tracer import problem_with
from cruxtui.core.sandbox.pool import Sandbox
from cruxtui.core.trace import steps
from cruxtui.core.trace.steps import Step, Trace
from cruxtui.tui.case_save import save_failure
from cruxtui.tui.messages import GotoStep, StepChanged, TraceReady
from cruxtui.tui.state import AppState
from cruxtui.tui.widgets.locals_table import LocalsTable
from cruxtui.tui.widgets.reasoning_view import (
    Reasoning,
    ReasoningPaste,
    ReasoningView,
    stored_generations,
)
from cruxtui.tui.widgets.timeline import Timeline
from cruxtui.tui.widgets.trace_code import TraceCode
from cruxtui.tui.workers import ReportsTaskErrors, app_sandbox


class TraceScreen(ReportsTaskErrors, Screen[None]):
    CSS_PATH = "trace.tcss"
    AUTO_FOCUS = ""  # keys go to the screen's stepping bindings, not to the hidden prompt
    KEY_WIDGETS = (ReasoningView,)
    """Widgets whose keys are this screen's too (F1 and the README list them: `key_table`)."""

    BINDINGS = [
        Binding("right", "step(1)", "Next", id="trace.next"),
        Binding("left", "step(-1)", "Prev", id="trace.prev"),
        Binding("down", "visit(1)", "Next visit", id="trace.next_visit"),
        Binding("up", "visit(-1)", "Prev visit", id="trace.prev_visit"),
        Binding("home", "start", "Start", id="trace.start"),
        Binding("end", "end", "End", id="trace.end"),
        Binding("colon", "ask('goto')", "Go to step", id="trace.goto"),
        Binding("c", "ask('call')", "Trace a call", id="trace.call"),
        Binding("r", "reasoning", "Reasoning", id="trace.reasoning"),
        Binding("s", "save_case", "Save case", id="trace.save_case"),
        Binding("escape", "back", "Back", id="trace.back"),
        # Vim-style aliases, not shown in the footer.
        Binding("l", "step(1)", show=False),
        Binding("h", "step(-1)", show=False),
        Binding("j", "visit(1)", show=False),
        Binding("k", "visit(-1)", show=False),
        Binding("g", "start", show=False),
        Binding("G", "end", show=False),
    ]

    index: var[int] = var(0, init=False, always_update=True)
    """The current step; set it (or call `goto`) and the code, locals, timeline and panes follow.
    A `var`: the watcher updates what shows the step, so the whole screen need not repaint."""

    def __init__(
        self,
        state: AppState,
        sample: Sample,
        call: str | None = None,
        *,
        trace: Trace | None = None,
        sandbox: Sandbox | None = None,
    ) -> None:
        super().__init__()
        self.state = state
        self.sample = sample
        self.call = (call or sample.call).strip()
        self.trace: Trace | None = trace
        self._sandbox = sandbox
        self._panes: list[Widget] = []
        self._visits: dict[int, list[int]] = {}
        self._asking = ""

    # Layout --------------------------------------------------------------------------------
    def compose(self) -> ComposeResult:
        yield Header()
        yield Static(id="trace-title", markup=False)
        with Horizontal(id="trace-panes"):
            # Not focusable: the arrow keys step through the trace instead of scrolling.
            with VerticalScroll(id="trace-code-pane", can_focus=False):
                yield TraceCode(
                    self.trace.code if self.trace else self.sample.code, id="trace-code"
                )
            with VerticalScroll(id="trace-locals-pane", can_focus=False):
                yield Static(id="trace-frame", markup=False)
                yield LocalsTable(id="trace-locals")
        yield Static(id="trace-status", markup=False)
        yield Timeline(id="trace-timeline")
        yield Static(id="trace-end", markup=False)
        yield Input(id="trace-input", disabled=True)  # enabled while asking (Tab cannot reach it)
        yield Footer()

    def on_mount(self) -> None:
        if self.trace is not None:
            self._show_trace(self.trace)
        else:
            self.run_trace(self.call)

    def add_pane(self, pane: Widget) -> None:
        """Mount `pane` beside the code and locals; it will receive every `StepChanged`."""
        self._panes.append(pane)
        self.query_one("#trace-panes", Horizontal).mount(pane)
        if self.trace is not None and self.trace.steps:
            pane.post_message(StepChanged(self.trace, self.index))

    @on(GotoStep)
    def _goto_step(self, message: GotoStep) -> None:
        self.goto(message.index)

    # Reasoning -----------------------------------------------------------------------------
    def action_reasoning(self) -> None:
        """Paste a chain of thought (or pick a stored generation of this sample) and show it
        beside the code, aligned with this trace."""
        stored = stored_generations(self.state, self.sample.id)
        self.app.push_screen(ReasoningPaste(stored), self._reasoning_chosen)

    def _reasoning_chosen(self, reasoning: Reasoning | None) -> None:
        if reasoning:
            self.show_generation(reasoning)

    def show_reasoning(
        self, text: str, source: str = "", target: str | None = None
    ) -> ReasoningView | None:
        """Show `text` beside the code, aligned with this trace (replacing an earlier pane).
        `target`: for the input task, the output the chain's proposed call must give."""
        if self.trace is None or not self.trace.steps:
            self.notify("No trace to align with yet.", severity="warning")
            return None
        existing = self.query(ReasoningView)
        if existing:
            view = existing.first()
            view.set_reasoning(text, source, self.trace, target)
        else:
            view = ReasoningView(text, source, self.trace, target, id="trace-reasoning")
            self.add_pane(view)
        view.focus()
        return view

    def show_generation(self, reasoning: Reasoning) -> ReasoningView | None:
        """Show a generation's reasoning. For the input task the model reasons about the input it
        chose, so the screen traces the call from its answer (the pane re-aligns when that lands)."""
        target = self.sample.output if reasoning.task == "input" else None
        view = self.show_reasoning(reasoning.text, reasoning.source, target)
        if view is not None and reasoning.task == "input":
            call, why = call_to_trace(self.sample, reasoning.text, "input")
            if call != self.call:
                self.notify(f"Tracing {call} ({why}).")
                self.run_trace(call)
        return view

    # Tracing -------------------------------------------------------------------------------
    def run_trace(self, call: str) -> None:
        """Trace `call` in the sandbox (in a worker); the screen shows it when it is done.

        The code is the one on screen (a trace passed in may be of a variant of the sample); the
        benchmark's expected output only counts for the sample's own code and call (numsteps).
        """
        self.call = call
        code = self.trace.code if self.trace is not None else self.sample.code
        expected = (
            self.sample.output if (code, call) == (self.sample.code, self.sample.call) else None
        )
        self.query_one("#trace-title", Static).update(self._title("tracing…"))
        self._trace_worker(code, call, expected, app_sandbox(self._sandbox))

    @work(thread=True, exclusive=True, group="trace", name="Tracing", exit_on_error=False)
    def _trace_worker(self, code: str, call: str, expected: str | None, sandbox: Sandbox) -> None:
        result = steps.trace(code, call, expected=expected, sandbox=sandbox)
        if not get_current_worker().is_cancelled:
            self.post_message(TraceReady(result))

    def on_trace_ready(self, message: TraceReady) -> None:
        self._show_trace(message.trace)

    def _show_trace(self, trace: Trace) -> None:
        self.trace = trace
        self.call = trace.call
        self._visits = visits = trace.visits()
        self.query_one(TraceCode).set_code(trace.code, {line: len(v) for line, v in visits.items()})
        self.query_one(Timeline).set_steps(
            [s.line for s in trace.steps],
            [
                "exception" if s.event == "exception" else "nested" if s.depth else ""
                for s in trace.steps
            ],
        )
        self.query_one("#trace-title", Static).update(self._title())
        end = self.query_one("#trace-end", Static)
        end.update(self._ending(trace))
        end.set_class(not trace.ok, "-failed")
        if trace.steps:
            self.goto(0)
        else:
            self.set_reactive(TraceScreen.index, 0)
            self.query_one(LocalsTable).show_step(None)
            self.query_one("#trace-frame", Static).update("")
            self.query_one("#trace-status", Static).update("no steps recorded")

    def _title(self, note: str = "") -> Text:
        title = Text.assemble((self.sample.id, "bold"), "  ", (self.call, "bold"))
        if note:
            title.append(f"  {note}", style="dim italic")
        return title

    @staticmethod
    def _ending(trace: Trace) -> Text:
        text = Text(trace.ended)
        # Steps are numbered from 0 everywhere (status, `:`, the reasoning's @N): say the range.
        span = f"steps 0–{len(trace.steps) - 1:,}" if trace.steps else "no steps"
        text.append(f"   {span} · numsteps {trace.numsteps:,}", style="dim")
        if trace.stdout:
            printed = trace.stdout.replace("\n", "⏎")
            text.append(f" · printed {printed[:60]}", style="dim")
        return text

    # Stepping ------------------------------------------------------------------------------
    def goto(self, index: int) -> None:
        """Make step `index` current (clamped); nothing without a trace."""
        if self.trace is not None and self.trace.steps:
            self.index = index

    def validate_index(self, index: int) -> int:
        last = len(self.trace.steps) - 1 if self.trace is not None else 0
        return max(0, min(index, last))

    def watch_index(self, index: int) -> None:
        """Show step `index` everywhere: code, locals, status, timeline and every pane."""
        if self.trace is None or not self.trace.steps:
            return
        step = self.trace.steps[index]
        self.query_one(TraceCode).show(step.line, step.event)
        self._scroll_code_to(step.line)
        self.query_one(LocalsTable).show_step(step, self.trace.before(index))
        frame = f"locals of {step.func}" + (f" (depth {step.depth})" if step.depth else "")
        self.query_one("#trace-frame", Static).update(Text(frame, style="bold"))
        self.query_one("#trace-status", Static).update(self._status(step))
        self.query_one(Timeline).show(index)
        self.post_message(StepChanged(self.trace, index))
        self._panes = [pane for pane in self._panes if pane.is_attached]
        for pane in self._panes:
            pane.post_message(StepChanged(self.trace, index))

    def _scroll_code_to(self, line: int) -> None:
        pane = self.query_one("#trace-code-pane", VerticalScroll)
        top, height = pane.scroll_y, pane.scrollable_content_region.height
        if not top <= line - 1 < top + height:
            pane.scroll_to(y=max(0, line - 1 - height // 2), animate=False)

    def _status(self, step: Step) -> Text:
        assert self.trace is not None
        last = len(self.trace.steps) - 1
        text = Text.assemble(("step ", "dim"), (f"{step.index}", "bold"), (f"/{last}", "dim"))
        text.append(f"   line {step.line}")
        seen = self._visits.get(step.line, [])
        if step.index in seen:
            text.append(f" (visit {seen.index(step.index) + 1} of {len(seen)})", style="dim")
        text.append(f"   {step.event}", style="italic")
        if step.event == "return" and step.value is not None:
            text.append(f"  → {step.value}", style="green")
        elif step.event == "return":
            text.append("  (unwinding)", style="red")
        elif step.event == "exception":
            text.append(f"  {step.value}", style="red")
        return text

    def action_step(self, delta: int) -> None:
        self.goto(self.index + delta)

    def action_start(self) -> None:
        self.goto(0)

    def action_end(self) -> None:
        if self.trace is not None:
            self.goto(len(self.trace.steps) - 1)

    def action_visit(self, direction: int) -> None:
        """Next (1) / previous (-1) step at the current step's line."""
        if self.trace is None or not self.trace.steps:
            return
        line = self.trace.steps[self.index].line
        seen = self._visits.get(line, [])
        targets = (
            [i for i in seen if i > self.index]
            if direction > 0
            else [i for i in seen if i < self.index]
        )
        if not targets:
            where = "later" if direction > 0 else "earlier"
            self.notify(f"No {where} visit of line {line}.", timeout=2)
            return
        self.goto(targets[0] if direction > 0 else targets[-1])

    @on(TraceCode.LineClicked)
    def _line_clicked(self, event: TraceCode.LineClicked) -> None:
        """A click on a line goes to its next visit after the current step (wrapping around)."""
        seen = self._visits.get(event.line, [])
        if not seen:
            self.notify(f"Line {event.line} never ran in this trace.", timeout=3)
            return
        later = [i for i in seen if i > self.index]
        self.goto(later[0] if later else seen[0])

    @on(Timeline.Jump)
    def _timeline_jump(self, event: Timeline.Jump) -> None:
        self.goto(event.index)

    # Prompts (go to step N, trace a typed call) -------------------------------------------
    def action_ask(self, what: str) -> None:
        box = self.query_one("#trace-input", Input)
        self._asking = what
        if what == "goto":
            last = len(self.trace.steps) - 1 if self.trace else 0
            box.placeholder = f"go to step (0-{last})"
            box.value = ""
        else:
            box.placeholder = "trace a call, e.g. f('abc')"
            box.value = self.call
        box.disabled = False
        box.add_class("-open")
        box.focus()

    def _close_prompt(self) -> None:
        box = self.query_one("#trace-input", Input)
        box.remove_class("-open")
        box.disabled = True
        self._asking = ""
        self.set_focus(None)

    @on(Input.Submitted, "#trace-input")
    def _prompt_submitted(self, event: Input.Submitted) -> None:
        text = event.value.strip()
        if self._asking == "goto":
            last = len(self.trace.steps) - 1 if self.trace else -1
            if not text.isdigit() or int(text) > last:
                self.notify(f"Step must be a number from 0 to {max(last, 0)}.", severity="error")
                return
            self._close_prompt()
            self.goto(int(text))
            return
        problem = problem_with(text, "call") if text else "no call given"
        if problem:
            self.notify(f"{problem}. Type a call such as f('abc').", severity="error", timeout=6)
            return
        self._close_prompt()
        self.run_trace(text)

    def action_save_case(self) -> None:
        """Save this sample's failure (its newest stored failing run) as a case."""
        save_failure(self, self.state, self.sample)

    def action_back(self) -> None:
        if self._asking:
            self._close_prompt()
        else:
            self.app.pop_screen()
