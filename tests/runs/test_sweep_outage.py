"""One endpoint dies mid-sweep (its server process is SIGKILLed) and comes back on the same port:
its cells wait and retry with growing waits while the other endpoint's cells go on, the progress
says which endpoint is down, and once it answers again the sweep finishes with every cell
complete and nothing stored twice. The dead server is a real process, so its connections die
with it, as a crashed `vllm serve` would."""

from __future__ import annotations

import json
import os
import re
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

from conftest import REPO

from cruxtui.core.data.dataset import load_dataset, starter_path
from cruxtui.testing.fake_openai import CruxevalResponder, FakeOpenAI

SAMPLES = 40
N = 2
LATENCY = 0.1
RETRY_WAIT = 0.25


def serve(port: int = 0) -> tuple[subprocess.Popen[str], str]:
    """The fake server as a process on `port` (0: a free one); returns it and its URL."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "cruxtui.testing.fake_openai", "--port", str(port)]
        + ["--latency", str(LATENCY), "--mode", "correct", "--dataset", str(starter_path())]
        + ["--model", "m1"],
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    assert proc.stdout is not None
    url = proc.stdout.readline().strip()
    assert url.startswith("http://127.0.0.1:"), url
    return proc, url


def stored_by_port(db: Path) -> dict[int, int]:
    """Generations stored so far per endpoint (by the port of the run's base URL)."""
    if not db.exists():
        return {}
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5)
    try:
        rows = con.execute(
            "SELECT r.spec, COUNT(*) FROM generations g JOIN runs r ON g.run = r.id GROUP BY r.id"
        ).fetchall()
    except sqlite3.OperationalError as exc:
        if "no such table" not in str(exc):
            raise
        return {}
    finally:
        con.close()
    out: dict[int, int] = {}
    for spec, count in rows:
        port = int(json.loads(spec)["base_url"].rsplit(":", 1)[1].split("/")[0])
        out[port] = out.get(port, 0) + count
    return out


def wait_for(condition, what: str, timeout: float = 60) -> None:  # noqa: ANN001
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.02)


def test_endpoint_killed_mid_sweep_waits_retries_and_resumes(tmp_path: Path) -> None:
    dataset = load_dataset(offline=True)
    assert len(dataset) >= SAMPLES
    right, right_url = serve()
    right_port = int(right_url.rsplit(":", 1)[1].split("/")[0])
    left = FakeOpenAI(
        CruxevalResponder(dataset.samples, "correct"), latency=LATENCY, models=("m1",)
    ).start()
    sweep = None
    try:
        toml = tmp_path / "sweep.toml"
        toml.write_text(
            f"[sweep]\nretry_wait = {RETRY_WAIT}\nmax_retry_wait = 2\nattempts = 12\n"
            f'[endpoints.left]\nbase_url = "{left.url}"\nconcurrency = 2\n'
            f'[endpoints.right]\nbase_url = "{right_url}"\nconcurrency = 2\nretries = 0\n'
            f'[grid]\nmodels = ["m1"]\nmodes = ["direct", "cot"]\nn = {N}\nseeds = [3]\n'
            f"samples = {SAMPLES}\n",
            encoding="utf-8",
        )
        store = tmp_path / "runs.sqlite"
        sweep = subprocess.Popen(
            [sys.executable, "-m", "cruxtui", "sweep", str(toml), "--store", str(store), "--json"],
            env={**os.environ, "PYTHONPATH": str(REPO)},
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        per_endpoint = 2 * SAMPLES * N
        wait_for(
            lambda: stored_by_port(store).get(right_port, 0) >= per_endpoint // 5,
            "the right endpoint to store a fifth of its work",
        )
        right.kill()
        right.wait(timeout=10)
        time.sleep(0.3)  # answers received just before the kill are scored and stored
        at_kill = stored_by_port(store)
        left_at_kill = left.request_count
        assert at_kill[right_port] < per_endpoint and sweep.poll() is None
        # The other endpoint's cells go on while this one is down.
        wait_for(lambda: left.request_count >= left_at_kill + 10, "the left endpoint to go on")
        time.sleep(1.5)  # a few rounds of waiting
        assert stored_by_port(store).get(right_port, 0) == at_kill[right_port]
        right, _ = serve(right_port)
        out, err = sweep.communicate(timeout=120)
    finally:
        if sweep is not None and sweep.poll() is None:
            sweep.kill()
        right.kill()
        right.wait(timeout=10)
        left.close()

    assert sweep.returncode == 0, err[-3000:]
    summaries = [json.loads(line) for line in out.splitlines()]
    assert len(summaries) == 4
    for s in summaries:
        assert (s["status"], s["generations"], s["missing"]) == ("done", SAMPLES * N, 0), s
        assert s["endpoint_down"] is None and s["pass_at_1"] == 100.0
    assert {s["attempts"] for s in summaries if s["endpoint"] == "left"} == {1}
    assert all(s["attempts"] >= 2 for s in summaries if s["endpoint"] == "right")
    assert stored_by_port(store)[right_port] == per_endpoint  # everything, each once

    # What the user saw: which endpoint is down, the waits growing, the endpoint back.
    assert "endpoint left is down" not in err
    rounds = [
        (int(r), float(w))
        for w, r in re.findall(
            r"endpoint right is down \(.*?\): its cells retry in ([\d.]+)s \(round (\d+)", err
        )
    ]
    assert len(rounds) >= 2, err[-3000:]
    assert [r for r, _ in rounds] == list(range(2, 2 + len(rounds)))
    waits = [w for _, w in rounds]
    assert waits[0] == RETRY_WAIT and waits[1] == 2 * RETRY_WAIT
    assert all(b >= a for a, b in zip(waits, waits[1:], strict=False)) and max(waits) <= 2
    assert re.search(r"down: right \(retry in [\d.]+s\)", err), err[-3000:]
    assert "endpoint right answers again" in err
