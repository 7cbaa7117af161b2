"""Secrets: keys are redacted wherever text is stored or printed, `--api-key` leaves the visible
command line, and the scorer's /proc files are closed to processes of the same uid."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
from conftest import REPO

from cruxtui.core.data.dataset import load_dataset
from cruxtui.core.util import redact
from cruxtui.core.util.atomic import write_shared_text
from cruxtui.testing.fake_openai import FakeOpenAI, Fault


def test_redact_hides_registered_keys_env_keys_and_bearer_tokens(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    registered = "reg-" + uuid.uuid4().hex
    env_key = "env-" + uuid.uuid4().hex
    monkeypatch.setenv("SOME_PROVIDER_API_KEY", env_key)
    redact.register(registered)
    text = f"a {registered} b {env_key} c Authorization: Bearer tok.en-123/x= d"
    shown = redact.redact(text)
    assert registered not in shown and env_key not in shown and "tok.en-123" not in shown
    assert shown == "a [redacted] b [redacted] c Authorization: Bearer [redacted] d"
    assert redact.redact("no secrets, abc") == "no secrets, abc"


def test_shared_files_are_redacted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    key = "sk-" + uuid.uuid4().hex
    monkeypatch.setenv("OPENAI_API_KEY", key)
    out = tmp_path / "scored.json"
    write_shared_text(out, json.dumps({"reason": f"got '{key}'"}))
    assert key not in out.read_text() and "[redacted]" in out.read_text()


def _cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "cruxtui", *args],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=REPO,
        env={**os.environ, **(env or {})},
        check=False,
    )


def test_a_prediction_that_quotes_the_key_is_redacted_in_the_scored_file_and_the_output(
    tmp_path: Path,
) -> None:
    key = "sk-" + uuid.uuid4().hex
    dataset = tmp_path / "data.jsonl"
    dataset.write_text(
        json.dumps({"id": "s", "code": "def f(x):\n    return x", "input": "1", "output": "1"})
        + "\n"
    )
    generations = tmp_path / "gen.json"
    generations.write_text(json.dumps({"s": [repr(key), f"'Bearer {key}'", "1"]}))
    out = tmp_path / "scored.json"
    done = _cli(
        "score", str(generations), "--task", "output", "--dataset", str(dataset),
        "--out", str(out), "--json",
        env={"OPENAI_API_KEY": key},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    for text in (done.stdout, done.stderr, out.read_text()):
        assert key not in text
    assert "[redacted]" in out.read_text()


def test_api_key_leaves_the_command_line_and_echoed_keys_are_redacted(tmp_path: Path) -> None:
    """A server that echoes the Authorization header, in answers and in error messages."""
    key = "sk-cmdline-" + uuid.uuid4().hex
    starter = load_dataset(None, offline=True)
    store = tmp_path / "runs.sqlite"
    holder: dict[str, FakeOpenAI] = {}

    def echo(request: object) -> str:
        seen = holder["server"].log.auth_headers[-1]
        return f"[ANSWER]\nassert f(1) == 1  # you sent {seen}\n[/ANSWER]"

    faults = [Fault("cut", error=f"engine failed for Authorization: Bearer {key}")]
    with FakeOpenAI(echo, api_key=key, latency=0.5, faults=faults) as server:
        holder["server"] = server
        proc = subprocess.Popen(
            [sys.executable, "-m", "cruxtui", "run", "--base-url", server.url,
             "--model", "fake-model", "--api-key", key, "--samples", "starter_0,starter_1",
             "-n", "2", "--store", str(store), "--retries", "0"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=REPO,
        )  # fmt: skip
        cmdline = Path(f"/proc/{proc.pid}/cmdline")
        hidden = False
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and proc.poll() is None:
            try:
                shown = cmdline.read_bytes()
            except OSError:
                break
            if b"fake-model" in shown and key.encode() not in shown:
                hidden = True
                break
            time.sleep(0.02)
        stdout, stderr = proc.communicate(timeout=120)
    assert starter.samples
    if sys.platform == "linux":
        assert hidden, "the key stayed in /proc/PID/cmdline while the run went on"
    assert key not in stdout + stderr
    assert store.exists()
    assert key.encode() not in store.read_bytes()
    with sqlite3.connect(store) as db:
        raws = [r[0] for r in db.execute("SELECT raw FROM generations")]
        errors = [r[0] for r in db.execute("SELECT error FROM failures")]
    assert raws and all("[redacted]" in raw for raw in raws), raws
    assert all(key not in e for e in errors)
    assert (store.stat().st_mode & 0o777) == 0o600  # the run store stays private


_HOLD = """
import sys, time
if sys.argv[2] == "harden":
    from cruxtui.core.util.hardening import make_non_dumpable
    assert make_non_dumpable()
print("ready", flush=True)
time.sleep(30)
"""
_READ = """
import sys
try:
    print(open("/proc/%s/environ" % sys.argv[1], "rb").read().count(sys.argv[2].encode()))
except OSError as exc:
    print("refused", exc.errno)
"""


def _same_uid_reads_environ(harden: bool) -> str:
    """Start a process holding a secret; let another process of the same (unprivileged) uid
    try to read its environment."""
    from tests.sandbox.test_escapes import UNPRIVILEGED_UID, _as, _interpreter_for

    uid = UNPRIVILEGED_UID if os.geteuid() == 0 else None
    python = sys.executable if uid is None else _interpreter_for(uid)
    if python is None or (uid is not None and shutil.which("setpriv") is None):
        pytest.skip("no interpreter runnable by an unprivileged uid")
    secret = "hold-" + uuid.uuid4().hex
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(REPO)}
    holder = subprocess.Popen(
        _as(uid, [python, "-c", _HOLD, "-", "harden" if harden else "plain"]),
        stdout=subprocess.PIPE, text=True, env=env | {"CRUXTUI_HOLD_SECRET": secret}, cwd="/",
    )  # fmt: skip
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "ready"
        done = subprocess.run(
            _as(uid, [python, "-c", _READ, str(holder.pid), secret]),
            capture_output=True, text=True, env=env, cwd="/", timeout=60, check=False,
        )  # fmt: skip
        return done.stdout.strip()
    finally:
        holder.kill()
        holder.wait()


@pytest.mark.skipif(sys.platform != "linux", reason="prctl(PR_SET_DUMPABLE) is Linux's")
def test_a_non_dumpable_scorer_keeps_its_environment_from_its_own_uid() -> None:
    assert _same_uid_reads_environ(harden=False) == "1"  # the attack works on a plain process
    assert _same_uid_reads_environ(harden=True).startswith("refused")


def test_the_cli_process_is_non_dumpable() -> None:
    done = subprocess.run(
        [sys.executable, "-c",
         "import sys; from cruxtui.cli.main import main; "
         "from cruxtui.core.util.hardening import is_dumpable; "
         "main(['samples', '--grep', 'zzzz-nothing']); print(is_dumpable(), file=sys.stderr)"],
        capture_output=True, text=True, cwd=REPO, timeout=60, check=False,
    )  # fmt: skip
    if sys.platform == "linux":
        assert done.stderr.strip().splitlines()[-1] == "False", done.stderr
