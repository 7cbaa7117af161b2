"""Escape attempts from inside a check, with the scorer running as root and as an ordinary user.

CI runs as root, where checks get a private uid; an ordinary user has no such thing, so the
same attempts also run with the scorer started under an unprivileged uid (`setpriv`), in a
subprocess, with an interpreter that uid can run. Every attempt runs with the audit hook and
without it: with it, nothing gets through; without it, whatever the kernel is reported to
enforce (`Sandbox.enforcement()`, what `cruxtui doctor` shows) must hold on its own.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import uuid
from pathlib import Path
from typing import Any

import pytest
from conftest import REPO

HARNESS = Path(__file__).with_name("escape_attempts.py")
UNPRIVILEGED_UID = 65534
NETWORK = (
    "ctypes socket + connect to the TCP listener",
    "socket through ctypes' C types left in memory",
    "TCP connect to 127.0.0.1",
    "UDP datagram to 127.0.0.1",
    "abstract unix socket",
    "path unix socket",
)
FILES = (
    "rebind guard globals, then write outside",
    "read the scorer's /proc/PID/environ",
    "read the scorer's /proc/PID/cmdline",
    "read the worker's /proc/PID/environ",
    "list $HOME",
    "append to $HOME/.bashrc",
    "exec a shell",
)


def _interpreter_for(uid: int) -> str | None:
    """An interpreter of our Python version that `uid` can run and re-run (the pool starts its
    workers with sys.executable): ours if it is readable by that uid, else the system's."""
    version = f"{sys.version_info[0]}.{sys.version_info[1]}"
    candidates = [sys.executable, shutil.which(f"python{version}", path="/usr/bin:/usr/local/bin")]
    probe = (
        "import subprocess, sys; "
        f"assert '%d.%d' % sys.version_info[:2] == {version!r}; "
        "subprocess.run([sys.executable, '-I', '-c', 'import json'], check=True)"
    )
    for candidate in candidates:
        if not candidate:
            continue
        done = subprocess.run(
            _as(uid, [candidate, "-c", probe]),
            capture_output=True,
            timeout=60,
            check=False,
            env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(REPO)},
            cwd="/",
        )
        if done.returncode == 0:
            return candidate
    return None


def _as(uid: int | None, command: list[str]) -> list[str]:
    if uid is None:
        return command
    return ["setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups", *command]


def _run_harness(uid: int | None) -> dict[str, Any]:
    python = sys.executable if uid is None else _interpreter_for(uid)
    if python is None:
        pytest.skip(f"no interpreter of this Python version is runnable by uid {uid}")
    home = Path(tempfile.mkdtemp(prefix="cruxtui-escape-home-", dir="/tmp"))
    world = Path(tempfile.mkdtemp(prefix="cruxtui-escape-world-", dir="/tmp"))
    try:
        (home / ".bashrc").write_text("# the user's own\n")
        if uid is not None:
            for path in (home, home / ".bashrc"):
                os.chown(path, uid, uid)
        home.chmod(0o700)
        world.chmod(0o1777)
        secret = "sk-escape-" + uuid.uuid4().hex
        done = subprocess.run(
            _as(uid, [python, str(HARNESS), str(home), str(world), secret]),
            capture_output=True,
            text=True,
            timeout=240,
            check=False,
            cwd="/",
            env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(REPO), "HOME": str(home)},
        )
        assert done.returncode == 0, done.stderr[-4000:]
        result: dict[str, Any] = json.loads(done.stdout.splitlines()[-1])
        result["home_entries"] = sorted(p.name for p in home.iterdir())
        return result
    finally:
        shutil.rmtree(home, ignore_errors=True)
        shutil.rmtree(world, ignore_errors=True)


MODES = ["as this user", "as an unprivileged uid"]


@pytest.fixture(scope="module", params=MODES)
def escapes(request: pytest.FixtureRequest) -> dict[str, Any]:
    if sys.platform != "linux":
        pytest.skip("the escape harness uses Linux's /proc")
    if request.param == MODES[1]:
        if os.geteuid() != 0:
            pytest.skip("already unprivileged: the first mode covered it")
        if shutil.which("setpriv") is None:
            pytest.skip("setpriv (util-linux) is needed to start the scorer as another uid")
        return _run_harness(UNPRIVILEGED_UID)
    return _run_harness(None)


