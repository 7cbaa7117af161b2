"""A reasoning model's thinking, in every shape servers send it, kept apart from the answer."""

from __future__ import annotations

import asyncio

import pytest

from cruxtui.core.models import SamplingParams, generate_one
from cruxtui.core.models.backend import ModelSpec
from cruxtui.core.models.openai_compat import OpenAICompatBackend
from cruxtui.core.models.prompts import Prompt
from cruxtui.core.models.thinking import ThinkingSplitter, split_thinking
from cruxtui.testing.fake_openai import FakeOpenAI, constant

ANSWER = "[ANSWER]\nassert f(21) == 42\n[/ANSWER]"
THOUGHT = "f doubles its argument.\n[ANSWER]\nassert f(21) == 0\n[/ANSWER] no, 21 * 2 is 42."


def prompt_for(api: str) -> Prompt:
    return Prompt(
        task="output",
        mode="direct",
        style="chat" if api == "chat" else "completion",
        sample_id="sample_0",
        messages=[{"role": "user", "content": "What is f(21)?"}],
        text="What is f(21)?\n",
        stop=(),
    )


def backend(server: FakeOpenAI, api: str = "chat") -> OpenAICompatBackend:
    return OpenAICompatBackend(ModelSpec("openai", "fake-model", server.url, api), timeout=5)


@pytest.mark.parametrize(
    ("text", "thinking", "answer", "still_open"),
    [
        ("<think>\nhmm\n</think>\n\nA", "\nhmm\n", "\n\nA", False),
        ("  <think>hmm</think>A", "hmm", "A", False),
        ("<think>\nstill going", "\nstill going", "", True),
        ("hmm, f doubles\n</think>\nA", "hmm, f doubles\n", "\nA", False),  # template opened it
        ("no thinking at all", None, "no thinking at all", False),
        ("A mentions <think> later", None, "A mentions <think> later", False),
    ],
)
def test_split_thinking_and_the_streamed_split_agree(
    text: str, thinking: str | None, answer: str, still_open: bool
) -> None:
    split = split_thinking(text)
    assert (split.thinking, split.answer, split.open) == (thinking, answer, still_open)
    for size in (1, 2, 3, 7):  # tags cut across chunks at every position
        splitter = ThinkingSplitter()
        pieces = []
        for start in range(0, len(text), size):
            pieces += splitter.feed(text[start : start + size])
        pieces += splitter.finish()
        streamed_answer: list[str] = []
        streamed_thinking: list[str] = []
        for piece in pieces:
            if piece.moved:
                streamed_answer.clear()
            (streamed_thinking if piece.thinking else streamed_answer).append(piece.text)
        assert "".join(streamed_answer) == answer
        assert ("".join(streamed_thinking) or None) == (thinking or None)
        assert splitter.open == still_open


@pytest.mark.parametrize("style", ["reasoning_content", "reasoning", "inline", "bare"])
@pytest.mark.parametrize("streamed", [False, True])
async def test_every_field_shape_gives_the_thinking_apart(style: str, streamed: bool) -> None:
    with FakeOpenAI(constant(ANSWER), think=THOUGHT, think_style=style, chunk_chars=5) as srv:
        b = backend(srv)
        seen: list[tuple[str, bool]] = []
        if streamed:
            comp = await generate_one(
                b,
                prompt_for("chat"),
                SamplingParams(max_tokens=500, stop=()),
                on_thinking=lambda text, moved: seen.append((text, moved)),
            )
        else:
            [comp] = await b.complete(prompt_for("chat"), SamplingParams(max_tokens=500, stop=()))
        await b.aclose()
    assert comp.reasoning is not None and comp.reasoning.strip() == THOUGHT
    assert comp.text.strip() == ANSWER
    assert "<think>" not in comp.text and "</think>" not in comp.text
    if streamed:
        assert seen, "thinking was streamed to its own callback"
        assert any(moved for _, moved in seen) == (style == "bare")


async def test_completions_api_with_inline_thinking() -> None:
    with FakeOpenAI(constant(ANSWER), think=THOUGHT, think_style="inline") as srv:
        b = backend(srv, "completions")
        [comp] = await b.complete(prompt_for("completions"), SamplingParams(stop=()))
        streamed = await generate_one(b, prompt_for("completions"), SamplingParams(stop=()))
        await b.aclose()
    for c in (comp, streamed):
        assert c.reasoning is not None and c.reasoning.strip() == THOUGHT
        assert c.text.strip() == ANSWER


@pytest.mark.parametrize("style", ["reasoning_content", "inline"])
async def test_a_budget_spent_thinking_is_truncated_while_thinking(style: str) -> None:
    with FakeOpenAI(constant(ANSWER), think="x" * 400, think_style=style) as srv:
        b = backend(srv)
        [whole] = await b.complete(prompt_for("chat"), SamplingParams(max_tokens=20, stop=()))
        streamed = await generate_one(b, prompt_for("chat"), SamplingParams(max_tokens=20))
        await b.aclose()
    for comp in (whole, streamed):
        assert comp.finish_reason == "length"
        assert comp.text.strip() == "" and comp.reasoning
        assert comp.truncated_while_thinking


async def test_thinking_is_never_where_the_answer_comes_from() -> None:
    """The thinking holds a wrong [ANSWER] block; the answer after it is the one extracted."""
    from cruxtui.core.scoring.answers import extract

    inline = f"<think>\n{THOUGHT}\n</think>\n\n{ANSWER}"
    assert extract(inline, "output").answer == "42"
    assert extract(inline, "output", "official").answer == "42"
    unfinished = f"<think>\n{THOUGHT}"
    assert extract(unfinished, "output").answer is None


async def test_streams_fed_slowly_still_split_the_same() -> None:
    """Chunk boundaries inside the tags (one character per chunk) change nothing."""
    with FakeOpenAI(constant(ANSWER), think=THOUGHT, think_style="inline", chunk_chars=1) as srv:
        b = backend(srv)
        comp = await asyncio.wait_for(
            generate_one(b, prompt_for("chat"), SamplingParams(stop=())), 20
        )
        await b.aclose()
    assert comp.reasoning is not None and comp.reasoning.strip() == THOUGHT
    assert comp.text.strip() == ANSWER
