"""An endpoint nobody listens on, or whose host does not exist, stops `cruxtui run` at once: one
`cruxtui: error:` line, exit 2, no run left in the store. A refused connect does not heal in the
seconds a retry waits, so it is not retried (timeouts, 429 and 5xx still are)."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import REPO

from cruxtui.cli.main import main as cli_main
from cruxtui.core.runs.store import RunStore


@pytest.fixture
def closed_port() -> Iterator[int]:
    """A local port that refuses connections: bound (so nothing else takes it) but not listening."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        yield s.getsockname()[1]


def _run_args(url: str, store: Path) -> list[str]:
    # The default retry policy (five attempts, backoff from 0.5 s): what a user gets.
    return ["run", "--base-url", url, "--model", "m", "--samples", "starter_0,starter_1"] + [
        "--store",
        str(store),
    ]


def _error_lines(err: str) -> list[str]:
    return [ln for ln in err.splitlines() if ln.strip()]


@pytest.mark.parametrize(
    ("host", "says"),
    [("127.0.0.1:{port}", "connection refused"), ("no-such-host.invalid:8000", "not found")],
)
def test_unreachable_endpoint_fails_at_once_with_one_line(
    host: str, says: str, closed_port: int, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    url = f"http://{host.format(port=closed_port)}/v1"
    store = tmp_path / "runs.sqlite"
    import cruxtui.core.models.openai_compat  # noqa: F401 - the import (0.4 s) is not the wait

    start = time.monotonic()
    code = cli_main(_run_args(url, store))
    took = time.monotonic() - start
    out, err = capsys.readouterr()
    assert took < 2.0, f"gave up after {took:.1f} s"
    assert code == 2
    lines = _error_lines(err)
    assert len(lines) == 1 and lines[0].startswith(f"cruxtui: error: cannot connect to {url}")
    assert says in lines[0] and "attempts" not in lines[0], lines[0]
    assert out == ""
    with RunStore(store) as opened:
        assert opened.runs() == []  # nothing stored: a later run with the right URL starts clean


def test_installed_command_refused_endpoint(closed_port: int, tmp_path: Path) -> None:
    """The same through the real command line: exit 2, one line, no traceback."""
    url = f"http://127.0.0.1:{closed_port}/v1"
    proc = subprocess.run(
        [sys.executable, "-m", "cruxtui", *_run_args(url, tmp_path / "runs.sqlite")],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 2
    assert _error_lines(proc.stderr) == [
        f"cruxtui: error: cannot connect to {url} (connection refused; is the server running?)"
    ]
