"""Import a benchmark generations file as a stored run (backend "replay").

Accepts the benchmark's two shapes: `generations.json` (`{"sample_0": ["answer", ...], ...}`) and
`scored.json` (`{"raw_generations": {...}, "raw_scored_generations": {...}, ...}`); the latter's
verdicts are kept as each generation's `official` verdict, next to our own. Answers are already
extracted in these files, so they are stored as both raw text and answer and scored directly.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from cruxtui.core.data.dataset import Dataset, Sample
from cruxtui.core.data.textfile import UnreadableFile, read_bytes
from cruxtui.core.runs.store import IMPORTED, Generation, RunConfig, RunInfo, RunStore


class ImportError_(Exception):  # noqa: N801 - `ImportError` is a builtin
    """A generations file that cannot be imported (message names the file and the problem)."""


def _load(path: Path) -> tuple[dict[str, list[str]], dict[str, list[bool]], bytes]:
    try:
        data = read_bytes(path, "a generations JSON file")
        obj = json.loads(data)
    except UnreadableFile as exc:
        raise ImportError_(f"{path}: cannot read ({exc.problem})") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ImportError_(f"{path}: not JSON ({exc})") from None
    except (RecursionError, ValueError) as exc:
        raise ImportError_(f"{path}: not usable JSON ({type(exc).__name__})") from None
    official: dict[str, list[bool]] = {}
    if isinstance(obj, dict) and "raw_generations" in obj:
        official = obj.get("raw_scored_generations") or {}
        obj = obj["raw_generations"]
    if not isinstance(obj, dict) or not all(
        isinstance(v, list) and all(isinstance(x, str) for x in v) for v in obj.values()
    ):
        raise ImportError_(
            f'{path}: expected {{"sample_id": ["answer", ...]}} (benchmark generations format)'
        )
    return obj, official, data


def import_generations(
    store: RunStore,
    path: Path,
    dataset: Dataset,
    *,
    task: str,
    name: str | None = None,
    scorer: Callable[[Sample, str, str], Any] | None = None,
) -> RunInfo:
    """Store the file as a run and return it; importing the same file again changes nothing."""
    gens, official, raw = _load(path)
    unknown = [sid for sid in gens if sid not in dataset]
    if unknown:
        raise ImportError_(
            f"{path}: {len(unknown)} sample id(s) not in the dataset, e.g. {unknown[0]!r}"
        )
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
            "source": hashlib.sha256(raw).hexdigest()[:16],
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
    with ThreadPoolExecutor(max_workers=4) as pool:
        verdicts = dict(
            zip(unique, pool.map(lambda k: scorer(dataset[k[0]], task, k[1]), unique), strict=True)
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
