"""Pull the answer out of a model's raw text, and say why when there is none.

Two modes:

- ``strict`` (ours): find the assertion the model meant — inside ``[ANSWER]`` tags (closing tag
  optional, since the stop sequence usually eats it), else in a code fence, else an ``assert f(``
  line in prose, else a bare expression — and split it with `ast`, so an answer that itself
  contains ``==`` or the word ``assert`` inside a string survives intact.
- ``official``: the benchmark's own string rules (facebookresearch/cruxeval, ``inference/tasks``):
  the generation ends at the first ``[/ANSWER]`` (their stop word), the text after the first
  ``[ANSWER]`` is kept if there is one, then for the output task the part between the first and
  second ``==``; for the input task the part before the first ``==``, then the part between the
  first and second ``assert``. Scores computed with it are comparable with the paper's. (The
  paper's separate OpenAI script differs in one case: a chain of thought without ``[ANSWER]``
  keeps only its last line there; here, as in ``inference/tasks``, the whole text.)

For the output task the answer is the value expression (``[1, 2]``) of an assertion about
``f(...)`` (an ``assert len(xs) == 0`` about a helper the model wrote is no answer); for the input
task the call (``f(1, 2)``). Either way, a reasoning model's thinking (a ``<think>`` block) is cut
off first: an answer is never taken from inside the thinking.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

from cruxtui.core.models.prompts import ANSWER_CLOSE, ANSWER_OPEN
from cruxtui.core.models.thinking import split_thinking
from cruxtui.core.util import safe_ast

EXTRACTION_MODES: tuple[str, ...] = ("strict", "official")

_OPEN_FENCE = re.compile(r"[ \t]*(`{3,})[ \t]*[\w+.-]*[ \t]*")
_ASSERT = re.compile(r"\bassert\b")


def _fences(text: str) -> list[str]:
    """The contents of the fenced code blocks in `text`, in order.

    Read line by line as Markdown does: a block opens on a line of three or more backticks with
    an optional language, and closes on a line of at least as many backticks and nothing else,
    so a closing fence is never taken for the opening of the next block. A block still open at
    the end runs to the end (the stop sequence often eats the last fence)."""
    blocks: list[str] = []
    current: list[str] | None = None
    ticks = ""
    for line in text.split("\n"):
        if current is None:
            opened = _OPEN_FENCE.fullmatch(line)
            if opened:
                current, ticks = [], opened.group(1)
            continue
        stripped = line.strip()
        if stripped.startswith(ticks) and not stripped.strip("`"):
            blocks.append("\n".join(current))
            current = None
            continue
        current.append(line)
    if current is not None:
        blocks.append("\n".join(current))
    return blocks


@dataclass(frozen=True)
class Extraction:
    """The extracted answer (None when there is none) and, either way, a reason for people:
    where the answer was found, or why nothing usable was."""

    answer: str | None
    reason: str

    @property
    def ok(self) -> bool:
        return self.answer is not None


def extract(raw: str, task: str, mode: str = "strict") -> Extraction:
    """The answer in `raw` for `task` ("output" or "input") under `mode` ("strict"/"official")."""
    if task not in ("output", "input"):
        raise ValueError(f"unknown task {task!r} (expected output or input)")
    raw = split_thinking(raw).answer
    if mode == "strict":
        return _strict(raw, task)
    if mode == "official":
        return _official(raw, task)
    raise ValueError(f"unknown extraction mode {mode!r} (expected strict or official)")


# --------------------------------------------------------------------------- official rules


def _official(raw: str, task: str) -> Extraction:
    gen = raw.split(ANSWER_CLOSE)[0]
    if ANSWER_OPEN in gen:
        gen = gen.split(ANSWER_OPEN)[1].strip()
    if task == "output":
        if "==" in gen:
            gen = gen.split("==")[1].strip()
    else:
        if "==" in gen:
            gen = gen.split("==")[0].strip()
        if "assert" in gen:
            gen = gen.split("assert")[1].strip()
    gen = gen.strip()
    if not gen:
        return Extraction(None, "nothing left after the benchmark's extraction rules")
    return Extraction(gen, "benchmark's extraction rules")


# --------------------------------------------------------------------------- strict


def _strict(raw: str, task: str) -> Extraction:
    text = raw.replace("\r\n", "\n").strip()
    if not text:
        return Extraction(
            None, "empty response (no answer after the thinking)" if raw else "empty response"
        )

    region, where = _answer_region(text)
    if region is not None:
        result = _from_region(region, task)
        if result.ok or where.startswith("[ANSWER]"):
            return Extraction(result.answer, f"{result.reason} ({where})")

    for block in reversed(_fences(text)):
        if _ASSERT.search(block):
            result = _from_region(block, task)
            if result.ok:
                return Extraction(result.answer, f"{result.reason} (code fence)")

    asserts = list(_ASSERT.finditer(text))
    for match in reversed(asserts):
        result = _parse_assert_at(text, match.start(), task)
        if result.ok:
            return Extraction(result.answer, f"{result.reason} (assertion outside tags)")

    bare = _bare(text, task)
    if bare.ok:
        return bare
    for block in reversed(_fences(text)):
        fenced = _bare(block, task)
        if fenced.ok:
            return Extraction(fenced.answer, f"{fenced.reason} (code fence)")
    if asserts:
        # Report why the last assert failed: it is the most likely intended answer.
        last = _parse_assert_at(text, asserts[-1].start(), task)
        return Extraction(None, last.reason)
    if region is not None:
        return Extraction(None, f"{_from_region(region, task).reason} ({where})")
    return Extraction(None, f"no [ANSWER] tags and no assertion; {bare.reason}")


def _answer_region(text: str) -> tuple[str | None, str]:
    """The text inside the first [ANSWER] block, and a note on how the block was delimited."""
    if ANSWER_OPEN in text:
        after = text.split(ANSWER_OPEN, 1)[1]
        if ANSWER_CLOSE in after:
            return after.split(ANSWER_CLOSE, 1)[0], "[ANSWER] tags"
        return after, "[ANSWER] tag without [/ANSWER]"
    if ANSWER_CLOSE in text:
        # A completion prompt that ended with "[ANSWER]\n" leaves only the closing tag.
        return text.split(ANSWER_CLOSE, 1)[0], "text before [/ANSWER]"
    return None, ""


def _from_region(region: str, task: str) -> Extraction:
    """The answer inside an answer block: an assertion, or a bare value / call."""
    inner = region.strip()
    fences = _fences(inner)
    if fences:
        inner = fences[0].strip()
    inner = inner.strip("`").strip()
    if not inner:
        return Extraction(None, "the answer block is empty")
    first: Extraction | None = None
    for match in _ASSERT.finditer(inner):
        result = _parse_assert_at(inner, match.start(), task)
        if result.ok:
            return result
        first = first or result
    if first is not None:
        return first
    return _bare(inner, task)


def _parse_assert_at(text: str, start: int, task: str) -> Extraction:
    """Parse the assert statement starting at `start`, taking as many lines as form valid Python.

    Inline code in prose (`` `assert f(1) == 2` ``) ends at the closing backtick, and a sentence
    may end with a full stop right after the assertion.
    """
    rest = text[start:]
    if start > 0 and text[start - 1] == "`" and "`" in rest:
        rest = rest.split("`", 1)[0]
    lines = rest.split("\n")
    first_error = "the assertion does not parse"
    for end in range(len(lines), 0, -1):
        chunk = "\n".join(lines[:end]).strip().rstrip("`").strip()
        for candidate in (chunk, chunk[:-1]) if chunk.endswith(".") else (chunk,):
            stmt, error = _parse_statement(candidate)
            if end == 1 and error:
                first_error = f"the assertion does not parse ({error})"
            if isinstance(stmt, ast.Assert):
                return _split_assert(stmt, candidate, task)
    if "??" in lines[0]:
        return Extraction(None, "the assertion still contains the ?? placeholder")
    return Extraction(None, first_error)


def _parse_statement(source: str) -> tuple[ast.stmt | None, str]:
    """The first statement of `source`, or None and the parser's complaint."""
    try:
        tree = safe_ast.parse(source)
    except SyntaxError as exc:
        return None, exc.msg
    except (ValueError, RecursionError, MemoryError) as exc:
        return None, type(exc).__name__
    return (tree.body[0] if tree.body else None), ""


