"""The run panel on the Sample screen: run a model on this sample and watch each generation stream in.

The form takes an endpoint (a name from config.toml, or a base URL) and a model, the task, mode, n,
temperature and seed. The run goes through the same runner and store as `cruxtui run`, inside a Textual
worker on the app's event loop; scoring runs in a thread, so streamed text keeps flowing while
verdicts are computed. Generations already stored for this configuration are shown, not requested.
"""

from __future__ import annotations

import gc
from typing import TYPE_CHECKING, Any

from textual import on, work
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.widgets import Button, Input, Label, Select, Static

from cruxtui.core.runs.runner import Progress, RunListener, RunSummary
from cruxtui.core.runs.session import RunSettings
from cruxtui.core.runs.store import Generation
from cruxtui.tui.run_store import app_store
from cruxtui.tui.widgets.generation_stream import GenerationStream

if TYPE_CHECKING:
    from cruxtui.core.data.dataset import Sample
    from cruxtui.tui.app import CruxApp

TASKS = (("output", "output"), ("input", "input"))
MODES = (("direct", "direct"), ("cot", "cot"), ("scratchpad", "scratchpad"))


class _PanelListener(RunListener):
    """Runner events -> the panel's widgets (called on the app's event loop)."""

    def __init__(self, panel: RunPanel) -> None:
        self.panel = panel
        self.stream = panel.query_one(GenerationStream)

    def on_start(self, run_id: str, todo: Any) -> None:
        self.panel.run_id = run_id
        freeze_heap()

    def on_begin(self, sample_id: str, index: int, prefix: str) -> None:
        self.stream.begin(sample_id, index, prefix)

    def on_chunk(self, sample_id: str, index: int, text: str) -> None:
        self.stream.append(sample_id, index, text)

    def on_restart(self, sample_id: str, index: int, prefix: str, reason: str) -> None:
        self.stream.restart(sample_id, index, prefix, reason)

    def on_generation(self, gen: Generation) -> None:
        self.stream.finish(gen)

    def on_failure(self, sample_id: str, index: int | None, error: str) -> None:
        self.stream.fail(sample_id, index, error)

    def on_progress(self, progress: Progress) -> None:
        self.panel.show_progress(progress)

    def on_retry(self, error: str, attempt: int, wait: float) -> None:
        self.panel.query_one("#run-status", Static).update(
            f"retry {attempt} in {wait:.1f}s: {error}"
        )


def freeze_heap() -> None:
    """Exclude everything alive now (dataset, Textual, the `openai` client's modules) from the
    cyclic garbage collector. Otherwise a full collection walks all of it and stalls the event
    loop for a few hundred milliseconds in the middle of a stream. `gc.freeze` is O(1); it is
    called when the panel opens (before the heavy imports) and when a run starts (after them)."""
    gc.freeze()


def _default_endpoint() -> str:
    """The `default` endpoint named in config.toml, to start the form with ("" if none or the
    file is unreadable; a run then reports the file's problem)."""
    from cruxtui.core.models.backend import ModelError
    from cruxtui.core.models.endpoints import load_endpoints

    try:
        return load_endpoints()[1] or ""
    except ModelError:
        return ""


def looks_like_url(text: str) -> bool:
    """`http://...`, `localhost:8000`, `10.0.0.5:8000/v1`: a base URL rather than an endpoint name."""
    return "://" in text or "/" in text or (":" in text and text.rsplit(":", 1)[1][:1].isdigit())


