"""How close the OpenAI-compatible backend gets to what the local server can serve.

The server (cruxtui.testing.fake_openai, separate process, fixed latency) answers CRUXEval output
prompts correctly. At each concurrency, side by side in one run:

- capacity: a lean client (raw keep-alive sockets, no parsing beyond Content-Length) sends the
  same requests — what the server itself can serve at that concurrency;
- complete n=5: `backend.complete` asking 5 completions per request (how a bulk run batches);
- stream: `generate_one`, one streamed completion per request (how the TUI and `--stream` run).

Prints requests/s and the ratio to the capacity. Run: `python benchmarks/bench_backend_throughput.py
[--requests 800] [--latency 0.05] [--concurrency 8,16,32]`.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from cruxtui.core.data.dataset import read_jsonl  # noqa: E402
from cruxtui.core.models import ModelSpec, SamplingParams, generate_one, make_backend  # noqa: E402
from cruxtui.core.models.prompts import build_prompt  # noqa: E402

CPU_MS: list[float] = []
"""Client CPU milliseconds per request of each measurement, in order (independent of machine load)."""

DATA = (
    Path(os.environ.get("CRUXTUI_SHARED_DATA") or REPO.parent / "shared" / "data")
    / "cruxeval.jsonl"
)


def start_server(latency: float) -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "cruxtui.testing.fake_openai",
            "--port",
            "0",
            "--latency",
            str(latency),
            "--mode",
            "correct",
            "--dataset",
            str(DATA),
        ],
        stdout=subprocess.PIPE,
        text=True,
        cwd=REPO,
    )
    assert proc.stdout is not None
    return proc, proc.stdout.readline().strip()


async def lean_client(port: int, bodies: list[bytes], total: int, concurrency: int) -> float:
    """Requests/s a near-zero-cost client gets: the server's capacity at this concurrency.

    Reads a plain body by Content-Length and a stream by its chunked framing, parsing nothing."""
    queue: asyncio.Queue[int] = asyncio.Queue()
    for i in range(total):
        queue.put_nowait(i)

    async def worker() -> None:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        while not queue.empty():
            body = bodies[queue.get_nowait() % len(bodies)]
            writer.write(
                b"POST /v1/chat/completions HTTP/1.1\r\nHost: bench\r\nContent-Type: application/json\r\n"
                b"Content-Length: %d\r\n\r\n" % len(body) + body
            )
            await writer.drain()
            head = (await reader.readuntil(b"\r\n\r\n")).lower()
            if b"transfer-encoding: chunked" in head:
                while (size := int((await reader.readuntil(b"\r\n")).strip(), 16)) > 0:
                    await reader.readexactly(size + 2)
                await reader.readexactly(2)
            else:
                length = next(
                    int(line.split(b":")[1])
                    for line in head.split(b"\r\n")
                    if line.startswith(b"content-length")
                )
                await reader.readexactly(length)
        writer.close()

    start, cpu = time.perf_counter(), time.process_time()
    await asyncio.gather(*(worker() for _ in range(concurrency)))
    CPU_MS.append((time.process_time() - cpu) / total * 1000)
    return total / (time.perf_counter() - start)


async def backend_rate(
    url: str, prompts: list, total: int, concurrency: int, stream: bool
) -> float:
    backend = make_backend(ModelSpec("openai", "fake-model", url, "chat"))
    sem = asyncio.Semaphore(concurrency)
    params = SamplingParams(n=1 if stream else 5, max_tokens=128)

    async def one(i: int) -> None:
        async with sem:
            prompt = prompts[i % len(prompts)]
            if stream:
                await generate_one(backend, prompt, params)
            else:
                assert len(await backend.complete(prompt, params)) == 5

    await one(0)  # connect and warm up outside the clock
    start, cpu = time.perf_counter(), time.process_time()
    await asyncio.gather(*(one(i) for i in range(total)))
    rate = total / (time.perf_counter() - start)
    CPU_MS.append((time.process_time() - cpu) / total * 1000)
    await backend.aclose()
    return rate


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=800)
    parser.add_argument("--latency", type=float, default=0.05)
    parser.add_argument("--concurrency", default="8,16,32")
    args = parser.parse_args()
    if not DATA.exists():
        print(f"benchmark data not found at {DATA}", file=sys.stderr)
        return 2
    samples = read_jsonl(DATA)
    prompts = [build_prompt(s, "output", "direct") for s in samples]

    def body(prompt: object, stream: bool) -> bytes:
        request = {
            "model": "fake-model",
            "messages": prompt.messages,
            "max_tokens": 128,
            "n": 1 if stream else 5,
            "stop": list(prompt.stop),
        }
        if stream:
            request |= {"stream": True, "stream_options": {"include_usage": True}}
        return json.dumps(request).encode()

    batch_bodies = [body(p, False) for p in prompts]
    stream_bodies = [body(p, True) for p in prompts]
    proc, url = start_server(args.latency)
    port = int(url.rsplit(":", 1)[1].split("/")[0])
    print(
        f"server {url}, latency {args.latency * 1000:.0f} ms, {args.requests} requests per measurement"
    )
    print(
        f"{'concurrency':>11} {'ideal':>6} | {'capacity':>8} {'complete n=5':>12} {'ratio':>5} | "
        f"{'capacity':>8} {'stream':>7} {'ratio':>5}   (requests/s)"
    )
    try:
        for c in (int(x) for x in args.concurrency.split(",")):
            cap_batch = asyncio.run(lean_client(port, batch_bodies, args.requests, c))
            batched = asyncio.run(backend_rate(url, prompts, args.requests, c, stream=False))
            cap_stream = asyncio.run(lean_client(port, stream_bodies, args.requests, c))
            streamed = asyncio.run(backend_rate(url, prompts, args.requests, c, stream=True))
            print(
                f"{c:>11} {c / args.latency:>6.0f} | {cap_batch:>8.0f} {batched:>12.0f} "
                f"{batched / cap_batch:>5.0%} | {cap_stream:>8.0f} {streamed:>7.0f} "
                f"{streamed / cap_stream:>5.0%}",
                flush=True,
            )
        lean_b, ours_b, lean_s, ours_s = (sum(CPU_MS[i::4]) / len(CPU_MS[i::4]) for i in range(4))
        print(
            f"client CPU per request: lean {lean_b:.2f} ms, complete n=5 {ours_b:.2f} ms | "
            f"lean stream {lean_s:.2f} ms, stream {ours_s:.2f} ms"
        )
        print(
            f"load average while measuring: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores "
            "(ratios drop when other processes compete for the CPU)"
        )
    finally:
        proc.kill()
        proc.wait()
    return 0


if __name__ == "__main__":
    sys.exit(main())
