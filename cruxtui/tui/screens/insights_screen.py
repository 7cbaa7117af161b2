"""Insights: where a model fails, as a sortable table of slices and a terminal plot.

The same slices as `cruxtui stats` (`cruxtui.core.insights`): pick what to slice (the scored
generations file, or any stored run), what to group by, and optionally a run to compare with;
every group gets its pass@1 with a 95% bootstrap interval, and against a second run the paired
difference and what passes in one run only. Enter (or `f`) on a group filters Browse to its
samples; Enter on `(all)` clears that filter. Opened with `I` from Browse (the scored set, else the
newest run) and from the Runs screen (the marked runs: two give the comparison).

Slicing runs in a thread worker (its result comes back as a `SliceReady` message): reading a big
run and resampling every group takes a moment, and the screen must keep painting meanwhile. The
Browse filter is asked of the app (`SetFilter`), and step counts too (`CountSteps`): the screen
re-slices when the app says Browse changed and the counts are there.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rich.table import Table
from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Header, Select, Static

from cruxtui.core.insights.dimensions import DIMENSIONS, SampleFacts, base_id, gallery_tags
from cruxtui.core.insights.results import InsightsError, Results, from_run, from_scored
from cruxtui.core.insights.slices import ALL, Group, Slice, slice_results
from cruxtui.core.runs.store import RunStoreError
from cruxtui.tui.insights_commands import FILTER_PREFIX, filter_names
from cruxtui.tui.messages import BrowseChanged, CountSteps, SetFilter, SliceReady
from cruxtui.tui.state import AppState
from cruxtui.tui.workers import ReportsTaskErrors

SCORED = "scored"
"""Source key of the generations file the app scored (`--generations`); runs use their id."""
MAX_PLOTTED = 16
BLUE, ORANGE = "blue", "orange"

# Sort keys of the table's columns; `natural` is the slice's own order.
_SORTS: dict[str, Any] = {
    "samples": lambda g: g.samples,
    "predictions": lambda g: g.predictions,
    "pass": lambda g: g.pass_at_1,
    "interval": lambda g: g.interval[1] - g.interval[0],
    "b": lambda g: g.paired.pass_at_1 if g.paired else 0.0,
    "delta": lambda g: g.paired.delta if g.paired else 0.0,
    "delta_interval": lambda g: g.paired.delta_interval[0] if g.paired else 0.0,
    "a_only": lambda g: len(g.paired.contingency.a_only) if g.paired else 0,
    "b_only": lambda g: len(g.paired.contingency.b_only) if g.paired else 0,
}
_CYCLE = ("natural", "samples", "pass", "delta")


@dataclass(frozen=True)
class Source:
    key: str
    label: str


def sources(state: AppState) -> list[Source]:
    """What can be sliced: the scored generations file (if one is loaded), then every run."""
    out = []
    if state.scored is not None:
        name = _file_name(state.scored_path) if state.scored_path else "generations file"
        out.append(Source(SCORED, f"{name} ({state.scored.task} task)"))
    try:
        runs = state.run_store.runs()
    except RunStoreError:
        runs = []
    out += [Source(run.id, f"{run.id[:6]} {run.label}") for run in runs]
    return out


def _file_name(path: str | Path) -> str:
    p = Path(path)
    if p.stem in ("generations", "scored") and p.parent.name:  # the folder names the model
        return f"{p.parent.name}/{p.name}"
    return p.name


class InsightsScreen(ReportsTaskErrors, Screen[None]):
    CSS_PATH = "insights.tcss"
    BINDINGS = [
        Binding("escape", "app.pop_screen", "Back", id="insights.back"),
        Binding("f", "filter_browse", "Filter Browse", id="insights.filter"),
        Binding("o", "cycle_sort", "Sort", id="insights.sort"),
        Binding("O", "reverse_sort", "Reverse", show=False, id="insights.reverse"),
        Binding("d", "next_dimension", "Next slice", id="insights.next"),
    ]

    def __init__(
        self,
        state: AppState,
        source: str | None = None,
        against: str | None = None,
        by: str = "method",
    ) -> None:
        super().__init__()
        self.state = state
        self.initial = (source, against, by)
        self.waiting_for_counts = False
        self.slice: Slice | None = None
        self.sort_key = "natural"
        self.reverse = False
        self.rows: list[Group] = []
        """Groups in the order shown (then the total), so a row index names its group."""

    def compose(self) -> ComposeResult:
        from textual_plotext import PlotextPlot  # plotext is only loaded when Insights opens

        yield Header()
        with Horizontal(id="insights-bar"):
            yield Select[str]([], prompt="nothing scored yet", id="insights-source")
            yield Select[str](
                [(d, d) for d in DIMENSIONS], value="method", allow_blank=False, id="insights-by"
            )
            yield Select[str]([], prompt="compare with… (none)", id="insights-against")
        yield Static("", id="insights-title", markup=False)
        with Horizontal(id="insights-main"):
            yield DataTable(id="insights-table", cursor_type="row", zebra_stripes=True)
            with Vertical(id="insights-side"):
                yield PlotextPlot(id="insights-plot")
                yield Static("", id="insights-contingency", markup=False)
        yield Footer()

    def on_mount(self) -> None:
        self.sub_title = "Insights"
        found = sources(self.state)
        source, against, by = self.initial
        keys = [s.key for s in found]
        if source not in keys:
            source = keys[0] if keys else None
        options = [(s.label, s.key) for s in found]
        self.query_one("#insights-source", Select).set_options(options)
        self.query_one("#insights-against", Select).set_options(options)
        with self.prevent(Select.Changed):
            if source is not None:
                self.query_one("#insights-source", Select).value = source
            if against in keys and against != source:
                self.query_one("#insights-against", Select).value = against
            self.query_one("#insights-by", Select).value = by if by in DIMENSIONS else "method"
        self.query_one("#insights-table", DataTable).focus()
        if source is None:
            self._title(
                "Nothing to slice yet: open a generations file (--generations FILE --task ...) "
                "or make a run (R shows the runs)."
            )
            return
        self.refresh_slice()

    # Choices ---------------------------------------------------------------------------------
    def _choice(self, selector: str) -> str | None:
        value = self.query_one(selector, Select).value
        return value if isinstance(value, str) else None

    @property
    def by(self) -> str:
        return self._choice("#insights-by") or "method"

    @on(Select.Changed)
    def _changed(self, event: Select.Changed) -> None:
        self.refresh_slice()

    def action_next_dimension(self) -> None:
        index = DIMENSIONS.index(self.by)
        self.query_one("#insights-by", Select).value = DIMENSIONS[(index + 1) % len(DIMENSIONS)]

    # Slicing ---------------------------------------------------------------------------------
    def refresh_slice(self) -> None:
        source = self._choice("#insights-source")
        if source is None:
            return
        against = self._choice("#insights-against")
        if against == source:
            against = None
        by = self.by
        self.waiting_for_counts = by == "numsteps" and self.state.step_counts is None
        if self.waiting_for_counts:
            self._title("Counting steps (numsteps) for every sample first…")
            self.post_message(CountSteps())
            return
        self._title(f"Slicing by {by}…")
        self._compute(source, against, by)

    def on_browse_changed(self, message: BrowseChanged) -> None:
        """The app added a Browse column: the step counts this screen asked for may be in."""
        if self.waiting_for_counts and self.state.step_counts is not None:
            self.refresh_slice()

    @work(thread=True, exclusive=True, group="insights", exit_on_error=False, name="Insights")
    def _compute(self, source: str, against: str | None, by: str) -> None:
        try:
            results = self._results(source)
            other = self._results(against) if against else None
            slice_ = slice_results(results, by, self._facts(by), against=other)
        except (InsightsError, RunStoreError) as exc:
            self.post_message(SliceReady(None, str(exc)))
            return
        self.post_message(SliceReady(slice_))

    def on_slice_ready(self, message: SliceReady) -> None:
        if message.slice is None:
            self._problem(message.problem)
        else:
            self._show(message.slice)

    def _results(self, key: str) -> Results:
        if key == SCORED:
            if self.state.scored is None:
                raise InsightsError("the generations file is not scored yet")
            name = _file_name(self.state.scored_path or "generations")
            return from_scored(self.state.scored, name)
        return from_run(self.state.run_store, key)[1]

    def _facts(self, by: str) -> SampleFacts:
        tags: dict[str, tuple[str, ...]] = {}
        if by == "tag":
            from cruxtui.core.cases.case_file import load_gallery

            tags = gallery_tags(load_gallery(self.state.cases_dir)[0])
        return SampleFacts(self.state.dataset, self.state.step_counts, tags)

    def _problem(self, text: str) -> None:
        self.slice = None
        self._title(text)
        self.query_one("#insights-table", DataTable).clear(columns=True)
        self.notify(text, title="Insights", severity="warning")

    def _title(self, text: str | Text) -> None:
        self.query_one("#insights-title", Static).update(text)

    # Showing ---------------------------------------------------------------------------------
    def _show(self, slice_: Slice) -> None:
        self.slice = slice_
        if slice_.against is None and self.sort_key in ("b", "delta", "a_only", "b_only"):
            self.sort_key = "natural"
        self._title(_summary(slice_))
        self._fill_table()
        self._draw_plot()
        self._show_contingency()

    def _ordered(self) -> list[Group]:
        assert self.slice is not None
        groups = list(self.slice.groups)
        if self.sort_key in _SORTS:
            groups.sort(key=_SORTS[self.sort_key])
        if self.reverse:
            groups.reverse()
        return groups

    def _fill_table(self) -> None:
        assert self.slice is not None
        table = self.query_one("#insights-table", DataTable)
        keep = table.cursor_row
        table.clear(columns=True)
        paired = self.slice.against is not None
        name_width = max(
            len(self.slice.by) + 2, min(16, max(len(g.name) for g in self.slice.rows()))
        )
        columns = [(self.slice.by, "natural", name_width), ("samples", "samples", 7)]
        if paired:  # room for the comparison: A's own interval is in the title and the CLI
            columns += [
                ("A", "pass", 5),
                ("B", "b", 5),
                ("A−B", "delta", 6),
                ("A−B 95%", "delta_interval", 16),
                ("A only", "a_only", 6),
                ("B only", "b_only", 6),
            ]
        else:
            columns += [("preds", "predictions", 6), ("pass@1", "pass", 6), ("95%", "interval", 12)]
        widths = [width for _, _, width in columns]
        for label, key, width in columns:
            table.add_column(label + self._arrow(key), key=key, width=width)
        self.rows = [*self._ordered(), self.slice.total]
        for group in self.rows:
            cells = _cells(group)
            for cell, width in zip(cells[1:], widths[1:], strict=True):
                cell.pad_left(width - cell.cell_len)  # numbers line up on the right
            table.add_row(*cells, key=group.name)
        table.move_cursor(row=min(max(keep, 0), len(self.rows) - 1))

    def _arrow(self, key: str) -> str:
        if key != self.sort_key:
            return ""
        return " ▼" if self.reverse else " ▲"

    def _draw_plot(self) -> None:
        from textual_plotext import PlotextPlot

        assert self.slice is not None
        plot = self.query_one("#insights-plot", PlotextPlot)
        plt = plot.plt
        plt.clear_figure()
        groups = [g for g in self.rows[:-1] if not g.name.startswith("(")]
        if self.slice.by == "numsteps" and self.sort_key == "natural":
            _steps_plot(plt, self.slice, groups)
        else:
            # One text row per run and group, plus the frame, title and axis.
            rows = max(3, (plot.size.height or 24) - 5) // (2 if self.slice.against else 1)
            _groups_plot(plt, self.slice, groups[: min(MAX_PLOTTED, rows)])
        plot.refresh()

    def _show_contingency(self) -> None:
        assert self.slice is not None
        box = self.query_one("#insights-contingency", Static)
        total = self.slice.total
        if total.paired is None:
            box.update(
                Text(
                    "Pick a run to compare with (or mark two runs with space on the Runs "
                    "screen): the difference per group and what one run passes and the other "
                    "fails.",
                    style="dim",
                )
            )
            return
        cells = total.paired.contingency
        table = Table(
            title="samples passed (at least half the generations)",
            box=None,
            title_justify="left",
            title_style="bold",
        )
        table.add_column("")
        table.add_column("B passes", justify="right")
        table.add_column("B fails", justify="right")
        table.add_row("A passes", str(len(cells.both)), Text(str(len(cells.a_only)), "green"))
        table.add_row("A fails", Text(str(len(cells.b_only)), "red"), str(len(cells.neither)))
        box.update(table)

    # Sorting ---------------------------------------------------------------------------------
    @on(DataTable.HeaderSelected, "#insights-table")
    def _sort_by_header(self, event: DataTable.HeaderSelected) -> None:
        key = str(event.column_key.value)
        if key == self.sort_key:
            self.reverse = not self.reverse
        else:
            self.sort_key, self.reverse = key, key not in ("natural",)
        self._resort()

    def action_cycle_sort(self) -> None:
        cycle = [k for k in _CYCLE if k != "delta" or (self.slice and self.slice.against)]
        index = cycle.index(self.sort_key) if self.sort_key in cycle else -1
        self.sort_key = cycle[(index + 1) % len(cycle)]
        self.reverse = self.sort_key != "natural"  # numbers: largest first
        self._resort()

    def action_reverse_sort(self) -> None:
        self.reverse = not self.reverse
        self._resort()

    def _resort(self) -> None:
        if self.slice is not None:
            self._fill_table()
            self._draw_plot()

    # Browse filter ---------------------------------------------------------------------------
    @on(DataTable.RowSelected, "#insights-table")
    def _selected(self, event: DataTable.RowSelected) -> None:
        self.filter_browse(event.cursor_row)

    def action_filter_browse(self) -> None:
        self.filter_browse(self.query_one("#insights-table", DataTable).cursor_row)

    def filter_browse(self, row: int) -> None:
        """Browse shows the group's samples only (a variant shows as its benchmark sample);
        `(all)` removes the filter. Then back to Browse."""
        if self.slice is None or not 0 <= row < len(self.rows):
            return
        group = self.rows[row]
        for name in filter_names(self.state):
            self.app.post_message(SetFilter(name, None))
        if group.name != ALL:
            ids = frozenset(group.sample_ids) | {base_id(s) for s in group.sample_ids}
            name = f"{FILTER_PREFIX}{self.slice.by}={group.name}"
            self.app.post_message(SetFilter(name, lambda sample: sample.id in ids))
            self.notify(
                f"Browse shows the {group.samples} samples of {self.slice.by} {group.name}."
            )
        else:
            self.notify("Browse shows every sample again.")
        while len(self.app.screen_stack) > 2:  # the default screen, then Browse at the bottom
            self.app.pop_screen()


def _summary(slice_: Slice) -> Text:
    total = slice_.total
    lo, hi = total.interval
    text = Text()
    text.append("A " if slice_.against else "", style="bold")
    text.append(slice_.label, style="bold")
    text.append(f" · {total.samples} samples · pass@1 {total.pass_at_1:.1f} [{lo:.1f}, {hi:.1f}]")
    if total.paired is None or not slice_.against:
        text.append(f" · {slice_.task} task")
        return text
    p = total.paired
    dlo, dhi = p.delta_interval
    text.append("\nB ", style="bold")
    text.append(slice_.against, style="bold")
    text.append(f" · pass@1 {p.pass_at_1:.1f} · A−B ")
    text.append(f"{p.delta:+.1f} [{dlo:+.1f}, {dhi:+.1f}]", style=_delta_style(total.direction))
    return text


def _delta_style(direction: int) -> str:
    return {1: "bold green", -1: "bold red"}.get(direction, "")


def _cells(group: Group) -> list[Text]:
    """The row of a group, in the order of the table's columns (paired or not)."""
    lo, hi = group.interval
    style = "bold" if group.name == ALL else ""
    cells = [
        Text(group.name, style=style, no_wrap=True, overflow="ellipsis"),
        Text(str(group.samples)),
    ]
    if group.paired is None:
        return [
            *cells,
            Text(str(group.predictions)),
            Text(f"{group.pass_at_1:.1f}", style=style),
            Text(f"[{lo:.1f}, {hi:.1f}]", style="dim"),
        ]
    p = group.paired
    dlo, dhi = p.delta_interval
    return [
        *cells,
        Text(f"{group.pass_at_1:.1f}", style=style),
        Text(f"{p.pass_at_1:.1f}"),
        Text(f"{p.delta:+.1f}", style=_delta_style(group.direction)),
        Text(f"[{dlo:+.1f}, {dhi:+.1f}]", style="dim"),
        Text(str(len(p.contingency.a_only)), style="green"),
        Text(str(len(p.contingency.b_only)), style="red"),
    ]