def _split_assert(stmt: ast.Assert, source: str, task: str) -> Extraction:
    test = stmt.test
    if not isinstance(test, ast.Compare) or not test.ops or not isinstance(test.ops[0], ast.Eq):
        return Extraction(None, "the assertion is not of the form f(...) == value")
    if len(test.ops) > 1:
        return Extraction(None, "the assertion chains several comparisons")
    if task == "output":
        if not _is_call_to_f(test.left):
            left = ast.get_source_segment(source, test.left) or ""
            return Extraction(
                None, f"the assertion is not about f(...): {' '.join(left.split())[:60]}"
            )
        value = _right_of_eq(source, test)
        if value is None:
            return Extraction(None, "could not locate the asserted value")
        return Extraction(value, "assertion")
    call = ast.get_source_segment(source, test.left)
    if call is None:
        return Extraction(None, "could not locate the call")
    if not _is_call_to_f(test.left):
        return Extraction(None, f"left of == is not a call to f: {call.strip()[:60]}")
    return Extraction(call.strip(), "assertion")


def _right_of_eq(source: str, compare: ast.Compare) -> str | None:
    """The source right of `==`, parentheses included: `ast.get_source_segment` of the comparator
    would drop them and turn `f(1) == (1 == 1)` into a chained comparison."""
    lines = source.splitlines(keepends=True)
    left = compare.left
    if left.end_lineno is None or left.end_col_offset is None or compare.end_lineno is None:
        return None
    start = _offset(lines, left.end_lineno, left.end_col_offset)
    end = _offset(lines, compare.end_lineno, compare.end_col_offset or 0)
    rest = source[start:end].lstrip()
    while rest.startswith(")"):  # the left side itself was parenthesised: `(f(1)) == 2`
        rest = rest[1:].lstrip()
    return rest.removeprefix("==").strip() or None


