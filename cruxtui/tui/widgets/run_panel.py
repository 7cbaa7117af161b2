"""The run panel on the Sample screen: run a model on this sample and watch each generation stream in.

The form takes an endpoint (a name from config.toml, or a base URL), a model and the kind of API
(chat or completions), the task, mode, n, temperature, seed, max tokens (empty: the mode's default;
a reasoning model needs thousands) and how many requests may be in flight at once (empty: the
endpoint's setting, else up to 4; 1 for servers that handle one request at a time, such as
llama-cpp-python, which otherwise cut each other's streams). Every field keeps its label in view. The run goes through the same runner and store as `cruxtui run`, inside a Textual
worker on the app's event loop; scoring runs in a thread, so streamed text keeps flowing while
verdicts are computed. Generations already stored for this configuration are shown, not requested.
"""

from __future__ import annotations

import gc
from dataclasses import dataclass
from typing import Any

from textual import on, work
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.widgets import Button, Input, Label, Select, Static
from textual.worker import Worker

from cruxtui.core.data.dataset import Sample
from cruxtui.core.models.backend import Backend, ModelError
from cruxtui.core.models.endpoints import load_endpoints
from cruxtui.core.runs.runner import Progress, RunListener, RunSummary
from cruxtui.core.runs.session import LiveRunError, RunSettings, live_run, warm_up
from cruxtui.core.runs.store import Generation, RunStoreError
from cruxtui.tui.state import AppState
from cruxtui.tui.widgets.generation_stream import GenerationStream
from cruxtui.tui.workers import ReportsTaskErrors

TASKS = (("output", "output"), ("input", "input"))
APIS = (("chat", "chat"), ("completions", "completions"))
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

    def on_thinking(self, sample_id: str, index: int, text: str, moved: bool) -> None:
        self.stream.append_thinking(sample_id, index, text, moved)

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
    try:
        return load_endpoints()[1] or ""
    except ModelError:
        return ""


def looks_like_url(text: str) -> bool:
    """`http://...`, `localhost:8000`, `10.0.0.5:8000/v1`: a base URL rather than an endpoint name."""
    return "://" in text or "/" in text or (":" in text and text.rsplit(":", 1)[1][:1].isdigit())


@dataclass(frozen=True)
class RunForm:
    """What the form says, as typed (checked when a run starts)."""

    endpoint: str
    model: str
    task: str
    mode: str
    n: str
    temperature: str
    seed: str
    api: str = "chat"
    max_tokens: str = ""
    concurrency: str = ""


