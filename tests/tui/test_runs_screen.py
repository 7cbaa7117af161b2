"""The TUI side of runs, with Pilot: run a local model (a real HTTP server on 127.0.0.1) on a
sample and watch text stream in and verdicts appear; errors as notifications; the Runs screen's
comparison (Enter jumps to the sample) and its Browse column; snapshots of both."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import NotingApp, wait_for
from textual.widgets import DataTable, Input

from cruxtui.core.data.dataset import Dataset, load_dataset
from cruxtui.core.runs.store import DONE, Generation, RunConfig, RunStore
from cruxtui.testing.fake_openai import CruxevalResponder, FakeOpenAI
from cruxtui.tui.screens.runs_screen import RunsScreen
from cruxtui.tui.screens.sample_screen import SampleScreen
from cruxtui.tui.state import TuiOptions
from cruxtui.tui.widgets.generation_stream import GenerationStream
from cruxtui.tui.widgets.run_panel import RunPanel

SIZE = (100, 32)


@pytest.fixture(scope="module")
def starter() -> Dataset:
    """The bundled 40 samples, opened as a file (no "starter set" notice over the snapshots)."""
    from cruxtui.core.data.dataset import Source, starter_path

    return Dataset(load_dataset(offline=True).samples, Source.PATH, str(starter_path()))


@pytest.fixture
def server(starter: Dataset):
    with FakeOpenAI(
        # 50 ms between chunks: a stream lasts long enough to be seen streaming on a busy machine.
        CruxevalResponder(starter.samples, "mixed"),
        chunk_chars=4,
        chunk_delay=0.05,
    ) as srv:
        yield srv


@pytest.fixture
def endpoint(server: FakeOpenAI, monkeypatch: pytest.MonkeyPatch) -> str:
    """A named endpoint in config.toml, so the form shows a stable name, not a random port."""
    import os

    config = Path(os.environ["CRUXTUI_CONFIG_DIR"])
    config.mkdir(parents=True, exist_ok=True)
    (config / "config.toml").write_text(
        f'[endpoints.local]\nbase_url = "{server.url}"\nmodel = "fake-model"\n', encoding="utf-8"
    )
    return "local"


def make_app(dataset: Dataset, store: Path, endpoint: str | None = None) -> NotingApp:
    return NotingApp(dataset, TuiOptions(store=str(store), endpoint=endpoint))


def status(panel: RunPanel) -> str:
    return str(panel.query_one("#run-status").render())


async def run_done(pilot, panel: RunPanel) -> None:  # noqa: ANN001
    """Wait until the run started in `panel` has ended."""
    await wait_for(pilot, lambda: not panel.running, what="the run to end")


async def open_run_panel(pilot, n: int = 2) -> RunPanel:  # noqa: ANN001
    await pilot.press("enter")  # Browse -> Sample
    await wait_for(pilot, lambda: isinstance(pilot.app.screen, SampleScreen), what="the sample")
    await pilot.press("r")
    await pilot.pause()
    panel = pilot.app.screen.query_one(RunPanel)
    panel.query_one("#run-n", Input).value = str(n)
    return panel


async def test_live_run_streams_text_then_shows_verdicts(
    starter, endpoint, server, tmp_path
) -> None:
    app = make_app(starter, tmp_path / "runs.sqlite", endpoint)
    async with app.run_test(size=SIZE) as pilot:
        panel = await open_run_panel(pilot, n=3)
        assert panel.query_one("#run-endpoint", Input).value == "local"
        sample = app.screen.sample
        panel.query_one("#run-go").press()
        stream = panel.query_one(GenerationStream)
        partial = None

        def streaming() -> bool:
            nonlocal partial
            live = [c for c in stream.cards if c.verdict is None and len(c.parts) > 2]
            partial = live[0].text if live else None
            return partial is not None

        # text must show while it streams, before the verdict
        await wait_for(pilot, streaming, what="text streaming in")
        await run_done(pilot, panel)
        cards = stream.cards
        assert [(c.sample_id, c.index) for c in cards] == [(sample.id, i) for i in range(3)]
        for card in cards:
            assert card.text.startswith("[ANSWER]\nassert f(") and card.verdict is not None
            assert card.border_subtitle in ("PASS", "WRONG")
        stored = RunStore(tmp_path / "runs.sqlite").generations(panel.run_id, sample.id)
        assert [g.raw for g in stored] == [c.text for c in cards]
        assert [("PASS" if g.passed else g.kind.upper()) for g in stored] == [
            c.border_subtitle for c in cards
        ]
        status = str(panel.query_one("#run-status").render())
        assert "3/3 new" in status and "pass@1" in status

        # Same configuration again: the stored generations are shown, nothing is requested.
        before = server.request_count
        panel.query_one("#run-go").press()
        await pilot.pause()
        await run_done(pilot, panel)
        assert server.request_count == before
        assert [c.text for c in stream.cards] == [c.text for c in cards]


async def test_unknown_model_is_a_notification(starter, server, tmp_path) -> None:
    app = make_app(starter, tmp_path / "runs.sqlite", server.url)
    async with app.run_test(size=SIZE) as pilot:
        panel = await open_run_panel(pilot, n=1)
        panel.query_one("#run-model", Input).value = "no-such-model"
        panel.query_one("#run-go").press()
        await pilot.pause()
        await run_done(pilot, panel)
        errors = [n for n in app.notes if n.severity == "error"]
        assert errors and "unknown model 'no-such-model'" in errors[-1].message
        assert RunStore(tmp_path / "runs.sqlite").runs() == [], "a refused run leaves no empty run"


async def test_bad_form_values_are_notifications(starter, tmp_path) -> None:
    app = make_app(starter, tmp_path / "runs.sqlite", "local")
    async with app.run_test(size=SIZE) as pilot:
        panel = await open_run_panel(pilot)
        panel.query_one("#run-n", Input).value = "0"
        panel.query_one("#run-go").press()
        await pilot.pause()
        assert any("n must be between 1 and 100" in n.message for n in app.notes)
        assert not panel.running and panel.run_id is None


def seed_runs(store_path: Path, dataset: Dataset) -> tuple[str, str]:
    """Two stored runs that disagree on a few samples, with fixed timestamps (for snapshots)."""
    with RunStore(store_path) as store:
        ids = []
        for mode, wrong in (("direct", {1, 2, 5}), ("cot", {2, 7})):
            cfg = RunConfig(
                spec={
                    "backend": "openai",
                    "model": "fake-model",
                    "base_url": "http://127.0.0.1:8000/v1",
                    "api": "chat",
                },
                task="output",
                mode=mode,
                style="chat",
                params={"n": 2, "temperature": 0.2},
                template_version="t",
                dataset_digest=dataset.digest,
            )
            run = store.open_run(cfg)
            for i, sample in enumerate(dataset.samples[:10]):
                for k in range(2):
                    ok = i not in wrong
                    store.add_generation(
                        run.id,
                        Generation(
                            sample_id=sample.id,
                            index=k,
                            raw="x",
                            answer=sample.output,
                            kind="pass" if ok else "wrong",
                            passed=ok,
                            reason="",
                            created=1_700_000_000.0,
                        ),
                    )
            store.finish(run.id, DONE)
            ids.append(run.id)
        store._db.execute("UPDATE runs SET created = 1700000000 + rowid, updated = 1700000000")
    return ids[0], ids[1]


async def test_runs_screen_compares_and_jumps_to_a_sample(starter, tmp_path) -> None:
    a, b = seed_runs(tmp_path / "runs.sqlite", starter)
    app = make_app(starter, tmp_path / "runs.sqlite")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("R")
        await pilot.pause()
        assert isinstance(app.screen, RunsScreen)
        table = app.screen.query_one("#runs-table", DataTable)
        assert table.row_count == 2
        assert "http://127.0.0.1:8000/v1 (chat)" in [str(c) for c in table.get_row(a)]
        assert "req. failed" in [str(c.label) for c in table.columns.values()]
        await pilot.press("space", "down", "space", "c")
        await pilot.pause()
        dis = app.screen.query_one("#disagreements", DataTable)
        # direct fails 1, 2, 5; cot fails 2, 7: they disagree on 1, 5 and 7
        expected = {starter.samples[i].id for i in (1, 5, 7)}
        assert {str(k.value) for k in dis.rows} == expected
        # The run list keeps the focus: arrows still move in it; Tab reaches the disagreements.
        assert table.has_focus
        await pilot.press("up")
        assert table.cursor_row == 0
        await pilot.press("down")
        assert table.cursor_row == 1
        await pilot.press("tab")
        assert dis.has_focus
        first = str(dis.coordinate_to_cell_key((0, 0)).row_key.value)
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, SampleScreen), what="the sample")
        assert isinstance(app.screen, SampleScreen) and app.screen.sample.id == first


async def test_runs_screen_adds_a_browse_column(starter, tmp_path) -> None:
    a, _ = seed_runs(tmp_path / "runs.sqlite", starter)
    app = make_app(starter, tmp_path / "runs.sqlite")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("R")
        await pilot.pause()
        table = app.screen.query_one("#runs-table", DataTable)
        row = [str(k.value) for k in table.rows].index(a)
        table.move_cursor(row=row)
        key = f"run:{a}"
        marks = app.screen.query_one("#runs-table", DataTable)
        await pilot.press("b")
        await wait_for(pilot, lambda: key in app.state.columns, what="the run's column")
        column = app.state.columns[key]
        assert str(column.value(starter.samples[0])) == "100%"
        assert str(column.value(starter.samples[1])) == "0%"
        assert str(column.value(starter.samples[20])) == ""
        await wait_for(pilot, lambda: str(marks.get_row(a)[-1]) == "✓", what="the col mark")
        await pilot.press("b")
        await wait_for(pilot, lambda: key not in app.state.columns, what="the column to go")
        await wait_for(pilot, lambda: str(marks.get_row(a)[-1]) == "", what="the mark to go")


@pytest.fixture
def utc(monkeypatch: pytest.MonkeyPatch):
    """Times on screen in UTC, whatever the machine's zone (snapshots must not depend on it)."""
    import time

    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


