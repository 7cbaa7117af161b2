"""Write the example insight figures into screens/, from the released Code Llama 7B generations.

Run: `python scripts/insights_figures.py` (reads ../shared/data, or $CRUXTUI_SHARED_DATA; needs
the [plots] extra). The same figures come from the CLI:

    cruxtui stats --generations .../generations.json --task output --by method --plot F.svg

Three figures: pass@1 by method called (the 18 largest groups), pass@1 against numsteps, and one
comparison. Only one model's generations are released with the benchmark, so the comparison is
the honest one those allow: generations 1-5 against generations 6-10 of the same sampling, i.e.
what differences sampling alone makes (the paired intervals should, and do, mostly cover 0).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from cruxtui.core.data.dataset import load_dataset  # noqa: E402
from cruxtui.core.insights.dimensions import SampleFacts  # noqa: E402
from cruxtui.core.insights.figures import write_figure  # noqa: E402
from cruxtui.core.insights.results import from_counts, from_scored  # noqa: E402
from cruxtui.core.insights.slices import slice_results  # noqa: E402
from cruxtui.core.sandbox.pool import Sandbox  # noqa: E402
from cruxtui.core.scoring.generations_file import load_generations  # noqa: E402
from cruxtui.core.scoring.scored_file import score_generations  # noqa: E402
from cruxtui.core.trace import numsteps  # noqa: E402

SHARED = Path(os.environ.get("CRUXTUI_SHARED_DATA") or REPO.parent / "shared" / "data")
GENERATIONS = SHARED / "generations" / "codellama-7b_temp0.2_output" / "generations.json"
OUT = REPO / "screens"


def main() -> int:
    dataset = load_dataset(SHARED / "cruxeval.jsonl", offline=True)
    generations = load_generations(GENERATIONS)
    with Sandbox() as sandbox:
        scored = score_generations(dataset, generations, "output", sandbox=sandbox)
        steps = numsteps.load_or_count(dataset, sandbox=sandbox)
    assert steps is not None
    facts = SampleFacts(dataset, steps)
    model = from_scored(scored, "codellama-7b (released generations)")

    by_method = slice_results(model, "method", facts)
    write_figure(by_method, by_method.groups, OUT / "insights-method.svg")

    by_steps = slice_results(model, "numsteps", facts)
    write_figure(by_steps, by_steps.groups, OUT / "insights-numsteps.svg", steps)

    def half(start: int, label: str):  # noqa: ANN202 - Results
        counts = (
            (sid, 5, sum(v.passed for v in verdicts[start : start + 5]))
            for sid, verdicts in scored.verdicts.items()
        )
        return from_counts(label, "output", counts, "imported")

    first, second = half(0, "codellama-7b, generations 1-5"), half(5, "generations 6-10")
    halves = slice_results(first, "type", facts, against=second)
    write_figure(halves, halves.groups, OUT / "insights-halves.svg")
    for name in ("insights-method.svg", "insights-numsteps.svg", "insights-halves.svg"):
        print(f"wrote screens/{name}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
