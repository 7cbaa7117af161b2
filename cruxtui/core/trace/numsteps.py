"""Per-sample `numsteps` (the benchmark filter's measure of execution length), cached on disk.

Counting needs every sample traced in the sandbox: a few seconds for the 800 samples, too slow
for start-up. The counts are stored in the user cache folder under the dataset's digest (and the
Python version, since opcode counts depend on the bytecode), so they are computed once per dataset
and read back in a millisecond afterwards.
"""

from __future__ import annotations

import contextlib
import json
import sys
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from cruxtui.core.util.atomic import atomic_write_text
from cruxtui.core.util.paths import cache_dir

if TYPE_CHECKING:
    from cruxtui.core.data.dataset import Dataset, Sample
    from cruxtui.core.sandbox.pool import Sandbox

FORMAT = 1
CHUNK = 40
"""Samples traced per sandbox batch: small enough to report progress and stop early."""


def cache_path(digest: str) -> Path:
    py = f"py{sys.version_info.major}{sys.version_info.minor}"
    return cache_dir() / f"numsteps-{digest[:20]}-{py}.json"


def load_cached(dataset: Dataset) -> dict[str, int] | None:
    """The cached counts for exactly this dataset, or None (missing, unreadable, other format)."""
    try:
        data = json.loads(cache_path(dataset.digest).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        return None
    counts = data.get("numsteps")
    if not isinstance(counts, dict) or set(counts) != {s.id for s in dataset.samples}:
        return None
    if not all(isinstance(v, int) for v in counts.values()):
        return None
    return counts


def count(
    samples: Iterable[Sample],
    *,
    sandbox: Sandbox | None = None,
    progress: Callable[[int], bool] | None = None,
) -> dict[str, int]:
    """Trace each sample on its own input (as the benchmark's filter did) and return numsteps by id.

    `progress(done)` is called after each batch; returning False stops early (partial result).
    """
    from cruxtui.core.trace.steps import trace_many

    todo = list(samples)
    counts: dict[str, int] = {}
    for start in range(0, len(todo), CHUNK):
        chunk = todo[start : start + CHUNK]
        traces = trace_many([(s.code, s.call, s.output) for s in chunk], sandbox=sandbox)
        for sample, result in zip(chunk, traces, strict=True):
            counts[sample.id] = result.numsteps
        if progress is not None and not progress(len(counts)):
            break
    return counts


def load_or_count(
    dataset: Dataset,
    *,
    sandbox: Sandbox | None = None,
    progress: Callable[[int], bool] | None = None,
) -> dict[str, int] | None:
    """Cached counts, else count every sample and cache the result. None if stopped early."""
    cached = load_cached(dataset)
    if cached is not None:
        return cached
    counts = count(dataset.samples, sandbox=sandbox, progress=progress)
    if len(counts) != len(dataset):
        return None
    text = json.dumps({"format": FORMAT, "digest": dataset.digest, "numsteps": counts})
    with contextlib.suppress(OSError):  # an unwritable cache only costs a recount next time
        atomic_write_text(cache_path(dataset.digest), text)
    return counts
