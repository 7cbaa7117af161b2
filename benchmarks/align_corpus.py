"""Corpus of chains of thought with a known first wrong step, built from TRUE traces.

For every sample whose trace finishes, the true execution is narrated as free prose (the events of
`f`'s own frame: arguments, variables that change, condition outcomes, loop iterations, the loop
exit, the return value). From that narration two chains are made:

- a **correct** chain (some steps skipped, as people and models do), and
- a **wrong** chain with ONE injected slip of a kind the CRUXEval paper reports, at a known reasoning
  step: a wrong string concatenation, a wrong comparison outcome, a loop run once too often or once
  too rarely, a wrong idea of a method (removeprefix, rfind, split, ...) or a wrong index. After the
  slip the chain carries its error on (the slipped variable is no longer stated correctly, the final
  answer is wrong).

Prose comes from several *phrasing families* (templates, synonyms, orders, value quoting styles).
Families "A"-"D" were visible while the parser was written; "E" and "F" are held out: they were
written without looking at the parser's patterns and are reported separately, so a parser tuned to
the visible templates shows up as a gap.

Usage: `python benchmarks/align_corpus.py [--out corpus.jsonl] [--seed 0]` (needs the 800 samples at
../shared/data/cruxeval.jsonl or $CRUXTUI_SHARED_DATA).
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import random
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

HELD_OUT = ("E", "F")
FAMILIES = ("A", "B", "C", "D", "E", "F")
ORD = [
    "first",
    "second",
    "third",
    "fourth",
    "fifth",
    "sixth",
    "seventh",
    "eighth",
    "ninth",
    "tenth",
    "eleventh",
    "twelfth",
]
METHODS = (
    "removeprefix",
    "removesuffix",
    "rfind",
    "find",
    "index",
    "rindex",
    "replace",
    "strip",
    "lstrip",
    "rstrip",
    "split",
    "rsplit",
    "partition",
    "rpartition",
    "capitalize",
    "title",
    "swapcase",
    "pop",
    "insert",
    "count",
    "join",
    "center",
    "ljust",
    "rjust",
    "zfill",
    "upper",
    "lower",
    "startswith",
    "endswith",
    "sort",
    "reverse",
    "extend",
    "append",
    "remove",
    "get",
    "setdefault",
    "update",
    "popitem",
    "format",
    "casefold",
    "expandtabs",
    "translate",
)


def shared_data() -> Path:
    return Path(os.environ.get("CRUXTUI_SHARED_DATA") or REPO.parent / "shared" / "data")


# --------------------------------------------------------------------------- events of the true run


@dataclass
class Event:
    kind: str  # call | bind | cond | iter | exit | return
    line: int | None = None
    name: str | None = None
    value: Any = None  # a Python object for bind/call/return, bool for cond, int for iter
    src: str = ""  # source text of the line / the condition
    shown: str = ""  # condition with variable values substituted
    extra: dict = field(default_factory=dict)


def _lit(text: str) -> Any:
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return _NOLIT


_NOLIT = object()


def events_of(code: str, trace: Any) -> list[Event] | None:
    """The true run as narration events (depth-0 frame only); None if values are not literals."""
    tree = ast.parse(code)
    lines = code.splitlines()
    conds: dict[int, tuple[int, ast.expr]] = {}
    loops: list[ast.For | ast.While] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.If | ast.While) and node.body[0].lineno != node.lineno:
            conds[node.lineno] = (node.body[0].lineno, node.test)
        if isinstance(node, ast.For | ast.While):
            loops.append(node)
    n_loops = sum(isinstance(n, ast.For | ast.While | ast.comprehension) for n in ast.walk(tree))
    single = loops[0] if n_loops == 1 and len(loops) == 1 else None
    steps = [s for s in trace.steps if s.depth == 0]
    out: list[Event] = []
    prev_line: int | None = None
    prev_locals: dict[str, str] = {}
    iters = 0
    for st in steps:
        loc = dict(st.locals)
        if st.event == "call":
            for name, rep in st.locals:
                v = _lit(rep)
                if v is _NOLIT:
                    return None
                out.append(Event("call", name=name, value=v))
            prev_locals = loc
            continue
        if prev_line is not None:
            if prev_line in conds and st.event == "line":
                body, test = conds[prev_line]
                out.append(
                    Event(
                        "cond",
                        line=prev_line,
                        value=st.line == body,
                        src=ast.get_source_segment(code, test) or "",
                        shown=_substitute(test, code, prev_locals),
                    )
                )
            if single is not None and prev_line == single.lineno and st.event == "line":
                if st.line == single.body[0].lineno:
                    iters += 1
                    out.append(Event("iter", line=prev_line, value=iters))
                elif not (single.lineno <= st.line <= (single.end_lineno or 0)):
                    out.append(Event("exit", line=prev_line, value=iters))
            for name in st.changed:
                if name not in loc:
                    continue
                v = _lit(loc[name])
                if v is _NOLIT:
                    return None
                out.append(
                    Event(
                        "bind",
                        line=prev_line,
                        name=name,
                        value=v,
                        src=lines[prev_line - 1].strip() if prev_line <= len(lines) else "",
                    )
                )
        if st.event == "return":
            v = _lit(trace.return_repr)
            if v is _NOLIT:
                return None
            out.append(Event("return", value=v))
        if st.event != "call":
            prev_line = st.line
        prev_locals = loc
    # The iteration event belongs before the loop variable's binding it caused.
    return out


def _substitute(test: ast.expr, code: str, env: dict[str, str]) -> str:
    """`x > 3` with x's value written in, when every name in it is a known variable."""

    class Sub(ast.NodeTransformer):
        ok = True

        def visit_Name(self, node: ast.Name) -> ast.AST:
            if node.id in env and len(env[node.id]) <= 40:
                try:
                    return ast.parse(env[node.id], mode="eval").body
                except SyntaxError:
                    self.ok = False
            return node

    sub = Sub()
    try:
        new = sub.visit(ast.parse(ast.unparse(test), mode="eval"))
        return ast.unparse(new) if sub.ok else ""
    except (SyntaxError, ValueError, RecursionError):
        return ""


