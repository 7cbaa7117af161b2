"""One run session, shared by `cruxtui run` and the TUI's run panel: open the backend the settings
name, find or create the stored run for the configuration, run the samples, and leave no empty run
behind when the endpoint refused everything. Kept in core so it is tested without a terminal.

The steps, in order (each caller may stop between them to report an error its own way):
`connect(settings)` (blocking: imports `openai`, reads config.toml), `open_session(...)` (the
stored run and its plan, found or created), `session.run(samples)` (requests what is missing,
streams if asked, closes the backend).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from cruxtui.core.data.dataset import Dataset, Sample
from cruxtui.core.runs.runner import RunListener, Runner, RunPlan, RunSummary, prepare_run
from cruxtui.core.runs.store import Generation, RunInfo, RunStore

if TYPE_CHECKING:
    from cruxtui.core.models.backend import Backend, ModelError, SamplingParams

DEFAULT_CONCURRENCY = 8
"""Requests in flight when neither the settings nor the endpoint say."""


class LiveRunError(Exception):
    """The run could not start or was refused (message is one line for the user)."""


@dataclass(frozen=True)
class RunSettings:
    """What to run and where: the options of `cruxtui run`, and what the run panel's form fills.

    Endpoint fields follow `resolve_endpoint`'s precedence (these, then the named endpoint, then
    the environment); `None` means "not given here"."""

    task: str = "output"
    mode: str = "direct"
    n: int = 1
    temperature: float = 0.2
    top_p: float = 0.95
    max_tokens: int | None = None
    """None: the mode's default (`DEFAULT_MAX_TOKENS`)."""
    seed: int | None = None
    endpoint: str | None = None
    base_url: str | None = None
    model: str | None = None
    api: str | None = None
    api_key: str | None = field(default=None, repr=False)
    timeout: float | None = None
    """Longest wait for any data (None: the endpoint's, else 60 s)."""
    deadline: float | None = None
    """Longest time one request may take in all (None: the endpoint's, else from max_tokens)."""
    retries: int | None = None
    """Retries per request (None: the backend's default policy)."""
    concurrency: int | None = None
    """Requests in flight (None: the endpoint's, else `DEFAULT_CONCURRENCY`)."""

    def sampling(self) -> SamplingParams:
        from cruxtui.core.models.backend import SamplingParams
        from cruxtui.core.models.prompts import DEFAULT_MAX_TOKENS

        return SamplingParams(
            temperature=self.temperature,
            top_p=self.top_p,
            max_tokens=self.max_tokens or DEFAULT_MAX_TOKENS[self.mode],
            n=self.n,
            seed=self.seed,
        )


def connect(
    settings: RunSettings, on_retry: Callable[[ModelError, int, float], None] | None = None
) -> Backend:
    """The backend the settings name, through `endpoints.open_backend` (`ModelError` with a
    user-facing message when flags, config.toml and the environment do not add up). Blocking."""
    from cruxtui.core.models.backend import RetryPolicy
    from cruxtui.core.models.endpoints import open_backend

    return open_backend(
        endpoint=settings.endpoint,
        base_url=settings.base_url,
        model=settings.model,
        api=settings.api,
        api_key=settings.api_key,
        timeout=settings.timeout,
        deadline=settings.deadline,
        retry=RetryPolicy(attempts=settings.retries + 1) if settings.retries is not None else None,
        on_retry=on_retry,
    )


def warm_up() -> None:
    """Import what a run needs (`openai`, scoring, extraction) ahead of time; blocking, so call it
    in a thread when the run panel opens: the first run then starts without a pause."""
    from cruxtui.core.models import openai_compat  # noqa: F401
    from cruxtui.core.scoring import answers, verdicts  # noqa: F401


