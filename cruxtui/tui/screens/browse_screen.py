"""Browse: every sample in one table, narrowed as you type, sortable by any column."""

from __future__ import annotations

from dataclasses import dataclass

from rich.text import Text
from textual import events, on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.reactive import var
from textual.screen import Screen
from textual.widgets import Footer, Header, Input, Select, Static

from cruxtui.core.data.dataset import Source
from cruxtui.core.data.search import SampleIndex
from cruxtui.tui import scored_set, step_counts
from cruxtui.tui.columns import Column
from cruxtui.tui.messages import BrowseChanged, ClearStepFilter, FilterSteps, OpenSample, SetFilter
from cruxtui.tui.state import AppState
from cruxtui.tui.widgets.sample_table import SampleTable, TableColumn

BASE_COLUMNS = (
    Column("id", "id", lambda s: s.id, lambda s: _id_order(s.id), 11),
    Column("code", "code", lambda s: s.first_line, lambda s: s.first_line, 38),
    Column("lines", "lines", lambda s: str(s.lines), lambda s: s.lines, 5),
    Column("methods", "methods", lambda s: ",".join(s.methods), lambda s: s.methods, 18),
    Column("type", "output", lambda s: s.output_type, lambda s: s.output_type, 6),
)


CODE_MIN_WIDTH = 16
"""The code column never narrows below this (the table scrolls sideways instead)."""


def _cell(value: str | Text) -> Text:
    """Plain strings become `Text` as is: code like `x[1]` or `[/ANSWER]` must never be read as
    Rich markup (and skipping the markup parser is what keeps a keystroke's rebuild fast)."""
    return value if isinstance(value, Text) else Text(value, no_wrap=True, overflow="ellipsis")


def _id_order(sample_id: str) -> tuple[str, int]:
    """Sort `sample_2` before `sample_10`."""
    stem, _, num = sample_id.rpartition("_")
    return (stem, int(num)) if num.isdigit() else (sample_id, -1)


@dataclass(frozen=True)
class Sort:
    """The table's order: a column key (or "rank", the search's relevance) and its direction."""

    key: str = "id"
    reverse: bool = False

    def reversed(self) -> Sort:
        return Sort(self.key, not self.reverse)


