"""Write the example gallery in cases/ from the released Code Llama 7B generations (CRUXEval-O).

Run: `python scripts/seed_cases.py` (reads ../shared/data or $CRUXTUI_SHARED_DATA). It goes the way
a user would: the generations of a few samples are imported as a stored run (backend "replay",
in a throw-away store) and their failures saved with `cases_from_run`, then tagged and annotated.
Running it again rewrites the same files (stable names) and keeps their creation times.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from cruxtui.core.cases.build import cases_from_run  # noqa: E402
from cruxtui.core.cases.case_file import CaseError, case_path, load_case, save_case  # noqa: E402
from cruxtui.core.data.dataset import load_dataset  # noqa: E402
from cruxtui.core.runs.import_generations import import_generations  # noqa: E402
from cruxtui.core.runs.store import RunStore  # noqa: E402

SHARED = Path(os.environ.get("CRUXTUI_SHARED_DATA") or REPO.parent / "shared" / "data")
GENERATIONS = SHARED / "generations" / "codellama-7b_temp0.2_output" / "generations.json"

# Genuine failures: every one of the 10 released answers is wrong. Tags put the first one as group.
SEEDS: dict[str, tuple[list[str], str]] = {
    "sample_0": (
        ["counting", "duplicates"],
        "f appends one (count, n) tuple per element, duplicates included, so 1 (which occurs four "
        "times) gives four (4, 1) tuples. Every answer lists each value once, with wrong counts, "
        "as if f built a frequency table of the distinct values.",
    ),
    "sample_12": (
        ["prefix", "string-slicing"],
        "The loop strips x only while s STARTS with it. s ends with 'Daniel' but does not start "
        "with it, so the loop never runs and f returns s unchanged. Every answer drops the "
        "trailing ' Daniel', reading the prefix test as a suffix test.",
    ),
    "sample_14": (
        ["string-methods", "whitespace"],
        "strip() removes the spaces around 'OOP' before the reversal, giving 'POO'. Every "
        "answer keeps leading spaces and doubles the P.",
    ),
    "sample_42": (
        ["list-mutation"],
        "nums.clear() empties the list before the loop, so the loop body never runs and f "
        "returns []. Every answer doubles the original elements, as if clear() were not there.",
    ),
}


def main() -> int:
    dataset = load_dataset(SHARED / "cruxeval.jsonl")
    released = json.loads(GENERATIONS.read_text(encoding="utf-8"))
    out = REPO / "cases"
    with tempfile.TemporaryDirectory() as tmp:
        subset = Path(tmp) / "generations.json"
        subset.write_text(json.dumps({sid: released[sid] for sid in SEEDS}), encoding="utf-8")
        with RunStore(Path(tmp) / "runs.sqlite") as store:
            run = import_generations(store, subset, dataset, task="output", name="codellama-7b")
            made = cases_from_run(store, run.id, dataset, failed_only=True, samples=list(SEEDS))
    for case in made.cases:
        tags, note = SEEDS[case.sample_id]
        case.tags, case.note = tags, note
        case.origin = case.origin.replace(
            f"run {run.id}",
            f"released CRUXEval generations {GENERATIONS.parent.name}/{GENERATIONS.name}",
        )
        with contextlib.suppress(CaseError):  # a new case keeps its fresh creation time
            case.created = load_case(case_path(case, out)).created
        print(
            save_case(case, out).relative_to(REPO),
            f"failed {case.failures}/{len(case.generations)}",
        )
    for why in made.skipped:
        print("skipped", why)
    return 0


if __name__ == "__main__":
    sys.exit(main())
