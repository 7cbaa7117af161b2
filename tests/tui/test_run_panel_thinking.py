"""The run panel with reasoning models and real servers: the thinking streams into its own
collapsible section beside the answer; API, max tokens and concurrency fields reach the run; and
the real model streams into the panel."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from conftest import NotingApp, RealModel, wait_for
from textual.widgets import Collapsible, Input, Select

from cruxtui.core.data.dataset import Dataset, load_dataset
from cruxtui.core.runs.store import RunStore
from cruxtui.testing.fake_openai import CruxevalResponder, FakeOpenAI
from cruxtui.tui.screens.sample_screen import SampleScreen
from cruxtui.tui.state import TuiOptions
from cruxtui.tui.widgets.generation_stream import GenerationStream
from cruxtui.tui.widgets.run_panel import RunPanel

SIZE = (100, 36)
THINKING = (
    "The function looks for the last occurrence of the character. It is at index 3, "
    "so the slice keeps the text before it and the answer is the shorter string."
)


@pytest.fixture(scope="module")
def starter() -> Dataset:
    from cruxtui.core.data.dataset import Source, starter_path

    return Dataset(load_dataset(offline=True).samples, Source.PATH, str(starter_path()))


@pytest.fixture
def thinker(starter: Dataset):
    with FakeOpenAI(
        CruxevalResponder(starter.samples, "correct"),
        think=THINKING,
        think_style="reasoning_content",
        chunk_chars=4,
        chunk_delay=0.01,
        interrupt_streams=True,
    ) as srv:
        yield srv


def named_endpoint(url: str) -> str:
    """A config.toml endpoint, so the form shows a stable name, not a random port."""
    config = Path(os.environ["CRUXTUI_CONFIG_DIR"])
    config.mkdir(parents=True, exist_ok=True)
    (config / "config.toml").write_text(
        f'[endpoints.local]\nbase_url = "{url}"\nmodel = "fake-model"\n', encoding="utf-8"
    )
    return "local"


async def open_panel(pilot, n: int) -> RunPanel:  # noqa: ANN001
    await pilot.press("enter")
    await wait_for(pilot, lambda: isinstance(pilot.app.screen, SampleScreen), what="the sample")
    await pilot.press("r")
    await pilot.pause()
    panel = pilot.app.screen.query_one(RunPanel)
    panel.query_one("#run-n", Input).value = str(n)
    return panel


async def test_thinking_streams_into_its_own_collapsible_section(
    starter: Dataset, thinker: FakeOpenAI, tmp_path: Path
) -> None:
    app = NotingApp(starter, TuiOptions(store=str(tmp_path / "r.sqlite"), endpoint=thinker.url))
    async with app.run_test(size=SIZE) as pilot:
        panel = await open_panel(pilot, n=2)
        panel.query_one("#run-model", Input).value = "fake-model"
        panel.query_one("#run-mode", Select).value = "cot"
        panel.query_one("#run-concurrency", Input).value = "1"
        panel.query_one("#run-go").press()
        stream = panel.query_one(GenerationStream)
        seen: dict[str, str] = {}

        def thinking_before_answer() -> bool:
            live = [c for c in stream.cards if c.streaming and c.thinking]
            if live:
                seen["thinking"], seen["answer"] = live[0].thinking, live[0].text
            return bool(live)

        await wait_for(pilot, thinking_before_answer, what="thinking streaming in")
        assert THINKING.startswith(seen["thinking"]) and "[ANSWER]" not in seen["answer"]
        await wait_for(pilot, lambda: not panel.running, what="the run to end")
        cards = stream.cards
        assert len(cards) == 2
        stored = RunStore(tmp_path / "r.sqlite").generations(panel.run_id or "")
        for card, gen in zip(cards, stored, strict=True):
            assert card.thinking == gen.reasoning == THINKING
            assert card.text == gen.raw and "[ANSWER]" in gen.raw
            section = card.query_one(Collapsible)
            assert section.display and not section.collapsed
            assert "thinking" in section.title
        # concurrency 1: the server, which cuts a running stream when another request arrives,
        # never saw two at once, so no card was restarted.
        assert thinker.max_streams_open == 1
        assert all(not (c.border_subtitle or "").startswith("restarted") for c in cards)
        section = cards[0].query_one(Collapsible)
        section.collapsed = True  # the reader folds it away
        await pilot.pause()
        assert section.collapsed and cards[0].text == stored[0].raw


async def test_api_and_max_tokens_fields_reach_the_run(
    starter: Dataset, thinker: FakeOpenAI, tmp_path: Path
) -> None:
    app = NotingApp(starter, TuiOptions(store=str(tmp_path / "r.sqlite"), endpoint=thinker.url))
    async with app.run_test(size=SIZE) as pilot:
        panel = await open_panel(pilot, n=1)
        panel.query_one("#run-model", Input).value = "fake-model"
        panel.query_one("#run-api", Select).value = "completions"
        panel.query_one("#run-max-tokens", Input).value = "16"
        panel.query_one("#run-go").press()
        await pilot.pause()
        await wait_for(pilot, lambda: not panel.running, what="the run to end")
        [info] = RunStore(tmp_path / "r.sqlite").runs()
        assert info.config.spec["api"] == "completions" and info.config.style == "completion"
        assert info.config.params["max_tokens"] == 16
        [gen] = RunStore(tmp_path / "r.sqlite").generations(info.id)
        # 16 tokens are spent thinking: the verdict says so.
        assert gen.reason.startswith("truncated while thinking")
        assert thinker.log.requests[-1].endpoint == "completions"

        panel.query_one("#run-max-tokens", Input).value = "zero"
        panel.query_one("#run-go").press()
        await pilot.pause()
        assert any("max tokens" in n.message for n in app.notes)


def test_snapshot_run_panel_with_thinking(snap_compare, starter: Dataset, tmp_path: Path) -> None:  # noqa: ANN001
    with FakeOpenAI(
        CruxevalResponder(starter.samples, "correct"),
        think=THINKING,
        think_style="inline",
        chunk_chars=8,
    ) as srv:
        endpoint = named_endpoint(srv.url)

        async def run_before(pilot) -> None:  # noqa: ANN001
            panel = await open_panel(pilot, n=2)
            panel.query_one("#run-mode", Select).value = "cot"
            panel.query_one("#run-concurrency", Input).value = "1"
            panel.query_one("#run-go").press()
            await pilot.pause()
            await wait_for(pilot, lambda: not panel.running, what="the run to end")
            panel.query_one(GenerationStream).scroll_home(animate=False)
            panel.query_one(GenerationStream).focus()
            await pilot.pause()

        assert snap_compare(
            NotingApp(starter, TuiOptions(store=str(tmp_path / "r.sqlite"), endpoint=endpoint)),
            terminal_size=SIZE,
            run_before=run_before,
        )


@pytest.mark.realmodel
@pytest.mark.timeout(900)
async def test_the_real_model_streams_into_the_run_panel(
    real_model: RealModel, starter: Dataset, tmp_path: Path
) -> None:
    app = NotingApp(starter, TuiOptions(store=str(tmp_path / "r.sqlite"), endpoint=real_model.url))
    async with app.run_test(size=SIZE) as pilot:
        panel = await open_panel(pilot, n=2)
        panel.query_one("#run-model", Input).value = real_model.model
        panel.query_one("#run-max-tokens", Input).value = "24"
        panel.query_one("#run-concurrency", Input).value = "1"
        panel.query_one("#run-seed", Input).value = "5"
        panel.query_one("#run-temperature", Input).value = "0.9"
        panel.query_one("#run-go").press()
        stream = panel.query_one(GenerationStream)
        await wait_for(
            pilot,
            lambda: any(c.streaming and len(c.parts) > 2 for c in stream.cards),
            timeout=300,
            what="the real model's text streaming in",
        )
        await wait_for(pilot, lambda: not panel.running, timeout=600, what="the run to end")
        assert not [n for n in app.notes if n.severity == "error"], app.notes
        cards = stream.cards
        assert len(cards) == 2 and all(c.verdict is not None and c.text.strip() for c in cards)
        stored = RunStore(tmp_path / "r.sqlite").generations(panel.run_id or "")
        assert [g.raw for g in stored] == [c.text for c in cards]
        assert [g.seed for g in stored] == [5, 6]
        assert all(g.reasoning is None for g in stored)  # SmolLM2 does not think
