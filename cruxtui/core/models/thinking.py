"""A reasoning model's thinking, kept apart from its answer.

Thinking reaches cruxtui in two ways:

- a separate field, `reasoning_content` (vLLM's reasoning parsers, DeepSeek, llama.cpp
  `--reasoning-format deepseek`) or `reasoning` (newer vLLM, OpenRouter), per message and per
  stream delta: the backends pass it on as thinking;
- inline in the text, as `<think>...</think>` at the start of the answer (servers without a
  reasoning parser). The block may be unterminated (the model ran out of tokens while thinking),
  and the opening tag may be missing altogether when the chat template already wrote it into the
  prompt (DeepSeek-R1 distillations): then everything before the first `</think>` is thinking.

`split_thinking` does this for a whole text, `ThinkingSplitter` for a stream, chunk by chunk, with
the same result. Answer extraction only ever sees the answer part, so an `[ANSWER]` the model
wrote while thinking is never taken for its answer.
"""

from __future__ import annotations

from dataclasses import dataclass

OPEN = "<think>"
CLOSE = "</think>"


@dataclass(frozen=True)
class Split:
    """A text cut into its thinking (None when there is none) and its answer.

    `open` is True when the thinking never ended (an unterminated `<think>`): the model was still
    thinking when the text stopped."""

    thinking: str | None
    answer: str
    open: bool = False


def split_thinking(text: str) -> Split:
    """The thinking block at the start of `text`, and the rest.

    A `<think>` counts only at the start (after whitespace): a model that mentions the tag in its
    answer is not thinking there. A `</think>` with no opening tag before it ends a block the
    prompt opened."""
    stripped = text.lstrip()
    if stripped.startswith(OPEN):
        body = stripped[len(OPEN) :]
        inside, closed, after = body.partition(CLOSE)
        if not closed:
            return Split(inside, "", open=True)
        return Split(inside, after)
    before, closed, after = text.partition(CLOSE)
    if closed:
        return Split(before, after)
    return Split(None, text)


def chain_of_thought(thinking: str | None, answer: str) -> str:
    """The whole reasoning of a response, to align with a trace or to show: the thinking (in its
    tags, so a reader and `split_thinking` both see where it ends), then the answer text, which
    may reason too ([THOUGHT], a scratchpad)."""
    if not thinking:
        return answer
    return f"{OPEN}\n{thinking.strip()}\n{CLOSE}\n\n{answer.lstrip()}"


def join_thinking(*parts: str | None) -> str | None:
    """Thinking from several sources (a reasoning field, then an inline block), None if none."""
    found = [p for p in parts if p]
    return "\n".join(found) if found else None


@dataclass(frozen=True)
class Piece:
    """One piece of streamed text: answer text, thinking, or (`moved`) the answer text so far,
    which turned out to be thinking when a bare `</think>` arrived."""

    text: str
    thinking: bool = False
    moved: bool = False


class ThinkingSplitter:
    """Split streamed content into thinking and answer as it arrives.

    Text is held back only while it could still be the start of a tag (at most a few characters),
    so the answer and the thinking stream with no visible delay. The result, once `finish()` is
    called, equals `split_thinking` of the whole content."""

    def __init__(self) -> None:
        self._state = "start"  # start -> (thinking | answer); answer may still see a bare close
        self._pending = ""
        self._answer_so_far: list[str] = []
        self.open = False
        """True when the content ended inside a `<think>` block."""

    def feed(self, chunk: str) -> list[Piece]:
        self._pending += chunk
        out: list[Piece] = []
        while True:
            if self._state == "start":
                head = self._pending.lstrip()
                if not head:
                    return out  # only whitespace so far: nothing decided
                if head.startswith(OPEN):
                    self._pending = head[len(OPEN) :]
                    self._state = "thinking"
                    continue
                if OPEN.startswith(head):
                    return out  # could still become `<think>`
                self._state = "answer"
                continue
            if self._state == "thinking":
                before, closed, after = self._pending.partition(CLOSE)
                if closed:
                    if before:
                        out.append(Piece(before, thinking=True))
                    self._pending = after
                    self._state = "done"
                    continue
                keep = _partial_tag(self._pending, CLOSE)
                emit = self._pending[: len(self._pending) - keep]
                self._pending = self._pending[len(emit) :]
                if emit:
                    out.append(Piece(emit, thinking=True))
                return out
            if self._state == "answer":
                before, closed, after = self._pending.partition(CLOSE)
                if closed:
                    if before:
                        self._answer_so_far.append(before)
                    moved = "".join(self._answer_so_far)
                    out.append(Piece(moved, thinking=True, moved=True))
                    self._answer_so_far = []
                    self._pending = after
                    self._state = "done"
                    continue
                keep = _partial_tag(self._pending, CLOSE)
                emit = self._pending[: len(self._pending) - keep]
                self._pending = self._pending[len(emit) :]
                if emit:
                    self._answer_so_far.append(emit)
                    out.append(Piece(emit))
                return out
            # done: everything else is answer
            if self._pending:
                out.append(Piece(self._pending))
                self._pending = ""
            return out

    def finish(self) -> list[Piece]:
        """Flush what was held back at the end of the stream."""
        rest, self._pending = self._pending, ""
        self.open = self._state == "thinking"
        if not rest:
            return []
        if self._state == "thinking":
            return [Piece(rest, thinking=True)]
        return [Piece(rest)]


def _partial_tag(text: str, tag: str) -> int:
    """How many characters at the end of `text` could be the beginning of `tag`."""
    for size in range(min(len(tag) - 1, len(text)), 0, -1):
        if tag.startswith(text[-size:]):
            return size
    return 0
