"""vLLM in the same process (`pip install 'cruxtui[vllm]'`): the run's prompts in large batched calls.

vLLM needs Linux and a CUDA GPU and is not installed by default, so it is imported only when a run
actually uses this backend. The adapter is deliberately thin: the parameter mapping
(`vllm_sampling_kwargs`) and the request layout are plain Python and tested without vLLM; the
calls into vLLM itself (`LLM(...)`, `LLM.generate`, `LLM.chat`) are untested on machines without a
GPU, which includes the CI this project runs on.

How a run uses it: the runner sees `complete_batch` and hands over the missing requests in chunks
of `batch_size` prompts (each prompt with its own n and seed), one call at a time; vLLM schedules
each chunk itself (continuous batching over every sequence of the chunk). vLLM's offline `LLM` is
not made to be called from several threads, so every call into the engine, from a run or from the
TUI's single-sample requests, goes through this backend's one worker thread: never two at once.
"""

from __future__ import annotations

import asyncio
import importlib
import threading
import time
from collections.abc import AsyncIterator, Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

from cruxtui.core.models.backend import (
    OBTAINED_CHOICE,
    OBTAINED_OWN,
    Completion,
    ModelError,
    ModelSpec,
    SamplingParams,
    StreamStats,
    TextStream,
)
from cruxtui.core.models.prompts import Prompt
from cruxtui.core.models.thinking import Piece

T = TypeVar("T")

INSTALL_HINT = "install it with: pip install 'cruxtui[vllm]' (Linux with a CUDA GPU)"
DEFAULT_BATCH_SIZE = 256
"""Prompts per engine call in a run: large enough for vLLM to keep the GPU full (each prompt
asks for n sequences), small enough that a kill loses little (one chunk)."""


def vllm_sampling_kwargs(params: SamplingParams, stop: Sequence[str]) -> dict[str, Any]:
    """Keyword arguments for `vllm.SamplingParams` equivalent to `params` with stop words `stop`.

    vLLM treats temperature 0 as greedy decoding and rejects top_p outside (0, 1]; a seed of None
    means "random" there too. `n` completions per prompt come from one request.
    """
    if params.max_tokens < 1:
        raise ModelError("config", f"max_tokens must be at least 1 (got {params.max_tokens})")
    if not 0.0 < params.top_p <= 1.0:
        raise ModelError("config", f"top_p must be in (0, 1] (got {params.top_p})")
    kwargs: dict[str, Any] = {
        "n": max(1, params.n),
        "temperature": max(0.0, params.temperature),
        "top_p": params.top_p if params.temperature > 0 else 1.0,
        "max_tokens": params.max_tokens,
        "stop": list(stop),
    }
    if params.seed is not None:
        kwargs["seed"] = params.seed
    return kwargs


def import_vllm() -> Any:
    """The `vllm` module, or a clear ModelError saying what is missing."""
    try:
        return importlib.import_module("vllm")
    except ImportError:
        raise ModelError("missing_dependency", f"vLLM is not installed; {INSTALL_HINT}") from None


def check_gpu() -> None:
    """vLLM needs a CUDA GPU; fail early with a message instead of deep inside engine start-up."""
    try:
        torch = importlib.import_module("torch")
    except ImportError:
        raise ModelError(
            "missing_dependency", f"PyTorch is not installed; {INSTALL_HINT}"
        ) from None
    if not torch.cuda.is_available():
        raise ModelError(
            "no_gpu",
            "vLLM needs a CUDA GPU and none is visible; use an OpenAI-compatible server "
            "(--base-url) instead, e.g. `vllm serve MODEL` on a GPU machine",
        )


def completions_from_outputs(outputs: Sequence[Any], latency: float) -> list[list[Completion]]:
    """vLLM `RequestOutput`s (one per prompt, each with `.outputs`) as our `Completion` lists."""
    results = []
    for out in outputs:
        tokens_in = len(getattr(out, "prompt_token_ids", None) or []) or None
        n = len(out.outputs)
        results.append(
            [
                Completion.of(
                    choice.text,
                    finish_reason=getattr(choice, "finish_reason", None),
                    tokens_in=tokens_in,
                    tokens_out=len(getattr(choice, "token_ids", None) or []) or None,
                    latency=latency,
                    obtained=OBTAINED_OWN if n == 1 else OBTAINED_CHOICE.format(k=k, n=n),
                )
                for k, choice in enumerate(out.outputs)
            ]
        )
    return results


