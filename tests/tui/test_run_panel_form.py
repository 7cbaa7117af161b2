"""The run panel's form as a new user meets it: an endpoint nobody listens on fails at once with
one line and leaves no run behind; every field keeps its label once filled in, and every field and
the Run button fit the panel at 80 columns (the Run button and the seed were cut off)."""

from __future__ import annotations

import socket
import time
from pathlib import Path

import pytest
from conftest import NotingApp, wait_for
from textual.widgets import Input, Label, Static

from cruxtui.core.data.dataset import Dataset, Source, load_dataset, starter_path
from cruxtui.core.runs.store import RunStore
from cruxtui.tui.screens.sample_screen import SampleScreen
from cruxtui.tui.state import TuiOptions
from cruxtui.tui.widgets.generation_stream import GenerationStream
from cruxtui.tui.widgets.run_panel import RunPanel


@pytest.fixture(scope="module")
def starter() -> Dataset:
    return Dataset(load_dataset(offline=True).samples, Source.PATH, str(starter_path()))


async def _panel(pilot, app: NotingApp) -> RunPanel:  # noqa: ANN001
    app.open_sample(app.state.dataset.samples[0].id)
    await wait_for(pilot, lambda: isinstance(app.screen, SampleScreen), what="the sample")
    await pilot.press("r")
    await wait_for(pilot, lambda: bool(app.screen.query(RunPanel)), what="the run panel")
    panel = app.screen.query_one(RunPanel)
    await wait_for(pilot, lambda: bool(panel.query("#run-endpoint")), what="the form")
    return panel


async def test_refused_endpoint_fails_at_once_in_the_panel(
    starter: Dataset, tmp_path: Path
) -> None:
    import cruxtui.core.models.openai_compat  # noqa: F401 - the import (0.4 s) is not the wait

    store = tmp_path / "runs.sqlite"
    app = NotingApp(starter, TuiOptions(store=str(store)))
    with socket.socket() as closed:  # bound, never listening: every connect is refused
        closed.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{closed.getsockname()[1]}/v1"
        async with app.run_test(size=(100, 36)) as pilot:
            panel = await _panel(pilot, app)
            panel.query_one("#run-endpoint", Input).value = url
            panel.query_one("#run-model", Input).value = "m"
            panel.query_one("#run-n", Input).value = "3"
            app.state.run_store.runs()  # the store open, and the panel's warm-up done, off the clock
            await wait_for(
                pilot,
                lambda: all(w.is_finished for w in app.workers if w.group == "warm-up"),
                what="the warm-up",
            )
            start = time.monotonic()
            assert panel.start()
            await wait_for(pilot, lambda: not panel.running, timeout=30, what="the run to end")
            took = time.monotonic() - start
            status = str(panel.query_one("#run-status", Static).render())
            stream_text = str(panel.query_one(GenerationStream).render())
    assert took < 2.0, f"the panel gave up after {took:.1f} s"
    errors = [n for n in app.notes if n.severity == "error"]
    assert len(errors) == 1, app.notes
    assert errors[0].message.startswith(f"cannot connect to {url} (connection refused")
    assert "attempts" not in errors[0].message and "\n" not in errors[0].message
    assert "connection refused" in status and "retry" not in status, status
    assert "retry" not in stream_text
    with RunStore(store) as opened:
        assert opened.runs() == []


@pytest.mark.parametrize("width", [80, 160])
async def test_fields_keep_their_labels_when_filled(starter: Dataset, width: int) -> None:
    app = NotingApp(starter, TuiOptions())
    async with app.run_test(size=(width, 40)) as pilot:
        panel = await _panel(pilot, app)
        long_url = "http://inference-server.example.org:8000/v1"
        panel.query_one("#run-endpoint", Input).value = long_url
        panel.query_one("#run-model", Input).value = "qwen2.5-coder-7b-instruct"
        panel.query_one("#run-max-tokens", Input).value = "4096"
        panel.query_one("#run-concurrency", Input).value = "2"
        await pilot.pause()
        labels = {str(label.render()): label for label in panel.query(Label)}
        for name in ("endpoint", "model", "max tokens", "in flight", "api", "mode", "task"):
            label = labels[name]
            assert label.region.width >= len(name), f"{name!r} squeezed to {label.region.width}"
            assert label.region.height >= 1
            assert app.screen.get_widget_at(label.region.x, label.region.y)[0] is label
        endpoint = panel.query_one("#run-endpoint", Input)
        assert endpoint.region.width > 0 and labels["endpoint"].region.right <= endpoint.region.x
        inside = panel.content_region
        for row in panel.query(".run-row"):
            for control in row.children:  # every label, field and the Run button, whole
                assert inside.contains_region(control.region), (control, control.region, inside)
