"""How well does `cruxtui.core.reasoning.alignment` find the first wrong claim of a chain of thought?

The yardstick is the reasoning corpus (`benchmarks/reasoning_corpus/`, see its README): chains
written by writers who never saw the parser, each labelled with its first wrong claim (a quote)
or none, every label checked by executing the code. For each chain the call it reasons about is
traced and the chain aligned; then

- **located**: a wrong chain whose first contradicted claim's span overlaps the label's quote
  (goal on the held-out part: >= 90%); otherwise *early* (flagged before the quote: a false
  alarm inside a wrong chain), *late* (after it) or *missed* (nothing contradicted);
- **false alarm**: a correct chain with any contradicted claim (goal: <= 2%);
- **from code**: chains whose first divergence lies in code inside the chain (a fenced or
  indented block that is Python, a line of `f` quoted), found here independently of the parser,
  and is not the labelled slip (goal: none); a wrong chain's own wrong answer written as code
  (`assert f(<the call>) == v`) is a true divergence, found late, and is counted apart;

reported for the tuning and the held-out parts separately, overall, per style, per writer (and
collection) and per error kind. The held-out part is only ever reported in aggregate: `--show` prints chains of the
tuning part alone. A last line checks scratchpads: the one a perfect model writes
(`prompts.scratchpad_from_trace`) must not alarm, and one flipped condition must be found there.

With `--extractions FILE...` (recorded replies of a model to the extraction prompt, see
`reasoning_corpus/extractions/`) the chains those cover are measured twice, by the prose reader
alone and with the model's claims merged in, as `cruxtui align --extract-with` does.

Run: `python benchmarks/bench_align.py [--part tuning|held_out|both] [--show N] [--extractions FILE...]`.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import re
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from cruxtui.core.reasoning.alignment import CONTRADICTED, Alignment, align_text  # noqa: E402
from cruxtui.core.reasoning.claim_types import Chain  # noqa: E402
from cruxtui.core.reasoning.model_extract import merge, parse_reply  # noqa: E402
from cruxtui.core.sandbox.pool import Sandbox  # noqa: E402
from cruxtui.core.trace.steps import trace_many  # noqa: E402

CORPUS = REPO / "benchmarks" / "reasoning_corpus"
DATASET = (
    Path(os.environ.get("CRUXTUI_SHARED_DATA") or REPO.parent / "shared" / "data")
    / "cruxeval.jsonl"
)
PARTS = ("tuning", "held_out")
REAL = REPO / "benchmarks" / "real_chains"
"""Unlabelled chains from a real small model (`collect_real_chains.py`): only where their
divergences come from is measured (code in a chain must never give one)."""


def load(part: str) -> list[dict]:
    rows = []
    for path in sorted((CORPUS / part).glob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                rows.append(json.loads(line))
    return rows


def _python(src: str) -> bool:
    try:
        ast.parse(src)
    except (SyntaxError, ValueError):
        return False
    return True


def _stated_output(text: str, fence: re.Match[str]) -> bool:
    """A fence holding one literal value under a heading ("The output is:", "it would
    return:") is the output stated, not code."""
    body = fence.group(1).strip()
    if "\n" in body:
        return False
    try:
        ast.literal_eval(body)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return False
    return text[: fence.start()].rstrip().rstrip("*_ ").endswith(":")


def code_in_chain(text: str, code: str) -> list[tuple[int, int]]:
    """Python code inside a chain, found without the parser: fenced blocks that are Python,
    indented lines that are Python statements, lines of f quoted."""
    spans = []
    for m in re.finditer(r"```[^\n]*\n(.*?)(?:```|\Z)", text, re.S):
        if _python(m.group(1)) and not _stated_output(text, m):
            spans.append((m.start(), m.end()))
    source = {ln.strip() for ln in code.splitlines() if len(ln.strip()) >= 6}
    pos = 0
    for raw in text.splitlines(keepends=True):
        line = raw.rstrip("\n")
        indented = line.startswith(("    ", "\t")) and _python(line.strip())
        if indented and "=" in line and re.fullmatch(r"\s*\w+\s*=\s*[-\w'\"\[\](){}, .:]*", line):
            indented = False  # "    x = 5": a narrated value, indented
        if indented or line.strip() in source:
            spans.append((pos, pos + len(line)))
        pos += len(raw)
    return spans


def judge(
    rows: list[dict], samples: dict[str, dict], box: Sandbox, replies: dict[str, str] | None = None
) -> list[dict]:
    """Align every chain; with `replies` (chain id -> a model's reply to the extraction prompt),
    the claims of each reply join the prose reader's first, as `align --extract-with` does."""
    traces = trace_many(
        [(samples[r["sample"]]["code"], r["call"], None) for r in rows], sandbox=box
    )
    out = []
    for row, tr in zip(rows, traces, strict=True):
        target = samples[row["sample"]]["output"] if row["task"] == "input" else None
        if replies is None:
            result = align_text(row["text"], tr, sandbox=box, target=target)
        else:
            result = _align_extracted(row["text"], tr, box, target, replies.get(row["id"]))
        div = result.first_divergence
        contradicted = [j for j in result.judgements if j.verdict == CONTRADICTED]
        record = {"row": row, "div": div, "n_contradicted": len(contradicted)}
        code = code_in_chain(row["text"], samples[row["sample"]]["code"])
        in_code = div is not None and any(
            s < div.claim.end and div.claim.start < e for s, e in code
        )
        if row["correct"]:
            record["verdict"] = "false_alarm" if div is not None else "quiet"
        else:
            quote = row["first_error"]["quote"]
            lo = row["text"].index(quote)
            hi = lo + len(quote)
            if div is None:
                record["verdict"] = "missed"
            elif div.claim.start < hi and lo < div.claim.end:
                record["verdict"] = "located"
            elif div.claim.end <= lo:
                record["verdict"] = "early"
            else:
                record["verdict"] = "late"
        # A false alarm from code: a divergence inside code that is not the labelled slip. A
        # wrong chain's own answer written as code (`assert f(<the call>) == v`, v wrong) is a
        # true divergence shown late, not a false alarm: counted apart.
        answer = (
            in_code
            and not row["correct"]
            and div is not None
            and _answers_the_call(div.claim.text, row["call"])
        )
        record["from_code"] = in_code and record["verdict"] != "located" and not answer
        record["answer_in_code"] = answer and record["verdict"] != "located"
        out.append(record)
    return out


def _align_extracted(
    text: str, tr: Any, box: Sandbox, target: str | None, reply: str | None
) -> Alignment:
    """`align_text` with a recorded model reply merged in, as `align --extract-with` does."""

    def extract(chain: Chain) -> None:
        if reply is not None:
            merge(chain, parse_reply(reply, chain, tr.code).claims, target)

    return align_text(text, tr, sandbox=box, target=target, extract=extract)


def load_replies(paths: list[str]) -> dict[str, str]:
    """Replies to the extraction prompt, `{"id", "reply"}` per line, from any model."""
    out: dict[str, str] = {}
    for path in paths:
        for line in Path(path).read_text(encoding="utf-8").splitlines():
            if line.strip():
                row = json.loads(line)
                out[row["id"]] = row["reply"]
    return out


def source(row: dict) -> str:
    """Who wrote a chain, and in which collection: the id's `<writer>-<style>-<n>` less its style
    and number (`writer-c`, `smollm2-135m-b`), so chains written in a later round are reported
    apart from the ones the aligner has been measured on before."""
    return row["id"].removesuffix(f"-{row['style']}-{row['id'].rsplit('-', 1)[-1]}")


def report(part: str, records: list[dict]) -> dict[str, float]:
    groups: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for rec in records:
        row = rec["row"]
        keys = ["all", f"style {row['style']}", f"writer {source(row)}"]
        if not row["correct"]:
            keys.append(f"kind {row['first_error']['kind']}")
        for key in keys:
            g = groups[key]
            if row["correct"]:
                g["correct"] += 1
                g["false_alarm"] += rec["verdict"] == "false_alarm"
            else:
                g["wrong"] += 1
                g[rec["verdict"]] += 1
            g["from_code"] += rec["from_code"]
            g["answer_in_code"] += rec["answer_in_code"]
    print(f"\n== {part}: {len(records)} chains")
    print(
        f"{'group':<24}{'wrong':>6}{'located':>9}{'early':>7}{'late':>6}{'missed':>8}"
        f"{'correct':>9}{'false alarm':>13}{'from code':>11}"
    )
    order = sorted(groups, key=lambda k: (k != "all", k.startswith("kind"), k))
    for key in order:
        g = groups[key]
        w, c = g["wrong"], g["correct"]
        loc = f"{100 * g['located'] / w:.1f}%" if w else "-"
        fa = f"{100 * g['false_alarm'] / c:.1f}%" if c else "-"
        print(
            f"{key:<24}{w:>6}{loc:>9}{g['early']:>7}{g['late']:>6}{g['missed']:>8}"
            f"{c:>9}{fa:>13}{g['from_code']:>11}"
        )
    a = groups["all"]
    located = 100 * a["located"] / max(a["wrong"], 1)
    alarms = 100 * a["false_alarm"] / max(a["correct"], 1)
    print(
        f"{part}: located {located:.1f}% of {a['wrong']} first wrong claims (goal >= 90%), "
        f"false alarms {alarms:.1f}% of {a['correct']} correct chains (goal <= 2%), "
        f"{a['from_code']} from code (goal 0; besides, {a['answer_in_code']} wrong chains' own wrong "
        "answer written as code, `assert f(<the call>) == v`, flagged after the slip was missed)"
    )
    return {"located": located, "false_alarms": alarms, "from_code": a["from_code"]}


def show(records: list[dict], n: int) -> None:
    """Misses of the tuning part, to read while tuning (never called on the held-out part)."""
    by: dict[str, list[dict]] = defaultdict(list)
    for rec in records:
        if rec["verdict"] not in ("located", "quiet"):
            by[rec["verdict"]].append(rec)
    for verdict, recs in by.items():
        print(f"\n===== {verdict} ({len(recs)})")
        for rec in recs[:n]:
            row, div = rec["row"], rec["div"]
            err = row.get("first_error") or {}
            print(f"-- {row['id']} [{row['style']}] {row['sample']} {row['call']}")
            if err:
                print(
                    f"   label ({err['kind']}): {err['quote']!r} claimed {err['claimed']} truth {err['truth']}"
                )
            if div is not None:
                print(
                    f"   flagged ({div.claim.kind}): {div.claim.text!r} claimed {div.claim.value} "
                    f"true {div.true_value} ({div.note})"
                )
            print("   " + row["text"].replace("\n", "\n   "))


def real_chains(samples: dict[str, dict], box: Sandbox) -> None:
    rows = []
    for path in sorted(REAL.glob("*.jsonl")):
        rows += [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]
    if not rows:
        return
    traces = trace_many(
        [(samples[r["sample"]]["code"], r["call"], None) for r in rows], sandbox=box
    )
    divergences = from_code = answers = with_code = 0
    for row, tr in zip(rows, traces, strict=True):
        code = code_in_chain(row["text"], samples[row["sample"]]["code"])
        with_code += bool(code)
        div = align_text(row["text"], tr, sandbox=box).first_divergence
        if div is None:
            continue
        divergences += 1
        if any(s < div.claim.end and div.claim.start < e for s, e in code):
            from_code += 1
            answers += _answers_the_call(div.claim.text, row["call"])
    print(
        f"\nreal chains ({len(rows)}, {with_code} with code in them): {divergences} divergences, "
        f"{from_code} from code (goal 0); of those, {answers} state the traced call's result "
        "as code (`assert f(<the call>) == v`: the chain's own answer, checked as such)"
    )


def _answers_the_call(claim: str, call: str) -> bool:
    """Is the claim a line `[assert] f(<the traced call's arguments>) == value` (the arguments
    compared as Python, whatever their quotes)? That is how CRUXEval asks for the answer."""
    try:
        node = ast.parse(claim.strip()).body[0]
        traced = ast.parse(call.strip(), mode="eval").body
    except (SyntaxError, ValueError, IndexError):
        return False
    test = node.test if isinstance(node, ast.Assert) else getattr(node, "value", None)
    return (
        isinstance(test, ast.Compare)
        and isinstance(test.ops[0], ast.Eq)
        and ast.dump(test.left) == ast.dump(traced)
    )


def scratchpads(samples: dict[str, dict], box: Sandbox) -> None:
    from cruxtui.core.models.prompts import scratchpad_from_trace

    rows = list(samples.values())
    traces = trace_many([(s["code"], f"f({s['input']})", None) for s in rows], sandbox=box)
    faithful = alarms = flipped = found = 0
    for tr in traces:
        pad = scratchpad_from_trace(tr) if tr.ok else None
        if pad is None:
            continue
        faithful += 1
        alarms += (
            align_text(f"[SCRATCHPAD]\n{pad}\n[/SCRATCHPAD]", tr, box).first_divergence is not None
        )
        entries = pad.splitlines()
        at = next((i for i, e in enumerate(entries) if e.endswith(("-> True", "-> False"))), None)
        if at is None:
            continue
        head = entries[at][: entries[at].rindex("->")]
        entries[at] = head + ("-> False" if entries[at].endswith("True") else "-> True")
        div = align_text("[SCRATCHPAD]\n" + "\n".join(entries) + "\n[/SCRATCHPAD]", tr, box)
        flipped += 1
        found += div.first_divergence is not None and div.first_divergence.step == at
    print(
        f"\nscratchpads: {faithful} faithful ones, {alarms} false alarms; "
        f"{found} of {flipped} flipped conditions found exactly"
    )


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--part", choices=(*PARTS, "both"), default="both")
    ap.add_argument("--show", type=int, default=0, help="print N misses of each sort (tuning only)")
    ap.add_argument("--no-scratchpads", action="store_true")
    ap.add_argument(
        "--extractions",
        nargs="+",
        metavar="FILE",
        help="model replies to the extraction prompt (JSONL of id, reply): measure the chains "
        "they cover with and without the claims they add (`align --extract-with`)",
    )
    args = ap.parse_args()
    samples = {}
    for line in DATASET.read_text(encoding="utf-8").splitlines():
        if line.strip():
            row = json.loads(line)
            samples[row["id"]] = row
    parts = PARTS if args.part == "both" else (args.part,)
    with Sandbox() as box:
        for part in parts:
            rows = load(part)
            if args.extractions:
                replies = load_replies(args.extractions)
                rows = [r for r in rows if r["id"] in replies]
                if rows:
                    report(f"{part}, prose reader only", judge(rows, samples, box))
                    report(f"{part}, with model extraction", judge(rows, samples, box, replies))
                continue
            if not rows:
                print(f"\n== {part}: no chains")
                continue
            t0 = time.perf_counter()
            records = judge(rows, samples, box)
            elapsed = time.perf_counter() - t0
            report(part, records)
            print(f"({elapsed:.1f} s, {1000 * elapsed / len(rows):.0f} ms per chain)")
            if args.show and part == "tuning":
                show(records, args.show)
        real_chains(samples, box)
        if not args.no_scratchpads:
            scratchpads(samples, box)
    return 0


if __name__ == "__main__":
    sys.exit(main())
