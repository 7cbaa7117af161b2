"""The work a check asks of the sandbox (`Job`), and running many jobs at once, batched.

A check never runs anything itself: it yields `Job`s (a function of `cruxtui.core.sandbox.jobs`
and a plain-data payload) and is sent back their `Outcome`s. `run_jobs` runs each distinct job
once, and lets trusted or pure jobs share a child, so scoring a whole file costs few processes.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import Any

from cruxtui.core.sandbox.pool import Limits, Outcome, Sandbox
from cruxtui.core.util import values

_JOBS = "cruxtui.core.sandbox.jobs.checks"
EXEC_CALL = "cruxtui.core.sandbox.jobs.checks:exec_call"
EVAL_ARGUMENTS = f"{_JOBS}:eval_arguments"
CALL_F = f"{_JOBS}:call_f"
EVAL_PURE = f"{_JOBS}:eval_pure"
OFFICIAL_CHECK = f"{_JOBS}:official_check"
RUN_MANY = f"{_JOBS}:run_many"


@dataclass(frozen=True)
class Job:
    """A request from a check to the sandbox."""

    name: str
    payload: dict[str, Any]
    limits: Limits | None = None
    batchable: bool = False
    """Trusted or pure work that may share a child with other such jobs."""

    @functools.cached_property
    def key(self) -> str:
        """Identical jobs (same function, same plain payload) run once per batch."""
        return json.dumps([self.name, values.encode(self.payload)], separators=(",", ":"))


Request = Job | tuple[Job, ...]
"""What a check asks the sandbox for: one job, or several to run in the same round."""


def jobs_of(request: Request) -> tuple[Job, ...]:
    return request if isinstance(request, tuple) else (request,)


def stream_jobs(box: Sandbox, jobs: list[Job]) -> Iterator[tuple[str, Outcome]]:
    """Run each distinct job once, yielding (key, outcome) as they finish; batchable jobs share
    children (`run_many`), 32 at a time, and what a batch could not settle runs again alone.

    As they finish, not in order: the caller hands each outcome on and lets it go, so no more
    values are held than there are checks in flight."""
    distinct: dict[str, Job] = {}
    for job in jobs:
        distinct.setdefault(job.key, job)
    singles: list[Job] = []
    groups: dict[Limits | None, list[Job]] = {}
    for job in distinct.values():
        if job.batchable:
            groups.setdefault(job.limits, []).append(job)
        else:
            singles.append(job)
    batches: dict[str, list[Job]] = {}
    runs: list[Job] = []
    for limits, group in groups.items():
        group.sort(key=lambda j: j.payload["code"])  # a sample's jobs together: fewer retries
        for start in range(0, len(group), _BATCH_SIZE):
            chunk = group[start : start + _BATCH_SIZE]
            if len(chunk) == 1:
                singles.extend(chunk)
                continue
            items = [{"job": j.name.partition(":")[2]} | j.payload for j in chunk]
            each = limits or box.limits
            # Room for one item to use its whole time plus all the quick ones; see `run_many`.
            whole = replace(each, timeout=2 * each.timeout + 1, cpu_seconds=None)
            batch = Job(RUN_MANY, {"items": items, "timeout": each.timeout}, whole)
            batches[batch.key] = chunk
            runs.append(batch)
    runs += singles
    retry: list[Job] = []
    for job, result in _unordered(box, runs):
        if job.key not in batches:
            yield job.key, result
            continue
        members = batches.pop(job.key)
        parts = result.value if result.ok and type(result.value) is list else None
        if parts is None or len(parts) != len(members):
            retry.extend(members)
            continue
        share = result.elapsed / len(members)
        size = result.size // len(members)
        for member, part in zip(members, parts, strict=True):
            status, value = (
                (part + [None, None])[:2] if type(part) is list else ("bad_result", None)
            )
            if status == "ok":
                yield member.key, Outcome("ok", value, "", share, size)
            elif status in ("exception", "timeout"):
                yield member.key, Outcome(status, None, str(value), share)
            else:
                retry.append(member)  # skipped, memory, odd values: judge it alone
        del parts, result
    yield from ((job.key, result) for job, result in _unordered(box, retry))


_BATCH_SIZE = 32
"""Most jobs sharing one child: a batch that times out is re-run job by job, so keep it modest."""


def _unordered(box: Sandbox, jobs: list[Job]) -> Iterator[tuple[Job, Outcome]]:
    items = ((job.name, job.payload, job.limits) for job in jobs)
    for position, outcome in box.map_unordered(items):
        yield jobs[position], outcome
