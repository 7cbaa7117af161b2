"""Endpoints by name from `config_dir()/config.toml`, combined with flags and the environment.

Precedence for each setting: command-line flag, then the named endpoint, then the usual
`OPENAI_BASE_URL` / `OPENAI_API_KEY` environment variables, then defaults. Example::

    default = "local"

    [endpoints.local]              # e.g. `vllm serve Qwen/Qwen2.5-Coder-7B-Instruct`
    base_url = "http://127.0.0.1:8000/v1"
    model = "Qwen/Qwen2.5-Coder-7B-Instruct"
    api = "chat"                   # or "completions" for base models
    timeout = 120                  # seconds without data before a request counts as stalled
    deadline = 900                 # seconds one request may take in all (default: from max_tokens)
    concurrency = 1                # at most this many requests in flight (llama.cpp: 1)

    [endpoints.openai]
    base_url = "https://api.openai.com/v1"
    model = "gpt-4o-mini"
    api_key_env = "OPENAI_API_KEY" # the NAME of the variable holding the key

    [endpoints.gpu]                # vLLM in this process (Linux + CUDA)
    backend = "vllm"
    model = "Qwen/Qwen2.5-Coder-7B-Instruct"
    batch_size = 256               # prompts per engine call in a run (each with its n)
    engine = { tensor_parallel_size = 2, gpu_memory_utilization = 0.9 }   # to vllm.LLM as is

    [endpoints.paper]
    backend = "replay"
    path = "~/cruxeval/model_generations/codellama-7b_temp0.2_output/generations.json"

Keys are best kept in environment variables (`api_key_env`); an `api_key` written in the file is
accepted but cruxtui itself never writes a key anywhere.
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cruxtui.core.data.textfile import UnreadableFile, read_text
from cruxtui.core.models.backend import (
    APIS,
    BACKENDS,
    Backend,
    ModelError,
    ModelSpec,
    RetryHook,
    RetryPolicy,
)
from cruxtui.core.util import redact
from cruxtui.core.util.paths import config_dir

ENDPOINT_KEYS = frozenset(
    {
        "backend",
        "base_url",
        "model",
        "api",
        "api_key_env",
        "api_key",
        "timeout",
        "deadline",
        "path",
        "concurrency",
        "engine",
        "batch_size",
    }
)
VLLM_ONLY_KEYS = ("engine", "batch_size")
"""Keys for the in-process vLLM engine: `engine` is a table passed to `vllm.LLM` as it is
(tensor_parallel_size, data_parallel_size, gpu_memory_utilization, ...), `batch_size` the prompts
per engine call in a run."""
DEFAULT_TIMEOUT = 60.0


def config_path() -> Path:
    return config_dir() / "config.toml"


@dataclass(frozen=True)
class Endpoint:
    """A resolved model endpoint: the storable spec plus the secret and connection settings."""

    spec: ModelSpec
    api_key: str | None = field(default=None, repr=False)
    timeout: float = DEFAULT_TIMEOUT
    concurrency: int | None = None
    name: str | None = None
    deadline: float | None = None
    engine: dict[str, Any] = field(default_factory=dict)
    """Arguments for `vllm.LLM` (backend "vllm" only)."""
    batch_size: int | None = None
    """Prompts per engine call in a run (backend "vllm" only; None: the backend's default)."""


def load_endpoints(
    path: str | os.PathLike[str] | None = None,
) -> tuple[dict[str, dict[str, Any]], str | None]:
    """The `[endpoints.*]` tables and the `default` name from the config file (none if absent)."""
    p = Path(path) if path is not None else config_path()
    if not p.exists():
        return {}, None
    try:
        data = tomllib.loads(read_text(p, "a TOML config file", max_bytes=1 << 20))
    except UnreadableFile as exc:
        raise ModelError("config", f"cannot read {exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ModelError("config", f"{p}: not valid TOML ({exc})") from None
    endpoints = data.get("endpoints", {})
    if not isinstance(endpoints, dict):
        raise ModelError("config", f"{p}: `endpoints` must be a table of [endpoints.NAME] tables")
    for name, table in endpoints.items():
        if not isinstance(table, dict):
            raise ModelError("config", f"{p}: endpoints.{name} must be a table")
        unknown = sorted(set(table) - ENDPOINT_KEYS)
        if unknown:
            raise ModelError(
                "config",
                f"{p}: endpoints.{name}: unknown key(s) {', '.join(unknown)} "
                f"(known: {', '.join(sorted(ENDPOINT_KEYS))})",
            )
    default = data.get("default")
    if default is not None and (not isinstance(default, str) or default not in endpoints):
        raise ModelError("config", f"{p}: default = {default!r} names no [endpoints.*] table")
    return endpoints, default


def resolve_endpoint(
    name: str | None = None,
    *,
    base_url: str | None = None,
    model: str | None = None,
    api: str | None = None,
    backend: str | None = None,
    path: str | None = None,
    api_key: str | None = None,
    timeout: float | None = None,
    deadline: float | None = None,
    config_file: str | os.PathLike[str] | None = None,
    environ: Mapping[str, str] | None = None,
) -> Endpoint:
    """Combine a named endpoint (or the config's default), flags and the environment."""
    env = os.environ if environ is None else environ
    endpoints, default = load_endpoints(config_file)
    where = str(config_file or config_path())
    if name is None and base_url is None and backend is None and default is not None:
        name = default
    table: dict[str, Any] = {}
    if name is not None:
        if name not in endpoints:
            known = ", ".join(sorted(endpoints)) or "none defined"
            raise ModelError("config", f"no endpoint named {name!r} in {where} (known: {known})")
        table = endpoints[name]

    chosen_backend = backend or table.get("backend") or "openai"
    if chosen_backend not in BACKENDS:
        raise ModelError(
            "config", f"unknown backend {chosen_backend!r} (expected one of {', '.join(BACKENDS)})"
        )
    chosen_api = api or table.get("api") or "chat"
    if chosen_api not in APIS:
        raise ModelError("config", f"unknown api {chosen_api!r} (expected chat or completions)")
    chosen_path = path or table.get("path")
    if chosen_path:
        chosen_path = str(Path(chosen_path).expanduser())
    chosen_model = model or table.get("model")
    if chosen_backend == "replay":
        if not chosen_path:
            raise ModelError("config", "a replay endpoint needs a generations file (path)")
        chosen_model = chosen_model or Path(chosen_path).parent.name or Path(chosen_path).stem
    if not chosen_model:
        hint = f" or set model in [endpoints.{name}]" if name else ""
        raise ModelError("config", f"no model name given (the model field, or --model NAME){hint}")

    chosen_url = None
    key = None
    if chosen_backend == "openai":
        chosen_url = base_url or table.get("base_url") or env.get("OPENAI_BASE_URL") or None
        key_env = table.get("api_key_env")
        key = (
            api_key
            or (env.get(key_env) if key_env else None)
            or table.get("api_key")
            or env.get("OPENAI_API_KEY")
        )
        if key_env and not api_key and not env.get(key_env) and not table.get("api_key"):
            raise ModelError(
                "auth", f"endpoint {name!r} reads its key from ${key_env}, which is not set"
            )

    raw_timeout = timeout if timeout is not None else table.get("timeout", DEFAULT_TIMEOUT)
    try:
        chosen_timeout = float(raw_timeout)
    except (TypeError, ValueError):
        raise ModelError(
            "config", f"timeout must be a number of seconds (got {raw_timeout!r})"
        ) from None
    if chosen_timeout <= 0:
        raise ModelError("config", f"timeout must be positive (got {chosen_timeout:g})")
    concurrency = table.get("concurrency")
    if concurrency is not None and (not isinstance(concurrency, int) or concurrency < 1):
        raise ModelError("config", f"endpoints.{name}.concurrency must be a positive integer")
    raw_deadline = deadline if deadline is not None else table.get("deadline")
    chosen_deadline: float | None = None
    if raw_deadline is not None:
        if isinstance(raw_deadline, bool) or not isinstance(raw_deadline, int | float):
            raise ModelError(
                "config", f"deadline must be a number of seconds (got {raw_deadline!r})"
            )
        if raw_deadline <= 0:
            raise ModelError("config", f"deadline must be positive (got {raw_deadline:g})")
        chosen_deadline = float(raw_deadline)

    engine = table.get("engine", {})
    batch_size = table.get("batch_size")
    given = [k for k in VLLM_ONLY_KEYS if k in table]
    if given and chosen_backend != "vllm":
        raise ModelError("config", f'endpoints.{name}.{given[0]} applies only to backend = "vllm"')
    if not isinstance(engine, dict):
        raise ModelError(
            "config",
            f"endpoints.{name}.engine must be a table of vllm.LLM arguments, "
            "e.g. engine = { tensor_parallel_size = 2 }",
        )
    if "model" in engine:
        raise ModelError("config", f"endpoints.{name}.engine: give the model as `model`, not here")
    if batch_size is not None and (
        isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1
    ):
        raise ModelError("config", f"endpoints.{name}.batch_size must be a positive integer")

    spec = ModelSpec(
        chosen_backend,
        chosen_model,
        chosen_url,
        chosen_api,
        chosen_path if chosen_backend == "replay" else None,
    )
    redact.register(key)  # never stored or printed from here on
    return Endpoint(
        spec=spec,
        api_key=key,
        timeout=chosen_timeout,
        concurrency=concurrency,
        name=name,
        deadline=chosen_deadline,
        engine=dict(engine),
        batch_size=batch_size,
    )


def open_backend(
    *,
    endpoint: str | None = None,
    base_url: str | None = None,
    model: str | None = None,
    api: str | None = None,
    timeout: float | None = None,
    deadline: float | None = None,
    api_key: str | None = None,
    backend: str | None = None,
    path: str | None = None,
    retry: RetryPolicy | None = None,
    on_retry: RetryHook | None = None,
) -> Backend:
    """The backend that flags + config + environment describe (`ModelError` if they don't add up)."""
    from cruxtui.core.models import make_backend

    ep = resolve_endpoint(
        endpoint,
        base_url=base_url,
        model=model,
        api=api,
        backend=backend,
        path=path,
        api_key=api_key,
        timeout=timeout,
        deadline=deadline,
    )
    made = make_backend(
        ep.spec,
        api_key=ep.api_key,
        timeout=ep.timeout,
        retry=retry,
        on_retry=on_retry,
        deadline=ep.deadline,
        concurrency=ep.concurrency,
        **vllm_options(ep),
    )
    made.concurrency = ep.concurrency
    return made


def vllm_options(ep: Endpoint) -> dict[str, Any]:
    """What `make_backend` passes to the in-process vLLM backend: the engine arguments and the
    batch size (nothing for other backends)."""
    if ep.spec.backend != "vllm":
        return {}
    options = dict(ep.engine)
    if ep.batch_size is not None:
        options["batch_size"] = ep.batch_size
    return options
