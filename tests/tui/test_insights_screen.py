"""The Insights screen with Pilot: opened from Browse (the scored generations file) and from the
Runs screen (two marked runs: deltas and the contingency), sorting, the Browse filter a group
sets, the palette entries, numsteps counted on demand, and a snapshot."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import wait_for
from textual.widgets import DataTable, Select, Static

from cruxtui.core.data.dataset import Dataset, Source, load_dataset, starter_path
from cruxtui.core.runs.store import DONE, Generation, RunConfig, RunStore
from cruxtui.tui.app import CruxApp
from cruxtui.tui.screens.browse_screen import BrowseScreen
from cruxtui.tui.screens.insights_screen import InsightsScreen
from cruxtui.tui.screens.runs_screen import RunsScreen
from cruxtui.tui.state import TuiOptions

SIZE = (120, 34)
DIRECT_WRONG = {1, 2, 5, 8}
COT_WRONG = {2, 7}


@pytest.fixture(scope="module")
def starter() -> Dataset:
    """The bundled 40 samples, opened as a file (no "starter set" notice over the snapshot)."""
    return Dataset(load_dataset(offline=True).samples, Source.PATH, str(starter_path()))


def seed_runs(store_path: Path, dataset: Dataset) -> tuple[str, str]:
    """A direct and a CoT run over the first 12 samples, 2 generations each, fixed timestamps.
    Sample i fails both generations where listed; otherwise both pass."""
    ids = []
    with RunStore(store_path) as store:
        for mode, wrong in (("direct", DIRECT_WRONG), ("cot", COT_WRONG)):
            run = store.open_run(
                RunConfig(
                    spec={"backend": "openai", "model": "fake-model", "api": "chat"},
                    task="output",
                    mode=mode,
                    style="chat",
                    params={"n": 2, "temperature": 0.2},
                    template_version="t",
                    dataset_digest=dataset.digest,
                )
            )
            store.add_generations(
                run.id,
                [
                    Generation(
                        s.id,
                        k,
                        "x",
                        s.output,
                        "wrong" if i in wrong else "pass",
                        i not in wrong,
                        "",
                        created=1_700_000_000.0,
                    )
                    for i, s in enumerate(dataset.samples[:12])
                    for k in range(2)
                ],
            )
            store.finish(run.id, DONE)
            ids.append(run.id)
        store._db.execute("UPDATE runs SET created = 1700000000 + rowid, updated = 1700000000")
    return ids[0], ids[1]


def make_app(dataset: Dataset, store: Path, **options: str) -> CruxApp:
    return CruxApp(dataset, TuiOptions(store=str(store), **options))  # type: ignore[arg-type]


async def sliced(pilot, by: str | None = None) -> InsightsScreen:  # noqa: ANN001
    """Until the Insights screen on top shows a slice (by `by`, if given)."""

    def ready() -> bool:
        screen = pilot.app.screen
        return (
            isinstance(screen, InsightsScreen)
            and screen.slice is not None
            and (by is None or screen.slice.by == by)
        )

    await wait_for(pilot, ready, what=f"a slice by {by or 'anything'}")
    return pilot.app.screen


def text_of(widget: Static) -> str:
    """What a Static shows, as plain text (its content may be a Rich table)."""
    import io

    from rich.console import Console

    console = Console(width=100, file=io.StringIO(), record=True)
    console.print(widget.content)
    return console.export_text()


def table_rows(screen: InsightsScreen) -> dict[str, list[str]]:
    table = screen.query_one("#insights-table", DataTable)
    return {
        str(key.value): [str(cell).strip() for cell in table.get_row(key)] for key in table.rows
    }


async def open_from_runs(pilot, by: str = "type") -> InsightsScreen:  # noqa: ANN001
    await pilot.press("R")
    await pilot.pause()
    assert isinstance(pilot.app.screen, RunsScreen)
    # Runs are newest first: the CoT run is on top. Mark direct first (A), then CoT (B).
    await pilot.press("down", "space", "up", "space", "I")
    screen = await sliced(pilot)
    screen.query_one("#insights-by", Select).value = by
    return await sliced(pilot, by)


async def test_two_marked_runs_show_deltas_and_the_contingency(starter, tmp_path) -> None:
    direct, cot = seed_runs(tmp_path / "runs.sqlite", starter)
    app = make_app(starter, tmp_path / "runs.sqlite")
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_from_runs(pilot, by="lines")
        assert screen.query_one("#insights-source", Select).value == direct
        assert screen.query_one("#insights-against", Select).value == cot
        rows = table_rows(screen)
        samples = starter.samples[:12]
        # Independently: per number of lines, the samples and both runs' pass@1.
        by_lines: dict[str, list[int]] = {}
        for i, s in enumerate(samples):
            by_lines.setdefault(str(len(s.code.strip("\n").splitlines())), []).append(i)
        assert set(rows) == set(by_lines) | {"(all)"}
        for name, members in by_lines.items():
            a = 100 * sum(i not in DIRECT_WRONG for i in members) / len(members)
            b = 100 * sum(i not in COT_WRONG for i in members) / len(members)
            assert rows[name][:5] == [
                name,
                str(len(members)),
                f"{a:.1f}",
                f"{b:.1f}",
                f"{a - b:+.1f}",
            ]
        total = rows["(all)"]
        assert total[:5] == ["(all)", "12", f"{100 * 8 / 12:.1f}", f"{100 * 10 / 12:.1f}", "-16.7"]
        # A only: wrong in CoT, right in direct (7); B only: 1, 5, 8.
        assert total[-2:] == ["1", "3"]
        contingency = text_of(screen.query_one("#insights-contingency", Static))
        assert "A passes" in contingency and "A fails" in contingency
        assert [
            line.split()[-2:] for line in contingency.splitlines() if line.strip().startswith("A ")
        ] == [
            ["7", "1"],
            ["3", "1"],
        ]
        title = text_of(screen.query_one("#insights-title", Static))
        assert "A−B -16.7" in title


async def test_sorting_by_keys_and_by_header(starter, tmp_path) -> None:
    seed_runs(tmp_path / "runs.sqlite", starter)
    app = make_app(starter, tmp_path / "runs.sqlite")
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_from_runs(pilot, by="method")
        natural = [g.name for g in screen.rows]
        assert natural[-1] == "(all)"
        await pilot.press("o")  # by samples, largest first
        await pilot.pause()
        counts = [g.samples for g in screen.rows[:-1]]
        assert counts == sorted(counts, reverse=True)
        await pilot.press("o")  # by pass@1, highest first
        await pilot.pause()
        rates = [g.pass_at_1 for g in screen.rows[:-1]]
        assert rates == sorted(rates, reverse=True)
        await pilot.press("O")
        await pilot.pause()
        assert [g.pass_at_1 for g in screen.rows[:-1]] == sorted(rates)
        assert screen.rows[-1].name == "(all)"  # the total stays last
        table = screen.query_one("#insights-table", DataTable)
        # Click the A−B header: sorted by the difference.
        x = sum(c.get_render_width(table) for c in list(table.columns.values())[:4]) + 2
        await pilot.click("#insights-table", offset=(x, 0))
        await pilot.pause()
        assert screen.sort_key == "delta"
        deltas = [g.paired.delta for g in screen.rows[:-1] if g.paired]
        assert deltas == sorted(deltas, reverse=True)
        assert "A−B ▼" in str(list(table.columns.values())[4].label)


async def test_a_group_filters_browse_and_all_clears_it(starter, tmp_path) -> None:
    seed_runs(tmp_path / "runs.sqlite", starter)
    app = make_app(starter, tmp_path / "runs.sqlite")
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_from_runs(pilot, by="type")
        names = [g.name for g in screen.rows]
        row = names.index("str")
        group = screen.rows[row]
        screen.query_one("#insights-table", DataTable).move_cursor(row=row)
        await pilot.press("enter")
        await pilot.pause()
        await wait_for(pilot, lambda: isinstance(app.screen, BrowseScreen), what="Browse")
        await wait_for(pilot, lambda: "insights: type=str" in app.state.filters, what="the filter")
        assert list(app.state.filters) == ["insights: type=str"]
        expected = [s.id for s in starter.samples if s.id in group.sample_ids]
        await wait_for(pilot, lambda: app.screen.visible_ids == expected, what="the group's rows")
        assert all(starter[s].output_type == "str" for s in expected) and expected
        # The palette clears it too.
        await pilot.press("ctrl+p")
        await pilot.pause()
        await pilot.press(*"Clear the insights filter")
        await pilot.pause(0.3)
        await pilot.press("enter")
        await pilot.pause()
        await wait_for(pilot, lambda: not app.state.filters, what="no filter")
        app.set_filter("insights: type=str", lambda sample: sample.output_type == "str")
        await pilot.pause()
        # From Browse, I reopens Insights; (all) then clears the filter.
        await pilot.press("I")
        screen = await sliced(pilot)
        screen.query_one("#insights-table", DataTable).move_cursor(row=len(screen.rows) - 1)
        await pilot.press("f")
        await wait_for(pilot, lambda: not app.state.filters, what="no filter")
        assert isinstance(app.screen, BrowseScreen)
        await wait_for(pilot, lambda: len(app.screen.visible_ids) == len(starter), what="all rows")


async def test_browse_opens_insights_on_the_scored_generations_file(starter, tmp_path) -> None:
    samples = starter.samples[:10]
    path = tmp_path / "generations.json"
    # Right for even samples, wrong for odd ones: 3 predictions each.
    path.write_text(
        json.dumps({s.id: [s.output if i % 2 == 0 else "None"] * 3 for i, s in enumerate(samples)})
    )
    app = make_app(starter, tmp_path / "runs.sqlite", generations=str(path), task="output")
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.state.scored is not None, what="the scored file")
        assert "I" in app.screen.active_bindings
        assert app.screen.active_bindings["I"].binding.id == "browse.insights"
        await pilot.press("I")
        screen = await sliced(pilot)
        assert screen.query_one("#insights-source", Select).value == "scored"
        total = table_rows(screen)["(all)"]
        assert total[:4] == ["(all)", "10", "30", "50.0"]
        assert "generations.json" in text_of(screen.query_one("#insights-title", Static))


async def test_palette_opens_insights_by_a_dimension(starter, tmp_path) -> None:
    seed_runs(tmp_path / "runs.sqlite", starter)
    app = make_app(starter, tmp_path / "runs.sqlite")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("ctrl+p")
        await pilot.pause()
        await pilot.press(*"Insights by lines")
        await pilot.pause(0.3)
        await pilot.press("enter")
        screen = await sliced(pilot, "lines")
        assert screen.query_one("#insights-by", Select).value == "lines"
        assert screen.slice is not None and screen.slice.by == "lines"
        # No runs marked from Browse: the newest run, no comparison.
        assert screen.slice.against is None


async def test_numsteps_are_counted_on_demand(starter, tmp_path) -> None:
    seed_runs(tmp_path / "runs.sqlite", starter)
    app = make_app(starter, tmp_path / "runs.sqlite")
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_from_runs(pilot, by="numsteps")  # counting, then slicing
        assert screen.slice is not None and app.state.step_counts is not None
        assert sum(g.samples for g in screen.slice.groups) == 12
        assert all(g.name[0] in "<>0123456789" for g in screen.slice.groups)


async def test_nothing_to_slice_says_what_to_do(starter, tmp_path) -> None:
    app = make_app(starter, tmp_path / "runs.sqlite")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("I")
        await wait_for(pilot, lambda: isinstance(app.screen, InsightsScreen), what="Insights")
        await pilot.pause()
        title = text_of(app.screen.query_one("#insights-title", Static))
        assert "Nothing to slice yet" in title and "--generations" in title


def test_snapshot_insights_screen(snap_compare, starter, tmp_path) -> None:  # noqa: ANN001
    seed_runs(tmp_path / "runs.sqlite", starter)

    async def run_before(pilot) -> None:  # noqa: ANN001
        await open_from_runs(pilot, by="type")

    assert snap_compare(
        make_app(starter, tmp_path / "runs.sqlite"), terminal_size=SIZE, run_before=run_before
    )