# --------------------------------------------------------------------------- phrasing families


def fmt(v: Any, rng: random.Random, fam: str) -> str:
    """A value as the family writes it: repr, double-quoted strings, or in backticks."""
    r = repr(v)
    if isinstance(v, str) and fam in ("B", "E") and '"' not in v and "\\" not in r:
        r = '"' + v + '"'
    if fam in ("C", "F") and rng.random() < 0.5:
        r = f"`{r}`"
    return r


def nm(name: str, fam: str) -> str:
    return f"`{name}`" if fam in ("C", "D", "F") else name


BIND = {
    "A": ["{n} is now {v}.", "{n} becomes {v}.", "So {n} = {v}.", "Now {n} is {v}."],
    "B": [
        "After line {line}, {n} = {v}.",
        "The variable {n} is set to {v}.",
        "We get {n} = {v}.",
        "{n} gets updated to {v}.",
    ],
    "C": [
        "Then {n} becomes {v}.",
        "This makes {n} equal to {v}.",
        "At this point {n} holds {v}.",
        "Executing `{src}` gives {n} = {v}.",
    ],
    "D": ["{n} changes to {v}.", "The new value of {n} is {v}.", "{n} := {v}", "- {n} -> {v}"],
    # held out
    "E": [
        "Running `{src}`, we obtain {n} = {v}.",
        "That leaves {n} as {v}.",
        "Consequently {n} is {v}.",
        "{n} ends up as {v}.",
    ],
    "F": [
        "We update {n}; it now equals {v}.",
        "Value of {n}: {v}.",
        "{n} will be {v} now.",
        "Next, {n} = {v}, per `{src}`.",
    ],
}
CALL = {
    "A": "We call f with {args}.",
    "B": "Initially, {args}.",
    "C": "The function is called with {args}.",
    "D": "Inputs: {args}.",
    "E": "To begin with, {args}.",
    "F": "At the start we have {args}.",
}
COND = {
    "A": ["{shown} is {tv}, so the branch is {taken}.", "The condition `{src}` is {tv}."],
    "B": ["Since {shown} is {tv}, we {enter} the if block.", "Checking {src}: it is {tv}."],
    "C": ["`{src}` evaluates to {tv}.", "{shown} -> {tv}"],
    "D": ["Here {shown} is {tv}.", "The condition is {tvl}, so the body is {taken}."],
    "E": [
        "We test {shown}, which is {tvl}.",
        "Is {src}? That is {tvl}, hence the block is {taken}.",
    ],
    "F": ["{shown} holds as {tv}.", "Since `{src}` comes out {tv}, we {enter} the branch."],
}
ITER = {
    "A": "In the {ord} iteration, {n} = {v}.",
    "B": "Iteration {k}: {n} = {v}.",
    "C": "On the {ord} pass through the loop, {n} is {v}.",
    "D": "{Ord} iteration: {n} is {v}.",
    "E": "For the {ord} round of the loop, {n} takes the value {v}.",
    "F": "Loop iteration #{k}, where {n} is {v}.",
}
EXIT = {
    "A": "After the loop, {n} is {v}.",
    "B": "The loop ends. {n} = {v}.",
    "C": "Once the loop is done, {n} is {v}.",
    "D": "When the loop is over, {n} equals {v}.",
    "E": "At the end of the loop, {n} has the value {v}.",
    "F": "We exit the loop with {n} = {v}.",
}
RETURN = {
    "A": ["The function returns {v}.", "So f returns {v}."],
    "B": ["The return value is {v}.", "Therefore the function returns {v}."],
    "C": ["Finally, `f` returns {v}.", "The output is {v}."],
    "D": ["return {v}", "Thus the final result is {v}."],
    "E": ["Hence the answer is {v}.", "The function will return {v}."],
    "F": [
        "f(...) therefore gives back {v}, so the function returns {v}.",
        "The output of f is {v}.",
    ],
}
# Restating a value that did not change, as chains often do ("count is still 1").
RESTATE = {
    "A": "{n} is still {v}.",
    "B": "{n} remains {v}.",
    "C": "`{n}` stays {v}.",
    "D": "({n} = {v})",
    "E": "{n} keeps the value {v}.",
    "F": "{n} is unchanged at {v}.",
}
INTRO = {
    "A": "Let's execute the code step by step.",
    "B": "We trace the function line by line.",
    "C": "Let me think through what f does.",
    "D": "Step by step:",
    "E": "Walking through the execution:",
    "F": "Let us simulate the program.",
}