def _escaped(outcome: list[Any]) -> bool:
    status, value, _error = outcome
    return status == "ok" and isinstance(value, str) and value.startswith("ESCAPED")


def test_the_harness_ran_as_intended(escapes: dict[str, Any]) -> None:
    assert escapes["uid"] in (os.getuid(), UNPRIVILEGED_UID)
    assert escapes["results"]


def test_nothing_gets_through_the_guarded_sandbox(escapes: dict[str, Any]) -> None:
    through = [name for name, r in escapes["results"].items() if _escaped(r["guarded"])]
    assert through == [], {n: escapes["results"][n]["guarded"] for n in through}


def test_the_kernel_alone_stops_the_network_attempts(escapes: dict[str, Any]) -> None:
    if escapes["report"]["network"] == "none":
        pytest.skip("this kernel offers no network isolation to checks")
    through = [n for n in NETWORK if _escaped(escapes["results"][n]["unguarded"])]
    assert through == [], {n: escapes["results"][n]["unguarded"] for n in through}


def test_the_kernel_alone_stops_the_filesystem_attempts(escapes: dict[str, Any]) -> None:
    if escapes["report"]["filesystem"] == "none":
        pytest.skip("this kernel offers no Landlock")
    through = [n for n in FILES if _escaped(escapes["results"][n]["unguarded"])]
    assert through == [], {n: escapes["results"][n]["unguarded"] for n in through}


def test_no_listener_received_anything_and_no_file_was_touched(escapes: dict[str, Any]) -> None:
    assert escapes["received"] == {"tcp": [], "udp": [], "unix_abstract": [], "unix_path": []}
    assert escapes["strays"] == []
    assert not escapes["bashrc_changed"]
    assert escapes["home_entries"] == [".bashrc"]


def test_no_secret_of_the_scorer_reached_a_result(escapes: dict[str, Any]) -> None:
    assert not escapes["secret_leaked"]


def test_signals_forks_and_ctypes_stay_refused_without_the_guard(escapes: dict[str, Any]) -> None:
    results = escapes["results"]
    assert not _escaped(results["fork"]["unguarded"])  # RLIMIT_NPROC
    if escapes["report"]["signals"] != "none" or escapes["report"].get("uid") is not None:
        assert not _escaped(results["signal the scorer"]["unguarded"])
    # The child unloads the ctypes package before the check runs; its C types stay in memory,
    # and calling through them is refused by the guard (and confined by the kernel without it).
    attempt = results["socket through ctypes' C types left in memory"]["guarded"]
    assert attempt[0] == "exception" and "blocked by the cruxtui sandbox: ctypes" in attempt[2]
    for name in (
        "rebind guard globals, then write outside",
        "rebind guard globals, then os.system",
    ):
        assert "blocked by the cruxtui sandbox" in results[name]["guarded"][2], results[name]


def test_what_is_enforced_is_reported(escapes: dict[str, Any]) -> None:
    report = escapes["report"]
    assert {"network", "filesystem", "uid"} <= set(report)
    if Path("/sys/kernel/security/landlock").exists() or sys.platform == "linux":
        assert report["filesystem"].startswith("landlock"), report
    if escapes["uid"] == 0:
        assert report["uid"] is not None  # a private uid per worker
    else:
        assert report["uid"] is None


def test_cruxtui_trace_call_reaches_no_listener(tmp_path: Path) -> None:
    """The issue's route: a traced call, run by the CLI, that connects to 127.0.0.1."""
    import socket

    dataset = tmp_path / "data.jsonl"
    dataset.write_text(
        json.dumps({"id": "s", "code": "def f(x):\n    return x", "input": "1", "output": "1"})
        + "\n"
    )
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(1)
        listener.settimeout(0.5)
        port = listener.getsockname()[1]
        call = f"f(__import__('socket').create_connection(('127.0.0.1', {port})).sendall(b'x'))"
        done = subprocess.run(
            [sys.executable, "-m", "cruxtui", "trace", "s", "--call", call, "--dataset",
             str(dataset)],
            capture_output=True, text=True, timeout=120, cwd=REPO, check=False,
        )  # fmt: skip
        try:
            conn, _ = listener.accept()
            conn.close()
            received = True
        except OSError:
            received = False
    assert "Traceback" not in done.stderr
    assert not received
