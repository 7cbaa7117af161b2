"""Write `cruxtui/core/data/starter.jsonl`: the starter set the app opens when the benchmark is absent.

The functions below were written for cruxtui in the style of CRUXEval (short `f` using str / list /
dict methods, loops and conditions); none is copied from the benchmark. Each output is produced by
executing the function on its input, so the file is right by construction.

    python scripts/make_starter.py          # (re)write the file atomically
    python scripts/make_starter.py --check  # exit 1 if the committed file is out of date
"""

from __future__ import annotations

import argparse
import ast
import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from cruxtui.core.util.atomic import atomic_write_text  # noqa: E402

OUT = REPO / "cruxtui" / "core" / "data" / "starter.jsonl"

# (code, input): `input` is the text of the arguments, exactly as the benchmark writes it.
FUNCTIONS: list[tuple[str, str]] = [
    (
        """def f(text, ch):
    idx = text.rfind(ch)
    if idx == -1:
        return text + ch
    return text[:idx] + text[idx + 1:]""",
        "'programmer', 'm'",
    ),
    (
        """def f(s, prefix):
    while s.startswith(prefix):
        s = s.removeprefix(prefix)
    return s.upper()""",
        "'abababcab', 'ab'",
    ),
    (
        """def f(line):
    head, sep, tail = line.partition('=')
    if not sep:
        return {line: None}
    return {head.strip(): tail.strip().split(',')}""",
        "'colors = red,green, blue'",
    ),
    (
        """def f(text):
    counts = {}
    for ch in text:
        if text.count(ch) > 1:
            counts[ch] = text.count(ch)
    return counts""",
        "'mississippi'",
    ),
    (
        """def f(nums, value):
    for i in range(len(nums)):
        if nums[i] > value:
            nums.insert(i, value)
            return nums
    nums.append(value)
    return nums""",
        "[1, 4, 9, 16], 10",
    ),
    (
        """def f(items):
    out = []
    while items:
        out.append(items.pop(0))
        if items:
            out.append(items.pop())
    return out""",
        "[1, 2, 3, 4, 5, 6, 7]",
    ),
    (
        """def f(words):
    groups = {}
    for w in words:
        groups.setdefault(len(w), []).append(w)
    return groups""",
        "['ox', 'cat', 'to', 'dog', 'horse']",
    ),
    (
        """def f(pairs):
    ordered = sorted(pairs, key=lambda p: (p[1], -p[0]))
    return [p[0] for p in ordered]""",
        "[(3, 'b'), (1, 'a'), (2, 'b'), (5, 'a')]",
    ),
    (
        """def f(s, k):
    if k <= 0:
        return s
    return s[-k:] + s[:-k]""",
        "'rotation', 3",
    ),
    (
        """def f(text):
    result = ''
    for i, ch in enumerate(text):
        if i % 2 == 0:
            result += ch.upper()
        else:
            result += ch
    return result""",
        "'alternate'",
    ),
    (
        """def f(d, keys):
    removed = 0
    for k in keys:
        if d.pop(k, None) is not None:
            removed += 1
    return removed, sorted(d)""",
        "{'a': 1, 'b': 2, 'c': None, 'd': 4}, ['a', 'c', 'e']",
    ),
    (
        """def f(path):
    parts = path.rsplit('/', 1)
    if len(parts) == 1:
        return ('', parts[0])
    return (parts[0], parts[1])""",
        "'usr/local/bin/python'",
    ),
    (
        """def f(text, start, end):
    i = text.find(start)
    j = text.find(end, i + 1)
    if i == -1 or j == -1:
        return ''
    return text[i + 1:j]""",
        "'call(arg1, arg2) done', '(', ')'",
    ),
    (
        """def f(s, old, new):
    n = s.count(old)
    if n > 1:
        return s.replace(old, new, n - 1)
    return s""",
        "'a-b-c-d', '-', '+'",
    ),
    (
        """def f(text):
    digits = [c for c in text if c.isdigit()]
    letters = [c for c in text if c.isalpha()]
    return ''.join(letters) + ''.join(sorted(digits))""",
        "'b3a1c2'",
    ),
    (
        """def f(values, width):
    out = []
    for v in values:
        out.append(str(v).zfill(width) if v >= 0 else str(v).ljust(width, '*'))
    return out""",
        "[7, -3, 42, 0], 3",
    ),
    (
        """def f(scores):
    best = max(scores.values())
    winners = [name for name, s in scores.items() if s == best]
    return sorted(winners, reverse=True)""",
        "{'ann': 3, 'bob': 5, 'cy': 5, 'dee': 1}",
    ),
    (
        """def f(text, chars):
    text = text.strip(chars)
    if text.endswith(chars[0]):
        return text[:-1]
    return text.lstrip()""",
        "'xx hello yxx', 'xy'",
    ),
    (
        """def f(items, target):
    if target in items:
        i = items.index(target)
        items[i], items[0] = items[0], items[i]
    return items""",
        "['q', 'w', 'e', 'r'], 'e'",
    ),
    (
        """def f(sentence):
    words = sentence.split()
    for i in range(1, len(words), 2):
        words[i] = words[i].title()
    return ' '.join(words)""",
        "'the quick brown fox jumps'",
    ),
    (
        """def f(s):
    freq = {}
    for ch in s.lower():
        if ch.isalpha():
            freq[ch] = freq.get(ch, 0) + 1
    return sorted(freq.items(), key=lambda kv: -kv[1])[:3]""",
        "'Banana Bread'",
    ),
    (
        """def f(a, b):
    merged = a[:]
    merged.extend(x for x in b if x not in a)
    merged.reverse()
    return merged""",
        "[1, 2, 3], [3, 4, 1, 5]",
    ),
    (
        """def f(text):
    if text.isupper():
        return text.lower()
    if text.islower():
        return text.upper()
    return text.swapcase()[::-1]""",
        "'HeLLo'",
    ),
    (
        """def f(word, width):
    padded = word.center(width, '.')
    return padded.replace('.', '-', 2)""",
        "'mid', 8",
    ),
    (
        """def f(base, extra):
    result = dict(base)
    result.update(extra)
    return list(result.keys())[-2:]""",
        "{'x': 1, 'y': 2}, {'y': 3, 'z': 4, 'w': 5}",
    ),
    (
        """def f(text, sub):
    positions = []
    i = text.find(sub)
    while i != -1:
        positions.append(i)
        i = text.find(sub, i + 1)
    return positions""",
        "'abcabcab', 'ab'",
    ),
    (
        """def f(names, tip):
    kept = []
    for n in names:
        if n.startswith(tip) or n.endswith(tip):
            kept.append(n)
    return kept or names[:1]""",
        "['anna', 'bob', 'nab', 'ben'], 'n'",
    ),
    (
        """def f(filename):
    for ext in ['.gz', '.tar', '.zip']:
        filename = filename.removesuffix(ext)
    return filename""",
        "'archive.tar.gz'",
    ),
    (
        """def f(text):
    lines = text.splitlines()
    return [len(ln) for ln in lines if ln.strip()]""",
        r"'one\ntwo three\n\n  four  '",
    ),
    (
        """def f(nums):
    count = 0
    for i in range(len(nums)):
        for j in range(i + 1, len(nums)):
            if nums[i] > nums[j]:
                count += 1
    return count""",
        "[3, 1, 2, 5, 4]",
    ),
    (
        """def f(d):
    parts = []
    for key in sorted(d, key=len):
        parts.append(key + ':' + str(d[key]))
    return ';'.join(parts)""",
        "{'ccc': 3, 'a': 1, 'bb': 2}",
    ),
    (
        """def f(text):
    text = text.capitalize()
    idx = text.rfind(' ')
    if idx == -1:
        return text
    return text[:idx + 1] + text[idx + 1:].upper()""",
        "'hello big WORLD'",
    ),
    (
        """def f(values, limit):
    for v in values[:]:
        if v > limit:
            values.remove(v)
    return values""",
        "[5, 12, 7, 12, 3], 6",
    ),
    (
        """def f(text):
    table = str.maketrans('aeiou', '12345')
    coded = text.translate(table)
    return coded, coded.count('1')""",
        "'banana split'",
    ),
    (
        """def f(keys):
    d = dict.fromkeys(keys, 0)
    last = d.popitem()
    return d, last""",
        "['k1', 'k2', 'k3', 'k1']",
    ),
    (
        """def f(tokens):
    total = 0
    for t in tokens:
        if t.lstrip('-').isdigit():
            total += int(t)
    return total""",
        "['10', 'x', '-4', '3.5', '7']",
    ),
    (
        """def f(s, n):
    repeated = s * n
    return repeated[::n] + repeated[-1]""",
        "'abc', 2",
    ),
    (
        """def f(csv):
    fields = csv.split(',')
    fields.sort(key=str.lower)
    return fields.index('b') if 'b' in fields else -1""",
        "'D,a,B,b,c'",
    ),
    (
        """def f(text):
    opening = text.count('(')
    closing = text.count(')')
    return opening == closing and not text.startswith(')')""",
        "'(a(b)c))('",
    ),
    (
        """def f(text, width):
    words = text.split()
    line = ''
    for w in words:
        if len(line) + len(w) > width:
            break
        line += w + ' '
    return line.rstrip()""",
        "'pack these words into a line', 12",
    ),
]


