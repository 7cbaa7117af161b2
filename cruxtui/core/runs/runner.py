"""The async runner: request generations, extract answers, score them, commit each one at once.

Shape of one run: the store says which (sample, index) pairs are missing; each becomes part of a
request (one request with `n` when the backend can return several completions and nobody watches
the text stream in, else one streamed request per index); every completion is extracted, scored in
a worker thread (the sandbox forks, and the TUI's event loop must keep painting streamed text), and
committed before the next progress event. A request that fails after the backend's own retries is
recorded as a failure with its reason and the run goes on; it stays missing, so running the same
configuration again asks for exactly it and nothing that is already stored.

Errors that no retry can fix (a wrong key, an unknown model) stop the run at once with one message,
and so does an endpoint that fails every request in a row (a dead server), instead of grinding
through 800 samples that can only fail.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

from cruxtui.core.data.dataset import Sample
from cruxtui.core.models.backend import truncated_while_thinking
from cruxtui.core.runs.store import (
    DONE,
    INCOMPLETE,
    INTERRUPTED,
    Generation,
    RunConfig,
    RunInfo,
    RunStore,
    pass_rate,
)


@dataclass(frozen=True)
class Progress:
    """A snapshot for progress bars: this session's work plus what was stored before."""

    done: int
    total: int
    failed: int
    stored_before: int
    elapsed: float
    pass1: float
    """pass@1 (0..1) over every sample with at least one stored generation, including earlier ones."""

    @property
    def rate(self) -> float:
        """Generations per second in this session."""
        return self.done / self.elapsed if self.elapsed > 0 else 0.0

    @property
    def eta(self) -> float | None:
        left = self.total - self.done - self.failed
        if left <= 0:
            return 0.0
        return left / self.rate if self.rate > 0 else None


@dataclass(frozen=True)
class RunSummary:
    run_id: str
    requested: int
    completed: int
    failed: int
    stored_before: int
    elapsed: float
    status: str
    aborted: str | None
    failures: list[tuple[str, int | None, str]] = field(default_factory=list)


class RunListener:
    """Callbacks from the runner (all called on the event loop thread). Override what you need."""

    def on_start(self, run_id: str, todo: Mapping[str, list[int]]) -> None: ...

    def on_begin(self, sample_id: str, index: int, prefix: str) -> None:
        """A streamed generation starts with `prefix` (what the prompt wrote for the model; chunks
        of the model's own text follow)."""

    def on_chunk(self, sample_id: str, index: int, text: str) -> None: ...

    def on_thinking(self, sample_id: str, index: int, text: str, moved: bool) -> None:
        """Thinking streams in (kept apart from the answer text). `moved`: `text` is the answer
        text streamed so far, which turned out to be thinking: drop it from the answer."""

    def on_restart(self, sample_id: str, index: int, prefix: str, reason: str) -> None:
        """A stream broke off after some text and starts over: drop the partial text."""

    def on_generation(self, gen: Generation) -> None: ...

    def on_retry(self, error: str, attempt: int, wait: float) -> None:
        """A request failed and will be retried after `wait` seconds (live runs report these)."""

    def on_failure(self, sample_id: str, index: int | None, error: str) -> None: ...

    def on_progress(self, progress: Progress) -> None: ...


class Scorer(Protocol):
    def __call__(self, sample: Sample, task: str, prediction: str) -> Any: ...


def default_scorer(sample: Sample, task: str, prediction: str) -> Any:
    from cruxtui.core.sandbox.pool import default_sandbox
    from cruxtui.core.scoring.verdicts import check

    return check(sample, task, prediction, default_sandbox())


@dataclass
class RunPlan:
    """What to run: the backend and how prompts are built, stored under `run_id`."""

    backend: Any
    run_id: str
    task: str
    params: Any
    """SamplingParams; its `n` is the number of generations wanted per sample."""
    prompt_for: Callable[[Sample], Any]
    extract: Callable[[str], tuple[str | None, str]]
    """raw text -> (answer or None, reason when None)."""