class RunSession:
    """A stored run ready to run: its backend, its row in the store and the plan that fills it."""

    def __init__(
        self,
        store: RunStore,
        backend: Backend,
        info: RunInfo,
        plan: RunPlan,
        settings: RunSettings,
        relay: _RetryRelay,
    ) -> None:
        self.store = store
        self.backend = backend
        self.info = info
        self.plan = plan
        self.settings = settings
        self.discarded = False
        """True once `run` deleted the run because the endpoint refused it before storing anything."""
        self._relay = relay

    @property
    def run_id(self) -> str:
        return self.info.id

    @property
    def params(self) -> SamplingParams:
        params: SamplingParams = self.plan.params
        return params

    def stored(self, sample_id: str) -> list[Generation]:
        """What this configuration already stored for `sample_id` (not requested again)."""
        return self.store.generations(self.info.id, sample_id)

    async def run(
        self,
        samples: Mapping[str, Sample],
        *,
        listener: RunListener | None = None,
        stream: bool = False,
        concurrency: int | None = None,
    ) -> RunSummary:
        """Request every generation still missing for `samples` (in their order), then close the
        backend. A run the endpoint refused before anything was stored (a wrong key, an unknown
        model) is deleted (`discarded`), so a retry with the right settings starts clean."""
        listener = listener or RunListener()
        self._relay.listener = listener
        try:
            runner = Runner(
                self.plan,
                self.store,
                samples,
                concurrency=concurrency
                or self.settings.concurrency
                or self.backend.concurrency
                or DEFAULT_CONCURRENCY,
                stream=stream,
                listener=listener,
            )
            summary = await runner.run(list(samples))
            if summary.aborted and not self.store.counts(self.info.id):
                self.store.delete(self.info.id)
                self.discarded = True
            return summary
        finally:
            await self.backend.aclose()


class _RetryRelay:
    """Passes the backend's retries to whichever listener the session is running with."""

    def __init__(self) -> None:
        self.listener = RunListener()

    def __call__(self, exc: ModelError, attempt: int, wait: float) -> None:
        self.listener.on_retry(exc.message, attempt, wait)


async def open_session(
    store: RunStore,
    dataset: Dataset,
    settings: RunSettings,
    *,
    backend: Backend | None = None,
) -> RunSession:
    """The session for `settings`: connects unless given a `backend` (then it is the session's,
    closed by `run`), and finds or creates the stored run. Blocking work runs in a thread so an
    event loop (the TUI's) keeps going. `LiveRunError` if the endpoint cannot be opened."""
    from cruxtui.core.models.backend import ModelError

    relay = _RetryRelay()
    if backend is None:
        try:
            backend = await asyncio.to_thread(connect, settings, relay)
        except ModelError as exc:
            raise LiveRunError(exc.message) from None
    opened = backend
    try:
        info, plan = await asyncio.to_thread(_prepare, store, dataset, settings, opened)
    except BaseException:
        await opened.aclose()
        raise
    return RunSession(store, opened, info, plan, settings, relay)


def _prepare(
    store: RunStore, dataset: Dataset, settings: RunSettings, backend: Backend
) -> tuple[RunInfo, RunPlan]:
    from cruxtui.core.models.prompts import style_for_api

    warm_up()
    info, plan = prepare_run(
        store,
        backend,
        dataset_digest=dataset.digest,
        task=settings.task,
        mode=settings.mode,
        style=style_for_api(backend.spec.api),
        params=settings.sampling(),
    )
    preconnect = getattr(backend, "preconnect", None)  # only HTTP backends have a client to build
    if preconnect is not None:
        preconnect()
    return info, plan


async def live_run(
    store: RunStore,
    dataset: Dataset,
    sample: Sample,
    settings: RunSettings,
    *,
    listener: RunListener,
    show_stored: Callable[[Generation], None] | None = None,
    backend: Backend | None = None,
) -> RunSummary:
    """The run panel's run: one sample, streamed, `settings.concurrency` requests in flight (else
    at most 4; an endpoint's own `concurrency` always applies). Generations this configuration
    already stored for the sample are passed to `show_stored` first."""
    session = await open_session(store, dataset, settings, backend=backend)
    if show_stored is not None:
        try:
            for gen in session.stored(sample.id):
                show_stored(gen)
        except BaseException:
            await session.backend.aclose()
            raise
    return await session.run(
        {sample.id: sample},
        listener=listener,
        stream=True,
        concurrency=settings.concurrency or min(settings.n, 4),
    )
