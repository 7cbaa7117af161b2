"""`cruxtui download`: fetch the official dataset into the cache, verified by SHA-256."""

from __future__ import annotations

import argparse

from cruxtui.cli.errors import CliError
from cruxtui.core.data.dataset import OFFICIAL_SHA256, DownloadError, download_official


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("download", help="download the official CRUXEval file into the cache")
    p.add_argument("--url", help="where to fetch from (default: the pinned official address)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    try:
        path = download_official(args.url)
    except DownloadError as exc:
        raise CliError(str(exc)) from None
    print(f"saved {path} (sha256 {OFFICIAL_SHA256[:16]}... verified)")
    return 0
