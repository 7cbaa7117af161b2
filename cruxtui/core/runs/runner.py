"""The async runner: request generations, extract answers, score them, commit them in groups.

Shape of one run: the store says which (sample, index) pairs are missing; each becomes part of a
request (one request with `n` when the backend can return several completions and nobody watches
the text stream in, else one streamed request per index). `concurrency` workers take requests one
after another from the plan and hand what comes back to one sink, so a worker asks for its next
request at once. The sink takes everything that has come back since its last round (at most
`COMMIT_ROWS` generations) and settles it as one call to the scoring process (`settle` through
`offload`: off the core that keeps the requests going): the answers extracted, scored (one
`check_many` through the sandbox pool) and committed in ONE transaction through that process's
own connection, waited for in a worker thread (the TUI's event loop must keep painting streamed
text); then it tells the listener. A generation is reported only once it is committed; when
answers come back faster than they are stored, workers wait for room (`queue_size`), so a kill
loses at most the generations of one round plus those waiting for it.

A backend with `complete_batch` (vLLM in-process) is driven differently: the missing requests go
to it in chunks of `batch_size` prompts, one call at a time, and each chunk is committed before
the next call is made (a kill loses at most the chunk in flight).

A request that fails after the backend's own retries is recorded as a failure with its reason and
the run goes on; it stays missing, so running the same configuration again asks for exactly it and
nothing that is already stored.

Errors that no retry can fix (a wrong key, an unknown model) stop the run at once with one message,
and so does an endpoint that fails every request in a row (a dead server), instead of grinding
through 800 samples that can only fail.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import pickle
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

from cruxtui.core.data.dataset import Sample
from cruxtui.core.runs.offload import shared_offload
from cruxtui.core.runs.settle import Round, Settled, StoreFailed, settle
from cruxtui.core.runs.store import (
    DONE,
    INCOMPLETE,
    INTERRUPTED,
    Generation,
    RunConfig,
    RunInfo,
    RunStore,
)
from cruxtui.core.util.redact import active_secrets

COMMIT_ROWS = 512
"""Most generations scored and committed in one transaction: bounds what a kill can lose and how
long one round of the sink takes (a round takes whatever has come back, so at low rates every
response is committed on its own, at once)."""
FAILURES_KEPT = 100
"""Failures a `RunSummary` lists (the first ones, then the last); all are in the store."""
BATCH_SIZE = 256
"""Prompts per call of a backend's `complete_batch` (each with its own n) unless it says."""


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
    """Verdicts for (sample, prediction) pairs of one task, in order (a whole round at once)."""

    def __call__(self, pairs: Sequence[tuple[Sample, str]], task: str) -> list[Any]: ...


def default_scorer(pairs: Sequence[tuple[Sample, str]], task: str) -> list[Any]:
    """`check_many` through the shared sandbox pool: a round's sandbox jobs run side by side, and
    identical jobs once."""
    from cruxtui.core.sandbox.pool import default_sandbox
    from cruxtui.core.scoring.verdicts import check_many

    return check_many(pairs, task, default_sandbox())


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

    plan = RunPlan(
        backend=backend,
        run_id=info.id,
        task=task,
        params=params,
        prompt_for=lambda sample: build_prompt(sample, task, mode, style),
        extract=StrictExtraction(task),
    )
    return info, plan


@dataclass(frozen=True)
class StrictExtraction:
    """The project's (strict) answer extraction for one task, as a value: it pickles, so a run's
    rounds are read in the scoring process (`offload`)."""

    task: str

    def __call__(self, raw: str) -> tuple[str | None, str]:
        from cruxtui.core.scoring.answers import extract

        found = extract(raw, self.task, "strict")
        return found.answer, found.reason


