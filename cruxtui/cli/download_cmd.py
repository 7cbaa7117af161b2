"""`cruxtui download`: fetch the official dataset into the cache, verified by SHA-256."""

from __future__ import annotations

import argparse
import os

from cruxtui.cli.errors import CliError
from cruxtui.cli.options import Subparsers, add_dataset_option
from cruxtui.core.data.dataset import OFFICIAL_SHA256, OFFLINE_ENV, DownloadError, download_official


def register(sub: Subparsers) -> None:
    p = sub.add_parser("download", help="download the official CRUXEval file into the cache")
    p.add_argument("--url", help="where to fetch from (default: the pinned official address)")
    add_dataset_option(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    # Offline means no network at all: asking to download while offline is a contradiction the
    # user should hear about, not a request that silently goes out anyway.
    if getattr(args, "offline", False):
        raise CliError("--offline is set, so nothing is downloaded; drop --offline to download")
    if os.environ.get(OFFLINE_ENV, "") not in ("", "0"):
        raise CliError(f"{OFFLINE_ENV} is set, so nothing is downloaded; unset it to download")
    try:
        path = download_official(args.url)
    except DownloadError as exc:
        raise CliError(str(exc)) from None
    print(f"saved {path} (sha256 {OFFICIAL_SHA256[:16]}... verified)")
    return 0
