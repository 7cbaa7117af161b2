"""Perturb: build a variant of a sample step by step and see its diff and new ground truth.

Opened from the Sample screen (`p`). The left column picks a transform, its parameters and seed;
the preview always shows the chain so far plus the step being picked, verified in the sandbox in
a worker (so typing stays responsive). `Add` (or Enter in the parameters) commits the step. The
accepted variant is a `Sample`: ctrl+o opens it on the Sample screen (from where it can be
traced, run, saved or perturbed further), ctrl+t traces it, ctrl+r runs a model on original and
variant side by side. Keys are ctrl+letter so they work while typing parameters.
Accepted variants are registered in `AppState.variants`, so opening a variant's id finds it.
"""

from __future__ import annotations

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import Screen
from textual.widgets import Button, Footer, Header, Input, Select, Static
from textual.worker import get_current_worker

from cruxtui.core.data.dataset import Sample
from cruxtui.core.perturb import (
    CATALOGUE,
    PerturbError,
    Rejection,
    TransformSpec,
    Variant,
    apply_chain,
    verify,
)
from cruxtui.core.sandbox.pool import Sandbox
from cruxtui.tui.messages import OpenSample, PreviewReady
from cruxtui.tui.screens.trace_screen import TraceScreen
from cruxtui.tui.state import AppState
from cruxtui.tui.widgets.diff_view import DiffView
from cruxtui.tui.widgets.run_panel import RunPanel
from cruxtui.tui.workers import ReportsTaskErrors, app_sandbox

Preview = Variant | Rejection | str
"""What the preview shows: an accepted variant, a rejected one, or why nothing could be built."""


