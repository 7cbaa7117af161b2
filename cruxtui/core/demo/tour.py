"""The guided tour of `--demo`: its stops, their captions, and the material each stop needs.

Everything comes from what ships with cruxtui, so the tour runs with no network, no GPU and no
key: the example gallery (`cases/`, genuine failures of Code Llama 7B from the benchmark's
released generations, each case holding the model's raw answers) and, for Browse, the starter set.
The model is the replay backend serving those recorded answers. When more is at hand it is used
instead: the benchmark (the case's sample is then the dataset's own row) and a generations file
(`--generations`: the replayed answers are that file's).

This module decides *what* each stop shows; `cruxtui.tui.tour_driver` drives the screens there.
"""

from __future__ import annotations

import atexit
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

import cruxtui
from cruxtui.core.cases.case_file import CaseError, FailureCase, load_gallery
from cruxtui.core.data.dataset import OFFICIAL_SIZE, Dataset, Sample, Source, starter_path

CASE = "sample_12"
"""The failure the tour follows: Code Llama 7B reads a prefix test as a suffix test, 10/10."""
PERTURBATION = ("flip-compare", "1")
"""A transform of the case's code (and its parameters) that changes what f returns: the prefix
test `==` flipped to `!=`, so the loop runs and strips the start of the string."""


@dataclass(frozen=True)
class Stop:
    key: str
    title: str


STOPS = (
    Stop("browse", "The benchmark"),
    Stop("failure", "A real failure"),
    Stop("trace", "Where the answer departs from execution"),
    Stop("perturb", "A perturbation that changes the answer"),
    Stop("gallery", "The case in the gallery"),
)


class TourUnavailable(Exception):
    """The tour's case cannot be found (a broken installation): one line for the user."""


def example_gallery() -> Path:
    """The example gallery that ships with cruxtui: inside the installed package (a wheel copies
    `cases/` there), else the source checkout's `cases/` (an editable install)."""
    package = Path(cruxtui.__file__).resolve().parent
    for folder in (package / "example_cases", package.parent / "cases"):
        if folder.is_dir():
            return folder
    return package / "example_cases"


def scratch_gallery(source: Path | None = None) -> Path:
    """A fresh copy of the example gallery in a temporary folder: the tour's gallery when no
    `--cases` is given, so what a presenter saves or edits during a demo never touches the
    shipped cases, and every demo starts from the same gallery."""
    root = Path(tempfile.mkdtemp(prefix="cruxtui-demo-"))
    atexit.register(shutil.rmtree, root, ignore_errors=True)
    target = root / "cases"
    shutil.copytree(source or example_gallery(), target)
    return target


@dataclass(frozen=True)
class Tour:
    """The material of the tour, resolved once against what this session has."""

    case: FailureCase
    sample: Sample
    """The case's sample: the dataset's own when the benchmark is open (same code, input and
    output), else made from the case file (the starter set does not hold it)."""
    from_benchmark: bool
    answers: list[str]
    """The model's raw answers the replay backend serves: from `--generations` when that file
    holds the sample, else those recorded in the case."""
    answers_from: str
    """Where `answers` come from, in words."""
    dataset: Dataset
    stops: tuple[Stop, ...] = STOPS

    @property
    def model(self) -> str:
        return self.case.model.model

    @property
    def wrong(self) -> int:
        """How many of the recorded answers failed."""
        return sum(not g.passed for g in self.case.generations)

    @property
    def reasoning(self) -> str:
        """The model's first failing answer, written out as it completed the prompt (the direct
        prompt ends in `[ANSWER]` and the model writes the assertion): the claim the reasoning
        pane checks against the trace. A direct answer is one claim, about the return value."""
        failing = next((g for g in self.case.generations if not g.passed), None)
        raw = (failing or self.case.generations[0]).raw.strip()
        return f"[ANSWER]\nassert {self.sample.call} == {raw}\n[/ANSWER]"

    def caption(self, index: int) -> str:
        """The short text shown with stop `index` (one to three lines)."""
        key = self.stops[index].key
        n = len(self.dataset)
        if key == "browse":
            if self.dataset.source is Source.STARTER or self.dataset.location == str(
                starter_path()
            ):
                what = (
                    f"{n} starter functions in the benchmark's style (CRUXEval itself is not here)"
                )
            elif n == OFFICIAL_SIZE:
                what = f"the {n} CRUXEval functions"
            else:
                what = f"the {n} functions of {Path(self.dataset.location).name}"
            return (
                f"Each row is a short Python function f, an input and the output f returns: {what}. "
                "Models are asked for the output; running f judges them. "
                f"Next: a real failure of {self.model}."
            )
        if key == "failure":
            return (
                f"{self.model} was asked what f returns on this input. Its {len(self.answers)} "
                f"answers ({self.answers_from}), replayed offline and judged by running f: "
                f"{self.wrong} of {len(self.case.generations)} wrong in the benchmark's run."
            )
        if key == "trace":
            return (
                "What f really does, step by step (the sandbox ran it). Beside it, the model's "
                "answer as a claim: contradicted at the return, the first divergence (d). "
                + self.case.note
            )
        if key == "perturb":
            return (
                "Flip the prefix test (== to !=) and the truth changes: cruxtui re-derives the "
                "output by running the variant. Ctrl+R asks a model about both."
            )
        return (
            "Kept as a case: prompt, model, raw answers, verdicts and the truth, in one JSON file "
            "for a paper's repository. r replays it (here from its recorded answers); "
            "`cruxtui cases replay` re-checks a whole gallery in CI."
        )


def build_tour(dataset: Dataset, generations: str | None = None) -> Tour:
    """The tour for this session. Raises TourUnavailable if the example case is missing."""
    case = _example_case()
    own = dataset.get(case.sample_id)
    from_benchmark = own is not None and (own.code, own.input, own.output) == (
        case.code,
        case.input,
        case.output,
    )
    sample = (
        own
        if from_benchmark and own is not None
        else Sample(case.sample_id, case.code, case.input, case.output, origin=str(case.path))
    )
    answers = [g.raw for g in case.generations]
    answers_from = "recorded in the case"
    if generations:
        released = _released(generations, case.sample_id)
        if released:
            answers, answers_from = released, f"from {Path(generations).name}"
    return Tour(case, sample, from_benchmark, answers, answers_from, dataset)


def _example_case() -> FailureCase:
    folder = example_gallery()
    cases, _errors = load_gallery(folder)
    for case in cases:
        if case.sample_id == CASE:
            return case
    raise TourUnavailable(f"the tour's case ({CASE}) is not in the example gallery {folder}")


def _released(path: str, sample_id: str) -> list[str]:
    """The sample's raw generations in a generations file ([] if it cannot be read or lacks it:
    the tour then uses the case's own)."""
    from cruxtui.core.models.backend import ModelError
    from cruxtui.core.models.recorded import load_generations

    try:
        return list(load_generations(path).get(sample_id, []))
    except (ModelError, CaseError):
        return []