class VllmBackend:
    """vLLM's offline `LLM` engine. Created lazily on the first request (loading takes minutes).

    `engine_args` go to `vllm.LLM` as they are (`tensor_parallel_size`, `data_parallel_size`,
    `gpu_memory_utilization`, `max_model_len`, ...: config.toml's `engine` table); `batch_size` is
    the number of prompts per engine call in a run (each with its own n)."""

    supports_n = True
    concurrency: int | None = None
    """Requests in flight the endpoint asks for (config.toml `concurrency`); None: caller decides."""

    def __init__(
        self, spec: ModelSpec, *, batch_size: int | None = None, **engine_args: Any
    ) -> None:
        self.spec = spec
        self.engine_args = engine_args
        self.batch_size = batch_size or DEFAULT_BATCH_SIZE
        self._llm: Any = None
        self._lock = threading.Lock()
        # One thread for every call into the engine (and its loading): calls queue up there.
        self._worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="vllm")

    def __repr__(self) -> str:
        return f"VllmBackend({self.spec.model!r}, api={self.spec.api})"

    def _engine(self) -> Any:
        if self._llm is None:
            vllm = import_vllm()
            check_gpu()
            try:
                self._llm = vllm.LLM(model=self.spec.model, **self.engine_args)
            except Exception as exc:  # noqa: BLE001 - engine start-up fails in many library-specific ways
                raise ModelError(
                    "config", f"vLLM could not load {self.spec.model!r}: {exc}"
                ) from None
        return self._llm

    def generate_batch(
        self, prompts: Sequence[Prompt], params: SamplingParams | Sequence[SamplingParams]
    ) -> list[list[Completion]]:
        """All prompts in ONE `LLM.generate` (or `LLM.chat`) call: vLLM schedules the batch itself.

        `params` is one for all prompts (which must then agree on stop words) or one per prompt
        (each its own n, seed and stop words). Blocking; one call at a time (a lock), whichever
        thread calls."""
        if not prompts:
            return []
        with self._lock:
            llm = self._engine()
            vllm = import_vllm()
            sampling: Any
            if isinstance(params, SamplingParams):
                stop = params.stop_for(prompts[0])
                sampling = vllm.SamplingParams(**vllm_sampling_kwargs(params, stop))
            else:
                if len(params) != len(prompts):
                    raise ValueError(f"{len(prompts)} prompts but {len(params)} sampling params")
                sampling = [
                    vllm.SamplingParams(**vllm_sampling_kwargs(q, q.stop_for(p)))
                    for p, q in zip(prompts, params, strict=True)
                ]
            start = time.monotonic()
            if self.spec.api == "chat":
                outputs = llm.chat([p.messages for p in prompts], sampling, use_tqdm=False)
            else:
                outputs = llm.generate([p.text for p in prompts], sampling, use_tqdm=False)
            return completions_from_outputs(outputs, time.monotonic() - start)

    async def _call(self, fn: Callable[..., T], *args: Any) -> T:
        """Run `fn(*args)` on the engine's one thread (never two engine calls at once)."""
        return await asyncio.get_running_loop().run_in_executor(self._worker, fn, *args)

    async def complete_batch(
        self, requests: Sequence[tuple[Prompt, SamplingParams]]
    ) -> list[list[Completion]]:
        """Completions for many (prompt, params) requests in one engine call, in order; each
        request gets its `params.n` completions, sampled with its own seed."""
        prompts = [p for p, _ in requests]
        params = [q for _, q in requests]
        out = await self._call(self.generate_batch, prompts, params)
        for completions, q in zip(out, params, strict=False):
            for completion in completions:
                completion.seed = q.seed
        return out

    async def complete(
        self, prompt: Prompt, params: SamplingParams, *, index: int | None = None
    ) -> list[Completion]:
        out = (await self._call(self.generate_batch, [prompt], params))[0]
        for completion in out:
            completion.seed = params.seed
        return out

    def stream(
        self, prompt: Prompt, params: SamplingParams, *, index: int | None = None
    ) -> TextStream:
        """The offline engine does not stream: the whole text arrives as one chunk."""
        return TextStream(lambda stats: self._stream(prompt, params, stats))

    async def _stream(
        self, prompt: Prompt, params: SamplingParams, stats: StreamStats
    ) -> AsyncIterator[Piece]:
        single = SamplingParams(
            params.temperature, params.top_p, params.max_tokens, 1, params.seed, params.stop
        )
        completion = (await self.complete(prompt, single))[0]
        stats.finish_reason = completion.finish_reason
        stats.tokens_in, stats.tokens_out = completion.tokens_in, completion.tokens_out
        stats.seed = params.seed
        # The engine already split off any inline thinking; hand both on as they are.
        if completion.reasoning:
            yield Piece(completion.reasoning, thinking=True)
        yield Piece(completion.text)

    async def aclose(self) -> None:
        self._llm = None
