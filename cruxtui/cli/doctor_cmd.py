"""`cruxtui doctor [--json]`: what this machine enforces on checks, where things are, which
configured endpoints answer."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from cruxtui.cli.options import add_dataset_option


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "doctor",
        help="what the sandbox enforces here, where the files are, which endpoints answer",
        description="Tries the sandbox (network, filesystem, uid, limits, guard) with real "
        "attempts, lists where the dataset, config, cases and run store are, and asks each "
        "configured endpoint for its models (2 s timeout).",
    )
    add_dataset_option(p)
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument(
        "--timeout", type=float, default=2.0, metavar="SECONDS", help="per endpoint (default 2)"
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from cruxtui.core.sandbox.enforcement import enforcement
    from cruxtui.core.util.doctor import endpoints_status, locations

    report: dict[str, Any] = {
        "sandbox": enforcement(),
        "paths": locations(getattr(args, "dataset", None), getattr(args, "offline", False)),
        "endpoints": endpoints_status(args.timeout),
    }
    if args.json:
        sys.stdout.write(json.dumps(report) + "\n")
        return 0
    _print(report)
    return 0


def _print(report: dict[str, Any]) -> None:
    out = sys.stdout
    box = report["sandbox"]
    out.write("sandbox (what a check's process is refused here)\n")
    for key in ("network", "filesystem", "seccomp", "abstract_unix_sockets", "signals", "uid"):
        out.write(f"  {key.replace('_', ' '):22} {box[key]}\n")
    limits = ", ".join(_limit(name, soft) for name, (soft, _) in box["rlimits"].items())
    out.write(f"  {'rlimits':22} {limits or 'unknown'}\n")
    out.write(f"  {'guard':22} {box['guard']}\n")
    out.write("  tried with the guard off:\n")
    for what, result in box["tried_without_guard"].items():
        out.write(f"    {what}: {result}\n")
    for note in box["notes"]:
        out.write(f"  note: {note}\n")
    out.write("paths\n")
    for key, value in report["paths"].items():
        out.write(f"  {key:22} {value}\n")
    out.write("endpoints\n")
    if not report["endpoints"]:
        out.write("  none configured\n")
    for ep in report["endpoints"]:
        out.write(f"  {ep['name']:22} {ep['url'] or '-'}  {ep['status']}\n")


def _limit(name: str, soft: int) -> str:
    short = name.removeprefix("RLIMIT_").lower()
    if soft < 0:
        return f"{short} unlimited"
    if short in ("as", "fsize"):
        return f"{short} {soft / 2**20:g} MiB"
    return f"{short} {soft}"
