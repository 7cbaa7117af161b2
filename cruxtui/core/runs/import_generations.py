"""Import a benchmark generations file as a stored run (backend "replay").

Accepts the benchmark's two shapes: `generations.json` (`{"sample_0": ["answer", ...], ...}`) and
`scored.json` (`{"raw_generations": {...}, "raw_scored_generations": {...}, ...}`); the latter's
verdicts are kept as each generation's `official` verdict, next to our own. Answers are already
extracted in these files, so they are stored as both raw text and answer and scored directly.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from cruxtui.core.data.dataset import Dataset
from cruxtui.core.runs.store import IMPORTED, Generation, RunConfig, RunInfo, RunStore
from cruxtui.core.scoring.generations_file import check_sample_ids, read_generations_file

if TYPE_CHECKING:
    from cruxtui.core.runs.runner import Scorer


def import_generations(
    store: RunStore,
    path: Path,
    dataset: Dataset,
    *,
    task: str,
    name: str | None = None,
    scorer: Scorer | None = None,
) -> RunInfo:
    """Store the file as a run and return it; importing the same file again changes nothing.

    `GenerationsError` names the file, the entry and the problem when it cannot be imported."""
    file = read_generations_file(path)
    gens, official = file.generations, file.official
    check_sample_ids(gens, dataset, path)
    if scorer is None:
        from cruxtui.core.runs.runner import default_scorer

        scorer = default_scorer
    n = max((len(v) for v in gens.values()), default=0)
    config = RunConfig(
        spec={
            "backend": "replay",
            "model": name or path.parent.name or path.stem,
            "base_url": None,
            "api": "completions",
            "source": file.digest[:16],
        },
        task=task,
        mode="imported",
        style="benchmark",
        params={"n": n},
        template_version="benchmark",
        dataset_digest=dataset.digest,
    )
    info = store.open_run(config, status=IMPORTED, note=str(path))
    if info.generations:
        return info
    unique = sorted({(sid, ans) for sid, answers in gens.items() for ans in answers})
    verdicts = dict(
        zip(unique, scorer([(dataset[sid], ans) for sid, ans in unique], task), strict=True)
    )
    rows = []
    for sid, answers in gens.items():
        marks = official.get(sid) or []
        for i, ans in enumerate(answers):
            v = verdicts[(sid, ans)]
            rows.append(
                Generation(
                    sample_id=sid,
                    index=i,
                    raw=ans,
                    answer=ans,
                    kind=v.kind,
                    passed=v.passed,
                    reason=v.reason,
                    official=bool(marks[i]) if i < len(marks) else None,
                )
            )
    store.add_generations(info.id, rows)
    return store.run(info.id)