def test_snapshot_run_panel(snap_compare, starter, endpoint, tmp_path) -> None:
    async def run_before(pilot) -> None:  # noqa: ANN001
        panel = await open_run_panel(pilot, n=2)
        panel.query_one("#run-go").press()
        await pilot.pause()
        await run_done(pilot, panel)
        panel.query_one(GenerationStream).focus()
        await pilot.pause()

    assert snap_compare(
        make_app(starter, tmp_path / "runs.sqlite", endpoint),
        terminal_size=SIZE,
        run_before=run_before,
    )


def test_snapshot_runs_screen(snap_compare, starter, tmp_path, utc) -> None:
    seed_runs(tmp_path / "runs.sqlite", starter)

    async def run_before(pilot) -> None:  # noqa: ANN001
        await pilot.press("R", "space", "down", "space", "c")
        await pilot.pause()

    assert snap_compare(
        make_app(starter, tmp_path / "runs.sqlite"), terminal_size=SIZE, run_before=run_before
    )


async def test_stream_follows_new_text_only_when_at_the_bottom() -> None:
    from textual.app import App, ComposeResult

    class StreamApp(App[None]):
        def compose(self) -> ComposeResult:
            yield GenerationStream()

    def gen(index: int, text: str) -> Generation:
        return Generation(
            sample_id="s",
            index=index,
            raw=text,
            answer="1",
            kind="pass",
            passed=True,
            reason="matches the expected output",
        )

    app = StreamApp()
    async with app.run_test(size=(60, 16)) as pilot:
        stream = app.query_one(GenerationStream)
        for i in range(4):
            stream.begin("s", i, "[ANSWER]\n")
            stream.finish(gen(i, "line\n" * 6))
        stream.begin("s", 4)
        for _ in range(40):
            stream.append("s", 4, "more text ")
            await pilot.pause(0.01)
        await wait_for(
            pilot,
            lambda: stream.max_scroll_y > 0 and stream.is_vertical_scroll_end,
            what="the view to follow while at the bottom",
        )

        stream.scroll_home(animate=False)
        await pilot.pause()
        for _ in range(20):
            stream.append("s", 4, "even more ")
        stream.finish(gen(4, "line\n" * 12))
        card = stream.card("s", 4)
        assert card is not None
        await wait_for(pilot, lambda: not card.streaming, what="the card to settle")
        await pilot.pause(stream.FLUSH_INTERVAL * 4)  # a pending repaint would have moved it now
        assert stream.scroll_offset.y == 0, (
            "scrolled up by the user: new text must not pull the view"
        )
        assert "line" in card.text


