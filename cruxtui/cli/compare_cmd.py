"""`cruxtui compare RUN_A RUN_B`: both pass@1 with intervals, and the samples they disagree on."""

from __future__ import annotations

import argparse
import json

from cruxtui.cli.errors import CliError
from cruxtui.cli.options import Subparsers
from cruxtui.cli.runs_cmd import add_store_option, open_store


def register(sub: Subparsers) -> None:
    p = sub.add_parser("compare", help="compare two runs: pass@1 with intervals, disagreements")
    p.add_argument("run_a", metavar="RUN_A", help="run id (or a unique prefix), see `cruxtui runs`")
    p.add_argument("run_b", metavar="RUN_B")
    add_store_option(p)
    p.add_argument(
        "--limit",
        type=int,
        default=30,
        metavar="N",
        help="disagreements to list (default 30; 0 = all)",
    )
    p.add_argument("--json", action="store_true", help="one JSON object")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from cruxtui.core.runs.comparison import compare_runs
    from cruxtui.core.runs.store import RunStoreError

    with open_store(args) as store:
        try:
            cmp = compare_runs(store, args.run_a, args.run_b)
        except RunStoreError as exc:
            raise CliError(str(exc)) from None
    if args.json:
        print(json.dumps(cmp.to_json()))
        return 0
    if not cmp.shared:
        raise CliError(f"runs {cmp.a.id} and {cmp.b.id} have no sample in common")
    print(f"{cmp.shared} samples in common")
    for tag, info, rate, (lo, hi) in (
        ("A", cmp.a, cmp.pass_a, cmp.interval_a),
        ("B", cmp.b, cmp.pass_b, cmp.interval_b),
    ):
        print(
            f"  {tag} {info.id}  pass@1 {100 * rate:5.1f}  95% CI [{100 * lo:5.1f}, {100 * hi:5.1f}]"
            f"  {info.label}"
        )
    lo, hi = cmp.interval_delta
    print(
        f"  B - A  {100 * (cmp.pass_b - cmp.pass_a):+5.1f}  95% CI [{100 * lo:+5.1f}, {100 * hi:+5.1f}]"
    )
    shown = cmp.disagreements if args.limit <= 0 else cmp.disagreements[: args.limit]
    print(f"\n{len(cmp.disagreements)} samples where they disagree (majority verdict differs):")
    for d in shown:
        print(f"  {d.sample_id:<12}  A {100 * d.rate_a:5.1f}%  B {100 * d.rate_b:5.1f}%")
    if len(shown) < len(cmp.disagreements):
        print(f"  ... {len(cmp.disagreements) - len(shown)} more (--limit 0 lists all)")
    return 0
