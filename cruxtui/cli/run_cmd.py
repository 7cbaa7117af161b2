"""`cruxtui run`: run a model on samples, store every generation as it completes, print pass@k.

Running the same configuration again resumes the stored run and requests only what is missing;
`--json` prints one summary object (with the run id) on stdout and keeps the progress bar on stderr.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from typing import TYPE_CHECKING, Any

from cruxtui.cli.errors import CliError
from cruxtui.cli.options import Subparsers, add_dataset_option
from cruxtui.cli.runs_cmd import add_store_option, open_store

if TYPE_CHECKING:  # imported when a run starts, so `cruxtui --help` stays fast
    from cruxtui.core.data.dataset import Dataset
    from cruxtui.core.models.backend import Backend
    from cruxtui.core.runs.runner import RunSummary
    from cruxtui.core.runs.session import RunSettings
    from cruxtui.core.runs.store import RunStore


def register(sub: Subparsers) -> None:
    p = sub.add_parser("run", help="run a model on samples (resumable) and print pass@k")
    where = p.add_argument_group("model")
    where.add_argument("--endpoint", metavar="NAME", help="a named endpoint from config.toml")
    where.add_argument(
        "--base-url",
        metavar="URL",
        help="OpenAI-compatible server, e.g. http://127.0.0.1:8000/v1 "
        "(default: the endpoint's, or $OPENAI_BASE_URL)",
    )
    where.add_argument("--model", metavar="NAME", help="model name the server knows")
    where.add_argument(
        "--api",
        choices=("completions", "chat"),
        help="chat messages or a plain completion prompt (default: chat)",
    )
    where.add_argument(
        "--api-key",
        metavar="KEY",
        help="API key; prefer $OPENAI_API_KEY or the endpoint's api_key_env in the config: a "
        "command line is readable by every user until cruxtui hides it at start "
        "(a key is never stored or printed)",
    )
    where.add_argument(
        "--timeout",
        type=float,
        metavar="SECONDS",
        help="longest wait for any data from the server (default 60)",
    )
    where.add_argument(
        "--deadline",
        type=float,
        metavar="SECONDS",
        help="longest time one request may take in all (default: the timeout plus 0.25 s per "
        "token of --max-tokens)",
    )
    where.add_argument(
        "--retries",
        type=int,
        metavar="N",
        help="retries per request on 429 / 5xx / timeouts / connection errors, with "
        "backoff and the server's Retry-After (default 4)",
    )
    what = p.add_argument_group("what to run")
    what.add_argument("--task", choices=("output", "input"), default="output")
    what.add_argument("--mode", choices=("direct", "cot", "scratchpad"), default="direct")
    what.add_argument("--samples", metavar="ID,ID,...", help="only these samples (default: all)")
    sampling = p.add_argument_group("sampling")
    sampling.add_argument("-n", type=int, default=1, help="generations per sample (default 1)")
    sampling.add_argument("--temperature", type=float, default=0.2)
    sampling.add_argument("--top-p", type=float, default=0.95)
    sampling.add_argument(
        "--max-tokens",
        type=int,
        metavar="N",
        help="default: 128 direct, 1024 cot, 2048 scratchpad; a reasoning model's thinking "
        "counts too, so give it 4096-16384 or its generations end 'truncated while thinking'",
    )
    sampling.add_argument("--seed", type=int)
    p.add_argument(
        "--concurrency",
        type=int,
        metavar="N",
        help="requests in flight at once (default: the endpoint's, else 8)",
    )
    add_store_option(p)
    add_dataset_option(p)
    p.add_argument("--json", action="store_true", help="print one JSON summary object")
    p.set_defaults(func=run)


def _sample_ids(args: argparse.Namespace, dataset: Any) -> list[str]:
    if not args.samples:
        return [s.id for s in dataset.samples]
    ids = [x.strip() for x in args.samples.split(",") if x.strip()]
    unknown = [x for x in ids if x not in dataset]
    if unknown:
        raise CliError(
            f"--samples: {', '.join(unknown[:5])} not in the dataset "
            f"({len(dataset)} samples, e.g. {dataset.samples[0].id})"
        )
    return list(dict.fromkeys(ids))


def _check_numbers(args: argparse.Namespace) -> None:
    problems = [
        (args.n < 1, "-n must be at least 1"),
        (not 0 <= args.temperature <= 2, "--temperature must be between 0 and 2"),
        (not 0 < args.top_p <= 1, "--top-p must be in (0, 1]"),
        (args.max_tokens is not None and args.max_tokens < 1, "--max-tokens must be at least 1"),
        (args.concurrency is not None and args.concurrency < 1, "--concurrency must be at least 1"),
        (args.timeout is not None and args.timeout <= 0, "--timeout must be positive"),
        (args.deadline is not None and args.deadline <= 0, "--deadline must be positive"),
        (args.retries is not None and args.retries < 0, "--retries must be 0 or more"),
    ]
    for bad, message in problems:
        if bad:
            raise CliError(message)


def run(args: argparse.Namespace) -> int:
    _check_numbers(args)
    from cruxtui.cli.options import open_dataset
    from cruxtui.core.models import ModelError
    from cruxtui.core.runs.session import RunSettings, connect

    dataset = open_dataset(args)
    ids = _sample_ids(args, dataset)
    settings = RunSettings(
        task=args.task,
        mode=args.mode,
        n=args.n,
        temperature=args.temperature,
        top_p=args.top_p,
        max_tokens=args.max_tokens,
        seed=args.seed,
        endpoint=args.endpoint,
        base_url=args.base_url,
        model=args.model,
        api=args.api,
        api_key=args.api_key,
        timeout=args.timeout,
        deadline=args.deadline,
        retries=args.retries,
        concurrency=args.concurrency,
    )
    try:
        backend = connect(settings)  # before the store: a wrong endpoint touches no file
    except ModelError as exc:
        raise CliError(exc.message) from None
    with open_store(args) as store:
        try:
            summary, discarded = asyncio.run(_run(store, dataset, settings, backend, ids))
        except Exception as exc:  # noqa: BLE001 - only a full disk is ours to explain
            full = _disk_full(exc)
            if full is None:
                raise
            raise CliError(
                f"the disk holding {store.path} is full ({full}); what was stored is kept: free "
                "some space and run the same command again to resume"
            ) from None
        if discarded:  # nothing was ever stored (a wrong key, an unknown model...)
            raise CliError(summary.aborted or "the run was refused")
        counts = store.counts(summary.run_id)
    counts = {sid: nc for sid, nc in counts.items() if sid in set(ids)}
    report = _report(summary, counts, args.n, getattr(backend, "retries", 0))
    if args.json:
        print(json.dumps(report))
    else:
        _print_report(report)
    if summary.aborted:
        raise CliError(f"{summary.aborted} (run {summary.run_id}; run the same command to resume)")
    return 1 if summary.failed else 0


def _disk_full(exc: BaseException) -> str | None:
    """What said the disk is full, if that is what `exc` (or any exception grouped or chained
    in it: the runner's task group wraps them) comes to; None otherwise."""
    import errno
    import sqlite3

    seen: set[int] = set()
    stack: list[BaseException] = [exc]
    while stack:
        current = stack.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        if isinstance(current, OSError) and current.errno in (errno.ENOSPC, errno.EDQUOT):
            return current.strerror or "no space left on device"
        if isinstance(current, sqlite3.OperationalError) and "full" in str(current):
            return str(current)
        if isinstance(current, BaseExceptionGroup):
            stack.extend(current.exceptions)
        stack.extend(e for e in (current.__cause__, current.__context__) if e is not None)
    return None


async def _run(
    store: RunStore, dataset: Dataset, settings: RunSettings, backend: Backend, ids: list[str]
) -> tuple[RunSummary, bool]:
    from cruxtui.cli.run_progress import ProgressListener
    from cruxtui.core.runs.session import open_session

    session = await open_session(store, dataset, settings, backend=backend)
    params = session.params
    title = (
        f"run {session.run_id}: {backend.spec.model} {settings.task}/{settings.mode} n={params.n}"
        f" t={params.temperature:g}"
    )
    with ProgressListener(title) as listener:
        summary = await session.run({sid: dataset[sid] for sid in ids}, listener=listener)
    return summary, session.discarded


def _report(
    summary: Any, counts: dict[str, tuple[int, int]], n: int, retries: int = 0
) -> dict[str, Any]:
    from cruxtui.core.scoring.passk import mean_pass_at_k

    pass_at: dict[str, float] = {}
    for k in sorted({1, 5, 10, n}):
        scored = [(m, c) for m, c in counts.values() if m >= k]
        if k <= n and scored:
            pass_at[f"pass@{k}"] = mean_pass_at_k(scored, k)
    return {
        "run_id": summary.run_id,
        "status": summary.status,
        "samples": len(counts),
        "generations": sum(m for m, _ in counts.values()),
        "requested": summary.requested,
        "completed": summary.completed,
        "failed": summary.failed,
        "stored_before": summary.stored_before,
        # Requests sent again after a transient failure (timeout, cut answer, 429, 5xx): each one
        # reached the server once more, which a request count on the server side will show.
        "retries": retries,
        "elapsed": round(summary.elapsed, 3),
        **pass_at,
        "error": summary.aborted,
        "failures": [{"sample_id": s, "index": i, "error": e} for s, i, e in summary.failures[:20]],
    }


def _print_report(report: dict[str, Any]) -> None:
    out = sys.stdout
    out.write(
        f"run {report['run_id']}: {report['status']}, {report['generations']} generations of "
        f"{report['samples']} samples ({report['completed']} new, "
        f"{report['stored_before']} already stored) in {report['elapsed']:.1f}s\n"
    )
    scores = "  ".join(f"{k} {v:.1f}" for k, v in report.items() if k.startswith("pass@"))
    if scores:
        out.write(f"  {scores}\n")
    if report["failed"]:
        out.write(
            f"  {report['failed']} requests failed; run the same command again to retry them\n"
        )
        for f in report["failures"][:5]:
            where = f["sample_id"] + (f"#{f['index']}" if f["index"] is not None else "")
            out.write(f"    {where}: {f['error']}\n")
