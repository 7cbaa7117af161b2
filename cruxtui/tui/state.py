"""The TUI's shared state: one `AppState`, owned by `CruxApp` and handed to each screen it builds.

Screens and widgets read the state they are given; they never reach into another screen. They
change what other screens show (Browse columns and filters, opening a sample) by posting a
message to the app (`cruxtui.tui.messages`); the app is the one writer of the shared fields and
tells the screens (`BrowseChanged`). A screen may write only the fields it owns, named below.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Literal, Protocol, runtime_checkable

from cruxtui.core.cases.case_file import cases_dir
from cruxtui.core.data.dataset import Dataset, Sample
from cruxtui.tui.columns import Column

if TYPE_CHECKING:
    from cruxtui.core.perturb import Variant
    from cruxtui.core.runs.store import RunStore
    from cruxtui.core.scoring.scored_file import ScoredSet

Task = Literal["output", "input"]


@dataclass(frozen=True)
class TuiOptions:
    """What the command line chose for the TUI (`cruxtui.cli.main` builds this from its flags).

    The defaults are those of an app built without a command line (embedding, tests, scripts).
    """

    store: str | None = None
    """`--store`: the run store (SQLite); None for runs.sqlite in the user data folder."""
    endpoint: str | None = None
    """`--endpoint`: the endpoint name or base URL the run panel's form starts with."""
    model: str | None = None
    """`--model`: the model the run panel's form starts with."""
    generations: str | None = None
    """`--generations`: a generations file to score at start-up."""
    task: Task = "output"
    """`--task`: the task of `generations`."""
    cases: str | None = None
    """`--cases`: the gallery folder; None for $CRUXTUI_CASES_DIR, else ./cases."""
    step_counts: bool = False
    """Count every sample's numsteps in a worker after start-up when no cached counts exist
    (the CLI's default; `--no-step-counts` turns it off). Off without a command line."""
    demo: bool = False
    """`--demo`: start the guided tour (`cruxtui.tui.tour_driver`)."""
    theme: str | None = None
    """`--theme`: the theme for this session; None for the one remembered in the config."""


@dataclass
class AppState:
    """Everything more than one screen needs. Written by the app, except where a field says."""

    dataset: Dataset
    options: TuiOptions = field(default_factory=TuiOptions)
    columns: dict[str, Column] = field(default_factory=dict)
    """Browse columns features added (pass rate, numsteps, a run's results), by key."""
    filters: dict[str, Callable[[Sample], bool]] = field(default_factory=dict)
    """Named row predicates every Browse row must pass (e.g. "failures only")."""
    scored: ScoredSet | None = None
    """The judged generations file (`--generations`), once its worker is done."""
    scored_path: Path | None = None
    """The file `scored` was read from."""
    step_counts: dict[str, int] | None = None
    """numsteps per sample id, once cached counts are read or counting is done."""
    variants: dict[str, Variant] = field(default_factory=dict)
    """Variants accepted on the Perturb screen (which writes them), by id (`sample_12~anon`):
    opening a sample finds them like dataset samples."""
    browse_order: list[str] | None = None
    """Sample ids in the order Browse shows them (Browse writes it; the Sample screen's [ and ]
    step through it). None until Browse has drawn its table."""
    _run_store: RunStore | None = field(default=None, repr=False)

    @property
    def run_store(self) -> RunStore:
        """The run store shared by the run panel, the Runs screen and case saving, opened on
        first use. Raises RunStoreError (a clear message) while it cannot be opened."""
        if self._run_store is None:
            # Deferred for start-up speed: the first paint never needs the store (sqlite3).
            from cruxtui.core.runs.store import RunStore

            self._run_store = RunStore(self.options.store)
        return self._run_store

    @property
    def cases_dir(self) -> Path:
        """The gallery folder: `--cases DIR`, else $CRUXTUI_CASES_DIR, else ./cases."""
        return cases_dir(self.options.cases)

    def find_sample(self, sample_id: str) -> Sample | None:
        """A dataset sample, or a variant made on the Perturb screen, by id."""
        variant = self.variants.get(sample_id)
        return variant.sample if variant is not None else self.dataset.get(sample_id)


@runtime_checkable
class HasState(Protocol):
    """An app that holds an AppState (CruxApp, or a test's app)."""

    state: AppState


def app_state(app: object) -> AppState:
    """The state of `app`, for objects Textual builds itself (palette providers), which cannot
    be handed the state the way screens and widgets are."""
    if not isinstance(app, HasState):
        raise TypeError(f"{type(app).__name__} holds no AppState")
    return app.state
