"""The vLLM adapter without vLLM: parameter mapping, the one batched call, and the messages a user
gets when vLLM or a GPU is missing. A stand-in `vllm` module records what the adapter calls; the
real engine is untested here (no GPU), as the README says."""

from __future__ import annotations

import sys
import types
from dataclasses import dataclass, field
from typing import Any

import pytest

from cruxtui.core.data.dataset import Sample
from cruxtui.core.models import ModelError, ModelSpec, SamplingParams, generate_one, make_backend
from cruxtui.core.models.prompts import build_prompt
from cruxtui.core.models.vllm_offline import (
    VllmBackend,
    check_gpu,
    import_vllm,
    vllm_sampling_kwargs,
)

SAMPLES = [Sample(f"s{i}", f"def f(x):\n    return x + {i}", "1", str(1 + i)) for i in range(3)]


def test_mapping_of_every_parameter() -> None:
    params = SamplingParams(temperature=0.8, top_p=0.9, max_tokens=300, n=5, seed=7, stop=None)
    kwargs = vllm_sampling_kwargs(params, ["[/ANSWER]", "\n[PYTHON]"])
    assert kwargs == {
        "n": 5,
        "temperature": 0.8,
        "top_p": 0.9,
        "max_tokens": 300,
        "seed": 7,
        "stop": ["[/ANSWER]", "\n[PYTHON]"],
    }


def test_greedy_and_unseeded() -> None:
    kwargs = vllm_sampling_kwargs(SamplingParams(temperature=0.0, top_p=0.5, seed=None), [])
    assert kwargs["temperature"] == 0.0 and kwargs["top_p"] == 1.0  # top_p is moot when greedy
    assert "seed" not in kwargs and kwargs["stop"] == [] and kwargs["n"] == 1


@pytest.mark.parametrize(
    ("params", "message"),
    [
        (SamplingParams(max_tokens=0), "max_tokens must be at least 1"),
        (SamplingParams(top_p=0.0), "top_p must be in (0, 1]"),
        (SamplingParams(top_p=1.5), "top_p must be in (0, 1]"),
    ],
)
def test_bad_values_are_refused_before_vllm_sees_them(params: SamplingParams, message: str) -> None:
    with pytest.raises(
        ModelError, match=message.replace("(", r"\(").replace(")", r"\)").replace("[", r"\[")
    ):
        vllm_sampling_kwargs(params, [])


def test_missing_vllm_says_how_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "vllm", None)  # makes `import vllm` fail
    with pytest.raises(ModelError) as info:
        import_vllm()
    assert info.value.kind == "missing_dependency" and info.value.fatal
    assert "pip install 'cruxtui[vllm]'" in str(info.value)


async def test_missing_vllm_surfaces_on_first_use_not_on_creation(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "vllm", None)
    backend = make_backend(ModelSpec("vllm", "Qwen/Qwen2.5-Coder-7B-Instruct"))
    prompt = build_prompt(SAMPLES[0], "output", "direct")
    with pytest.raises(ModelError, match="vLLM is not installed"):
        await generate_one(backend, prompt, SamplingParams())


def test_no_gpu(monkeypatch: pytest.MonkeyPatch) -> None:
    torch = types.SimpleNamespace(cuda=types.SimpleNamespace(is_available=lambda: False))
    monkeypatch.setitem(sys.modules, "torch", torch)
    with pytest.raises(ModelError) as info:
        check_gpu()
    assert info.value.kind == "no_gpu" and "needs a CUDA GPU" in str(info.value)
    assert "--base-url" in str(info.value)


# ------------------------------------------------------------------ a stand-in engine


@dataclass
class _Choice:
    text: str
    finish_reason: str = "stop"
    token_ids: list[int] = field(default_factory=lambda: [1, 2, 3])


@dataclass
class _RequestOutput:
    prompt_token_ids: list[int]
    outputs: list[_Choice]


class _FakeSamplingParams:
    def __init__(self, **kwargs: Any) -> None:
        self.kwargs = kwargs


