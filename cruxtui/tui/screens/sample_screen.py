"""Sample: one function with its input and output, highlighted, and the way into every feature."""

from __future__ import annotations

from pathlib import Path

from rich.syntax import Syntax
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import Screen
from textual.widgets import Footer, Header, Static, TextArea

from cruxtui.core.data.dataset import Sample
from cruxtui.tui.case_save import save_failure
from cruxtui.tui.screens.trace_screen import TraceScreen
from cruxtui.tui.state import AppState
from cruxtui.tui.widgets.run_panel import RunPanel
from cruxtui.tui.widgets.verdict_list import VerdictList
from cruxtui.tui.workers import ReportsTaskErrors


def _value(text: str) -> Syntax:
    return Syntax(text, "python", word_wrap=True, background_color="default")


class SampleScreen(ReportsTaskErrors, Screen[None]):
    """Code (read-only editor with highlighting), the call, the expected output and metadata."""

    BINDINGS = [
        Binding("escape", "app.pop_screen", "Back", id="sample.back"),
        Binding("left_square_bracket", "step(-1)", "Prev", id="sample.prev"),
        Binding("right_square_bracket", "step(1)", "Next", id="sample.next"),
        Binding("r", "run_panel", "Run model", id="sample.run"),
        Binding("t", "trace", "Trace", id="sample.trace"),
        Binding("p", "perturb", "Perturb", id="sample.perturb"),
        Binding("s", "save_case", "Save case", id="sample.save_case"),
    ]

    def __init__(self, state: AppState, sample: Sample) -> None:
        super().__init__()
        self.state = state
        self.sample = sample

    def compose(self) -> ComposeResult:
        s = self.sample
        yield Header()
        with Horizontal(id="sample-main"):
            with Vertical(id="sample-left"):
                yield Static(self._title(), id="sample-title", markup=False)
                yield TextArea.code_editor(
                    s.code,
                    language="python",
                    read_only=True,
                    id="sample-code",
                    show_line_numbers=True,
                )
            with VerticalScroll(id="sample-right"):
                yield Static("Call", classes="section", markup=False)
                yield Static(_value(s.call), id="sample-input", markup=False)
                yield Static("Expected output", classes="section", markup=False)
                yield Static(_value(s.output), id="sample-output", markup=False)
                yield Static("About", classes="section", markup=False)
                yield Static(self._meta(), id="sample-meta", markup=False)
                yield Static(
                    "Generations", classes="section", id="sample-verdicts-title", markup=False
                )
                yield VerdictList(id="sample-verdicts")
        yield Footer()

    def _title(self) -> Text:
        return Text.assemble((self.sample.id, "bold"), "  ", (self.sample.first_line, "dim"))

    def _meta(self) -> Text:
        s = self.sample
        rows = [
            ("lines", str(s.lines)),
            ("characters", str(s.chars)),
            ("output type", s.output_type),
            ("methods", ", ".join(s.methods) or "none"),
            ("from", Path(s.origin).name if s.origin else self.state.dataset.location),
        ]
        variant = self.state.variants.get(s.id)
        if variant is not None:  # a variant made on the Perturb screen: say how
            rows[-1] = ("from", f"{variant.parent_id}, perturbed")
            rows += [("chain", " → ".join(str(spec) for spec in variant.chain))]
        text = Text()
        for name, value in rows:
            text.append(f"{name:<12}", style="dim")
            text.append(f"{value}\n")
        return text

    def show(self, sample: Sample) -> None:
        """Switch this screen to another sample in place (keeps the back stack shallow)."""
        self.sample = sample
        self.query_one("#sample-title", Static).update(self._title())
        self.query_one("#sample-code", TextArea).load_text(sample.code)
        self.query_one("#sample-input", Static).update(_value(sample.call))
        self.query_one("#sample-output", Static).update(_value(sample.output))
        self.query_one("#sample-meta", Static).update(self._meta())
        self._show_verdicts()
        for panel in self.query(RunPanel):
            panel.sample = sample

    def on_mount(self) -> None:
        self._show_verdicts()

    def _show_verdicts(self) -> None:
        """Each generation of the scored set (--generations) for this sample, with its verdict."""
        verdicts = self.query_one("#sample-verdicts", VerdictList)
        verdicts.show(self.state.scored, self.sample.id)
        self.query_one("#sample-verdicts-title", Static).display = verdicts.display

    def action_run_panel(self) -> None:
        """Show (or hide) the panel that runs a model on this sample and streams its answers, in
        place of the right column."""
        right = self.query_one("#sample-right")
        panels = self.query(RunPanel)
        if panels:
            panel = panels.first()
            shown = not panel.display
            panel.display = shown
            right.display = not shown
            if shown:
                panel.focus_form()
            return
        right.display = False
        panel = RunPanel(self.state, self.sample, id="run-panel")
        self.query_one("#sample-main").mount(panel)
        panel.focus_form()

    def action_perturb(self) -> None:
        """Make a variant of this sample (rename, flip a comparison, edit the input...)."""
        # Deferred for speed: the Perturb screen loads libcst (~160 ms), only when p is pressed.
        from cruxtui.tui.screens.perturb_screen import PerturbScreen

        self.app.push_screen(PerturbScreen(self.state, self.sample))

    def action_trace(self) -> None:
        """Step through this sample's execution on its own input."""
        self.app.push_screen(TraceScreen(self.state, self.sample))

    def action_save_case(self) -> None:
        """Save this sample's failure as a case: from the run panel's run, else the latest run."""
        panels = self.query(RunPanel)
        run_id = panels.first().run_id if panels else None
        save_failure(self, self.state, self.sample, run_id)

    def action_step(self, delta: int) -> None:
        """Previous / next sample in the Browse screen's current order."""
        order = self.state.browse_order
        if order is None:
            order = [x.id for x in self.state.dataset.samples]
        if self.sample.id not in order or not order:
            return
        i = (order.index(self.sample.id) + delta) % len(order)
        self.show(self.state.dataset[order[i]])