class RunPanel(ReportsTaskErrors, Vertical):
    """Form + live generations for `sample` (the screen showing another sample sets it)."""

    class Started(Message):
        """The user started a run in this panel (Run, or Enter in a field), with this form."""

        def __init__(self, panel: RunPanel, form: RunForm) -> None:
            super().__init__()
            self.panel = panel
            self.form = form

        @property
        def control(self) -> RunPanel:
            return self.panel

    def __init__(
        self, state: AppState, sample: Sample, *, title: str = "Run a model", **kwargs: Any
    ) -> None:
        super().__init__(**kwargs)
        self.state = state
        self.sample = sample
        self.run_id: str | None = None
        """The run shown (once started): `s` on the Sample screen saves its failure."""
        self.border_title = title
        self._run: Worker[RunSummary | None] | None = None

    @property
    def current_run(self) -> Worker[RunSummary | None] | None:
        """The worker of the run started last (None before the first)."""
        return self._run

    @property
    def running(self) -> bool:
        """A run started here has not ended yet."""
        return self._run is not None and not self._run.is_finished

    def compose(self) -> ComposeResult:
        options = self.state.options
        endpoint = options.endpoint or _default_endpoint()
        # Labels beside the fields, not placeholders inside them: a filled field still says what
        # it is. Compact fields (one line each) leave the room to the generations.
        with Horizontal(classes="run-row"):
            yield Label("endpoint", classes="run-label", markup=False)
            yield Input(
                endpoint, placeholder="config.toml name or URL", id="run-endpoint", compact=True
            )
            yield Label("model", classes="run-label", markup=False)
            yield Input(
                options.model or "", placeholder="served name", id="run-model", compact=True
            )
        with Horizontal(classes="run-row"):
            yield Label("api", classes="run-label", markup=False)
            yield Select(APIS, value="chat", allow_blank=False, id="run-api", compact=True)
            yield Label("mode", classes="run-label", markup=False)
            yield Select(MODES, value="direct", allow_blank=False, id="run-mode", compact=True)
        with Horizontal(classes="run-row"):
            yield Label("task", classes="run-label", markup=False)
            yield Select(TASKS, value="output", allow_blank=False, id="run-task", compact=True)
            yield Label("n", classes="run-label", markup=False)
            yield Input("1", type="integer", id="run-n", compact=True)
            yield Label("t", classes="run-label", markup=False)
            yield Input("0.2", type="number", id="run-temperature", compact=True)
            yield Label("seed", classes="run-label", markup=False)
            yield Input("0", type="integer", id="run-seed", placeholder="none", compact=True)
        with Horizontal(classes="run-row"):
            yield Label("max tokens", classes="run-label", markup=False)
            yield Input("", type="integer", id="run-max-tokens", placeholder="mode's", compact=True)
            yield Label("in flight", classes="run-label", markup=False)
            yield Input("", type="integer", id="run-concurrency", placeholder="auto", compact=True)
            yield Button("Run", id="run-go", variant="primary", compact=True)
        yield Static("", id="run-status", markup=False)
        yield GenerationStream(id="run-stream")

    def focus_form(self) -> None:
        """Put the cursor in the endpoint field, now or (while the panel is still mounting, as
        when keys arrive in a burst) once its fields exist."""
        fields = self.query("#run-endpoint").results(Input)
        field = next(fields, None)
        if field is not None:
            field.focus()
        elif not self.is_mounted:
            self.call_after_refresh(self.focus_form)

    def on_mount(self) -> None:
        freeze_heap()
        self.run_worker(warm_up, thread=True, group="warm-up", name="Warm-up", exit_on_error=False)

    # The form --------------------------------------------------------------------------------
    @property
    def form(self) -> RunForm:
        return RunForm(
            endpoint=self.query_one("#run-endpoint", Input).value,
            model=self.query_one("#run-model", Input).value,
            task=str(self.query_one("#run-task", Select).value),
            mode=str(self.query_one("#run-mode", Select).value),
            n=self.query_one("#run-n", Input).value,
            temperature=self.query_one("#run-temperature", Input).value,
            seed=self.query_one("#run-seed", Input).value,
            api=str(self.query_one("#run-api", Select).value),
            max_tokens=self.query_one("#run-max-tokens", Input).value,
            concurrency=self.query_one("#run-concurrency", Input).value,
        )

    @form.setter
    def form(self, form: RunForm) -> None:
        self.query_one("#run-endpoint", Input).value = form.endpoint
        self.query_one("#run-model", Input).value = form.model
        self.query_one("#run-task", Select).value = form.task
        self.query_one("#run-mode", Select).value = form.mode
        self.query_one("#run-n", Input).value = form.n
        self.query_one("#run-temperature", Input).value = form.temperature
        self.query_one("#run-seed", Input).value = form.seed
        self.query_one("#run-api", Select).value = form.api
        self.query_one("#run-max-tokens", Input).value = form.max_tokens
        self.query_one("#run-concurrency", Input).value = form.concurrency

    @on(Button.Pressed, "#run-go")
    @on(Input.Submitted)
    def _submitted(self) -> None:
        form = self.form
        if self.start(form):
            self.post_message(self.Started(self, form))

    def start(self, form: RunForm | None = None, *, backend: Backend | None = None) -> bool:
        """Run the model with `form` (shown in the panel), else with what the panel's form says.
        False, with a notification, when the form is not valid. `backend`: a model backend to
        use instead of the form's endpoint (the tour's replay of recorded answers)."""
        if form is not None:
            self.form = form
        try:
            settings = _settings(form or self.form)
        except ValueError as exc:
            self.notify(str(exc), title="Run", severity="error")
            return False
        self.query_one(GenerationStream).clear()
        self.query_one("#run-status", Static).update("starting…")
        self._run = self.run_model(self.sample, settings, backend)
        return True

    # The run ---------------------------------------------------------------------------------
    @work(exclusive=True, group="live-run", name="Model run", exit_on_error=False)
    async def run_model(
        self, sample: Sample, settings: RunSettings, backend: Backend | None = None
    ) -> RunSummary | None:
        stream = self.query_one(GenerationStream)
        try:
            summary = await live_run(
                self.state.run_store,
                self.state.dataset,
                sample,
                settings,
                listener=_PanelListener(self),
                show_stored=stream.finish,
                backend=backend,
            )
        except (LiveRunError, RunStoreError) as exc:
            self.query_one("#run-status", Static).update(f"failed: {exc}")
            self.notify(str(exc), title="Run failed", severity="error", timeout=10)
            return None
        if summary.aborted:
            # The status line keeps the reason in view after the notification has gone.
            self.query_one("#run-status", Static).update(f"stopped: {summary.aborted}")
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


def _settings(form: RunForm) -> RunSettings:
    """The run settings `form` asks for; ValueError says what is wrong with it."""
    endpoint = form.endpoint.strip()
    model = form.model.strip() or None
    if not endpoint and not model:
        raise ValueError("Give an endpoint name (from config.toml) or a base URL and a model.")
    seed_text = form.seed.strip()
    try:
        n = int(form.n)
        temperature = float(form.temperature)
        seed = int(seed_text) if seed_text else None
        max_tokens = int(form.max_tokens) if form.max_tokens.strip() else None
        concurrency = int(form.concurrency) if form.concurrency.strip() else None
    except ValueError:
        raise ValueError(
            "n, seed, max tokens and in flight must be whole numbers, t a number."
        ) from None
    if max_tokens is not None and max_tokens < 1:
        raise ValueError("max tokens must be at least 1 (empty: the mode's default).")
    if concurrency is not None and concurrency < 1:
        raise ValueError("in flight must be at least 1 (empty: automatic).")
    if not 1 <= n <= 100:
        raise ValueError("n must be between 1 and 100.")
    if not 0 <= temperature <= 2:
        raise ValueError("t (temperature) must be between 0 and 2.")
    url = endpoint if looks_like_url(endpoint) else None
    return RunSettings(
        endpoint=None if url else (endpoint or None),
        base_url=url,
        model=model,
        api=form.api if form.api in ("chat", "completions") else None,
        task=form.task,
        mode=form.mode,
        n=n,
        temperature=temperature,
        seed=seed,
        max_tokens=max_tokens,
        concurrency=concurrency,
    )
