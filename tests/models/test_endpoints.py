"""Endpoints by name from config.toml, flags and the environment; retry policy arithmetic."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from cruxtui.core.models import ModelError, ModelSpec, RetryPolicy, with_retries
from cruxtui.core.models.endpoints import (
    config_path,
    load_endpoints,
    open_backend,
    resolve_endpoint,
)
from cruxtui.core.models.recorded import ReplayBackend

CONFIG = """
default = "local"

[endpoints.local]
base_url = "http://127.0.0.1:8000"
model = "qwen-coder"
timeout = 120
concurrency = 16

[endpoints.base]
base_url = "http://gpu-box:8000/v1"
model = "codellama-7b"
api = "completions"

[endpoints.hosted]
base_url = "https://api.example.com/v1"
model = "big-model"
api_key_env = "EXAMPLE_KEY"

[endpoints.paper]
backend = "replay"
path = "{path}"
"""


@pytest.fixture
def config(tmp_path: Path) -> Path:
    gens = tmp_path / "codellama_output" / "generations.json"
    gens.parent.mkdir()
    gens.write_text('{"sample_0": ["1"]}')
    path = config_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(CONFIG.format(path=gens))
    return path


def test_config_lives_in_the_config_dir() -> None:
    assert config_path() == Path(os.environ["CRUXTUI_CONFIG_DIR"]) / "config.toml"


def test_open_backend_carries_the_endpoints_concurrency(config: Path) -> None:
    assert open_backend(endpoint="local").concurrency == 16
    assert open_backend(endpoint="base").concurrency is None


def test_named_endpoint(config: Path) -> None:
    ep = resolve_endpoint("base")
    assert ep.spec == ModelSpec("openai", "codellama-7b", "http://gpu-box:8000/v1", "completions")
    assert ep.timeout == 60.0 and ep.name == "base"


def test_default_endpoint_and_its_settings(config: Path) -> None:
    ep = resolve_endpoint()
    assert ep.name == "local" and ep.spec.model == "qwen-coder"
    assert ep.timeout == 120.0 and ep.concurrency == 16


def test_flags_win_over_the_file(config: Path) -> None:
    ep = resolve_endpoint("local", model="other", api="completions", timeout=5)
    assert (ep.spec.model, ep.spec.api, ep.timeout) == ("other", "completions", 5.0)
    assert ep.spec.base_url == "http://127.0.0.1:8000"


def test_a_base_url_flag_skips_the_default(config: Path) -> None:
    ep = resolve_endpoint(base_url="http://elsewhere:1", model="m")
    assert ep.name is None and ep.spec.base_url == "http://elsewhere:1"


def test_key_from_the_named_variable_never_in_the_spec(
    config: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("EXAMPLE_KEY", "sk-example-secret")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-other")
    ep = resolve_endpoint("hosted")
    assert ep.api_key == "sk-example-secret"
    assert "sk-example" not in repr(ep) and "sk-example" not in str(ep.spec.to_json())
    assert resolve_endpoint("hosted", api_key="sk-flag").api_key == "sk-flag"


def test_missing_key_variable_is_named(config: Path) -> None:
    with pytest.raises(ModelError, match=r"reads its key from \$EXAMPLE_KEY, which is not set"):
        resolve_endpoint("hosted")


def test_environment_fallbacks(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", "http://env-host:9/v1")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-env")
    ep = resolve_endpoint(model="m")
    assert ep.spec.base_url == "http://env-host:9/v1" and ep.api_key == "sk-env"


def test_replay_endpoint(config: Path) -> None:
    ep = resolve_endpoint("paper")
    assert ep.spec.backend == "replay" and ep.spec.model == "codellama_output"
    backend = open_backend(endpoint="paper")
    assert isinstance(backend, ReplayBackend)
    assert backend.texts_for("sample_0") == ["1"]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("endpoints = 3", "must be a table"),
        ("[endpoints.a]\nmodel = 'm'\nkey = 'x'", "unknown key(s) key"),
        ("[endpoints.a\nmodel = 'm'", "not valid TOML"),
        ("default = 'b'\n[endpoints.a]\nmodel = 'm'", "default = 'b' names no"),
        ("[endpoints.a]\nmodel = 'm'\ntimeout = -1", "timeout must be positive"),
        ("[endpoints.a]\nmodel = 'm'\ntimeout = 'slow'", "timeout must be a number"),
        ("[endpoints.a]\nmodel = 'm'\napi = 'chatty'", "unknown api 'chatty'"),
        ("[endpoints.a]\nmodel = 'm'\nbackend = 'tgi'", "unknown backend 'tgi'"),
        (
            "[endpoints.a]\nbase_url = 'http://x'",
            "no model name given (the model field, or --model NAME) or set model in [endpoints.a]",
        ),
        ("[endpoints.a]\nmodel = 'm'\nconcurrency = 0", "concurrency must be a positive integer"),
        ("[endpoints.a]\nbackend = 'replay'", "needs a generations file"),
        ("[endpoints.a]\nmodel = 'm'\nbatch_size = 64", "batch_size applies only to backend"),
        ("[endpoints.a]\nmodel = 'm'\nengine = {dtype = 'half'}", "engine applies only to"),
        ("[endpoints.a]\nbackend = 'vllm'\nmodel = 'm'\nengine = 2", "engine must be a table"),
        (
            "[endpoints.a]\nbackend = 'vllm'\nmodel = 'm'\nengine = {model = 'x'}",
            "give the model as `model`",
        ),
        (
            "[endpoints.a]\nbackend = 'vllm'\nmodel = 'm'\nbatch_size = 0",
            "batch_size must be a positive integer",
        ),
    ],
)
def test_config_problems_are_explained(text: str, message: str) -> None:
    path = config_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    with pytest.raises(ModelError) as info:
        resolve_endpoint("a")
    assert message in str(info.value)
    assert info.value.kind in ("config", "auth")


def test_vllm_engine_arguments_and_batch_size_reach_the_backend() -> None:
    from cruxtui.core.models.vllm_offline import VllmBackend

    path = config_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        "[endpoints.gpu]\nbackend = 'vllm'\nmodel = 'org/coder'\nbatch_size = 128\n"
        "engine = { tensor_parallel_size = 4, data_parallel_size = 2, "
        "gpu_memory_utilization = 0.8 }\n"
    )
    backend = open_backend(endpoint="gpu")  # nothing is loaded until the first request
    assert isinstance(backend, VllmBackend) and backend.batch_size == 128
    assert backend.engine_args == {
        "tensor_parallel_size": 4,
        "data_parallel_size": 2,
        "gpu_memory_utilization": 0.8,
    }


def test_unknown_endpoint_lists_the_known_ones(config: Path) -> None:
    with pytest.raises(
        ModelError,
        match=r"no endpoint named 'gpt' in .*config.toml \(known: base, hosted, local, paper\)",
    ):
        resolve_endpoint("gpt")


def test_no_config_file_is_fine() -> None:
    assert load_endpoints() == ({}, None)


# ------------------------------------------------------------------ retry policy


def test_backoff_doubles_up_to_the_cap_and_retry_after_wins() -> None:
    policy = RetryPolicy(base_delay=0.5, max_delay=3.0, jitter=0.0)
    assert [policy.delay(a) for a in range(5)] == [0.5, 1.0, 2.0, 3.0, 3.0]
    assert policy.delay(0, retry_after=2.5) == 2.5
    assert policy.delay(0, retry_after=100) == 3.0  # a server's wait is capped too
    jittered = RetryPolicy(base_delay=1.0, jitter=0.25)
    assert all(0.75 <= jittered.delay(0) <= 1.0 for _ in range(50))


async def test_with_retries_stops_at_non_retryable_and_counts_attempts() -> None:
    calls: list[int] = []
    slept: list[float] = []

    async def sleep(s: float) -> None:
        slept.append(s)

    async def flaky() -> str:
        calls.append(1)
        if len(calls) < 3:
            raise ModelError("rate_limited", "slow down", retry_after=1.5)
        return "ok"

    assert await with_retries(flaky, RetryPolicy(attempts=5), sleep=sleep) == "ok"
    assert slept == [1.5, 1.5] and len(calls) == 3

    async def fatal() -> str:
        calls.append(1)
        raise ModelError("auth", "bad key")

    calls.clear()
    with pytest.raises(ModelError, match="^bad key$"):
        await with_retries(fatal, RetryPolicy(attempts=5), sleep=sleep)
    assert len(calls) == 1

    async def always() -> str:
        raise ModelError("server", "HTTP 500")

    with pytest.raises(ModelError, match=r"HTTP 500 \(gave up after 3 attempts\)"):
        await with_retries(always, RetryPolicy(attempts=3), sleep=sleep)


def test_spec_labels_and_json_round_trip() -> None:
    spec = ModelSpec("openai", "qwen", "http://127.0.0.1:8000/v1", "completions")
    assert spec.label == "qwen @ 127.0.0.1:8000 (openai/completions)"
    assert ModelSpec("replay", "codellama", path="/x/g.json").label == "codellama (replay)"
    assert ModelSpec.from_json(spec.to_json()) == spec
    with pytest.raises(ModelError, match="unknown backend 'tgi'"):
        ModelSpec("tgi", "m")