class PerturbScreen(ReportsTaskErrors, Screen[None]):
    CSS_PATH = "perturb.tcss"
    AUTO_FOCUS = "#perturb-transform"

    BINDINGS = [
        Binding("escape", "app.pop_screen", "Back", id="perturb.back"),
        Binding("ctrl+z", "undo", "Undo step", id="perturb.undo"),
        Binding("ctrl+l", "toggle_unified", "Unified/2 columns", id="perturb.unified"),
        Binding("enter", "add_from_menu", "Add step", show=False, priority=True),
        Binding("ctrl+o", "open_variant", "Open variant", id="perturb.open"),
        Binding("ctrl+t", "trace_variant", "Trace variant", id="perturb.trace"),
        Binding("ctrl+r", "run_both", "Run model on both", id="perturb.run"),
    ]

    def __init__(self, state: AppState, sample: Sample, *, sandbox: Sandbox | None = None) -> None:
        super().__init__()
        self.state = state
        self.sample = sample
        self.chain: list[TransformSpec] = []
        self.preview: Preview | None = None
        self._sandbox = sandbox
        self._previewed: list[TransformSpec] = []
        self._shown: list[TransformSpec] | None = None
        self._added: Variant | None = None
        """The variant of exactly the steps added (`chain`), once built: what ctrl+o/t/r use."""
        self._mounting_runs = False  # action_run_both is mounting its pair of panels

    @property
    def previewing(self) -> bool:
        """The preview does not show the chain plus the step in the form yet (it is on its way)."""
        return self._shown != self._specs()

    @property
    def variant(self) -> Variant | None:
        """The variant on show, if it was accepted (what other screens can use)."""
        return self.preview if isinstance(self.preview, Variant) else None

    @property
    def added_variant(self) -> Variant | None:
        """The variant of the steps added to the chain; with none added yet, the step on show
        (all there is). Never a previewed step that was not added."""
        if not self.chain:
            return self.variant
        added = self._added
        return added if added is not None and list(added.chain) == self.chain else None

    # Layout --------------------------------------------------------------------------------
    def compose(self) -> ComposeResult:
        options = [
            (f"{name}{'  (preserving)' if t.preserving else ''}", name)
            for name, t in CATALOGUE.items()
        ]
        yield Header()
        with Horizontal(id="perturb-main"):
            # The form, Add and the chain first, the transform's description last: at 24 rows
            # what does not fit is the least needed.
            with Vertical(id="perturb-side"):
                yield Static("Transform", classes="section", markup=False)
                yield Select(options, value="rename", allow_blank=False, id="perturb-transform")
                yield Input(placeholder="parameters", id="perturb-params")
                with Horizontal(id="perturb-seed-row"):
                    yield Static("seed", id="perturb-seed-label", markup=False)
                    yield Input("0", type="integer", id="perturb-seed")
                with Horizontal(id="perturb-buttons"):
                    yield Button("Add", id="perturb-add", variant="primary")
                    yield Button("Undo", id="perturb-undo")
                yield Static("Chain", classes="section", markup=False)
                yield Static(id="perturb-chain", markup=False)
                yield Static(id="perturb-about", markup=False)
            with Vertical(id="perturb-body"):
                yield Static(id="perturb-title", markup=False)
                with VerticalScroll(id="perturb-diff-pane"):
                    yield DiffView(id="perturb-diff")
                yield Static(id="perturb-truth", markup=False)
                yield Horizontal(id="perturb-runs")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#perturb-runs").display = False
        self._describe_transform()
        self._show_chain()
        self.refresh_preview()

    # Picking -------------------------------------------------------------------------------
    def pending(self) -> TransformSpec | None:
        """The step being picked (transform + params + seed), or None if the seed is not a number."""
        name = self.query_one("#perturb-transform", Select).value
        params = self.query_one("#perturb-params", Input).value.strip()
        seed_text = self.query_one("#perturb-seed", Input).value.strip() or "0"
        try:
            seed = int(seed_text)
        except ValueError:
            return None
        return TransformSpec(str(name), params, seed)

    @on(Select.Changed, "#perturb-transform")
    def _transform_changed(self) -> None:
        self.query_one("#perturb-params", Input).value = ""
        self._describe_transform()
        self.refresh_preview()

    @on(Input.Changed, "#perturb-params")
    @on(Input.Changed, "#perturb-seed")
    def _params_changed(self) -> None:
        self.refresh_preview()

    @on(Input.Submitted, "#perturb-params")
    @on(Input.Submitted, "#perturb-seed")
    @on(Button.Pressed, "#perturb-add")
    def action_add(self) -> None:
        """Commit the step being picked to the chain (only if it builds a variant)."""
        spec = self.pending()
        if spec is None:
            self.notify("The seed must be a whole number.", severity="error")
            return
        try:
            apply_chain(self.sample, [*self.chain, spec])
        except PerturbError as exc:
            self.notify(str(exc), title=str(spec), severity="error")
            return
        self.chain.append(spec)
        self.query_one("#perturb-params", Input).value = ""
        self._show_chain()
        self.refresh_preview()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Enter adds the step while the (closed) transform menu has focus; anywhere else it
        keeps its meaning (pick in the open menu, press a button, submit a field)."""
        if action == "add_from_menu":
            return isinstance(self.focused, Select) and not self.focused.expanded
        return True

    def action_add_from_menu(self) -> None:
        self.action_add()

    @on(Button.Pressed, "#perturb-undo")
    def action_undo(self) -> None:
        """Drop the last step of the chain."""
        if self.chain:
            self.chain.pop()
            self._show_chain()
            self.refresh_preview()

    def _describe_transform(self) -> None:
        transform = CATALOGUE[str(self.query_one("#perturb-transform", Select).value)]
        kind = "keeps the output" if transform.preserving else "may change the output"
        text = Text(transform.summary + "\n", style="")
        text.append(f"{kind}\n", style="italic")
        text.append(f"params: {transform.params_help}", style="dim")
        self.query_one("#perturb-about", Static).update(text)

    def _show_chain(self) -> None:
        text = Text()
        for n, spec in enumerate(self.chain, start=1):
            text.append(f"{n}. {spec}", style="bold")
            text.append(f"  seed {spec.seed}\n", style="dim")
        if not self.chain:
            text.append("no step yet: the preview shows the step being picked", style="dim italic")
        self.query_one("#perturb-chain", Static).update(text)

    # Preview -------------------------------------------------------------------------------
    def _specs(self) -> list[TransformSpec]:
        """The chain plus the step being picked (when its seed is a number)."""
        pending = self.pending()
        return [*self.chain, *([pending] if pending is not None else [])]

    def refresh_preview(self) -> None:
        """Rebuild the preview for the chain plus the pending step (in a worker)."""
        specs = self._specs()
        self._previewed = specs
        self.query_one("#perturb-title", Static).update(self._title("verifying…"))
        self._preview_worker(specs, list(self.chain), app_sandbox(self._sandbox))

    @work(
        thread=True,
        exclusive=True,
        group="perturb-preview",
        name="Perturb preview",
        exit_on_error=False,
    )
    def _preview_worker(
        self, specs: list[TransformSpec], chain: list[TransformSpec], sandbox: Sandbox
    ) -> None:
        worker = get_current_worker()
        result = self.build(specs, sandbox)
        if not worker.is_cancelled:
            self.post_message(PreviewReady(specs, result))
        added = self._added
        if chain and chain != specs and (added is None or list(added.chain) != chain):
            built = self.build(chain, sandbox)  # the steps added, without the one being picked
            if not worker.is_cancelled:
                self.post_message(PreviewReady(chain, built))

    def build(self, specs: list[TransformSpec], sandbox: Sandbox) -> Preview:
        """Apply and verify `specs` (blocking: call from a worker)."""
        if not specs:
            return "Pick a transform."
        try:
            applied = apply_chain(self.sample, specs)
        except PerturbError as exc:
            return str(exc)
        [result] = verify([applied], sandbox)
        return result

    def on_preview_ready(self, message: PreviewReady) -> None:
        specs, result = message.specs, message.result
        if specs == self.chain and isinstance(result, Variant):
            self._added = result
            self.state.variants[result.id] = result
            if self._shown == self._previewed and isinstance(self.preview, str):
                self._show_added_diff()  # the step on show does not apply: show the chain's
        if specs != self._previewed:
            return  # a newer preview is on its way
        self._shown = specs
        self.preview = result
        diff = self.query_one(DiffView)
        truth = self.query_one("#perturb-truth", Static)
        if isinstance(result, str):
            said = Text(result, style="bold red" if specs else "dim")
            if self._show_added_diff():
                said.append(
                    "\n(the step being picked; the diff shows the steps added)", style="dim"
                )
            else:
                diff.show_note(result)
            truth.update(said)
            self.query_one("#perturb-title", Static).update(self._title())
            return
        code = result.applied.subject.code if isinstance(result, Rejection) else result.sample.code
        diff.show_diff(self.sample.code, code, self.sample.id, result.id)
        if isinstance(result, Variant):
            self.state.variants[result.id] = result
            truth.update(self._truth(result))
        else:
            truth.update(self._rejected(result))
        self.query_one("#perturb-title", Static).update(self._title())

    def _show_added_diff(self) -> bool:
        """Show the diff of the steps added, when the step being picked builds nothing (right
        after Add, the form's step is often one that does not apply): the diff pane keeps a diff,
        so Ctrl+L always has something to switch. False when no step was added yet."""
        added = self.added_variant if self.chain else None
        if added is None:
            return False
        self.query_one(DiffView).show_diff(
            self.sample.code, added.sample.code, self.sample.id, added.id
        )
        return True

    def _title(self, note: str = "") -> Text:
        title = Text.assemble((self.sample.id, "bold"))
        if isinstance(self.preview, Variant | Rejection):
            title.append(f"  →  {self.preview.id}", style="bold")
        if note:
            title.append(f"  {note}", style="dim italic")
        return title

    def _truth(self, variant: Variant) -> Text:
        text = Text()
        for n, (spec, note) in enumerate(zip(variant.chain, variant.notes, strict=True), start=1):
            text.append(f"{n}. {spec}: ", style="bold")
            text.append(f"{note}\n")
        text.append("input   ", style="dim")
        if variant.sample.input != self.sample.input:
            text.append(f"f({self.sample.input})", style="red")
            text.append("  →  ")
            text.append(f"f({variant.sample.input})\n", style="green")
        else:
            text.append(f"f({self.sample.input})\n")
        text.append("output  ", style="dim")
        if variant.sample.output != self.sample.output:
            text.append(self.sample.output, style="red")
            text.append("  →  ")
            text.append(variant.sample.output, style="bold green")
        else:
            text.append(variant.sample.output)
            text.append("  (unchanged)", style="dim")
        text.append("\nverified: ran twice in the sandbox", style="dim")
        if variant.preserving:
            text.append(", same output as the original (behaviour-preserving chain)", style="dim")
        return text

    @staticmethod
    def _rejected(rejection: Rejection) -> Text:
        text = Text("rejected ", style="bold red")
        text.append(f"({rejection.kind}): ", style="red")
        text.append(rejection.reason)
        return text

    # Using the variant ---------------------------------------------------------------------
    def action_toggle_unified(self) -> None:
        diff = self.query_one(DiffView)
        diff.unified = not diff.unified
        if diff.texts is None:  # a note on show: the switch shows with the next diff
            layout = "unified" if diff.unified else "two columns"
            self.notify(f"No diff on show yet; diffs will show {layout}.", title="Diff")

    def _need_variant(self) -> Variant | None:
        variant = self.added_variant
        if variant is None:
            self.notify("No accepted variant of the steps added yet.", severity="warning")
        return variant

    def action_open_variant(self) -> None:
        """Show the variant on the Sample screen (trace, run, save or perturb it from there)."""
        variant = self._need_variant()
        if variant is not None:
            self.post_message(OpenSample(variant.id))

    def action_trace_variant(self) -> None:
        variant = self._need_variant()
        if variant is not None:
            self.app.push_screen(TraceScreen(self.state, variant.sample))

    async def action_run_both(self) -> None:
        """Show (or hide) two run panels, original and variant: Run in either runs both, same settings."""
        if not self.query_one("#perturb-runs").is_mounted:
            return  # the screen is closing (a key burst quit the app): nothing to mount into
        runs = self.query_one("#perturb-runs", Horizontal)
        if runs.display:
            runs.display = False
            self.query_one("#perturb-diff-pane").display = True
            self.query_one("#perturb-side").display = True
            return
        variant = self._need_variant()
        if variant is None:
            return
        if self._mounting_runs:
            return  # a second key while the first pair is still being mounted: one pair only
        self._mounting_runs = True
        try:
            # Removal finishes before the new pair mounts, so their ids never meet twice.
            await runs.remove_children()
            if not runs.is_attached:
                return  # the screen closed meanwhile
            await runs.mount(
                RunPanel(
                    self.state,
                    self.sample,
                    title=f"Run on {self.sample.id}",
                    id="perturb-run-original",
                ),
                RunPanel(
                    self.state,
                    variant.sample,
                    title=f"Run on {variant.id}",
                    id="perturb-run-variant",
                ),
            )
        finally:
            self._mounting_runs = False
        if not runs.is_attached:
            return
        runs.display = True
        self.query_one("#perturb-diff-pane").display = False
        self.query_one("#perturb-side").display = False  # the two forms need the width

    @on(RunPanel.Started)
    def _run_other_side(self, event: RunPanel.Started) -> None:
        """A run started in one panel: run the other panel's sample with the same settings."""
        for panel in self.query(RunPanel):
            if panel is not event.panel:
                panel.start(event.form)