class BrowseScreen(Screen[None]):
    KEY_WIDGETS = (SampleTable,)
    """Widgets whose keys are this screen's too (F1 and the README list them: `key_table`)."""
    """The home screen. Typing filters; Enter opens; clicking a header (or `o`) sorts."""

    BINDINGS = [
        Binding("slash", "focus_search", "Search", id="browse.search"),
        Binding("escape", "clear_search", "Clear", show=False, id="browse.clear"),
        Binding("o", "cycle_sort", "Sort", id="browse.sort"),
        Binding("O", "reverse_sort", "Reverse", show=False, id="browse.reverse"),
        Binding("F", "toggle_failures", "Failures", id="browse.failures"),
        Binding("I", "app.insights", "Insights", id="browse.insights"),
        Binding("q", "app.quit", "Quit", id="browse.quit"),
    ]

    sort: var[Sort] = var(Sort(), init=False)
    """The table's order; setting it redraws the table (a `var`: the screen itself need not repaint)."""

    def __init__(self, state: AppState) -> None:
        super().__init__()
        self.state = state
        self._matches: list[str] = []
        self._step_query: tuple[str, int] | None = None
        """The `numsteps<N` the search box asked for (the app holds the filter itself)."""

    @property
    def visible_ids(self) -> list[str]:
        """Sample ids in the order shown (kept in the state: the Sample screen's [ and ] use it)."""
        return self.state.browse_order or []

    def compose(self) -> ComposeResult:
        yield Header()
        with Horizontal(id="browse-bar"):
            yield Input(
                placeholder="search code, input, output · method:rfind · type:list",
                id="search",
                select_on_focus=False,  # type-to-search appends; selecting would eat the key
            )
            yield Select[str]([], prompt="any method", id="method-filter", allow_blank=True)
        yield SampleTable(id="samples")
        yield Static(id="browse-status", markup=False)
        yield Footer()

    def on_mount(self) -> None:
        self._index = SampleIndex(self.state.dataset.samples)
        self._matches = [s.id for s in self.state.dataset.samples]
        self._rebuild()
        self.query_one(SampleTable).focus()
        self._fill_method_filter()

    def _fill_method_filter(self) -> None:
        """Method counts need every sample parsed: done after first paint so start-up stays fast."""
        counts: dict[str, int] = {}
        for s in self.state.dataset.samples:
            for m in s.methods:
                counts[m] = counts.get(m, 0) + 1
        options = [
            (f"{m} ({n})", m) for m, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
        ]
        self.query_one("#method-filter", Select).set_options(options)

    # Table ---------------------------------------------------------------------------------
    def _columns(self) -> list[Column]:
        return [*BASE_COLUMNS, *self.state.columns.values()]

    def _rebuild(self) -> None:
        """Re-render rows for the current matches, filters and sort. Cheap enough per keystroke."""
        table = self.query_one(SampleTable)
        columns = self._columns()
        dataset = self.state.dataset
        samples = [dataset[sid] for sid in self._matches]
        for pred in self.state.filters.values():
            samples = [s for s in samples if pred(s)]
        if self.sort.key != "rank":
            col = next((c for c in columns if c.key == self.sort.key), BASE_COLUMNS[0])
            samples.sort(key=col.sort_key, reverse=self.sort.reverse)
        self.state.browse_order = [s.id for s in samples]
        widths = {c.key: c.width or max(len(c.label) + 1, 8) for c in columns}
        # The code column takes what the others leave: every column fits at 80 columns, and a
        # wide terminal shows more of each first line instead of empty space.
        rest = sum(w + 1 for k, w in widths.items() if k != "code") + 1
        width = self.size.width or self.app.size.width
        widths["code"] = max(CODE_MIN_WIDTH, width - rest - 2)
        table_columns = [
            TableColumn(c.key, f"{c.label}{self._arrow(c.key)}", widths[c.key]) for c in columns
        ]
        rows = [(s.id, [_cell(c.value(s)) for c in columns]) for s in samples]
        table.set_data(table_columns, rows, keep=table.cursor_key)
        self._update_status()

    def on_resize(self) -> None:
        self._rebuild()  # the code column follows the terminal's width

    def _arrow(self, key: str) -> str:
        if key != self.sort.key:
            return ""
        return "▼" if self.sort.reverse else "▲"

    def _update_status(self) -> None:
        total = len(self.state.dataset)
        shown = len(self.visible_ids)
        filters = ", ".join([*self.state.filters, *self._search_filters()]) or "none"
        sort = f"{self.sort.key}{' (reversed)' if self.sort.reverse else ''}"
        source = self.state.dataset.source.value
        if self.state.dataset.source is Source.STARTER:
            # The toast fades; this line keeps saying it is not the benchmark.
            source = "starter set, not CRUXEval: `cruxtui download` or --dataset for all 800"
        self.query_one("#browse-status", Static).update(
            Text(f"{shown} of {total} shown · filters: {filters} · sort: {sort} · {source}")
        )

    def _search_filters(self) -> list[str]:
        """The `method:` / `type:` filters the search box and the method menu apply."""
        words = [w for w in self.query_one("#search", Input).value.split() if ":" in w]
        method = self.query_one("#method-filter", Select).value
        if isinstance(method, str):
            words.append(f"method:{method}")
        return words

    # Events --------------------------------------------------------------------------------
    @on(Input.Changed, "#search")
    def _search_changed(self, event: Input.Changed) -> None:
        self._apply_search()

    @on(Select.Changed, "#method-filter")
    def _method_changed(self, event: Select.Changed) -> None:
        self._apply_search()

    def _apply_search(self) -> None:
        text = self._take_step_query(self.query_one("#search", Input).value)
        method = self.query_one("#method-filter", Select).value
        methods = [method] if isinstance(method, str) else []
        self._matches = self._index.search(text, methods=methods)
        # Ranked results are most useful while typing; a header click re-sorts them.
        words = [w for w in text.split() if ":" not in w]
        if words and self.sort.key == "id":
            self.set_reactive(BrowseScreen.sort, Sort("rank", self.sort.reverse))
        elif not words and self.sort.key == "rank":
            self.set_reactive(BrowseScreen.sort, Sort("id", self.sort.reverse))
        self._rebuild()  # the matches changed too: one redraw for both

    def _take_step_query(self, text: str) -> str:
        """Apply a `numsteps<N` word of the search box as the palette does (the app's numsteps
        filter) and return the rest of the text for the index."""
        words = text.split()
        queries = [q for q in map(step_counts.parse, words) if q is not None]
        query = queries[-1] if queries else None
        if query != self._step_query:
            if query is not None:
                self.post_message(FilterSteps(*query))
            else:
                self.post_message(ClearStepFilter())
            self._step_query = query
        return " ".join(w for w in words if step_counts.parse(w) is None)

    def on_key(self, event: events.Key) -> None:
        """Type to search: a printable key no binding claims, pressed in the table, goes to the
        search box (Browse's own keys, o O F q / and the app's R C ?, keep their meaning); ↓ in
        the search box goes back to the table."""
        table = self.query_one(SampleTable)
        if event.key == "down" and self.focused is self.query_one("#search", Input):
            table.focus()  # ↓ from the search box goes to the hits, to pick another one
            event.stop()
            return
        if self.focused is not table or not event.is_printable or event.character is None:
            return
        if event.key in self.active_bindings or event.character in self.active_bindings:
            return
        search = self.query_one("#search", Input)
        search.focus()
        search.insert_text_at_cursor(event.character)
        event.stop()
        event.prevent_default()

    @on(Input.Submitted, "#search")
    def _search_submitted(self) -> None:
        """Enter opens the selected hit (the top one, unless the arrows moved it), as it does in
        the table: typing then Enter is how a search is used. No hit: back to the table."""
        table = self.query_one(SampleTable)
        table.focus()
        table.action_select()

    @on(SampleTable.RowSelected)
    def _open(self, event: SampleTable.RowSelected) -> None:
        self.post_message(OpenSample(event.key))

    @on(SampleTable.HeaderSelected)
    def _sort_by_header(self, event: SampleTable.HeaderSelected) -> None:
        key = event.column_key
        self.sort = self.sort.reversed() if key == self.sort.key else Sort(key)

    def watch_sort(self) -> None:
        self._rebuild()

    def on_browse_changed(self, message: BrowseChanged) -> None:
        self._rebuild()
        self.refresh_bindings()  # F (failures only) shows once a scored set is loaded

    # Actions -------------------------------------------------------------------------------
    def action_focus_search(self) -> None:
        self.query_one("#search", Input).focus()

    def action_clear_search(self) -> None:
        search = self.query_one("#search", Input)
        if search.value:
            search.value = ""
        self.query_one(SampleTable).focus()

    def action_cycle_sort(self) -> None:
        keys = [c.key for c in self._columns()]
        current = keys.index(self.sort.key) if self.sort.key in keys else -1
        self.sort = Sort(keys[(current + 1) % len(keys)])

    def action_reverse_sort(self) -> None:
        self.sort = self.sort.reversed()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """The failures-only key exists (and shows in the footer) once a scored set is loaded."""
        if action == "toggle_failures":
            return self.state.scored is not None
        return True

    def action_toggle_failures(self) -> None:
        """Only samples with a failing generation of the scored set (--generations), or all again."""
        scored = self.state.scored
        if scored is None:
            self.notify(
                "No scored generations: start with --generations FILE --task output|input.",
                severity="warning",
            )
        elif scored_set.FILTER in self.state.filters:
            self.post_message(SetFilter(scored_set.FILTER, None))
        else:
            self.post_message(SetFilter(scored_set.FILTER, scored_set.failing(scored)))
