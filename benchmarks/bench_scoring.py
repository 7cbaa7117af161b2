"""Scoring speed: cruxtui's sandbox scorer vs the benchmark's process-per-prediction design.

    python benchmarks/bench_scoring.py                      # both tasks, baseline run whole (~4-5 min)
    python benchmarks/bench_scoring.py --baseline-samples 200   # baseline on a subset, extrapolated

Output task: the released Code Llama 7B generations (800 samples x 10 = 8,000 predictions).
Input task: `official_reference.synthetic_input_generations` over all 800 samples (8,000
predictions: right, reformatted, wrong, raising and splice-sensitive calls).

Both scorers run side by side in this one process tree, on the same machine, using every core
(the baseline through its ProcessPoolExecutor, ours through its sandbox workers). Our time is
cold: it includes starting the sandbox. The script also checks that our official-compatible
verdicts equal the baseline's, prediction by prediction.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))

import official_reference  # noqa: E402

from cruxtui.core.data.dataset import load_dataset  # noqa: E402
from cruxtui.core.sandbox.pool import Limits, Sandbox  # noqa: E402
from cruxtui.core.scoring.generations_file import load_generations  # noqa: E402
from cruxtui.core.scoring.scored_file import score_generations  # noqa: E402

SHARED = Path(os.environ.get("CRUXTUI_SHARED_DATA") or REPO.parent / "shared" / "data")
TARGET_SPEEDUP = 40.0


def measure(
    task: str, generations: dict[str, list[str]], dataset, rows, baseline_samples: int | None
) -> float:
    predictions = sum(len(v) for v in generations.values())
    start = time.perf_counter()
    with Sandbox() as sandbox:
        scored = score_generations(dataset, generations, task, sandbox=sandbox)
    ours = time.perf_counter() - start

    subset_ids = list(generations)[:baseline_samples] if baseline_samples else list(generations)
    subset = {sid: generations[sid] for sid in subset_ids}
    start = time.perf_counter()
    reference = official_reference.score(subset, rows, task)
    baseline = time.perf_counter() - start
    subset_predictions = sum(len(v) for v in subset.values())
    extrapolated = baseline * predictions / subset_predictions

    differ = sum(
        1
        for sid, flags in reference.items()
        for verdict, flag in zip(scored.verdicts[sid], flags, strict=True)
        if verdict.official != flag
    )
    speedup = extrapolated / ours
    print(f"== {task} task: {len(generations)} samples, {predictions:,} predictions")
    print(
        f"cruxtui (cold, incl. sandbox start): {ours:8.2f} s  ({ours / predictions * 1e3:.3f} ms/prediction)"
    )
    if subset_predictions == predictions:
        print(f"process per prediction (baseline):   {baseline:8.2f} s  (run whole)")
    else:
        print(
            f"process per prediction (baseline):   {extrapolated:8.2f} s  "
            f"(EXTRAPOLATED from {subset_predictions:,} predictions in {baseline:.2f} s)"
        )
    print(f"speed-up: {speedup:.1f}x (goal >= {TARGET_SPEEDUP:.0f}x)")
    print(
        f"official-compatible verdicts differing from the baseline: {differ} of {subset_predictions:,}"
    )
    print(
        f"pass@1 official {scored.pass_at(1, official=True):.4f}  strict {scored.pass_at(1):.4f}   "
        f"pass@5 official {scored.pass_at(5, official=True):.4f}  strict {scored.pass_at(5):.4f}"
    )
    print(f"verdict kinds: {dict(scored.kinds().most_common())}")
    timeouts = scored.kinds()["timeout"]
    if timeouts:
        # Slow checks wait out their wall-clock limit side by side (niced, on spare workers), so
        # the limit itself, not their number, bounds the run from below.
        floor = Limits().timeout
        print(
            f"{timeouts} predictions run into the benchmark's 3 s limit (both scorers wait it out): "
            f"a floor of ~{floor:.1f} s, so at most {extrapolated / floor:.0f}x is possible on this file"
        )
    print()
    return speedup


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--baseline-samples",
        type=int,
        default=None,
        help="run the baseline on this many samples only",
    )
    parser.add_argument("--task", choices=("output", "input", "both"), default="both")
    args = parser.parse_args()

    dataset = load_dataset(SHARED / "cruxeval.jsonl")
    rows = {s.id: s.to_json() for s in dataset.samples}
    print(f"machine: {os.cpu_count()} cores; python {sys.version.split()[0]}")
    print()
    if args.task in ("output", "both"):
        folder = SHARED / "generations" / "codellama-7b_temp0.2_output"
        generations = load_generations(folder / "generations.json")
        published = json.loads((folder / "scored.json").read_text())
        print(
            f"published scores: pass@1 {published['pass_at_1']:.4f}, pass@5 {published['pass_at_5']:.4f}"
        )
        measure("output", generations, dataset, rows, args.baseline_samples)
    if args.task in ("input", "both"):
        generations = official_reference.synthetic_input_generations(rows)
        measure("input", generations, dataset, rows, args.baseline_samples)
    return 0


if __name__ == "__main__":
    sys.exit(main())