@dataclass
class Line:
    text: str
    wrong: bool = False


def render_event(ev: Event, fam: str, rng: random.Random, loopvar: str | None) -> str | None:
    if ev.kind == "bind":
        tpl = rng.choice(BIND[fam])
        if "{src}" in tpl and not ev.src:
            tpl = BIND[fam][0]
        return tpl.format(n=nm(ev.name, fam), v=fmt(ev.value, rng, fam), src=ev.src, line=ev.line)
    if ev.kind == "cond":
        tpl = rng.choice(COND[fam])
        shown = ev.shown or ev.src
        if not shown:
            return None
        tv = str(ev.value)
        return tpl.format(
            shown=shown,
            src=ev.src,
            tv=tv,
            tvl=tv.lower(),
            taken="taken" if ev.value else "skipped",
            enter="enter" if ev.value else "skip",
        )
    if ev.kind == "return":
        return rng.choice(RETURN[fam]).format(v=fmt(ev.value, rng, fam))
    return None


def narrate(
    events: list[Event],
    fam: str,
    rng: random.Random,
    code: str,
    slip: tuple[int, Event] | None = None,
    stop_after_slip: bool = False,
    wrong_return: Any = None,
    skip: float = 0.25,
    carry: str | None = None,
) -> tuple[list[Line], int | None]:
    """Render events to prose lines; `slip` replaces the event at that index by a wrong one."""
    out: list[Line] = [Line(INTRO[fam])]
    call = [e for e in events if e.kind == "call"]
    if call:
        args = ", ".join(f"{nm(e.name, fam)} = {fmt(e.value, rng, fam)}" for e in call)
        out.append(Line(CALL[fam].format(args=args)))
    slip_line: int | None = None
    pending_iter: Event | None = None
    i = 0
    body = [(k, e) for k, e in enumerate(events) if e.kind != "call"]
    state: dict[str, Any] = {e.name: e.value for e in call}
    while i < len(body):
        k, ev = body[i]
        i += 1
        # Before a condition every value of the previous step is known: a safe place to restate one.
        if out and not out[-1].wrong and ev.kind == "cond" and state and rng.random() < 0.3:
            name = rng.choice(sorted(state))
            if not (slip_line is not None and name == carry):
                out.append(Line(RESTATE[fam].format(n=name, v=fmt(state[name], rng, fam))))
        if ev.kind == "bind":
            state[ev.name] = ev.value
        is_slip = slip is not None and k == slip[0]
        if is_slip:
            ev = slip[1]
        after = slip_line is not None
        if after and ev.kind == "bind" and ev.name == carry:
            continue  # the chain carries its mistake: no more true statements about that variable
        if ev.kind == "iter":
            pending_iter = ev
            if is_slip:  # an extra iteration narrated as its own step
                slip_line = len(out)
                out.append(
                    Line(
                        ITER[fam].format(
                            ord=ORD[min(ev.value, 12) - 1],
                            Ord=ORD[min(ev.value, 12) - 1].capitalize(),
                            k=ev.value,
                            n=nm(ev.name, fam),
                            v=fmt(ev.extra["v"], rng, fam),
                        ),
                        wrong=True,
                    )
                )
                if stop_after_slip:
                    break
            continue
        if pending_iter is not None and ev.kind == "bind":
            it = pending_iter
            pending_iter = None
            if it.value <= 12:
                out.append(
                    Line(
                        ITER[fam].format(
                            ord=ORD[it.value - 1],
                            Ord=ORD[it.value - 1].capitalize(),
                            k=it.value,
                            n=nm(ev.name, fam),
                            v=fmt(ev.value, rng, fam),
                        ),
                        wrong=is_slip,
                    )
                )
                if is_slip:
                    slip_line = len(out) - 1
                continue
        if ev.kind == "exit":
            binds = [b for b in ev.extra.get("binds") or [] if not (after and b[0] == carry)]
            if binds:
                n, v = binds[0]
                out.append(Line(EXIT[fam].format(n=nm(n, fam), v=fmt(v, rng, fam)), wrong=is_slip))
                if is_slip:
                    slip_line = len(out) - 1
            if is_slip and stop_after_slip:
                break
            continue
        if ev.kind == "return" and wrong_return is not None and slip_line is not None:
            ev = Event("return", value=wrong_return)
        if not is_slip and ev.kind in ("bind", "cond") and rng.random() < skip:
            continue
        text = render_event(ev, fam, rng, None)
        if text is None:
            if is_slip:
                return out, None
            continue
        out.append(Line(text, wrong=is_slip))
        if is_slip:
            slip_line = len(out) - 1
            if stop_after_slip:
                continue
    # Rare: a family writing two statements per line.
    if fam in ("B", "E") and len(out) > 4 and rng.random() < 0.3:
        j = rng.randrange(2, len(out) - 1)
        if not out[j].wrong and not out[j + 1].wrong:
            out[j] = Line(
                out[j].text.rstrip(".")
                + ", and "
                + out[j + 1].text[0].lower()
                + out[j + 1].text[1:]
            )
            del out[j + 1]
            if slip_line is not None and slip_line > j:
                slip_line -= 1
    return out, slip_line


