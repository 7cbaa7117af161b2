"""A live run of one sample, as the TUI's run panel starts it: same runner and store as the CLI,
with every generation streamed. Kept in core so it is tested without a terminal."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from cruxtui.core.data.dataset import Dataset, Sample
from cruxtui.core.runs.runner import RunListener, Runner, RunSummary, prepare_run
from cruxtui.core.runs.store import Generation, RunStore


class LiveRunError(Exception):
    """The run could not start or was refused (message is one line for the user)."""


def open_backend(
    *,
    endpoint: str | None = None,
    base_url: str | None = None,
    model: str | None = None,
    api: str | None = None,
    api_key: str | None = None,
    timeout: float | None = None,
    retries: int | None = None,
    on_retry: Callable[[Any, int, float], None] | None = None,
    deadline: float | None = None,
) -> tuple[Any, Any]:
    """The backend (and resolved `Endpoint`) from a named endpoint in config.toml, flags and the
    environment; `ModelError` with a user-facing message when they do not add up."""
    from cruxtui.core.models import RetryPolicy, make_backend
    from cruxtui.core.models.endpoints import resolve_endpoint

    resolved = resolve_endpoint(
        endpoint,
        base_url=base_url,
        model=model,
        api=api,
        api_key=api_key,
        timeout=timeout,
        deadline=deadline,
    )
    retry = RetryPolicy(attempts=retries + 1) if retries is not None else None
    backend = make_backend(
        resolved.spec,
        api_key=resolved.api_key,
        timeout=resolved.timeout,
        retry=retry,
        on_retry=on_retry,
        deadline=resolved.deadline,
        concurrency=resolved.concurrency,
    )
    backend.concurrency = resolved.concurrency
    return backend, resolved


def warm_up() -> None:
    """Import what a run needs (`openai`, scoring, extraction) ahead of time; blocking, so call it
    in a thread when the run panel opens: the first run then starts without a pause."""
    from cruxtui.core.models import openai_compat  # noqa: F401
    from cruxtui.core.scoring import answers, verdicts  # noqa: F401


def _prepare(
    store: RunStore, dataset: Dataset, settings: dict[str, Any], backend: Any, listener: RunListener
) -> tuple[Any, Any, Any]:
    """Backend, stored run and plan for `settings`. Blocking (imports `openai`, reads config, opens
    the run): the live run calls it in a thread so the TUI keeps painting meanwhile."""
    warm_up()
    from cruxtui.core.models.backend import ModelError, SamplingParams
    from cruxtui.core.models.prompts import DEFAULT_MAX_TOKENS, style_for_api

    try:
        if backend is None:
            backend, _ = open_backend(
                endpoint=settings.get("endpoint"),
                base_url=settings.get("base_url"),
                model=settings.get("model"),
                api=settings.get("api"),
                timeout=settings.get("timeout"),
                on_retry=lambda exc, attempt, wait: listener.on_retry(exc.message, attempt, wait),
            )
    except ModelError as exc:
        raise LiveRunError(exc.message) from None
    mode = settings["mode"]
    params = SamplingParams(
        temperature=settings["temperature"],
        n=settings["n"],
        seed=settings.get("seed"),
        max_tokens=settings.get("max_tokens") or DEFAULT_MAX_TOKENS[mode],
    )
    info, plan = prepare_run(
        store,
        backend,
        dataset_digest=dataset.digest,
        task=settings["task"],
        mode=mode,
        style=style_for_api(backend.spec.api),
        params=params,
    )
    preconnect = getattr(backend, "preconnect", None)  # only HTTP backends have a client to build
    if preconnect is not None:
        preconnect()
    return backend, info, plan


async def live_run(
    store: RunStore,
    dataset: Dataset,
    sample: Sample,
    settings: dict[str, Any],
    *,
    listener: RunListener,
    show_stored: Callable[[Generation], None] | None = None,
    backend: Any = None,
) -> RunSummary:
    """Run `settings` (endpoint/base_url/model/api/task/mode/n/temperature/seed/max_tokens/
    concurrency) on one sample,
    streaming. Generations this configuration already stored for the sample are passed to
    `show_stored` first and not requested again."""
    backend, info, plan = await asyncio.to_thread(
        _prepare, store, dataset, settings, backend, listener
    )
    try:
        if show_stored is not None:
            for gen in store.generations(info.id, sample.id):
                show_stored(gen)
        runner = Runner(
            plan,
            store,
            {sample.id: sample},
            # The endpoint's own limit (config.toml `concurrency`) applies on top, in the runner.
            concurrency=settings.get("concurrency") or min(settings["n"], 4),
            stream=True,
            listener=listener,
        )
        summary = await runner.run([sample.id])
        if summary.aborted and not store.counts(info.id):
            store.delete(info.id)  # a wrong key or model stored nothing: leave no empty run
        return summary
    finally:
        await backend.aclose()
