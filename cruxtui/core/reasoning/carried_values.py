"""Follow a carried wrong value back to where it first appears.

After a slip a chain carries the wrong value on: a later claim, often the final answer, states
it and is contradicted, while the sentence that introduced it was not read as a claim (its
subject was not named, or its words fit no pattern). When a contradicted claim states a value
the program never computes anywhere (no variable at any step, no recorded sub-expression, no
expression the chain names, not f's result, not an argument), the earliest place before it
where the chain's prose states that same value (compared as a Python value) is where the wrong
value entered the chain: a `carried` claim there becomes the first divergence.

Only strings and non-empty containers are followed: a number or a truth value written earlier
is too likely another quantity that happens to be equal. A place counts when the value is
*stated* there: in prose (not code, not a line of f quoted), not in a claim taken back, not in a
hypothetical sentence, not as an argument or index (`f('ab')`, `s['x']`), not as an operand
(`'ab' + 'c'`, `'ab'.upper()`, `x == 'ab'`); for the input task the target output is the
question restated, never followed. The rule only ever moves an existing divergence earlier, so
it cannot raise one on a chain that has none.
"""

from __future__ import annotations

import re

from cruxtui.core.reasoning.claim_judge import CONTRADICTED, Judgement, is_hypothetical
from cruxtui.core.reasoning.claim_types import CARRIED, EMPTY, Chain, Claim
from cruxtui.core.reasoning.code_spans import blank
from cruxtui.core.reasoning.final_answer import blank_think_tags
from cruxtui.core.reasoning.literal_scan import OPAQUE, literal_value, scan_literal, value_key
from cruxtui.core.reasoning.run_values import RunValues

_STARTS = frozenset("'\"[({")
_OPERATORS = frozenset("+-*/%<>=!&|^~@")


def carry_back(
    chain: Chain,
    run_values: RunValues,
    judgements: list[Judgement],
    positions: list[int | None],
    target: str | None = None,
) -> list[Judgement]:
    """The judgements, with a `carried` contradiction where each never-computed value that a
    contradicted claim states first appears, when that is earlier than the claim."""
    if chain.format != "prose":
        return judgements
    masked = blank(blank_think_tags(chain.text), chain.code_spans)
    taken_back = [(c.start, c.end) for c in chain.claims if c.retracted]
    flagged = [(j.claim.start, j.claim.end) for j in judgements if j.verdict == CONTRADICTED]
    added: list[Judgement] = []
    done: set[object] = set()
    for j in judgements:
        if j.verdict != CONTRADICTED or j.claim.kind == CARRIED:
            continue
        want = _followed(j.claim.value, run_values, target)
        if want is None or want in done:
            continue
        done.add(want)
        for s, e in _stated(masked, want, 0, j.claim.start, len(j.claim.value)):
            if any(a <= s < b for a, b in taken_back) or _in_code_comment(chain.text, masked, s):
                continue
            step = next((st for st in chain.steps if st.start <= s < st.end), None)
            if step is None or is_hypothetical(step.text):
                continue
            if any(a < e and s < b for a, b in flagged):
                break  # already contradicted there: nothing earlier to show
            s = _clause_start(masked, step.start, s)
            claim = Claim(CARRIED, chain.text[s:e].strip(), j.claim.value, start=s, end=e)
            step.claims.append(claim)
            step.claims.sort(key=lambda c: c.start)
            added.append(
                Judgement(
                    step.index,
                    claim,
                    CONTRADICTED,
                    positions[step.index] if step.index < len(positions) else None,
                    None,
                    f"{j.claim.value} first appears here; the program never computes it "
                    f"(carried on to {j.claim.text!r}, where the run has {j.true_value})",
                )
            )
            flagged.append((s, e))
            break
    if not added:
        return judgements
    return sorted([*judgements, *added], key=lambda j: (j.step, j.claim.start))


def _in_code_comment(text: str, masked: str, i: int) -> bool:
    """Is text[i] in a comment on a line of code (`return ' '.join(r)  # '2 5'`)? The comment is
    the chain's words, but a value carried from there is shown in code: not a place to send a
    reader to as where the slip entered."""
    line_start = text.rfind("\n", 0, i) + 1
    hash_at = text.rfind("#", line_start, i)
    if hash_at < 0:
        return False
    return bool(text[line_start:hash_at].strip()) and not masked[line_start:hash_at].strip()


def _clause_start(text: str, lo: int, at: int) -> int:
    """Where the clause stating the value at `at` begins: its words belong to the claim ("which
    puts 2 after the 1: [1, 2, 2]")."""
    k = at
    while k > lo:
        c = text[k - 1]
        if c in ",;\n" or (c in ".!?" and text[k : k + 1].isspace()):
            break
        k -= 1
    while k < at and text[k].isspace():
        k += 1
    bullet = re.match(r"(?:[-*+•]|\d+[.)])\s+", text[k:at])
    return k + bullet.end() if bullet else k


