"""Runner throughput against a local server, and TUI responsiveness while a model streams.

1. Throughput. The local OpenAI-compatible server (`cruxtui.testing.fake_openai`, its own process)
   answers every request after a fixed 50 ms. Side by side, alternating, best of `--rounds`:
   - raw: a bare async HTTP client (httpx, the `openai` client's HTTP library) sends the same
     800 requests (n=5 each) at the same concurrency and does nothing with the answers (the
     yardstick); beside it, a bare client on aiohttp, the HTTP library the runner's plain
     requests use: what the server can serve, so that the cost of the per-generation work is
     seen apart from the runner's leaner HTTP path;
   - runner: `cruxtui.core.runs.runner.Runner` does the real work for 800 samples x n=5 — prompts,
     requests through the `openai` client, answer extraction, scoring, grouped SQLite commits —
     into a fresh store.
   Goal: runner throughput >= 90% of raw.
2. TUI responsiveness. The app runs headless (`run_test`), the run panel streams 10 long
   generations (about 2,000 characters each, in 4-character chunks 5 ms apart, four at once),
   and a probe coroutine on the app's event loop measures how late each 5 ms tick wakes up.
   Goal: no stall > 100 ms.

Usage: python benchmarks/bench_runner.py [--dataset cruxeval.jsonl] [--concurrency 8,64,256]
[--rounds 3] [--no-tui] (8 is `cruxtui run`'s default concurrency). Each concurrency gets its own
server; rounds alternate raw and runner, and the ratio is of each side's best round (a busy
machine only ever slows a round down); the median ratio and the client's CPU per request are
printed beside it.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import aiohttp
import httpx2 as httpx

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from cruxtui.core.data.dataset import Dataset, load_dataset  # noqa: E402
from cruxtui.core.models import ModelSpec, SamplingParams, make_backend  # noqa: E402
from cruxtui.core.models.prompts import build_prompt  # noqa: E402
from cruxtui.core.runs.runner import Runner, prepare_run  # noqa: E402
from cruxtui.core.runs.store import RunStore  # noqa: E402

DEFAULT_DATASET = REPO.parent / "shared" / "data" / "cruxeval.jsonl"
N = 5
LATENCY = 0.05
MAX_TOKENS = 128


def start_server(*args: str) -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "cruxtui.testing.fake_openai", "--port", "0", *args],
        stdout=subprocess.PIPE,
        text=True,
        cwd=REPO,
    )
    assert proc.stdout is not None
    return proc, proc.stdout.readline().strip()


def _bodies(dataset: Dataset) -> list[dict]:
    return [
        {
            "model": "fake-model",
            "messages": build_prompt(s, "output", "direct", "chat").messages,
            "n": N,
            "max_tokens": MAX_TOKENS,
            "temperature": 0.2,
            "stop": ["[/ANSWER]"],
        }
        for s in dataset.samples
    ]


async def raw_client(url: str, dataset: Dataset, concurrency: int) -> float:
    """Seconds for a bare httpx client to get all 800 responses (n=5) at `concurrency`."""
    bodies = _bodies(dataset)
    sem = asyncio.Semaphore(concurrency)
    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    async with httpx.AsyncClient(base_url=url, limits=limits, timeout=60) as client:

        async def one(body: dict) -> None:
            async with sem:
                response = await client.post("/chat/completions", json=body)
                response.raise_for_status()
                assert len(response.json()["choices"]) == N

        t0 = time.perf_counter()
        await asyncio.gather(*(one(b) for b in bodies))
        return time.perf_counter() - t0


async def raw_aiohttp(url: str, dataset: Dataset, concurrency: int) -> float:
    """The same on aiohttp (the runner's HTTP library for plain requests), bodies encoded ahead."""
    bodies = [json.dumps(b).encode() for b in _bodies(dataset)]
    sem = asyncio.Semaphore(concurrency)
    headers = {"Content-Type": "application/json"}
    connector = aiohttp.TCPConnector(limit=concurrency)
    async with aiohttp.ClientSession(connector=connector) as session:

        async def one(body: bytes) -> None:
            async with (
                sem,
                session.post(f"{url}/chat/completions", data=body, headers=headers) as r,
            ):
                r.raise_for_status()
                assert len(json.loads(await r.read())["choices"]) == N

        t0 = time.perf_counter()
        await asyncio.gather(*(one(b) for b in bodies))
        return time.perf_counter() - t0


async def runner_pass(
    url: str, dataset: Dataset, concurrency: int, store_path: Path
) -> tuple[float, int, float]:
    """Seconds for the runner to do 800 x n=5 end to end; generations stored; pass@1."""
    backend = make_backend(ModelSpec("openai", "fake-model", url, "chat"))
    try:
        with RunStore(store_path) as store:
            _, plan = prepare_run(
                store,
                backend,
                dataset_digest=dataset.digest,
                task="output",
                mode="direct",
                style="chat",
                params=SamplingParams(n=N, max_tokens=MAX_TOKENS),
            )
            # As `cruxtui run` and sweeps prepare a run (`session._prepare`): the HTTP client is
            # built before the clock starts, as the bare client's is.
            backend.preconnect()
            runner = Runner(
                plan, store, {s.id: s for s in dataset.samples}, concurrency=concurrency
            )
            t0 = time.perf_counter()
            summary = await runner.run([s.id for s in dataset.samples])
            elapsed = time.perf_counter() - t0
            info = store.run(summary.run_id)
    finally:
        await backend.aclose()
    assert summary.failed == 0, summary.failures[:3]
    return elapsed, info.generations, info.passed / max(1, info.generations)


async def tui_lag(dataset: Dataset, url: str, tick: float = 0.005) -> dict[str, float]:
    """Event-loop stalls (s) in the headless app while the run panel streams 10 generations."""
    from textual.widgets import Input

    from cruxtui.tui.app import CruxApp
    from cruxtui.tui.state import TuiOptions
    from cruxtui.tui.widgets.generation_stream import GenerationStream
    from cruxtui.tui.widgets.run_panel import RunPanel

    store = Path(tempfile.mkdtemp()) / "runs.sqlite"
    app = CruxApp(dataset, TuiOptions(store=str(store), endpoint=url))
    lags: list[float] = []
    work: list[float] = []
    """CPU time the event-loop thread itself used within each tick: on a busy machine a stall is
    partly waiting for a CPU, and this says how much of it was the app's own work."""
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("enter")
        await pilot.pause()
        await pilot.press("r")
        await pilot.pause()
        panel = app.screen.query_one(RunPanel)
        panel.query_one("#run-model", Input).value = "fake-model"
        panel.query_one("#run-n", Input).value = "10"
        panel.query_one("#run-mode").value = "cot"
        running = True

        async def probe() -> None:
            while running:
                t0, c0 = time.perf_counter(), time.thread_time()
                await asyncio.sleep(tick)
                lags.append(time.perf_counter() - t0 - tick)
                work.append(time.thread_time() - c0)

        # Baseline side by side: the same probe while the app idles (what the machine itself adds).
        probe_task = asyncio.get_running_loop().create_task(probe())
        await asyncio.sleep(2.0)
        running = False
        await probe_task
        idle, lags, work = sorted(lags), [], []
        running = True
        probe_task = asyncio.get_running_loop().create_task(probe())
        t0 = time.perf_counter()
        panel.query_one("#run-go").press()
        await pilot.pause()
        await app.workers.wait_for_complete()
        elapsed = time.perf_counter() - t0
        running = False
        await probe_task
        cards = panel.query_one(GenerationStream).cards
        chars = sum(len(c.text) for c in cards)
    lags.sort()
    return {
        "max": lags[-1],
        "p99": lags[int(0.99 * (len(lags) - 1))],
        "median": statistics.median(lags),
        "ticks": len(lags),
        "seconds": elapsed,
        "cards": len(cards),
        "chars": chars,
        "idle_max": idle[-1],
        "idle_p99": idle[int(0.99 * (len(idle) - 1))],
        "work_max": max(work),
    }


def stream_lag(dataset: Dataset) -> dict[str, float]:
    long_text = (
        "[THOUGHT]\n" + "Let me execute the code step by step. " * 50 + "\n[/THOUGHT]\n"
        "[ANSWER]\nassert f(1) == 1\n[/ANSWER]"
    )
    proc, url = start_server("--chunk-delay", "0.005", "--text", long_text)
    try:
        return asyncio.run(tui_lag(dataset, url))
    finally:
        proc.terminate()
        proc.wait()


def throughput(dataset: Dataset, dataset_path: str, concurrency: int, rounds: int) -> float:
    """Raw client and runner at one concurrency, alternating; prints both and returns the ratio
    of the best times (each side's best round: the machine's noise only ever slows a round)."""
    proc, url = start_server(
        "--latency", str(LATENCY), "--mode", "mixed", "--dataset", dataset_path
    )
    raw_times, run_times, raw_cpu, run_cpu, aio_times = [], [], [], [], []
    try:
        with tempfile.TemporaryDirectory() as tmp:
            for r in range(rounds):
                aio_times.append(asyncio.run(raw_aiohttp(url, dataset, concurrency)))
                c0 = time.process_time()
                raw_times.append(asyncio.run(raw_client(url, dataset, concurrency)))
                c1 = time.process_time()
                elapsed, stored, pass1 = asyncio.run(
                    runner_pass(url, dataset, concurrency, Path(tmp) / f"runs{r}.sqlite")
                )
                c2 = time.process_time()
                run_times.append(elapsed)
                raw_cpu.append(c1 - c0)
                run_cpu.append(c2 - c1)
                print(
                    f"  c={concurrency} round {r + 1}: raw {raw_times[-1]:.2f} s, aiohttp "
                    f"{aio_times[-1]:.2f} s, runner {elapsed:.2f} s "
                    f"({stored} generations stored, pass@1 {100 * pass1:.1f})"
                )
    finally:
        proc.terminate()
        proc.wait()
    requests = len(dataset)
    ideal = requests * LATENCY / concurrency
    raw_best, run_best = min(raw_times), min(run_times)
    ratio = raw_best / run_best
    median = statistics.median(raw_times) / statistics.median(run_times)
    print(
        f"concurrency {concurrency}: raw client {requests / raw_best:7.1f} requests/s "
        f"({requests * N / raw_best:7.1f} generations/s; latency-bound ideal "
        f"{requests / ideal:.1f} req/s)"
    )
    print(
        f"concurrency {concurrency}: runner     {requests / run_best:7.1f} requests/s "
        f"({requests * N / run_best:7.1f} generations/s)"
    )
    aio = min(aio_times)
    print(
        f"concurrency {concurrency}: raw aiohttp {requests / aio:7.1f} requests/s; runner / that "
        f"{100 * aio / run_best:.1f}% (best rounds), "
        f"{100 * statistics.median(aio_times) / statistics.median(run_times):.1f}% (median "
        "rounds): what the per-generation work costs beside the same HTTP library"
    )
    print(
        f"concurrency {concurrency}: runner / raw {100 * ratio:.1f}% (best rounds), "
        f"{100 * median:.1f}% (median rounds); client CPU per request: raw "
        f"{1000 * min(raw_cpu) / requests:.2f} ms, runner {1000 * min(run_cpu) / requests:.2f} ms "
        "(scoring in the sandbox processes not counted)"
    )
    return ratio


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--dataset", default=str(DEFAULT_DATASET))
    parser.add_argument(
        "--concurrency",
        default="8",
        help="one or more, comma-separated (e.g. 8,64,256); the goal is checked at each",
    )
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--no-tui", action="store_true", help="skip the TUI streaming part")
    args = parser.parse_args()
    dataset = load_dataset(args.dataset, offline=True)
    levels = [int(c) for c in args.concurrency.split(",") if c.strip()]
    print(
        f"dataset: {len(dataset)} samples from {dataset.location}; n={N}; server latency "
        f"{LATENCY * 1000:.0f} ms; concurrency {', '.join(map(str, levels))}"
    )
    ratios = {c: throughput(dataset, args.dataset, c, args.rounds) for c in levels}
    for c, ratio in ratios.items():
        print(
            f"runner / server at concurrency {c}: {100 * ratio:.1f}%  "
            f"(goal >= 90%: {'PASS' if ratio >= 0.9 else 'FAIL'})"
        )
    if args.no_tui:
        return

    # Streaming: long chain-of-thought answers in 4-character chunks, 5 ms apart per stream
    # (200 chunks/s each, faster than models stream), four streams at once.
    lag = stream_lag(dataset)
    print(
        f"TUI while streaming {lag['cards']} generations ({lag['chars']} chars, "
        f"{lag['seconds']:.1f} s): event-loop stall max {1000 * lag['max']:.1f} ms, "
        f"p99 {1000 * lag['p99']:.1f} ms, median {1000 * lag['median']:.2f} ms over "
        f"{lag['ticks']} ticks  (goal max < 100 ms: {'PASS' if lag['max'] < 0.1 else 'FAIL'})"
    )
    print(
        f"  largest CPU work of the event-loop thread within one tick: {1000 * lag['work_max']:.1f} ms "
        "(the rest of a stall is waiting for a CPU)"
    )
    print(
        f"  same app idle, side by side: stall max {1000 * lag['idle_max']:.1f} ms, "
        f"p99 {1000 * lag['idle_p99']:.1f} ms (the machine's own noise)"
    )
    print(
        f"load average during the run: {' '.join(f'{x:.2f}' for x in os.getloadavg())} "
        f"on {os.cpu_count()} CPUs"
    )


if __name__ == "__main__":
    main()
