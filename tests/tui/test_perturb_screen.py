"""The Perturb screen with Pilot: opened from a sample with `p`, a chain built by picking
transforms (live preview, Add, Undo), the re-derived ground truth, a rejection and a transform
that does not apply, the variant opened and traced like any sample, a model run on original and
variant side by side (a real HTTP server on 127.0.0.1), and a snapshot."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from conftest import wait_for
from textual.widgets import Input, Select, Static

from cruxtui.core.data.dataset import Dataset
from cruxtui.core.perturb import Variant, make_variant, parse_spec
from cruxtui.testing.fake_openai import CruxevalResponder, FakeOpenAI
from cruxtui.tui.app import CruxApp
from cruxtui.tui.screens.perturb_screen import PerturbScreen
from cruxtui.tui.screens.sample_screen import SampleScreen
from cruxtui.tui.screens.trace_screen import TraceScreen
from cruxtui.tui.state import TuiOptions
from cruxtui.tui.widgets.diff_view import DiffView
from cruxtui.tui.widgets.generation_stream import GenerationStream
from cruxtui.tui.widgets.run_panel import RunPanel

SIZE = (100, 32)


async def previewed(pilot, screen: PerturbScreen) -> None:  # noqa: ANN001
    """Wait until the preview shows the step being picked (it is verified in a worker)."""
    await wait_for(pilot, lambda: not screen.previewing, what="the preview")


async def open_perturb(pilot, sample_id: str = "sample_12") -> PerturbScreen:  # noqa: ANN001
    pilot.app.open_sample(sample_id)
    await pilot.pause()
    await pilot.press("p")
    screen = pilot.app.screen
    assert isinstance(screen, PerturbScreen)
    await previewed(pilot, screen)
    return screen


async def pick(pilot, screen: PerturbScreen, name: str, params: str = "", seed: str = "0") -> None:  # noqa: ANN001
    screen.query_one("#perturb-transform", Select).value = name
    await pilot.pause()
    screen.query_one("#perturb-params", Input).value = params
    screen.query_one("#perturb-seed", Input).value = seed
    await pilot.pause()
    await previewed(pilot, screen)


def text_of(screen: PerturbScreen, selector: str) -> str:
    return str(screen.query_one(selector, Static).render())


async def test_build_a_chain_and_see_the_new_ground_truth(official: Dataset) -> None:
    app = CruxApp(official)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_perturb(pilot)
        # The default pick (rename, anonymize) is previewed before anything is added.
        assert screen.chain == [] and isinstance(screen.preview, Variant)
        assert screen.preview.id == "sample_12~anon"
        assert "(unchanged)" in text_of(screen, "#perturb-truth")

        screen.query_one("#perturb-params", Input).focus()
        await pilot.press("enter")  # Enter in the parameters adds the step
        await previewed(pilot, screen)
        assert [str(s) for s in screen.chain] == ["rename"]

        await pick(pilot, screen, "flip-compare", "1")
        variant = screen.variant
        assert variant is not None and variant.id == "sample_12~anon~flip-compare-1"
        expected = make_variant(
            official["sample_12"], [parse_spec("rename"), parse_spec("flip-compare:1")]
        )
        assert variant.sample == expected.sample
        truth = text_of(screen, "#perturb-truth")
        assert "'If you want to live a happy life! Daniel'  →  'e a happy life! Daniel'" in truth
        diff = screen.query_one(DiffView)
        assert diff.texts == (
            official["sample_12"].code,
            variant.sample.code,
            "sample_12",
            variant.id,
        )
        assert "sample_12~anon~flip-compare-1" in text_of(screen, "#perturb-title")

        await pilot.press("ctrl+l")  # unified diff
        assert diff.unified
        await pilot.press("ctrl+l")
        assert not diff.unified

        screen.query_one("#perturb-add").press()
        await pilot.pause()
        await previewed(pilot, screen)
        assert [str(s) for s in screen.chain] == ["rename", "flip-compare:1"]
        await pilot.press("ctrl+z")
        await previewed(pilot, screen)
        assert [str(s) for s in screen.chain] == ["rename"]

        # The variant is a sample: registered on the app, opened, traced.
        await pick(pilot, screen, "flip-compare", "1")
        assert app.state.find_sample(variant.id) == variant.sample
        # Ctrl+O/T use the steps added: the previewed flip-compare is not one of them yet.
        await wait_for(pilot, lambda: screen.added_variant is not None, what="the added variant")
        assert screen.added_variant is not None and screen.added_variant.id == "sample_12~anon"
        screen.query_one("#perturb-transform").focus()
        await pilot.press("enter")  # Enter on the transform menu adds the step
        await previewed(pilot, screen)
        assert [str(s) for s in screen.chain] == ["rename", "flip-compare:1"]
        await wait_for(pilot, lambda: screen.added_variant == variant, what="the added variant")
        await pilot.press("ctrl+t")
        trace_screen = app.screen
        assert isinstance(trace_screen, TraceScreen) and trace_screen.sample == variant.sample
        await wait_for(pilot, lambda: trace_screen.trace is not None, what="the variant's trace")
        assert trace_screen.trace is not None
        assert trace_screen.trace.return_repr == variant.sample.output
        await pilot.press("escape")
        await pilot.press("ctrl+o")
        await wait_for(pilot, lambda: isinstance(app.screen, SampleScreen), what="the variant")
        assert isinstance(app.screen, SampleScreen) and app.screen.sample.id == variant.id
        about = str(app.screen.query_one("#sample-meta").render())
        assert "sample_12, perturbed" in about and "rename → flip-compare:1" in about


async def test_rejected_and_inapplicable_steps_say_why(official: Dataset) -> None:
    app = CruxApp(official)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_perturb(pilot)
        await pick(pilot, screen, "negate", "1")  # the while loop never ends
        assert screen.variant is None
        assert "rejected (timeout)" in text_of(screen, "#perturb-truth")
        await pick(pilot, screen, "swap-if")
        assert "does not apply" in text_of(screen, "#perturb-truth")
        screen.query_one("#perturb-add").press()  # refused: not added
        await pilot.pause()
        await previewed(pilot, screen)
        assert screen.chain == []
        await pick(pilot, screen, "rename", "s=x")
        assert "would capture the name 'x'" in text_of(screen, "#perturb-truth")
        await pilot.press("ctrl+o")  # nothing to open
        await pilot.pause()
        assert app.screen is screen


async def test_the_first_ctrl_l_after_add_switches_the_diff(official: Dataset) -> None:
    """Right after Add the form's step (the same transform again) often does not apply: the diff
    pane still shows the steps added, so the first Ctrl+L switches what is on screen."""
    from rich.table import Table
    from rich.text import Text

    app = CruxApp(official)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_perturb(pilot)
        diff = screen.query_one(DiffView)
        await pilot.press("enter")  # on the transform menu: adds `rename`
        await wait_for(pilot, lambda: len(screen.chain) == 1, what="the step added")
        await previewed(pilot, screen)
        await wait_for(pilot, lambda: diff.texts is not None, what="the diff of the chain")
        assert "does not apply" in text_of(screen, "#perturb-truth")  # the form's next step
        assert diff.texts is not None and diff.texts[3] == "sample_12~anon"
        assert isinstance(diff.content, Table)
        await pilot.press("ctrl+l")
        await pilot.pause()
        assert diff.unified and isinstance(diff.content, Text)
        assert "+++ sample_12~anon" in diff.content.plain
        await pilot.press("ctrl+l")
        await pilot.pause()
        assert not diff.unified and isinstance(diff.content, Table)


@pytest.fixture
def server(official: Dataset):
    variant = make_variant(
        official["sample_12"], [parse_spec("rename"), parse_spec("flip-compare:1")]
    )
    with FakeOpenAI(
        CruxevalResponder([official["sample_12"], variant.sample], "correct"),
        chunk_chars=8,
        chunk_delay=0.0,
    ) as srv:
        yield srv


async def test_run_a_model_on_original_and_variant_side_by_side(
    official: Dataset, server: FakeOpenAI, tmp_path: Path
) -> None:
    config = Path(os.environ["CRUXTUI_CONFIG_DIR"])
    config.mkdir(parents=True, exist_ok=True)
    (config / "config.toml").write_text(
        f'[endpoints.local]\nbase_url = "{server.url}"\nmodel = "fake-model"\n', encoding="utf-8"
    )
    app = CruxApp(official, TuiOptions(store=str(tmp_path / "runs.sqlite"), endpoint="local"))
    async with app.run_test(size=(140, 40)) as pilot:
        screen = await open_perturb(pilot)
        screen.query_one("#perturb-add").press()
        await pilot.pause()
        await previewed(pilot, screen)
        await pick(pilot, screen, "flip-compare", "1")
        screen.query_one("#perturb-add").press()  # ctrl+r runs the steps added
        await pilot.pause()
        await previewed(pilot, screen)
        await wait_for(pilot, lambda: screen.added_variant is not None, what="the variant")
        await pilot.press("ctrl+r")
        await pilot.pause()
        panels = list(screen.query(RunPanel))
        assert [p.sample.id for p in panels] == ["sample_12", "sample_12~anon~flip-compare-1"]
        panels[1].query_one("#run-n", Input).value = "2"
        panels[1].query_one("#run-go").press()  # Run in one panel runs both, same settings

        def judged(panel: RunPanel) -> list[tuple[str, str]]:
            cards = panel.query_one(GenerationStream).cards
            return [(c.sample_id, str(c.border_subtitle)) for c in cards if c.verdict is not None]

        await wait_for(
            pilot, lambda: all(len(judged(p)) == 2 for p in panels), what="both runs judged"
        )
        for panel in panels:
            assert judged(panel) == [(panel.sample.id, "PASS")] * 2
            assert panel.query_one("#run-n", Input).value == "2"
        # the variant was judged against its re-derived output, not the original's
        assert "'e a happy life! Daniel'" in panels[1].query_one(GenerationStream).cards[0].text
        await pilot.press("ctrl+r")
        assert not screen.query_one("#perturb-runs").display


def test_snapshot_perturb_screen(snap_compare, official: Dataset) -> None:  # noqa: ANN001
    async def run_before(pilot) -> None:  # noqa: ANN001
        screen = await open_perturb(pilot)
        screen.query_one("#perturb-add").press()
        await pilot.pause()
        await previewed(pilot, screen)
        await pick(pilot, screen, "flip-compare", "1")

    assert snap_compare(CruxApp(official), terminal_size=SIZE, run_before=run_before)