class _FakeLLM:
    instances: list[_FakeLLM] = []

    def __init__(self, model: str, **engine_args: Any) -> None:
        self.model, self.engine_args = model, engine_args
        self.calls: list[tuple[str, list[Any], Any]] = []
        _FakeLLM.instances.append(self)

    def _answer(self, items: list[Any], sampling: _FakeSamplingParams) -> list[_RequestOutput]:
        n = sampling.kwargs["n"]
        return [
            _RequestOutput([0] * 10, [_Choice(f"answer {i}.{k}") for k in range(n)])
            for i in range(len(items))
        ]

    def generate(
        self, prompts: list[str], sampling: _FakeSamplingParams, use_tqdm: bool = True
    ) -> list[_RequestOutput]:
        self.calls.append(("generate", prompts, sampling))
        return self._answer(prompts, sampling)

    def chat(
        self, conversations: list[Any], sampling: _FakeSamplingParams, use_tqdm: bool = True
    ) -> list[_RequestOutput]:
        self.calls.append(("chat", conversations, sampling))
        return self._answer(conversations, sampling)


@pytest.fixture
def fake_vllm(monkeypatch: pytest.MonkeyPatch) -> type[_FakeLLM]:
    _FakeLLM.instances = []
    module = types.ModuleType("vllm")
    module.LLM = _FakeLLM  # type: ignore[attr-defined]
    module.SamplingParams = _FakeSamplingParams  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "vllm", module)
    torch = types.SimpleNamespace(cuda=types.SimpleNamespace(is_available=lambda: True))
    monkeypatch.setitem(sys.modules, "torch", torch)
    return _FakeLLM


@pytest.mark.parametrize("api", ["completions", "chat"])
def test_one_batched_call_for_all_prompts(fake_vllm: type[_FakeLLM], api: str) -> None:
    backend = VllmBackend(ModelSpec("vllm", "some/model", api=api), tensor_parallel_size=2)
    style = "chat" if api == "chat" else "completion"
    prompts = [build_prompt(s, "output", "cot", style) for s in SAMPLES]
    params = SamplingParams(temperature=0.2, n=2, max_tokens=100, seed=3)
    results = backend.generate_batch(prompts, params)

    [llm] = fake_vllm.instances
    assert llm.model == "some/model" and llm.engine_args == {"tensor_parallel_size": 2}
    [(method, items, sampling)] = llm.calls  # ONE call for the whole batch
    if api == "chat":
        assert method == "chat" and items == [p.messages for p in prompts]
    else:
        assert method == "generate" and items == [p.text for p in prompts]
    assert sampling.kwargs == vllm_sampling_kwargs(params, list(prompts[0].stop))
    assert [[c.text for c in r] for r in results] == [
        [f"answer {i}.0", f"answer {i}.1"] for i in range(3)
    ]
    assert all(
        c.tokens_in == 10 and c.tokens_out == 3 and c.finish_reason == "stop"
        for r in results
        for c in r
    )


async def test_async_protocol_over_the_engine(fake_vllm: type[_FakeLLM]) -> None:
    backend = make_backend(ModelSpec("vllm", "some/model", api="completions"))
    prompt = build_prompt(SAMPLES[0], "input", "direct", "completion")
    completions = await backend.complete(prompt, SamplingParams(n=3))
    assert [c.text for c in completions] == ["answer 0.0", "answer 0.1", "answer 0.2"]
    chunks: list[str] = []
    one = await generate_one(backend, prompt, SamplingParams(n=3), chunks.append)
    assert chunks == ["answer 0.0"] and one.text == "answer 0.0"  # stream = one completion
    assert fake_vllm.instances[0].calls[-1][2].kwargs["n"] == 1
    assert len(fake_vllm.instances) == 1  # the engine is loaded once and kept


def test_engine_start_failure_is_a_clear_message(
    fake_vllm: type[_FakeLLM], monkeypatch: pytest.MonkeyPatch
) -> None:
    def boom(model: str, **kw: Any) -> None:
        raise RuntimeError("CUDA out of memory")

    monkeypatch.setattr(sys.modules["vllm"], "LLM", boom)
    backend = VllmBackend(ModelSpec("vllm", "big/model"))
    with pytest.raises(ModelError, match="vLLM could not load 'big/model': CUDA out of memory"):
        backend.generate_batch([build_prompt(SAMPLES[0], "output", "direct")], SamplingParams())
