"""The reasoning pane of the Trace screen: a chain of thought beside the real execution.

`TraceScreen.show_reasoning(text, source)` mounts a `ReasoningView` with `add_pane`; the view
parses and aligns `text` (prose or scratchpad) against the screen's trace in a worker thread (a
10,000-step trace takes a noticeable fraction of a second), and again whenever the screen traces
another call (it hears each `StepChanged`). It highlights the reasoning step aligned with the
current trace step, marks each claim (✓ consistent, ✗ contradicted with the true value,
? unverifiable; an expression over the frame with the value the program really computed, a
claim a model restated with [model]), `d` asks the screen to go to the first divergence
(`GotoStep`), and `m` turns model-assisted extraction on or off (the endpoint named by
`$CRUXTUI_EXTRACT_WITH`, else the configured default). Text comes
from a stored generation (runs, live ones included, commit each generation to the run store) or
is pasted (`ReasoningPaste`).
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
from textual.worker import get_current_worker

from cruxtui.core.reasoning.alignment import CONTRADICTED, Alignment, align_text
from cruxtui.core.reasoning.claim_types import Chain
from cruxtui.core.reasoning.model_extract import Extraction, extract_with
from cruxtui.core.runs.store import RunStoreError
from cruxtui.core.trace.steps import Trace
from cruxtui.tui.messages import AlignmentReady, GotoStep, StepChanged
from cruxtui.tui.state import AppState
from cruxtui.tui.workers import ReportsTaskErrors

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


class ReasoningView(ReportsTaskErrors, VerticalScroll, can_focus=True):
    """Reasoning steps with their judgements; follows the Trace screen's current step."""

    BINDINGS = [
        Binding("d", "first_divergence", "First divergence", id="reasoning.divergence"),
        Binding("m", "toggle_extraction", "Model extraction", id="reasoning.extract"),
    ]

    def __init__(
        self, text: str, source: str, trace: Trace, target: str | None = None, **kwargs: Any
    ) -> None:
        super().__init__(**kwargs)
        self.text = text
        self.source = source
        self.target = target
        """For the input task, the output the chain's proposed call must give."""
        self.alignment: Alignment | None = None
        self.current: int | None = None
        self._trace = trace
        self._index = 0
        self.extract_with: str | None = None
        """The endpoint that restates the chain as claims, when model extraction is on."""
        self.extraction_note = ""

    def compose(self) -> ComposeResult:
        if self.alignment is None:
            yield Static(
                Text("reasoning: aligning…", style="dim italic"),
                id="reasoning-header",
                markup=False,
            )
            return
        yield Static(self._header(), id="reasoning-header", markup=False)
        for step in self.alignment.chain.steps:
            yield Static(
                self._render_step(step.index),
                id=f"reasoning-step-{step.index}",
                classes="reasoning-step",
                markup=False,
            )

    def on_mount(self) -> None:
        self._realign(self._trace)

    def set_reasoning(
        self, text: str, source: str, trace: Trace, target: str | None = None
    ) -> None:
        """Show another chain in this pane (`target`: see `__init__`)."""
        self.text, self.source, self.target = text, source, target
        self.alignment = None
        self.refresh(recompose=True)
        self._realign(trace)

    # Alignment (in a worker) ------------------------------------------------------------
    def _realign(self, trace: Trace) -> None:
        self._trace = trace
        self._align_worker(self.text, trace, self.extract_with, self.target)

    @work(
        thread=True,
        exclusive=True,
        group="reasoning-align",
        name="Aligning reasoning",
        exit_on_error=False,
    )
    def _align_worker(
        self, text: str, trace: Trace, endpoint: str | None, target: str | None
    ) -> None:
        got: list[Extraction] = []

        def extract(chain: Chain) -> None:
            if endpoint is not None:
                got.append(extract_with(endpoint, chain, trace.code, target=target))

        alignment = align_text(text, trace, target=target, extract=extract)
        note = ""
        if got:
            added = sum(c.source == "model" for c in alignment.chain.claims)
            problem = got[0].problem
            note = f"model: {added} claim(s)" + (f"; {problem}" if problem else "")
        self.extraction_note = note
        if not get_current_worker().is_cancelled:
            self.post_message(AlignmentReady(self, alignment))

    async def on_alignment_ready(self, message: AlignmentReady) -> None:
        alignment = message.alignment
        if alignment.trace is not self._trace:
            return  # the screen moved on to another trace meanwhile
        self.alignment = alignment
        self.current = None
        await self.recompose()
        self.highlight(alignment.step_at(self._index))

    def on_step_changed(self, message: StepChanged) -> None:
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
            # Two numberings meet here: name both (d goes to the trace step).
            where = f" = trace step {div.trace_step}" if div.trace_step is not None else ""
            text.append(f"first divergence: reasoning step {div.step}{where} (d)", style="red")
        if self.extraction_note:
            text.append(f"\n{self.extraction_note}", style="magenta")
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
            if j.verdict == CONTRADICTED and j.true_value is None:
                text.append(f"  {j.note}", style="bold red")  # a carried value: no true one
            elif j.verdict == CONTRADICTED:
                text.append(f"  true: {j.true_value}", style="bold red")
            elif j.claim.kind == "expression" and j.true_value is not None:
                text.append(f"  = {j.true_value} in the run", style="cyan")
            if j.claim.source == "model":
                text.append("  [model]", style="magenta")
            if j.claim.retracted:
                text.append("  (taken back)", style="dim italic")
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

    def action_toggle_extraction(self) -> None:
        """Model-assisted extraction on/off; the chain is aligned again either way."""
        if self.extract_with is not None:
            self.extract_with = None
            self.notify("Model extraction off: claims are read from the text alone.")
        else:
            endpoint = extraction_endpoint()
            if endpoint is None:
                self.notify(
                    "Model extraction needs an endpoint: set CRUXTUI_EXTRACT_WITH or a default "
                    "[endpoints.*] in the config.",
                    severity="warning",
                )
                return
            self.extract_with = endpoint
            self.notify(f"Model extraction on ({endpoint}): aligning again…")
        self.alignment = None
        self.refresh(recompose=True)
        self._realign(self._trace)

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
        if div.trace_step is not None:
            self.post_message(GotoStep(div.trace_step))
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
            yield Static(
                "Paste a chain of thought (free prose or [SCRATCHPAD]); ctrl+s aligns it.",
                markup=False,
            )
            if self.stored:
                yield Static(
                    "…or pick a stored generation of this sample:",
                    classes="reasoning-pick",
                    markup=False,
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


def stored_generations(state: AppState, sample_id: str, limit: int = 50) -> list[Reasoning]:
    """This sample's generations in the run store, newest runs first; empty when the store cannot
    be read (the paste box still works)."""
    try:
        store = state.run_store
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


def extraction_endpoint() -> str | None:
    """The endpoint for model-assisted extraction: `$CRUXTUI_EXTRACT_WITH` (a base URL or an
    endpoint name), else the config's default endpoint; None when neither is set."""
    import os

    from cruxtui.core.models.backend import ModelError
    from cruxtui.core.models.endpoints import load_endpoints

    named = os.environ.get("CRUXTUI_EXTRACT_WITH", "").strip()
    if named:
        return named
    try:
        _tables, default = load_endpoints()
    except ModelError:
        return None
    return default
