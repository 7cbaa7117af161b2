"""Keys never show in the run panel's live streams: a hostile server or model may echo one (the
stored text is redacted; what the card shows while it streams must be too), even a key arriving
in pieces, one chunk of it at a time."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import NotingApp, wait_for
from textual.widgets import Input

from cruxtui.core.data.dataset import Dataset
from cruxtui.core.runs.store import RunStore
from cruxtui.core.util.redact import MARK, live_redactor
from cruxtui.testing.fake_openai import FakeOpenAI, constant
from cruxtui.tui.state import TuiOptions
from cruxtui.tui.widgets.generation_stream import GenerationStream
from tests.tui.test_run_panel_thinking import SIZE, open_panel, starter  # noqa: F401 - a fixture

KEY = "sk-live-0123456789abcdefXYZ"
TEXT = (
    "Reading the environment first: the key is " + KEY + " and it is now on screen. "
    "Then the code runs. [ANSWER]\nassert f(1) == 1\n[/ANSWER]"
)


def test_a_key_arriving_in_pieces_is_hidden_from_its_first_characters_on(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("SOME_SERVICE_API_KEY", KEY)
    shown = live_redactor()
    for cut in range(len(TEXT)):
        partial = shown(TEXT[:cut], True)
        assert KEY[:4] not in partial, (cut, partial)
    assert shown(TEXT, False) == TEXT.replace(KEY, MARK)
    assert shown("the end of sk-l", False) == "the end of sk-l"  # a finished text is as it is


async def test_the_run_panel_never_shows_a_streamed_key(
    starter: Dataset,  # noqa: F811 - the fixture
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("SOME_SERVICE_API_KEY", KEY)
    with FakeOpenAI(constant(TEXT), chunk_chars=3, chunk_delay=0.005) as srv:
        app = NotingApp(starter, TuiOptions(store=str(tmp_path / "r.sqlite"), endpoint=srv.url))
        async with app.run_test(size=SIZE) as pilot:
            panel = await open_panel(pilot, n=1)
            panel.query_one("#run-model", Input).value = "fake-model"
            panel.query_one("#run-go").press()
            stream = panel.query_one(GenerationStream)
            shown: list[str] = []

            def looked() -> bool:
                for card in stream.cards:
                    shown.append(str(card._body.content))
                return bool(stream.cards) and not panel.running

            await wait_for(pilot, looked, what="the run to end")
            shown.append(str(stream.cards[0]._body.content))
            stored = RunStore(tmp_path / "r.sqlite").generations(panel.run_id or "")
    assert KEY in TEXT and len(shown) > 5
    assert not [s for s in shown if KEY[:4] in s], [s for s in shown if KEY[:4] in s][:2]
    assert MARK in shown[-1]
    assert stored and all(KEY not in g.raw and MARK in g.raw for g in stored)
