"""Runs: every stored run; compare two (pass@1 with intervals, the samples they disagree on), and
show any run's per-sample pass rate as a Browse column."""

from __future__ import annotations

import time

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Header, Static

from cruxtui.core.data.dataset import Sample
from cruxtui.core.runs.comparison import Comparison, compare_runs
from cruxtui.core.runs.store import RunInfo, RunStoreError
from cruxtui.tui.columns import Column
from cruxtui.tui.messages import BrowseChanged, OpenInsights, OpenSample, SetColumn
from cruxtui.tui.state import AppState

COLUMN_PREFIX = "run:"


def run_column(run: RunInfo, counts: dict[str, tuple[int, int]]) -> Column:
    """A Browse column with the run's pass rate per sample (blank where the run has no generation)."""

    def value(sample: Sample) -> Text:
        nc = counts.get(sample.id)
        if not nc:
            return Text("")
        n, c = nc
        style = "green" if c == n else "red" if c == 0 else "yellow"
        return Text(f"{100 * c / n:.0f}%", style=style, justify="right")

    def sort_key(sample: Sample) -> tuple[int, float]:
        nc = counts.get(sample.id)
        return (1, 0.0) if not nc else (0, nc[1] / nc[0])

    return Column(
        key=f"{COLUMN_PREFIX}{run.id}",
        label=f"{run.id[:6]} pass",
        value=value,
        sort_key=sort_key,
        width=11,
    )