def run_one(code: str, args_text: str) -> str:
    """Execute `f(<args_text>)` in a fresh namespace and return the repr of the result.

    The repr must evaluate back to an equal value: the benchmark compares `eval(output)`.
    """
    namespace: dict[str, object] = {}
    exec(code, namespace)  # noqa: S102 - our own functions
    args = eval("(" + args_text + ",)", {})  # noqa: S307 - our own literals
    result = namespace["f"](*args)
    output = repr(result)
    if eval(output, {}) != result:  # noqa: S307
        raise SystemExit(f"output {output} does not evaluate back to the result")
    return output


def build() -> str:
    """The JSONL text: fields in the benchmark's order (code, input, output, id), one per line."""
    rows = []
    for n, (code, args_text) in enumerate(FUNCTIONS):
        lines = len(code.splitlines())
        if not 3 <= lines <= 12:
            raise SystemExit(f"starter_{n}: {lines} lines, want 3..12")
        ast.parse(code)
        output = run_one(code, args_text)
        row = {"code": code, "input": args_text, "output": output, "id": f"starter_{n}"}
        rows.append(json.dumps(row))
    return "\n".join(rows) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only check the file is up to date")
    args = parser.parse_args()
    text = build()
    if args.check:
        current = OUT.read_text(encoding="utf-8") if OUT.exists() else ""
        if current != text:
            print(f"{OUT} is out of date; run python scripts/make_starter.py", file=sys.stderr)
            return 1
        print(f"{OUT} is up to date ({len(FUNCTIONS)} samples)")
        return 0
    atomic_write_text(OUT, text)
    print(f"wrote {OUT} ({len(FUNCTIONS)} samples)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