def _pickles(value: Any) -> bool:
    try:
        pickle.dumps(value)
    except Exception:  # noqa: BLE001 - a lambda, a closure, anything holding a lock...
        return False
    return True


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
        commit_rows: int = COMMIT_ROWS,
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
        self._scorer_key = f"{getattr(self.scorer, '__qualname__', '?')}#{id(self.scorer)}"
        self._offloadable = (
            type(store) is RunStore and _pickles(self.scorer) and _pickles(plan.extract)
        )
        """A round goes to the scoring process only if what settles it can be sent there (and
        the store is a plain one: a store made to do more is used as given, in this process)."""
        self._shows_generations = type(self.listener).on_generation is not RunListener.on_generation
        """Whole generations come back from a round only for a listener that shows them."""
        self._secrets: list[str] = []
        self.commit_rows = max(1, commit_rows)
        self.queue_size = 2 * self.concurrency
        """Responses waiting for the sink before workers wait for room."""
        # A dead endpoint fails every request; allow a full wave of in-flight requests plus a few
        # before deciding it is the endpoint and not the items.
        self.max_consecutive_failures = max_consecutive_failures or max(8, 2 * self.concurrency)
        self._prompts: OrderedDict[str, Any] = OrderedDict()
        self._counts: dict[str, tuple[int, int]] = {}
        self._rate_sum = 0.0
        """Sum over samples of passed / generations: pass@1 kept up to date per generation."""
        self._done = self._failed = self._stored_before = self._total = 0
        self._failures: list[tuple[str, int | None, str]] = []
        self._last_failure: tuple[str, int | None, str] | None = None
        self._consecutive_failures = 0
        self._started = 0.0
        self._abort: str | None = None
        self._queue: asyncio.Queue[_Returned | None] = asyncio.Queue()
        self._room = asyncio.Semaphore(self.queue_size)
        """Room for responses on their way to the sink: workers wait for it (back-pressure)."""

    # -- public ----------------------------------------------------------------------------------

    async def run(self, sample_ids: Iterable[str]) -> RunSummary:
        ids = [sid for sid in sample_ids if sid in self.samples]
        n = int(getattr(self.plan.params, "n", 1) or 1)
        todo = self.store.missing(self.plan.run_id, ids, n)
        wanted = set(ids)
        self._counts = {
            sid: c for sid, c in self.store.counts(self.plan.run_id).items() if sid in wanted
        }
        self._rate_sum = sum(c / m for m, c in self._counts.values() if m)
        self._stored_before = sum(nc[0] for nc in self._counts.values())
        self._total = sum(len(v) for v in todo.values())
        self._started = time.monotonic()
        self._secrets = active_secrets()  # the endpoint's key is registered by now
        self.listener.on_start(self.plan.run_id, todo)
        self._emit_progress()

        try:
            await self._run_jobs(todo)
        except asyncio.CancelledError:
            self.store.finish(self.plan.run_id, INTERRUPTED)
            raise
        status = INCOMPLETE if self._abort or self._failed else DONE
        self.store.finish(self.plan.run_id, status)
        failures = list(self._failures)
        if self._last_failure is not None and self._failed > len(failures):
            failures.append(self._last_failure)
        return RunSummary(
            run_id=self.plan.run_id,
            requested=self._total,
            completed=self._done,
            failed=self._failed,
            stored_before=self._stored_before,
            elapsed=time.monotonic() - self._started,
            status=status,
            aborted=self._abort,
            failures=failures,
        )

    # -- internals -------------------------------------------------------------------------------

    async def _run_jobs(self, todo: Mapping[str, list[int]]) -> None:
        """The requests (workers, or chunks for a batch backend) and the sink, side by side: a
        sink that fails (a full disk) stops the requests, and requests that stop (done, or the
        run aborted) let the sink store what came back first."""
        self._queue = asyncio.Queue()
        await asyncio.to_thread(shared_offload().start)  # boots while the first requests are out
        batched = not self.stream and callable(getattr(self.plan.backend, "complete_batch", None))
        size = self._batch_size() if batched else self.queue_size
        self._room = asyncio.Semaphore(size)

        async def produce() -> None:
            try:
                if batched:
                    await self._run_chunks(self._jobs(todo))
                else:
                    await self._run_workers(self._jobs(todo))
            finally:
                self._queue.put_nowait(None)  # the end (the queue is unbounded: never waits)

        async with asyncio.TaskGroup() as tg:
            tg.create_task(self._sink())
            tg.create_task(produce())

    def _jobs(self, todo: Mapping[str, list[int]]) -> Iterator[tuple[str, list[int]]]:
        """One job per sample when the backend returns several completions per request (and no one
        watches the stream), else one job per generation. Made as they are taken: a run of
        100,000 generations holds no list of them."""
        batch = not self.stream and bool(getattr(self.plan.backend, "supports_n", False))
        if batch:
            return ((sid, list(idx)) for sid, idx in todo.items())
        return ((sid, [i]) for sid, idx in todo.items() for i in idx)

    async def _run_workers(self, jobs: Iterator[tuple[str, list[int]]]) -> None:
        try:
            async with asyncio.TaskGroup() as tg:
                for _ in range(self.concurrency):
                    tg.create_task(self._worker(jobs))
        except* _Abort:
            pass

    async def _worker(self, jobs: Iterator[tuple[str, list[int]]]) -> None:
        """Take the next job, request it, hand the answer to the sink, repeat. The iterator is
        shared: each job is taken by exactly one worker."""
        for sid, indices in jobs:
            if self._abort:
                raise _Abort()
            try:
                prompt = self._prompt(sid)
                if len(indices) == 1 and self.stream:
                    done = await self._stream_one(sid, indices[0], prompt)
                else:
                    done = await self._request(indices, prompt)
            except (asyncio.CancelledError, _Abort):
                raise
            except Exception as exc:  # noqa: BLE001 - any backend failure becomes a recorded failure
                self._failed_request(sid, indices, exc)
                continue
            self._consecutive_failures = 0
            await self._hand_over(_Returned(sid, prompt, done))

    async def _hand_over(self, item: _Returned) -> None:
        await self._room.acquire()
        self._queue.put_nowait(item)

    async def _run_chunks(self, jobs: Iterator[tuple[str, list[int]]]) -> None:
        """Feed a batch backend: `batch_size` requests per `complete_batch` call, one call at a
        time, each chunk stored before the next is asked for."""
        backend = self.plan.backend
        size = self._batch_size()
        while not self._abort:
            chunk = list(itertools.islice(jobs, size))
            if not chunk:
                return
            requests = [(self._prompt(sid), self._params(len(idx), idx[0])) for sid, idx in chunk]
            try:
                results = await backend.complete_batch(requests)
                if len(results) != len(chunk):
                    raise RuntimeError(f"asked for {len(chunk)} prompts, got {len(results)}")
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # noqa: BLE001 - recorded for every request of the chunk
                try:
                    for sid, idx in chunk:
                        self._failed_request(sid, idx, exc)
                except _Abort:
                    return
                continue
            for (sid, idx), (prompt, _), comps in zip(chunk, requests, results, strict=True):
                if len(comps) < len(idx):
                    error = RuntimeError(f"asked for {len(idx)} completions, got {len(comps)}")
                    try:
                        self._failed_request(sid, idx, error)
                    except _Abort:
                        return
                    continue
                self._consecutive_failures = 0
                await self._hand_over(_Returned(sid, prompt, list(zip(idx, comps, strict=False))))
            await self._queue.join()  # committed before the next chunk is asked for

    def _batch_size(self) -> int:
        return max(1, int(getattr(self.plan.backend, "batch_size", None) or BATCH_SIZE))

    def _prompt(self, sid: str) -> Any:
        """The sample's prompt, built once while its requests are being made (a sample's jobs
        come one after another)."""
        prompt = self._prompts.get(sid)
        if prompt is None:
            prompt = self._prompts[sid] = self.plan.prompt_for(self.samples[sid])
            if len(self._prompts) > max(64, 4 * self.concurrency):
                self._prompts.popitem(last=False)
        return prompt

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

    async def _sink(self) -> None:
        """Store what comes back, round by round: everything waiting (up to `commit_rows`
        generations) is scored and committed in one trip to a worker thread, then reported."""
        queue = self._queue
        ended = False
        while not ended:
            item = await queue.get()
            if item is None:
                return
            batch, rows = [item], len(item.done)
            while rows < self.commit_rows:
                try:
                    more = queue.get_nowait()
                except asyncio.QueueEmpty:
                    break
                if more is None:
                    ended = True
                    break
                batch.append(more)
                rows += len(more.done)
            settled = await asyncio.to_thread(self._settle, batch)
            if self._shows_generations:
                for gen in settled.stored:
                    assert isinstance(gen, Generation)
                    self._count(gen.sample_id, gen.passed)
                    self.listener.on_generation(gen)
            else:
                for sid, passed in settled.stored:  # type: ignore[misc]
                    self._count(sid, passed)
            self._emit_progress()
            for at, exc in settled.unscored:
                # As a failed request: recorded, left missing; a run whose every answer fails
                # to score stops like one whose every request fails (workers see `_abort`).
                item = batch[at]
                with contextlib.suppress(_Abort):
                    self._failed_request(item.sid, [i for i, _ in item.done], exc)
            for _ in batch:
                queue.task_done()
                self._room.release()

    def _settle(self, batch: list[_Returned]) -> Settled:
        """Read, score and commit one round (from a worker thread): in the scoring process when
        it can take the round, else here with the runner's own store (`settle`)."""
        responses = []
        for item in batch:
            # What the prompt already wrote for the model (e.g. "[ANSWER]\n") belongs to its
            # answer: stored and extracted together, so a stored generation reads as a whole.
            respond = getattr(item.prompt, "response", None)
            responses.append(
                (item.sid, [(i, c, respond(c.text) if respond else c.text) for i, c in item.done])
            )
        job = Round(
            store=str(self.store.path),
            run_id=self.plan.run_id,
            task=self.plan.task,
            extract=self.plan.extract,
            scorer=self.scorer,
            scorer_key=self._scorer_key,
            max_tokens=getattr(self.plan.params, "max_tokens", None),
            samples={item.sid: self.samples[item.sid] for item in batch},
            responses=responses,
            secrets=self._secrets,
            whole=self._shows_generations,
        )
        offload = shared_offload()
        try:
            if self._offloadable:
                offload.start()  # a helper that died is replaced
                if offload.pid is not None:
                    return offload.call(settle, job)
            job.store = self.store  # no scoring process: this process's connection
            return settle(job)
        except StoreFailed as exc:
            raise exc.error from None  # the run cannot store: it stops with the cause

    def _count(self, sid: str, passed: bool) -> None:
        """A committed generation into the counts and the running pass@1 (O(1) per generation)."""
        m, c = self._counts.get(sid, (0, 0))
        if m:
            self._rate_sum -= c / m
        m, c = m + 1, c + int(passed)
        self._counts[sid] = (m, c)
        self._rate_sum += c / m
        self._done += 1

    def _fail(self, sid: str, index: int | None, error: str) -> None:
        self.store.add_failure(self.plan.run_id, sid, index, error)
        self._failed += 1
        if len(self._failures) < FAILURES_KEPT:
            self._failures.append((sid, index, error))
        self._last_failure = (sid, index, error)
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
                pass1=self._rate_sum / len(self._counts) if self._counts else 0.0,
            )
        )


@dataclass
class _Returned:
    """What one request brought back, on its way to the sink: (index, Completion) pairs."""

    sid: str
    prompt: Any
    done: list[tuple[int, Any]]


class _Abort(Exception):
    """Internal: unwinds the task group when the run must stop (reason in `Runner._abort`)."""