async def test_form_starts_with_the_configs_default_endpoint(starter, server, tmp_path) -> None:
    import os

    config = Path(os.environ["CRUXTUI_CONFIG_DIR"])
    config.mkdir(parents=True, exist_ok=True)
    (config / "config.toml").write_text(
        f'default = "lab"\n[endpoints.lab]\nbase_url = "{server.url}"\nmodel = "fake-model"\n',
        encoding="utf-8",
    )
    app = make_app(starter, tmp_path / "runs.sqlite")
    async with app.run_test(size=SIZE) as pilot:
        panel = await open_run_panel(pilot, n=1)
        assert panel.query_one("#run-endpoint", Input).value == "lab"
        panel.query_one("#run-go").press()
        await pilot.pause()
        await run_done(pilot, panel)
        assert [c.verdict is not None for c in panel.query_one(GenerationStream).cards] == [True]


async def test_retries_show_in_the_status_line(starter, endpoint, server, tmp_path) -> None:
    from cruxtui.testing.fake_openai import Fault

    server.add_faults(Fault("rate_limit", retry_after=1.0))
    app = make_app(starter, tmp_path / "runs.sqlite", endpoint)
    async with app.run_test(size=SIZE) as pilot:
        panel = await open_run_panel(pilot, n=1)
        panel.query_one("#run-go").press()
        seen = ""

        def retrying() -> bool:
            nonlocal seen
            seen = status(panel)
            return seen.startswith("retry")

        await wait_for(pilot, retrying, what="the retry to show")
        assert seen.startswith("retry 1 in 1.0s:") and "rate limiting" in seen
        await run_done(pilot, panel)
        assert "1/1 new" in status(panel)


async def test_unreadable_store_is_a_notification(starter, tmp_path) -> None:
    bad = tmp_path / "runs.sqlite"
    bad.write_bytes(b"not a database" * 200)
    app = make_app(starter, bad, "http://127.0.0.1:9/v1")
    async with app.run_test(size=SIZE) as pilot:
        panel = await open_run_panel(pilot, n=1)
        panel.query_one("#run-model", Input).value = "m"
        panel.query_one("#run-go").press()
        await pilot.pause()
        await run_done(pilot, panel)
        await pilot.press("escape", "R")
        await wait_for(pilot, lambda: isinstance(app.screen, RunsScreen), what="the Runs screen")
        errors = [n.message for n in app.notes if n.severity == "error"]
        assert len(errors) == 2 and all("cannot open the run store" in m for m in errors)
