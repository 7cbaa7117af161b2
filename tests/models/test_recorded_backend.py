"""Replay of recorded generations: the benchmark's file format, stored-run mappings, plain lists."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cruxtui.core.data.dataset import Dataset, Sample
from cruxtui.core.models import ModelError, ModelSpec, SamplingParams, generate_one, make_backend
from cruxtui.core.models.prompts import build_prompt
from cruxtui.core.models.recorded import ReplayBackend, load_generations
from cruxtui.core.scoring.answers import extract
from tests.conftest import CODELLAMA_OUTPUT

S0 = Sample("sample_0", "def f(x):\n    return x", "1", "1")
S1 = Sample("sample_1", "def f(x):\n    return x", "2", "2")


async def test_replays_the_real_codellama_file_by_index(official: Dataset) -> None:
    path = CODELLAMA_OUTPUT / "generations.json"
    recorded = json.loads(path.read_text())
    backend = make_backend(ModelSpec("replay", "codellama-7b", path=str(path)))
    sample = official["sample_130"]
    prompt = build_prompt(sample, "output", "direct")
    for index in (9, 0, 5):  # any order: index k is always the k-th recorded text
        got = await generate_one(backend, prompt, SamplingParams(), index=index)
        assert got.text == recorded["sample_130"][index] and got.finish_reason == "stop"
        assert extract(got.text, "output").answer == recorded["sample_130"][index]
    batch = await backend.complete(prompt, SamplingParams(n=10), index=0)
    assert [c.text for c in batch] == recorded["sample_130"]


async def test_without_index_each_sample_advances_on_its_own() -> None:
    backend = ReplayBackend({"sample_0": ["a", "b"], "sample_1": ["x"]})
    p0 = build_prompt(S0, "output", "direct")
    p1 = build_prompt(S1, "output", "direct")
    texts = [(await generate_one(backend, p, SamplingParams())).text for p in (p0, p1, p0, p0)]
    assert texts == ["a", "x", "b", "a"]


async def test_a_list_is_served_for_every_sample() -> None:
    backend = ReplayBackend(["[ANSWER]\nassert f(1) == 1\n[/ANSWER]"], delay=0.01)
    chunks: list[str] = []
    got = await generate_one(
        backend, build_prompt(S1, "output", "direct"), SamplingParams(), chunks.append
    )
    assert len(chunks) > 1 and "".join(chunks) == got.text
    assert got.latency >= 0.01


async def test_unknown_sample_is_a_clear_error() -> None:
    backend = ReplayBackend({"sample_0": ["a"]})
    with pytest.raises(ModelError, match="no recorded generations for sample_1"):
        await backend.complete(build_prompt(S1, "output", "direct"), SamplingParams())


def test_a_list_of_texts_is_served_for_every_sample(tmp_path: Path) -> None:
    path = tmp_path / "texts.json"
    path.write_text(json.dumps(["a", "b"]))
    assert load_generations(path) == {"*": ["a", "b"]}


def test_scored_files_are_accepted(tmp_path: Path) -> None:
    path = tmp_path / "scored.json"
    path.write_text(json.dumps({"raw_generations": {"sample_0": ["1"]}, "pass_at_1": 100.0}))
    assert load_generations(path) == {"sample_0": ["1"]}


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "file not found"),
        ("{", "not valid JSON"),
        ("3", "got a number"),
        ('{"sample_0": "1"}', "entry 'sample_0': expected a list of predictions, got a string"),
        ('{"sample_0": [1]}', "entry 'sample_0'[0]: expected a string, got a number"),
        ('["a", 1]', "expected a JSON object of sample id -> list of predictions, got a list"),
        ("{}", "has no samples"),
    ],
)
def test_bad_files_are_explained(tmp_path: Path, content: str | None, message: str) -> None:
    path = tmp_path / "g.json"
    if content is not None:
        path.write_text(content)
    with pytest.raises(ModelError) as info:
        load_generations(path)
    assert message in str(info.value) and str(path) in str(info.value)
    assert info.value.kind == "replay"