def _followed(value: str, run_values: RunValues, target: str | None) -> object | None:
    """The value key to follow back, or None: a string or non-empty container that nothing in
    the run held (and, for the input task, not the target output nor a part of it: that is the
    question restated)."""
    if value == EMPTY:
        return None
    obj = literal_value(value)
    if not isinstance(obj, str | list | tuple | dict | set | frozenset) or len(obj) == 0:
        return None
    want = value_key(value)
    if want is OPAQUE or run_values.held(want):
        return None
    if target is not None and _piece_of(obj, literal_value(target)):
        return None
    return want


def _piece_of(obj: object, target: object) -> bool:
    """Is `obj` the target output or a piece of it (a member, a substring, a run of items)? The
    input task reasons backwards from the target, taking it apart: its pieces are the question."""
    if isinstance(obj, str) and isinstance(target, str):
        return obj in target
    if isinstance(obj, list | tuple) and isinstance(target, list | tuple) and obj:
        items, n = list(obj), len(obj)
        if any(list(target[i : i + n]) == items for i in range(len(target) - n + 1)):
            return True
    return value_key(repr(obj)) in _parts(target)


def _parts(obj: object) -> set[object]:
    """The value keys of a value and of everything inside it (keys, items, members)."""
    out: set[object] = set()
    todo = [obj]
    while todo and len(out) < 10_000:
        x = todo.pop()
        key = value_key(repr(x))
        if key is not OPAQUE:
            out.add(key)
        if isinstance(x, dict):
            todo += [*x.keys(), *x.values()]
        elif isinstance(x, list | tuple | set | frozenset):
            todo += list(x)
    return out


def _stated(text: str, want: object, lo: int, hi: int, size: int) -> list[tuple[int, int]]:
    """Where in text[lo:hi] a literal equal to `want` (written in about `size` characters) is
    stated (see the module doc). A literal is read within a window a few times its size, so
    unbalanced brackets in untrusted text cost linear time, not quadratic."""
    found: list[tuple[int, int]] = []
    window = 4 * size + 64
    i = lo
    while i < hi:
        c = text[i]
        starts = c in _STARTS or (c in "bBrRuU" and text[i + 1 : i + 2] in ("'", '"'))
        if not starts or (i > 0 and (text[i - 1].isalnum() or text[i - 1] == "_")):
            i += 1
            continue
        got = scan_literal(text[i : min(hi, i + window)], 0)
        if got is None:
            i += 1
            continue
        end, lit = got[0] + i, got[1]
        if end <= hi and value_key(lit) == want and _stands_alone(text, i, end):
            found.append((i, end))
        i = end
    return found


def _stands_alone(text: str, start: int, end: int) -> bool:
    """Is the literal at text[start:end] stated as a value, not an argument, index or operand?"""
    if _inside_call(text, start):
        return False
    j = start - 1
    while j >= 0 and text[j] in " \t`":
        j -= 1
    before = text[j] if j >= 0 else ""
    if before in _OPERATORS:
        arrow = text[max(j - 1, 0) : j + 1] in ("->", "=>")
        plain_equals = before == "=" and (j == 0 or text[j - 1] not in "=<>!")
        if not (arrow or plain_equals):
            return False
    k = end
    while k < len(text) and text[k] in " \t`":
        k += 1
    after = text[k : k + 2]
    if after[:1] in ("(", "["):
        return False
    if after[:1] == "." and after[1:2].isidentifier():
        return False  # 'ab'.upper()
    return not (after[:1] in _OPERATORS and after not in ("->", "=>"))


def _inside_call(text: str, i: int) -> bool:
    """Is text[i] inside the brackets of a call or a subscript (`f(`, `s[`) on its line?"""
    line_start = text.rfind("\n", 0, i) + 1
    stack: list[int] = []
    j = line_start
    while j < i:
        c = text[j]
        if c in "'\"":
            close = _string_end(text, j, i)
            if close is None:
                break
            j = close
            continue
        if c in "([{":
            stack.append(j)
        elif c in ")]}" and stack:
            stack.pop()
        j += 1
    return any(k > 0 and (text[k - 1].isalnum() or text[k - 1] in "_)]") for k in stack)


def _string_end(text: str, j: int, limit: int) -> int | None:
    q = text[j]
    k = j + 1
    while k < limit:
        if text[k] == "\\":
            k += 2
            continue
        if text[k] == q:
            return k + 1
        k += 1
    return None
