"""Cases: the saved failures of this project's gallery; filter, read one, replay it live, export.

The list reads the gallery folder (`--cases DIR`, `$CRUXTUI_CASES_DIR` or ./cases); broken files
are reported in the status line by name and the rest still show. A replay streams each answer in
as the model writes it and ends with "reproduced k/N" and what changed since the recording.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Header, Select, Static

from cruxtui.core.cases.case_file import (
    CaseError,
    FailureCase,
    edit_case,
    load_gallery,
    select_cases,
)
from cruxtui.core.cases.gallery import export_html, export_markdown
from cruxtui.core.cases.render import render_case
from cruxtui.core.cases.replay import ReplayReport, replay_case
from cruxtui.core.util.atomic import write_shared_text
from cruxtui.tui.messages import OpenSample
from cruxtui.tui.screens.case_export_screen import ExportScreen
from cruxtui.tui.screens.case_form_screen import CaseFormScreen
from cruxtui.tui.state import AppState
from cruxtui.tui.workers import ReportsTaskErrors

REPLAYS = 3
"""Replays per `r` press: enough to see whether a failure is stable, quick enough to watch."""

_STATUS_STYLE = {
    "reproduced": "bold green",
    "partly": "bold yellow",
    "fixed": "bold red",
    "unreachable": "bold red",
    "error": "bold red",
}


class CasesScreen(ReportsTaskErrors, Screen[None]):
    CSS_PATH = "cases.tcss"
    BINDINGS = [
        Binding("escape", "app.pop_screen", "Back", id="cases.back"),
        Binding("r", "replay", "Replay", id="cases.replay"),
        Binding("e", "export", "Export", id="cases.export"),
        Binding("t", "edit", "Tags/note", id="cases.edit"),
        Binding("o", "open_sample", "Open sample", id="cases.open"),
        Binding("g", "reload", "Reload", id="cases.reload"),
    ]

    def __init__(self, state: AppState) -> None:
        super().__init__()
        self.state = state
        self.cases: list[FailureCase] = []
        self.errors: list[CaseError] = []
        self.shown: list[FailureCase] = []
        self.showing: FailureCase | None = None
        """The case in the detail pane."""
        self.last_replay: ReplayReport | None = None
        self.replay_text: dict[int, list[str]] = {}

    @property
    def folder(self) -> Path:
        return self.state.cases_dir

    def compose(self) -> ComposeResult:
        yield Header()
        with Horizontal(id="cases-filters"):
            yield Select[str]([], prompt="any tag", id="cases-tag")
            yield Select[str]([], prompt="any model", id="cases-model")
            yield Select[str](
                [("output", "output"), ("input", "input")], prompt="any task", id="cases-task"
            )
        yield Static("", id="cases-status", markup=False)
        with Horizontal(id="cases-main"):
            yield DataTable(id="cases-table", cursor_type="row", zebra_stripes=True)
            with VerticalScroll(id="case-detail"):
                yield Static("", id="case-view", markup=False)
                yield Static("", id="case-replay", markup=False)
        yield Footer()

    def on_mount(self) -> None:
        self.sub_title = "Cases"
        table = self.query_one("#cases-table", DataTable)
        # The task is a filter and is shown with the case; the list keeps room for tags.
        for label, key in (
            ("sample", "sample"),
            ("model", "model"),
            ("failed", "failed"),
            ("tags", "tags"),
        ):
            table.add_column(label, key=key)
        self.action_reload()
        table.focus()

    # Data ------------------------------------------------------------------------------------
    def action_reload(self) -> None:
        self.cases, self.errors = load_gallery(self.folder)
        self._set_options(
            "#cases-tag", sorted({t for c in self.cases for t in c.tags}, key=str.lower)
        )
        self._set_options(
            "#cases-model", sorted({c.model.model for c in self.cases}, key=str.lower)
        )
        self._refresh_table()

    def _set_options(self, selector: str, values: list[str]) -> None:
        select = self.query_one(selector, Select)
        keep = select.value
        select.set_options((v, v) for v in values)
        if keep in values:
            select.value = keep

    def _filter(self, selector: str) -> str | None:
        value = self.query_one(selector, Select).value
        return value if isinstance(value, str) else None

    @on(Select.Changed)
    def _refresh_table(self) -> None:
        model = self._filter("#cases-model")
        self.shown = [
            c
            for c in select_cases(
                self.cases, tag=self._filter("#cases-tag"), task=self._filter("#cases-task")
            )
            if model is None or c.model.model == model
        ]
        table = self.query_one("#cases-table", DataTable)
        table.clear()
        for case in self.shown:
            failed = Text(
                f"{case.failures}/{len(case.generations)}",
                style="red" if case.failures else "green",
                justify="right",
            )
            table.add_row(
                case.sample_id, case.model.model, failed, ", ".join(case.tags), key=case.name
            )
        status = f"{len(self.shown)} of {len(self.cases)} case(s) in {_shown_path(self.folder)}"
        if not self.cases and not self.errors:
            status += " — none yet: press s on a sample with a failure to save one"
        if self.errors:
            status += f" · {len(self.errors)} file(s) not loaded: " + "; ".join(
                f"{Path(e.path).name}: {e.problem}" for e in self.errors[:2]
            )
        self.query_one("#cases-status", Static).update(
            Text(status, style="red" if self.errors else "")
        )
        self._show(self.current)

    @property
    def current(self) -> FailureCase | None:
        table = self.query_one("#cases-table", DataTable)
        if not self.shown or table.cursor_row is None or table.cursor_row >= len(self.shown):
            return None
        return self.shown[table.cursor_row]

    @on(DataTable.RowHighlighted, "#cases-table")
    def _highlighted(self) -> None:
        self._show(self.current)

    def _show(self, case: FailureCase | None) -> None:
        self.showing = case
        view = self.query_one("#case-view", Static)
        view.update(
            render_case(case) if case is not None else Text("No case selected.", style="dim")
        )
        self.query_one("#case-replay", Static).update("")

    # Replay ----------------------------------------------------------------------------------
    def action_replay(self) -> None:
        case = self.current
        if case is None:
            self.notify("No case selected.", severity="warning")
            return
        self.replay_text = {}
        self.query_one("#case-replay", Static).update(
            Text(f"Replaying on {case.model.model}…", style="bold")
        )
        self.replay(case)

    @work(exclusive=True, group="case-replay", exit_on_error=False, name="Replay")
    async def replay(self, case: FailureCase) -> ReplayReport:
        def chunk(index: int, text: str) -> None:
            self.replay_text.setdefault(index, []).append(text)
            self._render_replay(case, None)

        report = await replay_case(case, REPLAYS, on_chunk=chunk)
        self.last_replay = report
        self._render_replay(case, report)
        return report

    def _render_replay(self, case: FailureCase, report: ReplayReport | None) -> None:
        out = Text()
        out.append(f"\nReplay on {case.model.model}\n", style="bold")
        for i in sorted(self.replay_text):
            out.append(f"── replay {i + 1} ", style="dim")
            if report is not None and i < len(report.attempts):
                a = report.attempts[i]
                out.append(
                    "PASS" if a.passed else a.kind.upper(), style="green" if a.passed else "red"
                )
                out.append(f"  {a.reason}", style="dim")
            out.append("\n" + "".join(self.replay_text[i]).strip() + "\n")
        if report is not None:
            label = report.summary + (
                f" ({report.status})" if report.status in ("fixed", "partly") else ""
            )
            out.append(f"\n{label}\n", style=_STATUS_STYLE[report.status])
            for line in report.changes or report.errors:
                out.append(f"  {line}\n")
        self.query_one("#case-replay", Static).update(out)

    # Curating --------------------------------------------------------------------------------
    def action_edit(self) -> None:
        case = self.current
        if case is None:
            self.notify("No case selected.", severity="warning")
            return
        self._edit(case)

    @work(exclusive=True, group="case-edit", exit_on_error=False, name="Edit case")
    async def _edit(self, case: FailureCase) -> None:
        answer = await self.app.push_screen_wait(
            CaseFormScreen(
                f"Tags and note of {case.name}",
                f"{case.sample_id} · {case.model.model}",
                tags=case.tags,
                note=case.note,
            )
        )
        if answer is None or case.path is None:
            return
        tags, note = answer
        await asyncio.to_thread(edit_case, case.path, tags=tags, note=note)
        self.action_reload()

    def action_export(self) -> None:
        if not self.shown:
            self.notify("No cases to export.", severity="warning")
            return
        self._export(list(self.shown))

    @work(exclusive=True, group="case-export", exit_on_error=False, name="Export gallery")
    async def _export(self, cases: list[FailureCase]) -> None:
        target = await self.app.push_screen_wait(ExportScreen(len(cases)))
        if target is None:
            return
        path = Path(target)
        text = export_markdown(cases) if path.suffix.lower() == ".md" else export_html(cases)
        try:
            await asyncio.to_thread(write_shared_text, path, text)
        except OSError as exc:
            self.notify(f"{path}: cannot write ({exc.strerror or exc})", severity="error")
            return
        self.notify(f"Wrote {len(cases)} case(s) to {path}", title="Exported")

    def action_open_sample(self) -> None:
        """Open the case's sample; a variant (not in the dataset) opens the sample it came from."""
        case = self.current
        if case is None:
            return
        if (
            self.state.find_sample(case.sample_id) is None
            and case.base_sample_id in self.state.dataset
        ):
            self.notify(
                f"{case.sample_id} is a variant: showing {case.base_sample_id}, its base sample."
            )
            self.post_message(OpenSample(case.base_sample_id))
        else:
            self.post_message(OpenSample(case.sample_id))


def _shown_path(folder: Path) -> str:
    """The folder as the user would type it: relative to the working directory when inside it."""
    try:
        return str(folder.resolve().relative_to(Path.cwd().resolve())) or "."
    except ValueError:
        return str(folder)
