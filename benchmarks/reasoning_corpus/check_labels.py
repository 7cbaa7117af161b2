"""Check every label of the reasoning corpus by executing the code.

For each chain: the sample exists; `call` is the sample's input (output task) or a call of `f`
(input task); the answer is right exactly when the chain is correct and its first error is not the
answer (output task: the answer's value equals `f`'s result on `call`; input task: `f` on the
answer returns the sample's output); for a wrong chain, the quote occurs once in the text and the
`verify` snippet, run after the sample's code, gives `truth`, which differs from `claimed`.

Each check runs in a child process with a time limit, as the snippets are code. Run:
`python benchmarks/reasoning_corpus/check_labels.py [--dataset PATH] [FILES...]`; exit 1 on any
bad label, with one line per problem.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
DEFAULT_DATASET = (
    Path(os.environ.get("CRUXTUI_SHARED_DATA") or REPO.parent / "shared" / "data")
    / "cruxeval.jsonl"
)
STYLES = {
    "numbered",
    "terse",
    "markdown",
    "narrative",
    "table",
    "short",
    "thinking",
    "code_heavy",
    "self_correction",
    "input_task",
    "real_model",
}
KINDS = {"binding", "expression", "condition", "loop", "count", "phase", "answer", "other"}

_CHILD = r"""
import json, sys
req = json.loads(sys.stdin.read())
ns = {}
exec(req["code"], ns)
out = {}
def value(src):
    mod = compile(src, "<snippet>", "exec")
    import ast
    tree = ast.parse(src)
    *body, last = tree.body
    exec(compile(ast.Module(body, []), "<snippet>", "exec"), ns)
    return eval(compile(ast.Expression(last.value), "<snippet>", "eval"), ns)
out["result"] = repr(value(req["call"]))
if req.get("verify"):
    out["verify"] = repr(value(req["verify"]))
print(json.dumps(out))
"""


def run_child(code: str, call: str, verify: str | None) -> dict[str, str]:
    proc = subprocess.run(
        [sys.executable, "-I", "-c", _CHILD],
        input=json.dumps({"code": code, "call": call, "verify": verify}),
        capture_output=True,
        text=True,
        timeout=10,
        check=False,
    )
    if proc.returncode != 0:
        raise RuntimeError(proc.stderr.strip().splitlines()[-1] if proc.stderr else "failed")
    return json.loads(proc.stdout)


def same(a: str, b: str) -> bool:
    """Equal as Python values when both are literals, else as text."""
    try:
        return ast.literal_eval(a) == ast.literal_eval(b)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return a.strip() == b.strip()


def check(entry: dict, samples: dict[str, dict]) -> list[str]:
    eid = entry.get("id", "?")
    problems: list[str] = []
    for key in ("id", "sample", "task", "call", "style", "writer", "text", "answer", "correct"):
        if key not in entry:
            problems.append(f"{eid}: missing field {key}")
    if problems:
        return problems
    s = samples.get(entry["sample"])
    if s is None:
        return [f"{eid}: unknown sample {entry['sample']}"]
    if entry["style"] not in STYLES:
        problems.append(f"{eid}: unknown style {entry['style']}")
    task, call, answer = entry["task"], entry["call"], entry["answer"]
    if (
        task == "output"
        and not same(call, f"f({s['input']})")
        and call.replace(" ", "") != f"f({s['input']})".replace(" ", "")
    ):
        problems.append(f"{eid}: call {call} is not the sample's input f({s['input']})")
    if not call.startswith("f("):
        problems.append(f"{eid}: call must be f(...)")
    err = entry.get("first_error")
    try:
        res = run_child(s["code"], call, err.get("verify") if err else None)
    except (RuntimeError, subprocess.TimeoutExpired, json.JSONDecodeError) as exc:
        return problems + [f"{eid}: running the code failed: {exc}"]
    if task == "output":
        answer_right = same(answer, res["result"])
    else:
        if answer.replace(" ", "") != call.replace(" ", ""):
            problems.append(f"{eid}: input-task answer {answer} is not the call {call}")
        answer_right = same(res["result"], s["output"])
    if entry["correct"]:
        if err is not None:
            problems.append(f"{eid}: correct chain with a first_error")
        if not answer_right:
            problems.append(
                f"{eid}: correct chain but its answer is wrong (f gives {res['result']})"
            )
        return problems
    if err is None:
        return problems + [f"{eid}: wrong chain without first_error"]
    for key in ("quote", "kind", "claimed", "truth", "verify"):
        if key not in err:
            problems.append(f"{eid}: first_error misses {key}")
    if problems:
        return problems
    if entry["text"].count(err["quote"]) != 1:
        problems.append(f"{eid}: quote occurs {entry['text'].count(err['quote'])} times in text")
    if err["kind"] not in KINDS:
        problems.append(f"{eid}: unknown kind {err['kind']}")
    if not same(res["verify"], err["truth"]):
        problems.append(f"{eid}: verify gives {res['verify']}, label says truth {err['truth']}")
    if same(err["claimed"], err["truth"]):
        problems.append(f"{eid}: claimed equals truth")
    if err["kind"] == "answer" and answer_right:
        problems.append(f"{eid}: first error is the answer, but the answer is right")
    return problems


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("files", nargs="*", type=Path)
    ap.add_argument("--dataset", type=Path, default=DEFAULT_DATASET)
    args = ap.parse_args()
    samples = {}
    for line in args.dataset.read_text().splitlines():
        if line.strip():
            row = json.loads(line)
            samples[row["id"]] = row
    files = args.files or sorted(
        p for part in ("tuning", "held_out") for p in (HERE / part).glob("*.jsonl")
    )
    ids: set[str] = set()
    total = bad = 0
    for f in files:
        for n, line in enumerate(f.read_text().splitlines(), 1):
            if not line.strip():
                continue
            total += 1
            try:
                entry = json.loads(line)
            except json.JSONDecodeError as exc:
                print(f"{f}:{n}: not JSON: {exc}")
                bad += 1
                continue
            problems = check(entry, samples)
            if entry.get("id") in ids:
                problems.append(f"{entry.get('id')}: duplicate id")
            ids.add(entry.get("id"))
            for p in problems:
                print(f"{f.name}:{n}: {p}")
            bad += bool(problems)
    print(f"{total} chains, {bad} with problems")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