def prepare_run(
    store: RunStore,
    backend: Any,
    *,
    dataset_digest: str,
    task: str,
    mode: str,
    style: str,
    params: Any,
) -> tuple[RunInfo, RunPlan]:
    """Open (create or resume) the stored run for this configuration and the plan that runs it
    with the project's prompts and (strict) answer extraction; the benchmark's own verdict is
    stored beside ours with every generation."""
    from cruxtui.core.models.prompts import TEMPLATE_VERSION, build_prompt
    from cruxtui.core.scoring.answers import extract

    config = RunConfig.of(
        backend.spec,
        params,
        task=task,
        mode=mode,
        style=style,
        template_version=TEMPLATE_VERSION,
        dataset_digest=dataset_digest,
    )
    info = store.open_run(config)

    def extract_answer(raw: str) -> tuple[str | None, str]:
        found = extract(raw, task, "strict")
        return found.answer, found.reason

    plan = RunPlan(
        backend=backend,
        run_id=info.id,
        task=task,
        params=params,
        prompt_for=lambda sample: build_prompt(sample, task, mode, style),
        extract=extract_answer,
    )
    return info, plan


TRUNCATED_WHILE_THINKING = "truncated while thinking"


def truncated_reason(max_tokens: int | None) -> str:
    """The verdict reason of a generation cut by max_tokens before its thinking ended."""
    budget = f"max_tokens={max_tokens}" if max_tokens else "max_tokens"
    return (
        f"{TRUNCATED_WHILE_THINKING}: {budget} ran out before the model answered; "
        "give reasoning models more room with --max-tokens"
    )


def is_fatal(exc: BaseException) -> bool:
    """Errors where every further request would fail the same way (bad key, unknown model...)."""
    return bool(getattr(exc, "fatal", False))