# --------------------------------------------------------------------------- slips


def perturb(v: Any, rng: random.Random) -> Any:
    """A different value of the same type, as a careless reader would get it."""
    if isinstance(v, bool):
        return not v
    if isinstance(v, int):
        return v + rng.choice([-1, 1, 2])
    if isinstance(v, float):
        return v + 1.0
    if isinstance(v, str):
        if len(v) >= 2 and rng.random() < 0.5:
            return v[1:] if rng.random() < 0.5 else v[:-1]
        return v + (v[-1] if v else "a")
    if isinstance(v, list):
        if len(v) >= 2 and v != v[::-1]:
            return v[::-1]
        return v[:-1] if v else [0]
    if isinstance(v, tuple):
        return tuple(perturb(list(v), rng))
    if isinstance(v, dict):
        if v:
            k = next(iter(v))
            return {**v, k: perturb(v[k], rng)}
        return {0: 0}
    if isinstance(v, set):
        return set(list(v)[:-1]) if v else {0}
    return None


def _methods_in(src: str) -> list[str]:
    return [m for m in METHODS if re.search(r"\." + m + r"\(", src)]


def slips_for(events: list[Event], rng: random.Random) -> list[tuple[str, int, Event, dict]]:
    """Every slip this run allows: (kind, event index, wrong event, narration options)."""
    out: list[tuple[str, int, Event, dict]] = []
    for k, ev in enumerate(events):
        if ev.kind == "bind":
            prev = next(
                (
                    e.value
                    for e in reversed(events[:k])
                    if e.kind in ("bind", "call") and e.name == ev.name
                ),
                None,
            )
            v = ev.value
            if (
                isinstance(v, str)
                and isinstance(prev, str)
                and len(v) > len(prev)
                and (v.startswith(prev) or v.endswith(prev))
            ):
                piece = v[len(prev) :] if v.startswith(prev) else v[: len(v) - len(prev)]
                wrong = piece + prev if v.startswith(prev) else prev + piece
                if wrong == v:
                    wrong = prev + piece + piece[-1:]
                out.append(
                    (
                        "concat",
                        k,
                        Event("bind", ev.line, ev.name, wrong, ev.src),
                        {"carry": ev.name},
                    )
                )
            ms = _methods_in(ev.src)
            if ms:
                w = perturb(v, rng)
                if w is not None and w != v:
                    out.append(
                        (
                            "method:" + ms[0],
                            k,
                            Event("bind", ev.line, ev.name, w, ev.src),
                            {"carry": ev.name},
                        )
                    )
            elif "[" in ev.src and isinstance(v, int | str) and not isinstance(v, bool):
                w = perturb(v, rng)
                if w != v:
                    out.append(
                        ("index", k, Event("bind", ev.line, ev.name, w, ev.src), {"carry": ev.name})
                    )
        if ev.kind == "cond" and (ev.shown or ev.src):
            out.append(
                ("comparison", k, Event("cond", ev.line, None, not ev.value, ev.src, ev.shown), {})
            )
    iters = [k for k, e in enumerate(events) if e.kind == "iter"]
    exits = [k for k, e in enumerate(events) if e.kind == "exit"]
    if iters and exits and len(exits) == 1:
        x = exits[0]
        n_it = len(iters)
        loopvar_bind = next((e for e in events[iters[-1] + 1 :] if e.kind == "bind"), None)
        # Once too often: an iteration that never happened, with a plausible loop value.
        if loopvar_bind is not None and n_it < 12:
            w = perturb(loopvar_bind.value, rng)
            extra = Event("iter", None, loopvar_bind.name, n_it + 1, extra={"v": w})
            out.append(("loop_extra", x, extra, {"stop_after_slip": True}))
        # Once too rarely: the state after n-1 iterations presented as the state after the loop.
        if n_it >= 2:
            changed_last = [e for e in events[iters[-1] : x] if e.kind == "bind"]
            final: dict[str, Any] = {}
            before_last: dict[str, Any] = {}
            for e in events[:x]:
                if e.kind in ("bind", "call"):
                    final[e.name] = e.value
            for e in events[: iters[-1]]:
                if e.kind in ("bind", "call"):
                    before_last[e.name] = e.value
            loopvar = loopvar_bind.name if loopvar_bind else None
            cands = [
                e.name
                for e in changed_last
                if e.name != loopvar
                and e.name in before_last
                and before_last[e.name] != final[e.name]
            ]
            if cands:
                n = cands[-1]
                ev = Event("exit", events[x].line, extra={"binds": [(n, before_last[n])]})
                out.append(
                    (
                        "loop_short",
                        x,
                        ev,
                        {"stop_after_slip": True, "drop_last_iteration": iters[-1]},
                    )
                )
    return out