class RunsScreen(Screen[None]):
    CSS_PATH = "runs.tcss"
    BINDINGS = [
        Binding("escape", "app.pop_screen", "Back", id="runs.back"),
        Binding("space", "mark", "Mark", id="runs.mark"),
        Binding("c", "compare", "Compare marked", id="runs.compare"),
        Binding("b", "browse_column", "Browse column", id="runs.column"),
        Binding("I", "insights", "Insights", id="runs.insights"),
        Binding("g", "refresh_runs", "Reload", id="runs.reload"),
    ]

    def __init__(self, state: AppState) -> None:
        super().__init__()
        self.state = state
        self.marked: list[str] = []
        self.runs: list[RunInfo] = []
        self.comparison: Comparison | None = None

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static("", id="runs-title", markup=False)
        yield DataTable(id="runs-table", cursor_type="row", zebra_stripes=True)
        yield Static(
            "Mark two runs with space, then press c to compare them.",
            id="compare-title",
            markup=False,
        )
        yield DataTable(id="disagreements", cursor_type="row", zebra_stripes=True)
        yield Footer()

    def on_mount(self) -> None:
        self.sub_title = "Runs"
        table = self.query_one("#runs-table", DataTable)
        for label, key in (
            ("", "mark"),
            ("id", "id"),
            ("created", "created"),
            ("status", "status"),
            ("model", "model"),
            ("server", "server"),
            ("task/mode", "task"),
            ("n", "n"),
            ("t", "t"),
            ("samples", "samples"),
            ("pass@1", "pass"),
            ("req. failed", "failed"),  # requests that failed (retried on the next run)
            ("col", "browse"),
        ):
            table.add_column(label, key=key)
        dis = self.query_one("#disagreements", DataTable)
        dis.add_column("sample", key="sample")
        dis.add_column("A", key="a")
        dis.add_column("B", key="b")
        dis.add_column("first line", key="line")
        self.action_refresh_runs()
        table.focus()

    def action_refresh_runs(self) -> None:
        try:
            self.runs = self.state.run_store.runs()
        except RunStoreError as exc:
            self.notify(str(exc), title="Run store", severity="error")
            self.runs = []
        self.marked = [m for m in self.marked if any(r.id == m for r in self.runs)]
        self._fill_runs()

    def _fill_runs(self) -> None:
        table = self.query_one("#runs-table", DataTable)
        row = table.cursor_row
        table.clear()
        for run in self.runs:
            p = run.config.params
            table.add_row(
                Text("●", style="bold magenta") if run.id in self.marked else "",
                run.id,
                time.strftime("%m-%d %H:%M", time.localtime(run.created)),
                run.status,
                run.model,
                _server(run),
                f"{run.config.task}/{run.config.mode}",
                str(p.get("n", "")),
                str(p.get("temperature", "")),
                str(run.samples),
                f"{100 * run.pass1:.1f}",
                str(run.failures) if run.failures else "",
                "✓" if f"{COLUMN_PREFIX}{run.id}" in self.state.columns else "",
                key=run.id,
            )
        if self.runs:
            table.move_cursor(row=min(row, len(self.runs) - 1))
        self.query_one("#runs-title", Static).update(
            f"{len(self.runs)} runs · space marks two to compare · b shows a run's pass rate in Browse"
            if self.runs
            else "No runs yet. Run one with `cruxtui run`, or press r on a sample."
        )

    def _cursor_run(self) -> RunInfo | None:
        table = self.query_one("#runs-table", DataTable)
        if not self.runs or table.cursor_row < 0:
            return None
        return self.runs[min(table.cursor_row, len(self.runs) - 1)]

    def action_mark(self) -> None:
        run = self._cursor_run()
        if run is None:
            return
        if run.id in self.marked:
            self.marked.remove(run.id)
        else:
            self.marked = [*self.marked, run.id][-2:]
        self._fill_runs()

    def action_compare(self) -> None:
        if len(self.marked) != 2:
            self.notify("Mark two runs (space) to compare them.", severity="warning")
            return
        store = self.state.run_store
        self.comparison = cmp = compare_runs(store, *self.marked)
        title = Text()
        if not cmp.shared:
            title.append(f"{cmp.a.id} and {cmp.b.id} have no sample in common.")
        else:
            for tag, run, rate, (lo, hi) in (
                ("A", cmp.a, cmp.pass_a, cmp.interval_a),
                ("B", cmp.b, cmp.pass_b, cmp.interval_b),
            ):
                title.append(f"{tag} ", style="bold")
                title.append(
                    f"{run.id} {run.label}: pass@1 {100 * rate:.1f} "
                    f"[{100 * lo:.1f}, {100 * hi:.1f}]\n"
                )
            lo, hi = cmp.interval_delta
            title.append(
                f"B−A {100 * (cmp.pass_b - cmp.pass_a):+.1f} [{100 * lo:+.1f}, {100 * hi:+.1f}]"
                f" on {cmp.shared} shared samples · {len(cmp.disagreements)} disagreements"
                " (Tab to the list, Enter opens the sample)"
            )
        self.query_one("#compare-title", Static).update(title)
        dis = self.query_one("#disagreements", DataTable)
        dis.clear()
        for d in cmp.disagreements:
            sample = self.state.dataset.get(d.sample_id)
            dis.add_row(
                d.sample_id,
                _rate(d.rate_a),
                _rate(d.rate_b),
                sample.first_line if sample else "(not in this dataset)",
                key=d.sample_id,
            )
        # The run list keeps the focus: arrows go on choosing runs; Tab reaches the list.

    def action_browse_column(self) -> None:
        run = self._cursor_run()
        if run is None:
            return
        key = f"{COLUMN_PREFIX}{run.id}"
        if key in self.state.columns:
            self.post_message(SetColumn(None, key=key))
            self.notify(f"Browse no longer shows run {run.id}.")
        else:
            self.post_message(SetColumn(run_column(run, self.state.run_store.counts(run.id))))
            self.notify(f"Browse shows run {run.id}'s pass rate per sample.")

    def on_browse_changed(self, message: BrowseChanged) -> None:
        self._fill_runs()  # the col mark follows the Browse columns

    def action_insights(self) -> None:
        """Slices of the marked runs (two: A against B), else of the run under the cursor."""
        cursor = self._cursor_run()
        if len(self.marked) == 2:
            self.post_message(OpenInsights(self.marked[0], self.marked[1]))
        elif self.marked:
            self.post_message(OpenInsights(self.marked[0]))
        elif cursor is not None:
            self.post_message(OpenInsights(cursor.id))
        else:
            self.notify("No run to slice yet.", severity="warning")

    @on(DataTable.RowSelected, "#disagreements")
    def _open_sample(self, event: DataTable.RowSelected) -> None:
        if event.row_key.value:
            self.post_message(OpenSample(event.row_key.value))


def _server(run: RunInfo) -> str:
    """Where the run's answers came from: the base URL (secrets stripped when stored), else the
    backend (vllm, replay...), and the API (chat or completions), so runs of one model on two servers do not look the same."""
    spec = run.config.spec
    where = str(spec.get("base_url") or spec.get("backend") or "")
    return f"{where} ({spec['api']})" if spec.get("api") else where


def _rate(rate: float) -> Text:
    return Text(f"{100 * rate:.0f}%", style="green" if rate >= 0.5 else "red", justify="right")