def describe(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    return text or type(exc).__name__


class Runner:
    """Run one plan over samples with at most `concurrency` requests in flight."""

    def __init__(
        self,
        plan: RunPlan,
        store: RunStore,
        samples: Mapping[str, Sample],
        *,
        concurrency: int = 8,
        stream: bool = False,
        listener: RunListener | None = None,
        scorer: Scorer | None = None,
        max_consecutive_failures: int | None = None,
    ) -> None:
        self.plan = plan
        self.store = store
        self.samples = samples
        # An endpoint that declares its concurrency never gets more requests at once (the backend
        # enforces it too, for every caller).
        limit = getattr(plan.backend, "concurrency", None)
        self.concurrency = max(1, min(concurrency, limit) if limit else concurrency)
        self.stream = stream
        self.listener = listener or RunListener()
        self.scorer = scorer or default_scorer
        # A dead endpoint fails every request; allow a full wave of in-flight requests plus a few
        # before deciding it is the endpoint and not the items.
        self.max_consecutive_failures = max_consecutive_failures or max(8, 2 * self.concurrency)
        self._verdicts: dict[tuple[str, str], Any] = {}
        self._counts: dict[str, tuple[int, int]] = {}
        self._done = self._failed = self._stored_before = self._total = 0
        self._consecutive_failures = 0
        self._started = 0.0
        self._abort: str | None = None

    # -- public ----------------------------------------------------------------------------------

    async def run(self, sample_ids: Iterable[str]) -> RunSummary:
        ids = [sid for sid in sample_ids if sid in self.samples]
        n = int(getattr(self.plan.params, "n", 1) or 1)
        todo = self.store.missing(self.plan.run_id, ids, n)
        wanted = set(ids)
        self._counts = {
            sid: c for sid, c in self.store.counts(self.plan.run_id).items() if sid in wanted
        }
        self._stored_before = sum(nc[0] for nc in self._counts.values())
        self._total = sum(len(v) for v in todo.values())
        self._started = time.monotonic()
        self.listener.on_start(self.plan.run_id, todo)
        self._emit_progress()

        try:
            await self._run_jobs(self._jobs(todo))
        except asyncio.CancelledError:
            self.store.finish(self.plan.run_id, INTERRUPTED)
            raise
        status = INCOMPLETE if self._abort or self._failed else DONE
        self.store.finish(self.plan.run_id, status)
        return RunSummary(
            run_id=self.plan.run_id,
            requested=self._total,
            completed=self._done,
            failed=self._failed,
            stored_before=self._stored_before,
            elapsed=time.monotonic() - self._started,
            status=status,
            aborted=self._abort,
            failures=self.store.failures(self.plan.run_id)[-self._failed :] if self._failed else [],
        )

    # -- internals -------------------------------------------------------------------------------

    async def _run_jobs(self, jobs: list[tuple[str, list[int]]]) -> None:
        sem = asyncio.Semaphore(self.concurrency)
        try:
            async with asyncio.TaskGroup() as tg:
                for sid, indices in jobs:
                    tg.create_task(self._guarded(sem, sid, indices))
        except* _Abort:
            pass

    def _jobs(self, todo: Mapping[str, list[int]]) -> list[tuple[str, list[int]]]:
        """One job per sample when the backend returns several completions per request (and no one
        watches the stream), else one job per generation."""
        batch = not self.stream and bool(getattr(self.plan.backend, "supports_n", False))
        if batch:
            return [(sid, idx) for sid, idx in todo.items()]
        return [(sid, [i]) for sid, idx in todo.items() for i in idx]

    async def _guarded(self, sem: asyncio.Semaphore, sid: str, indices: list[int]) -> None:
        # The semaphore bounds requests in flight only: scoring and storing happen once the slot
        # is free again, so `concurrency` requests keep the server busy all the time.
        try:
            prompt = self.plan.prompt_for(self.samples[sid])
            async with sem:
                if self._abort:
                    raise _Abort()
                if len(indices) == 1 and self.stream:
                    done = await self._stream_one(sid, indices[0], prompt)
                else:
                    done = await self._request(indices, prompt)
            self._commit(await self._score(sid, prompt, done))
        except (asyncio.CancelledError, _Abort):
            raise
        except Exception as exc:  # noqa: BLE001 - any backend failure becomes a recorded failure
            self._failed_request(sid, indices, exc)
        else:
            self._consecutive_failures = 0

    def _failed_request(self, sid: str, indices: list[int], exc: Exception) -> None:
        """Record a request that failed; stop the run (raise `_Abort`) when it cannot go on."""
        error = describe(exc)
        if self._abort:
            # In flight when the run was stopped: the stop's reason already says why.
            raise _Abort() from None
        if is_fatal(exc):
            self._abort = error
            self._fail(sid, None, error)
            raise _Abort() from None
        for i in indices:
            self._fail(sid, i, error)
        self._consecutive_failures += 1
        if self._consecutive_failures >= self.max_consecutive_failures:
            self._abort = (
                f"stopped after {self._consecutive_failures} failed requests in "
                f"a row (last: {error})"
            )
            raise _Abort() from None

    def _params(self, n: int, index: int) -> Any:
        """Sampling params for one request of `n` completions starting at generation `index`.

        Separate requests with one fixed seed would all return the same text, so a request that
        starts at generation `index` gets seed + index (a backend that must emulate `n` adds k for
        its k-th completion): generation i is always sampled with seed + i, or as a choice of the
        request seeded for the first of its batch."""
        params = self.plan.params
        seed = getattr(params, "seed", None)
        changes: dict[str, Any] = {"n": n}
        if seed is not None:
            changes["seed"] = seed + index
        return replace(params, **changes)

    async def _stream_one(self, sid: str, index: int, prompt: Any) -> list[tuple[int, Any]]:
        from cruxtui.core.models.generate import generate_one

        prefix = getattr(prompt, "response_prefix", "")
        self.listener.on_begin(sid, index, prefix)
        comp = await generate_one(
            self.plan.backend,
            prompt,
            self._params(1, index),
            on_chunk=lambda chunk: self.listener.on_chunk(sid, index, chunk),
            on_thinking=lambda text, moved: self.listener.on_thinking(sid, index, text, moved),
            on_restart=lambda reason: self.listener.on_restart(sid, index, prefix, reason),
            index=index,
        )
        return [(index, comp)]

    async def _request(self, indices: list[int], prompt: Any) -> list[tuple[int, Any]]:
        """One request for len(indices) completions (the backend asks again, one by one, when the
        server returns fewer): they are stored together. Each keeps its own latency, measured by
        the backend from its request leaving, so time spent queued is not counted."""
        completions = await self.plan.backend.complete(
            prompt, self._params(len(indices), indices[0]), index=indices[0]
        )
        if len(completions) < len(indices):
            raise RuntimeError(f"asked for {len(indices)} completions, got {len(completions)}")
        return list(zip(indices, completions, strict=False))

    async def _score(self, sid: str, prompt: Any, done: list[tuple[int, Any]]) -> list[Generation]:
        """Extract and score completions (index, Completion) of one sample, in one trip to a
        worker thread; identical answers to a sample are scored once per run (at low temperature
        most of a sample's n answers are the same text)."""
        # What the prompt already wrote for the model (e.g. "[ANSWER]\n") belongs to its answer:
        # stored and extracted together, so a stored generation reads as a whole.
        raws = [prompt.response(c.text) if hasattr(prompt, "response") else c.text for _, c in done]
        found = [self.plan.extract(raw) for raw in raws]
        fresh = {a for a, _ in found if a is not None and (sid, a) not in self._verdicts}
        if fresh:
            sample, task = self.samples[sid], self.plan.task
            verdicts = await asyncio.to_thread(
                lambda: {a: self.scorer(sample, task, a) for a in sorted(fresh)}
            )
            self._verdicts.update({(sid, a): v for a, v in verdicts.items()})
        gens = []
        for (index, comp), raw, (answer, why) in zip(done, raws, found, strict=True):
            reasoning = getattr(comp, "reasoning", None)
            if answer is None:
                passed, kind, reason, official = False, "unparsable", why, None
                if truncated_while_thinking(comp.finish_reason, reasoning, comp.text):
                    reason = truncated_reason(getattr(self.plan.params, "max_tokens", None))
                elif reasoning and not comp.text.strip() and comp.finish_reason == "stop":
                    reason = (
                        "stopped while thinking: the model wrote a stop sequence "
                        "(e.g. [/ANSWER]) inside its thinking"
                    )
            else:
                verdict = self._verdicts[(sid, answer)]
                passed, kind, reason = verdict.passed, verdict.kind, verdict.reason
                official = getattr(verdict, "official", None)
            gens.append(
                Generation(
                    sample_id=sid,
                    index=index,
                    raw=raw,
                    answer=answer,
                    kind=kind,
                    passed=passed,
                    reason=reason,
                    official=official,
                    latency=comp.latency,
                    tokens_in=comp.tokens_in,
                    tokens_out=comp.tokens_out,
                    finish_reason=comp.finish_reason,
                    reasoning=reasoning,
                    seed=getattr(comp, "seed", None),
                    obtained=getattr(comp, "obtained", None) or None,
                )
            )
        return gens

    def _commit(self, gens: list[Generation]) -> None:
        """Store at once (one transaction), then tell the listener."""
        self.store.add_generations(self.plan.run_id, gens)
        for gen in gens:
            n, c = self._counts.get(gen.sample_id, (0, 0))
            self._counts[gen.sample_id] = (n + 1, c + int(gen.passed))
            self._done += 1
            self.listener.on_generation(gen)
        self._emit_progress()

    def _fail(self, sid: str, index: int | None, error: str) -> None:
        self.store.add_failure(self.plan.run_id, sid, index, error)
        self._failed += 1
        self.listener.on_failure(sid, index, error)
        self._emit_progress()

    def _emit_progress(self) -> None:
        self.listener.on_progress(
            Progress(
                done=self._done,
                total=self._total,
                failed=self._failed,
                stored_before=self._stored_before,
                elapsed=time.monotonic() - self._started,
                pass1=pass_rate(self._counts),
            )
        )


class _Abort(Exception):
    """Internal: unwinds the task group when the run must stop (reason in `Runner._abort`)."""