def chains_for(sample: Any, trace: Any, rng: random.Random) -> list[dict]:
    events = events_of(sample.code, trace)
    if not events or not any(e.kind == "return" for e in events):
        return []
    # Narrate the exit with the variable the loop built (the last one bound inside the loop).
    for k, e in enumerate(events):
        if e.kind == "exit":
            state: dict[str, Any] = {}
            for p in events[:k]:
                if p.kind in ("bind", "call"):
                    state[p.name] = p.value
            inside = [p.name for p in events[:k] if p.kind == "bind"]
            if inside:
                e.extra["binds"] = [(inside[-1], state[inside[-1]])]
    if len(events) > 80:
        return []  # long runs: narrations of hundreds of steps are not what models write
    out = []
    fam = rng.choice(FAMILIES)
    lines, _ = narrate(events, fam, rng, sample.code)
    out.append(
        {
            "id": sample.id,
            "family": fam,
            "kind": "correct",
            "text": "\n".join(ln.text for ln in lines),
            "wrong_step": None,
        }
    )
    slips = slips_for(events, rng)
    if slips:
        kind, k, wrong, opts = rng.choice(slips)
        fam = rng.choice(FAMILIES)
        ev_true = events[:]
        if opts.get("drop_last_iteration") is not None:
            ev_true = events[: opts["drop_last_iteration"]] + events[k:]
            k = opts["drop_last_iteration"] + 0
            ev_true[k] = wrong
            wrong_slip = (k, wrong)
        else:
            wrong_slip = (k, wrong)
        ret = next(e.value for e in events if e.kind == "return")
        wrong_ret = perturb(ret, rng)
        lines, slip_line = narrate(
            ev_true,
            fam,
            rng,
            sample.code,
            slip=wrong_slip,
            stop_after_slip=bool(opts.get("stop_after_slip")),
            wrong_return=wrong_ret,
            carry=opts.get("carry"),
        )
        if slip_line is not None:
            if opts.get("stop_after_slip"):
                lines.append(Line(rng.choice(RETURN[fam]).format(v=fmt(wrong_ret, rng, fam))))
            text_lines = [ln.text for ln in lines]
            start = sum(len(t) + 1 for t in text_lines[:slip_line])
            out.append(
                {
                    "id": sample.id,
                    "family": fam,
                    "kind": kind,
                    "text": "\n".join(text_lines),
                    "wrong_step": slip_line,
                    "wrong_text": text_lines[slip_line],
                    "wrong_span": [start, start + len(text_lines[slip_line])],
                    "true_value": repr(events[k].value) if wrong.kind == "bind" else None,
                }
            )
    return out


