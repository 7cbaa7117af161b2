"""`cruxtui samples`: list samples for scripts (plain lines or JSON lines)."""

from __future__ import annotations

import argparse
import json
import sys

from cruxtui.cli.options import Subparsers, add_dataset_option, open_dataset
from cruxtui.core.data.search import SampleIndex


def register(sub: Subparsers) -> None:
    p = sub.add_parser("samples", help="list samples (filter by text or method)")
    add_dataset_option(p)
    p.add_argument("--grep", metavar="TEXT", help="fuzzy search over id, code, input and output")
    p.add_argument(
        "--method",
        metavar="NAME",
        action="append",
        default=[],
        help="only samples calling this str/list/dict method (repeatable: all must match)",
    )
    p.add_argument("--json", action="store_true", help="one JSON object per line")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    dataset = open_dataset(args)
    if dataset.notice:
        print(f"note: {dataset.notice}", file=sys.stderr)
    index = SampleIndex(dataset.samples)
    ids = index.search(args.grep or "", methods=args.method)
    out = sys.stdout
    for sid in ids:
        s = dataset[sid]
        if args.json:
            row = s.to_json() | {
                "lines": s.lines,
                "chars": s.chars,
                "output_type": s.output_type,
                "methods": list(s.methods),
            }
            out.write(json.dumps(row) + "\n")
        else:
            out.write(f"{s.id}\t{s.lines}\t{','.join(s.methods)}\t{s.first_line}\n")
    return 0