class RunPanel(Vertical):
    """Form + live generations for the sample shown on the screen this panel is mounted in."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.run_id: str | None = None

    @property
    def crux(self) -> CruxApp:
        return self.app  # type: ignore[return-value]

    def compose(self) -> ComposeResult:
        options = self.crux.options
        endpoint = getattr(options, "endpoint", None) or _default_endpoint()
        with Horizontal(classes="run-row"):
            yield Input(endpoint, placeholder="endpoint name or base URL", id="run-endpoint")
            yield Input(getattr(options, "model", None) or "", placeholder="model", id="run-model")
        with Horizontal(classes="run-row"):
            yield Select(TASKS, value="output", allow_blank=False, id="run-task")
            yield Select(MODES, value="direct", allow_blank=False, id="run-mode")
        with Horizontal(classes="run-row"):
            yield Label("n", classes="run-label")
            yield Input("1", type="integer", id="run-n")
            yield Label("t", classes="run-label")
            yield Input("0.2", type="number", id="run-temperature")
            yield Label("seed", classes="run-label")
            yield Input("0", type="integer", id="run-seed", placeholder="none")
            yield Button("Run", id="run-go", variant="primary")
        yield Static("", id="run-status")
        yield GenerationStream(id="run-stream")

    def on_mount(self) -> None:
        from cruxtui.core.runs.session import warm_up

        self.border_title = "Run a model"
        freeze_heap()
        self.run_worker(warm_up, thread=True, group="warm-up")

    @property
    def sample(self) -> Sample:
        return self.screen.sample  # type: ignore[attr-defined]

    @on(Button.Pressed, "#run-go")
    @on(Input.Submitted)
    def start(self) -> None:
        try:
            settings = self._settings()
        except ValueError as exc:
            self.notify(str(exc), title="Run", severity="error")
            return
        self.query_one(GenerationStream).clear()
        self.query_one("#run-status", Static).update("starting…")
        self.run_model(self.sample, settings)

    def _settings(self) -> RunSettings:
        endpoint = self.query_one("#run-endpoint", Input).value.strip()
        model = self.query_one("#run-model", Input).value.strip() or None
        if not endpoint and not model:
            raise ValueError("Give an endpoint name (from config.toml) or a base URL and a model.")
        seed_text = self.query_one("#run-seed", Input).value.strip()
        try:
            n = int(self.query_one("#run-n", Input).value)
            temperature = float(self.query_one("#run-temperature", Input).value)
            seed = int(seed_text) if seed_text else None
        except ValueError:
            raise ValueError("n and seed must be whole numbers, t a number.") from None
        if not 1 <= n <= 100:
            raise ValueError("n must be between 1 and 100.")
        if not 0 <= temperature <= 2:
            raise ValueError("t (temperature) must be between 0 and 2.")
        url = endpoint if looks_like_url(endpoint) else None
        return RunSettings(
            endpoint=None if url else (endpoint or None),
            base_url=url,
            model=model,
            task=str(self.query_one("#run-task", Select).value),
            mode=str(self.query_one("#run-mode", Select).value),
            n=n,
            temperature=temperature,
            seed=seed,
        )

    @work(exclusive=True, group="live-run")
    async def run_model(self, sample: Sample, settings: RunSettings) -> RunSummary | None:
        from cruxtui.core.runs.session import LiveRunError, live_run
        from cruxtui.core.runs.store import RunStoreError

        stream = self.query_one(GenerationStream)
        try:
            summary = await live_run(
                app_store(self.crux),
                self.crux.dataset,
                sample,
                settings,
                listener=_PanelListener(self),
                show_stored=stream.finish,
            )
        except (LiveRunError, RunStoreError) as exc:
            self.query_one("#run-status", Static).update(f"failed: {exc}")
            self.notify(str(exc), title="Run failed", severity="error", timeout=10)
            return None
        if summary.aborted:
            self.notify(summary.aborted, title="Run stopped", severity="error", timeout=10)
        elif summary.failed:
            self.notify(
                f"{summary.failed} request(s) failed; run again to retry them.",
                title="Run",
                severity="warning",
            )
        return summary

    def show_progress(self, p: Progress) -> None:
        shown = p.done + p.stored_before
        eta = p.eta
        parts = [
            f"{p.done}/{p.total} new",
            f"eta {eta:.0f}s" if eta and p.done < p.total else "",
            f"{p.stored_before} stored before" if p.stored_before else "",
            f"{p.failed} failed" if p.failed else "",
            f"pass@1 {100 * p.pass1:.0f}%" if shown else "",
        ]
        self.query_one("#run-status", Static).update(" · ".join(x for x in parts if x))


def toggle_run_panel(screen: Any) -> None:
    """Show the run panel in place of the Sample screen's right column, or hide it again."""
    panels = screen.query(RunPanel)
    right = screen.query_one("#sample-right")
    if panels:
        panel = panels.first()
        shown = not panel.display
        panel.display = shown
        right.display = not shown
        if shown:
            panel.query_one("#run-endpoint", Input).focus()
        return
    right.display = False
    panel = RunPanel(id="run-panel")
    screen.query_one("#sample-main").mount(panel)
    screen.call_after_refresh(lambda: panel.query_one("#run-endpoint", Input).focus())
