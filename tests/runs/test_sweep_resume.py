"""`cruxtui sweep` over 2 endpoints x 2 models x 2 modes x 3 transforms (the original samples, an
anonymizing rename, a constant edit that applies to some samples only), killed with SIGKILL mid-way
and run again with the same command: what was stored before the kill is never requested again,
nothing is requested twice within one process, and the final summary covers every cell. Requests
are counted at the two local servers (which know the variants, so they answer them); what was
stored is read from the run store."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path

from conftest import REPO

from cruxtui.core.data.dataset import load_dataset
from cruxtui.core.perturb.variant_set import build_variants
from cruxtui.testing.fake_openai import CruxevalResponder, FakeOpenAI, FakeRequest

N = 2
SEED = 7
SAMPLES = 24
CONCURRENCY = 2
TRANSFORMS = ("rename:anonymize", "const:1,=1000")

Key = tuple[int, str, str, str, int]
"""(server port, model, mode, sample id, generation index)."""


class Recorder(CruxevalResponder):
    """Answers like `CruxevalResponder` ("mixed") and records into `asked` (shared by both
    servers) which generations each request asks for: a request for n=2 asks for indices 0 and 1;
    a single one carries seed + index."""

    def __init__(self, samples, asked: list[Key], lock: threading.Lock) -> None:  # noqa: ANN001
        super().__init__(samples, "mixed", accuracy=0.5)
        self.asked = asked
        self.port = 0
        self._record_lock = lock

    def __call__(self, request: FakeRequest) -> str:
        if request.choice == 0:
            found = self._find(request.prompt)
            assert found is not None, "every prompt names a known sample"
            n = int(request.body.get("n") or 1)
            seed = int(request.body["seed"])
            indices = list(range(n)) if n > 1 else [seed - SEED]
            mode = "cot" if "[THOUGHT]" in request.prompt else "direct"
            with self._record_lock:
                self.asked += [(self.port, request.model, mode, found[0].id, i) for i in indices]
        return super().__call__(request)


def stored(db: Path) -> set[Key]:
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        rows = con.execute(
            "SELECT r.spec, r.model, r.mode, g.sample_id, g.idx"
            " FROM generations g JOIN runs r ON g.run = r.id"
        ).fetchall()
    finally:
        con.close()
    out = set()
    for spec, model, mode, sid, idx in rows:
        port = int(json.loads(spec)["base_url"].rsplit(":", 1)[1].split("/")[0])
        out.add((port, model, mode, sid, idx))
    return out


def stored_so_far(db: Path) -> set[Key]:
    """What the running sweep has stored (nothing while the store is being created)."""
    try:
        return stored(db) if db.exists() else set()
    except sqlite3.OperationalError as exc:
        if "no such table" not in str(exc):
            raise
        return set()


def sweep_file(path: Path, urls: list[str]) -> Path:
    path.write_text(
        f"""
[sweep]
retry_wait = 0.2

[endpoints.left]
base_url = "{urls[0]}"
concurrency = {CONCURRENCY}

[endpoints.right]
base_url = "{urls[1]}"
concurrency = {CONCURRENCY}