def trace_samples(limit: int | None = None) -> tuple[list[Any], dict[str, Any]]:
    """The samples and their true traces (in the sandbox, in parallel)."""
    from cruxtui.core.data.dataset import load_dataset
    from cruxtui.core.trace.steps import trace_many

    ds = load_dataset(shared_data() / "cruxeval.jsonl")
    samples = ds.samples[:limit] if limit else ds.samples
    traces = trace_many([(s.code, s.call, None) for s in samples])
    return samples, {s.id: t for s, t in zip(samples, traces, strict=True)}


def make_corpus(samples: list[Any], traces: dict[str, Any], seed: int) -> list[dict]:
    rng = random.Random(seed)
    corpus: list[dict] = []
    for s in samples:
        if traces[s.id].ok:
            for row in chains_for(s, traces[s.id], rng):
                corpus.append(row | {"seed": seed})
    return corpus


def build(seed: int = 0, limit: int | None = None) -> tuple[list[dict], dict[str, Any]]:
    samples, traces = trace_samples(limit)
    return make_corpus(samples, traces, seed), traces


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default="-", help="JSONL file (default: stdout)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--limit", type=int, default=None)
    args = ap.parse_args()
    corpus, _ = build(args.seed, args.limit)
    lines = "".join(json.dumps(c) + "\n" for c in corpus)
    if args.out == "-":
        sys.stdout.write(lines)
    else:
        Path(args.out).write_text(lines, encoding="utf-8")
        print(f"{len(corpus)} chains -> {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
