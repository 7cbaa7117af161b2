"""The reasoning pane of the Trace screen: a chain of thought beside the real execution.

`show_reasoning(screen, text, source)` mounts a `ReasoningView` with `TraceScreen.add_pane`; the view
parses and aligns `text` (prose or scratchpad) against the screen's trace in a worker thread (a
10,000-step trace takes a noticeable fraction of a second), and again whenever the screen traces
another call. It highlights the reasoning step aligned with the current trace step, marks each claim
(✓ consistent, ✗ contradicted with the true value, ? unverifiable), and `d` jumps the trace to the
first divergence. Text comes from a stored generation (runs, live ones included, commit each
generation to the run store) or is pasted (`ReasoningPaste`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, OptionList, Static, TextArea

from cruxtui.core.reasoning.alignment import CONTRADICTED, Alignment, align_text

_MARK = {
    "consistent": ("✓", "green"),
    "contradicted": ("✗", "bold red"),
    "unverifiable": ("?", "dim"),
}


@dataclass(frozen=True)
class Reasoning:
    """A chain of thought to show, where it came from, and the task it answers."""

    text: str
    source: str = "pasted"
    task: str = "output"


class ReasoningView(VerticalScroll, can_focus=True):
    """Reasoning steps with their judgements; follows the Trace screen's current step."""

    BINDINGS = [Binding("d", "first_divergence", "First divergence", id="reasoning.divergence")]

    def __init__(self, text: str, source: str = "", **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.text = text
        self.source = source
        self.alignment: Alignment | None = None
        self.current: int | None = None
        self._trace: Any = None
        self._index = 0

    def compose(self) -> ComposeResult:
        if self.alignment is None:
            yield Static(Text("reasoning: aligning…", style="dim italic"), id="reasoning-header")
            return
        yield Static(self._header(), id="reasoning-header")
        for step in self.alignment.chain.steps:
            yield Static(
                self._render_step(step.index),
                id=f"reasoning-step-{step.index}",
                classes="reasoning-step",
            )

    def on_mount(self) -> None:
        trace = getattr(self.screen, "trace", None)
        if trace is not None and trace.steps:
            self._realign(trace)

    def set_reasoning(self, text: str, source: str, trace: Any) -> None:
        """Show another chain in this pane."""
        self.text, self.source = text, source
        self.alignment = None
        self.refresh(recompose=True)
        self._realign(trace)

    # Alignment (in a worker) ------------------------------------------------------------
    def _realign(self, trace: Any) -> None:
        self._trace = trace
        self._align_worker(trace)

    @work(thread=True, exclusive=True, group="reasoning-align", name="Aligning reasoning")
    def _align_worker(self, trace: Any) -> None:
        alignment = align_text(self.text, trace)
        self.app.call_from_thread(self._show, alignment)

    async def _show(self, alignment: Alignment) -> None:
        if alignment.trace is not self._trace:
            return  # the screen moved on to another trace meanwhile
        self.alignment = alignment
        self.current = None
        await self.recompose()
        self.highlight(alignment.step_at(self._index))

    def on_trace_screen_step_changed(self, message: Any) -> None:
        self._index = message.index
        if message.trace is not self._trace:
            self._realign(message.trace)
            return
        if self.alignment is not None:
            self.highlight(self.alignment.step_at(message.index))

    # Rendering --------------------------------------------------------------------------
    def _header(self) -> Text:
        assert self.alignment is not None
        c = self.alignment.counts()
        text = Text(f"reasoning{f' ({self.source})' if self.source else ''}", style="bold")
        text.append(f"  ✓{c['consistent']} ✗{c['contradicted']} ?{c['unverifiable']}", style="dim")
        div = self.alignment.first_divergence
        text.append("\n")
        if div is None:
            text.append("no divergence found", style="green")
        else:
            text.append(f"first divergence: step {div.step} (d)", style="red")
        if self.alignment.chain.problems:
            text.append(
                f"\n{len(self.alignment.chain.problems)} scratchpad entries off the grammar",
                style="yellow",
            )
        return text

    def _render_step(self, index: int) -> Text:
        assert self.alignment is not None
        step = self.alignment.chain.steps[index]
        pos = self.alignment.positions[index]
        text = Text(f"{index:>2} ", style="dim")
        text.append(step.text.strip())
        if pos is not None:
            text.append(f"  @{pos}", style="dim")
        for j in self.alignment.judgements_of(index):
            mark, style = _MARK[j.verdict]
            text.append(f"\n   {mark} {j.claim.describe()}", style=style)
            if j.verdict == CONTRADICTED:
                text.append(f"  true: {j.true_value}", style="bold red")
        return text

    def highlight(self, index: int | None) -> None:
        """Mark reasoning step `index` as the one aligned with the current trace step."""
        if index == self.current or self.alignment is None:
            return
        if self.current is not None:
            self.query_one(f"#reasoning-step-{self.current}", Static).remove_class("-current")
        self.current = index
        if index is not None:
            widget = self.query_one(f"#reasoning-step-{index}", Static)
            widget.add_class("-current")
            self.scroll_to_widget(widget, animate=False)

    def action_first_divergence(self) -> None:
        if self.alignment is None:
            self.notify("Still aligning the reasoning with the trace…")
            return
        div = self.alignment.first_divergence
        if div is None:
            self.notify("No divergence: no claim contradicts the execution.")
            return
        for i in range(len(self.alignment.chain.steps)):
            widget = self.query_one(f"#reasoning-step-{i}", Static)
            widget.set_class(i == div.step, "-divergence")
        goto = getattr(self.screen, "goto", None)
        if div.trace_step is not None and goto is not None:
            goto(div.trace_step)
        self.highlight(div.step)


class ReasoningPaste(ModalScreen[Reasoning | None]):
    """A TextArea to paste a chain of thought (prose or a scratchpad) into, or pick a stored
    generation of this sample."""

    DEFAULT_CSS = """
    ReasoningPaste { align: center middle; }
    #reasoning-paste { width: 80%; height: 80%; background: $panel; border: round $primary; padding: 1; }
    #reasoning-text { height: 1fr; }
    #reasoning-stored { height: auto; max-height: 8; }
    """
    BINDINGS = [Binding("escape", "dismiss(None)", "Cancel"), Binding("ctrl+s", "align", "Align")]

    def __init__(self, stored: list[Reasoning] | None = None) -> None:
        super().__init__()
        self.stored = stored or []
        self.picked: Reasoning | None = None

    def compose(self) -> ComposeResult:
        with Vertical(id="reasoning-paste"):
            yield Static("Paste a chain of thought (free prose or [SCRATCHPAD]); ctrl+s aligns it.")
            if self.stored:
                yield Static(
                    "…or pick a stored generation of this sample:", classes="reasoning-pick"
                )
                yield OptionList(*[r.source for r in self.stored], id="reasoning-stored")
            yield TextArea(id="reasoning-text")
            yield Button("Align", variant="primary", id="reasoning-align")

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        self.picked = self.stored[event.option_index]
        self.query_one(TextArea).text = self.picked.text

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.action_align()

    def action_align(self) -> None:
        text = self.query_one(TextArea).text
        if not text.strip():
            self.notify("Nothing to align: paste a chain of thought first.", severity="warning")
            return
        if self.picked is not None and text == self.picked.text:
            self.dismiss(self.picked)
        else:
            self.dismiss(Reasoning(text))


def show_reasoning(screen: Any, text: str, source: str = "") -> ReasoningView | None:
    """Show `text` beside the code, aligned with the screen's trace (replacing an earlier pane)."""
    trace = getattr(screen, "trace", None)
    if trace is None or not trace.steps:
        screen.notify("No trace to align with yet.", severity="warning")
        return None
    existing = screen.query(ReasoningView)
    if existing:
        view = existing.first()
        view.set_reasoning(text, source, trace)
    else:
        view = ReasoningView(text, source, id="trace-reasoning")
        screen.add_pane(view)
    view.focus()
    return view


def show_generation(screen: Any, reasoning: Reasoning) -> ReasoningView | None:
    """Show a generation's reasoning. For the input task the model reasons about the input it
    chose, so the screen traces the call from its answer (the pane re-aligns when that lands)."""
    view = show_reasoning(screen, reasoning.text, reasoning.source)
    sample = getattr(screen, "sample", None)
    if view is not None and sample is not None and reasoning.task == "input":
        from cruxtui.core.reasoning.alignment import call_to_trace

        call, why = call_to_trace(sample, reasoning.text, "input")
        if call != getattr(screen, "call", None):
            screen.notify(f"Tracing {call} ({why}).")
            screen.run_trace(call)
    return view


def stored_generations(app: Any, sample_id: str, limit: int = 50) -> list[Reasoning]:
    """This sample's generations in the run store, newest runs first; empty when there is no store
    (or it cannot be read: the paste box still works)."""
    if getattr(app, "options", None) is None:
        return []
    try:
        from cruxtui.core.runs.store import RunStoreError
        from cruxtui.tui.run_store import app_store

        store = app_store(app)
        out: list[Reasoning] = []
        for run in sorted(store.runs(), key=lambda r: r.updated, reverse=True):
            for gen in store.generations(run.id, sample_id):
                mark = "✓" if gen.passed else "✗"
                label = f"{run.id} {run.label} #{gen.index} {mark}"
                out.append(Reasoning(gen.raw, label, run.config.task))
                if len(out) >= limit:
                    return out
        return out
    except (RunStoreError, OSError, ValueError):
        return []


def paste_reasoning(screen: Any) -> None:
    """Open the paste / pick dialog; align what is chosen."""

    def done(result: Reasoning | None) -> None:
        if result:
            show_generation(screen, result)

    sample = getattr(screen, "sample", None)
    stored = stored_generations(screen.app, sample.id) if sample is not None else []
    screen.app.push_screen(ReasoningPaste(stored), done)