[grid]
models = ["m1", "m2"]
tasks = ["output"]
modes = ["direct", "cot"]
temperatures = [0.8]
n = {N}
seeds = [{SEED}]
samples = {SAMPLES}
transforms = ["none", {", ".join(f'"{t}"' for t in TRANSFORMS)}]
""",
        encoding="utf-8",
    )
    return path


def test_sweep_sigkill_then_resume_requests_nothing_twice(tmp_path: Path) -> None:
    dataset = load_dataset(offline=True)
    originals = dataset.samples[:SAMPLES]
    variants = {t: build_variants(t, originals) for t in TRANSFORMS}
    per_transform = {"none": SAMPLES} | {t: len(v.samples) for t, v in variants.items()}
    assert per_transform["rename:anonymize"] > SAMPLES // 2
    assert 0 < per_transform["const:1,=1000"] < SAMPLES  # some samples are skipped
    known = list(originals) + [s for v in variants.values() for s in v.samples.values()]
    asked: list[Key] = []
    lock = threading.Lock()
    servers = []
    for _ in range(2):
        recorder = Recorder(known, asked, lock)
        server = FakeOpenAI(recorder, latency=0.1, models=("m1", "m2"))
        recorder.port = server.port
        servers.append(server.start())
    store = tmp_path / "runs.sqlite"
    try:
        toml = sweep_file(tmp_path / "sweep.toml", [s.url for s in servers])
        cmd = [sys.executable, "-m", "cruxtui", "sweep", str(toml), "--store", str(store)]
        cmd += ["--json", "--markdown", str(tmp_path / "table.md")]
        env = {**os.environ, "PYTHONPATH": str(REPO)}
        total = 2 * 2 * 2 * sum(per_transform.values()) * N

        first = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        deadline = time.monotonic() + 60
        # Kill once a good part is stored, perturbed cells have begun, and well before the end.
        while time.monotonic() < deadline and first.poll() is None:
            so_far = stored_so_far(store)
            if len(so_far) >= total // 4 and any("~" in key[3] for key in so_far):
                break
            time.sleep(0.02)
        assert first.poll() is None, "the sweep ended before it could be killed"
        first.send_signal(signal.SIGKILL)
        first.wait(timeout=10)
        time.sleep(0.3)  # requests in flight at the kill reach the servers' log
        before_kill = list(asked)
        at_kill = stored(store)
        assert 0 < len(at_kill) < total, "the kill must land mid-way"
        assert any("~" in key[3] for key in at_kill), "and after perturbed cells have started"

        second = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120)
        assert second.returncode == 0, second.stderr[-2000:]
        after = asked[len(before_kill) :]
    finally:
        for s in servers:
            s.close()

    # Nothing requested twice by one process.
    for asked in (before_kill, after):
        assert [k for k, c in Counter(asked).items() if c > 1] == []
    # Nothing stored before the kill was asked for again, perturbed cells included.
    assert set(after) & at_kill == set()
    assert any("~" in key[3] for key in after)
    # Asked twice overall: only what was in flight when the process died (a request per endpoint
    # slot, N generations each), never stored.
    again = set(before_kill) & set(after)
    assert len(again) <= 2 * CONCURRENCY * N
    # Every generation of every cell is stored, and was asked for.
    final = stored(store)
    assert len(final) == total
    assert final <= set(before_kill) | set(after)

    # Every variant id asked for is one the transforms make (the truth re-derived for it).
    variant_ids = {sid for v in variants.values() for sid in v.samples}
    asked_ids = {k[3] for k in before_kill + after}
    assert {sid for sid in asked_ids if "~" in sid} == variant_ids

    summaries = [json.loads(line) for line in second.stdout.splitlines()]
    cells = {(s["endpoint"], s["model"], s["mode"], s["transform"]) for s in summaries}
    assert cells == {
        (e, m, d, t)
        for e in ("left", "right")
        for m in ("m1", "m2")
        for d in ("direct", "cot")
        for t in per_transform
    }
    runs: dict[tuple[str, str, str], set[str]] = {}
    for s in summaries:
        count = per_transform[s["transform"]]
        assert s["status"] == "done" and s["generations"] == count * N and s["missing"] == 0
        assert (s["samples"], s["skipped"]) == (count, SAMPLES - count)
        assert sum(s["skipped_reasons"].values()) == s["skipped"]
        assert (s["task"], s["temperature"], s["n"]) == ("output", 0.8, N)
        assert s["run_id"] and 0 <= s["interval"][0] <= s["pass_at_1"] <= s["interval"][1] <= 100
        assert s["pass_at_5"] is None  # n=2 cannot estimate pass@5
        runs.setdefault((s["endpoint"], s["model"], s["mode"]), set()).add(s["run_id"])
    # A configuration's transforms share its stored run (as the Perturb screen's run panels do).
    assert all(len(ids) == 1 for ids in runs.values()) and len(runs) == 8
    table = (tmp_path / "table.md").read_text()
    header = (
        "| model | output direct | output direct, rename:anonymize | output direct, const:1,=1000"
    )
    assert table.startswith(header + " | output cot | output cot, rename:anonymize |")
    rows = [line.split(" | ")[0] for line in table.splitlines() if " @ " in line]
    assert sorted(rows) == ["| m1 @ left", "| m1 @ right", "| m2 @ left", "| m2 @ right"]
    skipped = SAMPLES - per_transform["const:1,=1000"]
    assert f"- const:1,=1000: {skipped} of {SAMPLES} samples skipped (" in table