def _offset(lines: list[str], lineno: int, col: int) -> int:
    """Character offset of an ast position (1-based line, UTF-8 byte column)."""
    before = sum(len(line) for line in lines[: lineno - 1])
    return before + len(lines[lineno - 1].encode()[:col].decode(errors="ignore"))


def _is_call_to_f(node: ast.expr) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "f"


def _bare(text: str, task: str) -> Extraction:
    """A response that is just the answer: a value (output task) or `f(...)` (input task).

    Also accepts `f(...) == value` without the `assert`. Benchmark generation files hold answers
    in exactly this already-extracted form, so replayed generations go through here.
    """
    candidate = text.strip().strip("`").strip()
    try:
        node = safe_ast.parse(candidate, mode="eval").body
    except SyntaxError as exc:
        return Extraction(None, f"the text is not a Python expression ({exc.msg})")
    except (ValueError, RecursionError, MemoryError) as exc:
        return Extraction(None, f"the text is not a Python expression ({type(exc).__name__})")
    if isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], ast.Eq):
        if not _is_call_to_f(node.left):
            return Extraction(None, "left of == is not a call to f")
        segment = (
            ast.get_source_segment(candidate, node.left)
            if task == "input"
            else _right_of_eq(candidate, node)
        )
        return Extraction(segment.strip() if segment else None, "comparison without assert")
    if isinstance(node, ast.Name):
        return Extraction(None, f"the response is a bare name ({node.id}), not an answer")
    if task == "input":
        if _is_call_to_f(node):
            return Extraction(candidate, "bare call")
        return Extraction(None, "the response is not a call to f")
    return Extraction(candidate, "bare value")
