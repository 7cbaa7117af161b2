"""Help: the keys of the screen it was opened on (from the bindings, as the README's table:
`key_table`), then what each screen is for and the search syntax."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Markdown

from cruxtui.tui.key_table import app_sections, key_rows, markdown_list, screen_owners

HELP = """\
# cruxtui

A failure explorer for **CRUXEval**: 800 short Python functions, each with an input and its output.

## Browse
- Type to search id, code, input and output (a word with no exact hit matches fuzzily, so typos still find something). Every word must match. A key of its own (`o`, `O`, `F`, `q`, `R`, `C`, `?`) keeps its meaning in the table: `/` first to type it.
- `method:rfind` keeps samples calling `.rfind(...)`; `type:list` keeps list outputs; `numsteps<100` (or `>`, `<=`, `>=`, `=`) filters by step count. The status line names the filters in place.
- `/` focuses the search box, `Escape` clears it, `Enter` opens the selected sample (in the search box too: the top hit, unless `↓` went down to pick another).
- Click a column header (or press `o` to cycle, `O` to reverse) to sort.

## Sample
- `[` / `]` step to the previous / next sample in the Browse order; `Escape` goes back.
- `s` saves the sample's failure as a case, asking for tags and a note: from the run panel's run, else the generations listed (`--generations`), else the newest stored run where it failed.

## Trace
- `t` on a sample steps through what `f` really does on its input (run in the sandbox).
- `←` / `→` step back / forward; `↑` / `↓` go to the previous / next visit of the current line; `Home` / `End`; `:` jumps to step N.
- Click a code line to go to its next visit; click the bar under the code to go to that step.
- `c` traces a call you type, e.g. a model's predicted input. `●` marks variables that changed.
- In the palette or the search box, `numsteps<100` (or `>`, `<=`, `>=`, `=`) filters Browse by step count.

## Perturb
- `p` on a sample opens it: pick a transform and its parameters (`N` = the N-th site; the seed picks one otherwise); the diff and the new output preview live. `Enter` (in the parameters or on the transform menu) or `Add` chains the step, `Ctrl+Z` drops the last.
- `Ctrl+L` switches the diff between two columns and unified; `Ctrl+O` opens the variant of the steps added as a sample (the previewed step counts once added), `Ctrl+T` traces it, `Ctrl+R` runs a model on original and variant side by side.

## Cases
- `C` lists the saved cases (./cases, `--cases DIR`); filter by tag, model and task.
- `r` replays the selected case on its recorded model and reports "reproduced k/N"; `t` edits tags and note; `e` exports the list as HTML or Markdown; `o` opens its sample.

## Insights
- `I` (Browse, Runs) shows where the model fails: pass@1 with a 95% interval per method, output type, lines, numsteps, transform, mode or tag, as a table and a plot. Pick what to slice, what by (`d`: the next slice) and a run to compare with; from Runs, two marked runs open as A against B (the difference per group and what passes in one only).
- `o` / `O` sort (or click a header); `Enter` or `f` on a group filters Browse to its samples, on `(all)` clears the filter.

## Everywhere
- `Ctrl+P` opens the command palette: type a sample id (or a word of its code) to jump to it.
- `F1` or `?` shows this help; `q` (outside a text field) or `Ctrl+Q` quits.
"""


class HelpScreen(ModalScreen[None]):
    BINDINGS = [Binding("escape,q,f1,question_mark", "dismiss", "Close", id="help.close")]

    def __init__(self, under: type | None = None) -> None:
        """`under`: the class of the screen Help was opened on (its keys come first)."""
        super().__init__()
        self.under = under

    def keys_text(self) -> str:
        """The keys of the screen under Help and the app's, as Markdown lists."""
        parts = []
        rows = key_rows(screen_owners(self.under)) if self.under is not None else []
        if rows:
            parts.append("## Keys on this screen\n\n" + markdown_list(rows))
        for name, app_rows in app_sections(type(self.app)):
            in_tour = getattr(self.app, "tour", None) is not None
            if app_rows and (name == "Everywhere" or in_tour):
                parts.append(f"## Keys: {name}\n\n" + markdown_list(app_rows))
        return "\n\n".join(parts)

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="help-box"):
            yield Markdown(HELP.replace("## Browse", self.keys_text() + "\n\n## Browse", 1))
