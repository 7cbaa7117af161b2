"""The work a check asks of the sandbox (`Job`), and running many jobs at once, batched.

A check never runs anything itself: it yields `Job`s (a function of `cruxtui.core.sandbox.jobs`
and a plain-data payload) and is sent back their `Outcome`s. `run_jobs` runs each distinct job
once, and lets trusted or pure jobs share a child, so scoring a whole file costs few processes.
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass, replace
from typing import Any

from cruxtui.core.sandbox.pool import Limits, Outcome, Sandbox
from cruxtui.core.util import values

_JOBS = "cruxtui.core.sandbox.jobs.checks"
EXEC_CALL = "cruxtui.core.sandbox.pool:exec_call"
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


def run_jobs(box: Sandbox, jobs: list[Job]) -> dict[str, Outcome]:
    """Run each distinct job once; batchable jobs share children (`run_many`), 32 at a time."""
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
    batches: list[tuple[Job, list[Job]]] = []
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
            batches.append((Job(RUN_MANY, {"items": items, "timeout": each.timeout}, whole), chunk))
    outcomes = _map(box, [job for job, _ in batches] + singles)
    retry: list[Job] = []
    for batch, group in batches:
        result = outcomes.pop(batch.key)
        parts = result.value if result.ok and type(result.value) is list else None
        if parts is None or len(parts) != len(group):
            retry.extend(group)
            continue
        share = result.elapsed / len(group)
        for job, part in zip(group, parts, strict=True):
            status, value = (
                (part + [None, None])[:2] if type(part) is list else ("bad_result", None)
            )
            if status == "ok":
                outcomes[job.key] = Outcome("ok", value, "", share)
            elif status in ("exception", "timeout"):
                outcomes[job.key] = Outcome(status, None, str(value), share)
            else:
                retry.append(job)  # skipped, memory, odd values: judge it alone, as a single job
    outcomes.update(_map(box, retry))
    return outcomes


_BATCH_SIZE = 32
"""Most jobs sharing one child: a batch that times out is re-run job by job, so keep it modest."""


def _map(box: Sandbox, jobs: list[Job]) -> dict[str, Outcome]:
    items = ((job.name, job.payload, job.limits) for job in jobs)
    return {job.key: outcome for job, outcome in zip(jobs, box.map(items), strict=True)}