def _groups_plot(plt: Any, slice_: Slice, groups: list[Group]) -> None:
    """A dot and its interval per group, first group on top (as the matplotlib figure)."""
    if not groups:
        return
    ys = list(range(len(groups), 0, -1))
    series = [(0.0, BLUE, [(g.pass_at_1, g.interval) for g in groups])]
    if slice_.against is not None:
        series = [
            (0.2, BLUE, series[0][2]),
            (-0.2, ORANGE, [(g.paired.pass_at_1, g.paired.interval) for g in groups if g.paired]),
        ]
    for offset, color, points in series:
        for y, (_, (lo, hi)) in zip(ys, points, strict=False):
            plt.plot([lo, hi], [y + offset, y + offset], marker="─", color=color)
        plt.scatter([p for p, _ in points], [y + offset for y in ys], marker="●", color=color)
    plt.yticks(ys, [g.name[:12] for g in groups])
    plt.xlim(0, 100)
    plt.ylim(0.4, len(groups) + 0.6)
    title = f"pass@1 by {slice_.by}"
    if slice_.against is not None:
        title = "pass@1: A blue, B orange"
    plt.title(title)


def _steps_plot(plt: Any, slice_: Slice, groups: list[Group]) -> None:
    """pass@1 against the numsteps bucket, with each bucket's interval as a vertical line."""
    if not groups:
        return
    xs = list(range(1, len(groups) + 1))
    series = [(BLUE, [(g.pass_at_1, g.interval) for g in groups])]
    if slice_.against is not None:
        series.append(
            (ORANGE, [(g.paired.pass_at_1, g.paired.interval) for g in groups if g.paired])
        )
    for color, points in series:
        for x, (_, (lo, hi)) in zip(xs, points, strict=False):
            plt.plot([x, x], [lo, hi], marker="│", color=color)
        plt.plot(xs, [p for p, _ in points], marker="●", color=color)
    plt.xticks(xs, [g.name for g in groups])
    plt.ylim(0, 100)
    plt.title("pass@1 against numsteps")
