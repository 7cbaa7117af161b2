"""Model backends behind one async, streaming interface (see `base.Backend`); `endpoints.open_backend` builds one from flags, config.toml and the environment.

`make_backend(spec)` builds the backend a `ModelSpec` names; backends import their heavy libraries
(`openai`, `vllm`) only when built, so importing this package stays cheap.
"""

from __future__ import annotations

from typing import Any

from cruxtui.core.models.backend import (
    Backend,
    Completion,
    ModelError,
    ModelSpec,
    RetryHook,
    RetryPolicy,
    SamplingParams,
    TextStream,
    with_retries,
)
from cruxtui.core.models.generate import generate_one


def make_backend(
    spec: ModelSpec,
    api_key: str | None = None,
    timeout: float = 60.0,
    *,
    retry: RetryPolicy | None = None,
    on_retry: RetryHook | None = None,
    deadline: float | None = None,
    concurrency: int | None = None,
    **options: Any,
) -> Backend:
    """The backend for `spec`. `api_key`, `timeout` (each wait for data), `deadline` (a whole
    request) and `concurrency` (requests in flight at most) apply to OpenAI-compatible servers;
    `options` go to the vLLM engine (e.g. `tensor_parallel_size=2`), except `batch_size` (prompts
    per engine call in a run)."""
    if spec.backend == "openai":
        from cruxtui.core.models.openai_compat import OpenAICompatBackend

        return OpenAICompatBackend(
            spec,
            api_key=api_key,
            timeout=timeout,
            retry=retry,
            on_retry=on_retry,
            deadline=deadline,
            concurrency=concurrency,
        )
    if spec.backend == "vllm":
        from cruxtui.core.models.vllm_offline import VllmBackend

        return VllmBackend(spec, **options)
    if spec.backend == "replay":
        from cruxtui.core.models.recorded import ReplayBackend

        if not spec.path:
            raise ModelError("config", "a replay model needs a generations file (path)")
        return ReplayBackend(spec.path, spec=spec, delay=float(options.get("delay", 0.0)))
    raise ModelError("config", f"unknown backend {spec.backend!r}")


__all__ = [
    "Backend",
    "Completion",
    "ModelError",
    "ModelSpec",
    "RetryPolicy",
    "SamplingParams",
    "TextStream",
    "generate_one",
    "make_backend",
    "with_retries",
]
