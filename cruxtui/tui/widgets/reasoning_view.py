"""The reasoning pane of the Trace screen: a chain of thought beside the real execution.

`show_reasoning(screen, text, source)` parses and aligns `text` (prose or scratchpad) against the
screen's trace and mounts a `ReasoningView` with `TraceScreen.add_pane`. The view highlights the
reasoning step aligned with the current trace step, marks each claim (✓ consistent, ✗ contradicted
with the true value, ? unverifiable), and `d` jumps the trace to the first divergence. Text can come
from a live or stored generation (callers pass it in) or be pasted (`ReasoningPaste`).
"""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, OptionList, Static, TextArea

from cruxtui.core.align import CONTRADICTED, Alignment, align_text

_MARK = {"consistent": ("✓", "green"), "contradicted": ("✗", "bold red"), "unverifiable": ("?", "dim")}


class ReasoningView(VerticalScroll, can_focus=True):
    """Reasoning steps with their judgements; follows the Trace screen's current step."""

    BINDINGS = [Binding("d", "first_divergence", "First divergence", id="reasoning.divergence")]

    def __init__(self, alignment: Alignment, source: str = "", **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.alignment = alignment
        self.source = source
        self.current: int | None = None

    def compose(self) -> ComposeResult:
        yield Static(self._header(), id="reasoning-header")
        for step in self.alignment.chain.steps:
            yield Static(self._render_step(step.index), id=f"reasoning-step-{step.index}",
                         classes="reasoning-step")

    def _header(self) -> Text:
        c = self.alignment.counts()
        text = Text(f"reasoning{f' ({self.source})' if self.source else ''}", style="bold")
        text.append(f"  ✓{c['consistent']} ✗{c['contradicted']} ?{c['unverifiable']}", style="dim")
        div = self.alignment.first_divergence
        text.append("\n")
        if div is None:
            text.append("no divergence found", style="green")
        else:
            text.append(f"first divergence: step {div.step} (d)", style="red")
        return text

    def _render_step(self, index: int) -> Text:
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

    def on_trace_screen_step_changed(self, message: Any) -> None:
        self.highlight(self.alignment.step_at(message.index))

    def highlight(self, index: int | None) -> None:
        """Mark reasoning step `index` as the one aligned with the current trace step."""
        if index == self.current:
            return
        if self.current is not None:
            self.query_one(f"#reasoning-step-{self.current}", Static).remove_class("-current")
        self.current = index
        if index is not None:
            widget = self.query_one(f"#reasoning-step-{index}", Static)
            widget.add_class("-current")
            self.scroll_to_widget(widget, animate=False)

    def action_first_divergence(self) -> None:
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


class ReasoningPaste(ModalScreen[tuple[str, str] | None]):
    """A TextArea to paste a chain of thought (prose or a scratchpad) into, or pick a stored
    generation of this sample (runs, live ones included, commit every generation to the store)."""

    DEFAULT_CSS = """
    ReasoningPaste { align: center middle; }
    #reasoning-paste { width: 80%; height: 80%; background: $panel; border: round $primary; padding: 1; }
    #reasoning-text { height: 1fr; }
    #reasoning-stored { height: auto; max-height: 8; }
    """
    BINDINGS = [Binding("escape", "dismiss(None)", "Cancel"), Binding("ctrl+s", "align", "Align")]

    def __init__(self, stored: list[tuple[str, str]] | None = None) -> None:
        super().__init__()
        self.stored = stored or []
        self.source = "pasted"

    def compose(self) -> ComposeResult:
        with Vertical(id="reasoning-paste"):
            yield Static("Paste a chain of thought (free prose or [SCRATCHPAD]); ctrl+s aligns it.")
            if self.stored:
                yield Static("…or pick a stored generation of this sample:", classes="reasoning-pick")
                yield OptionList(*[label for label, _ in self.stored], id="reasoning-stored")
            yield TextArea(id="reasoning-text")
            yield Button("Align", variant="primary", id="reasoning-align")

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        label, raw = self.stored[event.option_index]
        self.query_one(TextArea).text = raw
        self.source = label

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.action_align()

    def action_align(self) -> None:
        text = self.query_one(TextArea).text
        if not text.strip():
            self.notify("Nothing to align: paste a chain of thought first.", severity="warning")
            return
        self.dismiss((text, self.source))


def show_reasoning(screen: Any, text: str, source: str = "") -> ReasoningView | None:
    """Align `text` with `screen.trace` and show it beside the code (replacing an earlier pane)."""
    trace = getattr(screen, "trace", None)
    if trace is None or not trace.steps:
        screen.notify("No trace to align with yet.", severity="warning")
        return None
    for old in screen.query(ReasoningView):
        if old in getattr(screen, "_panes", []):
            screen._panes.remove(old)
        old.remove()
    view = ReasoningView(align_text(text, trace), source, id="trace-reasoning")
    screen.add_pane(view)
    view.focus()
    return view


def stored_generations(app: Any, sample_id: str, limit: int = 50) -> list[tuple[str, str]]:
    """(label, raw text) of this sample's generations in the run store, newest runs first; empty
    when there is no store (or it cannot be read: the paste box still works)."""
    if getattr(app, "options", None) is None:
        return []
    try:
        from cruxtui.core.runs import RunStoreError
        from cruxtui.tui.run_store import app_store

        store = app_store(app)
        out: list[tuple[str, str]] = []
        for run in sorted(store.runs(), key=lambda r: r.updated, reverse=True):
            for gen in store.generations(run.id, sample_id):
                mark = "✓" if gen.passed else "✗"
                out.append((f"{run.id} {run.label} #{gen.index} {mark}", gen.raw))
                if len(out) >= limit:
                    return out
        return out
    except (RunStoreError, OSError, ValueError):
        return []


def paste_reasoning(screen: Any) -> None:
    """Open the paste / pick dialog; align what is chosen."""

    def done(result: tuple[str, str] | None) -> None:
        if result:
            show_reasoning(screen, *result)

    sample = getattr(screen, "sample", None)
    stored = stored_generations(screen.app, sample.id) if sample is not None else []
    screen.app.push_screen(ReasoningPaste(stored), done)
