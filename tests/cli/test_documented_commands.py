"""Every command line the README and docs/*.md show is run, through the installed `cruxtui`.

What counts as a documented command: a line in a fenced shell block (```bash, sh, shell, console)
that starts with `cruxtui ` or `python -m cruxtui` (a `$ ` prompt is dropped, `\\` continuation
lines are joined, a trailing `# comment` is dropped). `[...]` marks optional parts: a command with
any is run twice, once without them and once with all of them.

Each doc runs in its own working directory, holding the files its commands name (`FILES`), with
the environment of `environment()`: a slice of the real benchmark as the dataset, a local
OpenAI-compatible server (`cruxtui.testing.fake_openai`) wherever a doc shows
`http://127.0.0.1:8000/v1`, a config.toml with the endpoint the docs name, isolated user folders.
`cruxtui serve` runs on a free port, must print its address, and is stopped with Ctrl+C.
Words a doc uses as placeholders are replaced (`PLACEHOLDERS`); commands that need something done
first get it from `SETUP`. A command must end with the status in `EXPECTED_STATUS` (default 0) and
print no traceback; the TUI (no subcommand) is started in a real terminal and quit with ctrl+q,
a server is started, must print its URL, and is stopped.

To cover a new doc or command, add to these tables; a doc not named in `DOCS` is still run.
"""

from __future__ import annotations

import contextlib
import fcntl
import http.server
import json
import os
import pty
import re
import select
import shlex
import shutil
import signal
import struct
import subprocess
import sys
import termios
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from conftest import CODELLAMA_OUTPUT, CRUXEVAL_JSONL, REPO

from cruxtui.cli.main import COMMANDS
from cruxtui.core.data.dataset import read_jsonl
from cruxtui.core.runs.store import RunStore
from cruxtui.testing.fake_openai import CruxevalResponder, FakeOpenAI

pytestmark = pytest.mark.shared_data

DOCS = ["README.md", "docs/guide.md", "docs/scoring.md", "docs/runs.md", "docs/models.md"]
DOCS += ["docs/cases.md"]
"""The docs in the order they are run (any other docs/*.md is run after them)."""

SAMPLES = 8
"""The dataset is the benchmark's first SAMPLES samples and any other the docs name: real code,
quick to trace, run and perturb."""

SERVER_URL = "http://127.0.0.1:8000/v1"
"""The local server the docs show; the test's FakeOpenAI stands in for it."""


@dataclass
class Context:
    """What the placeholders and setup steps are filled from, per doc."""

    cwd: Path
    server_url: str
    env: dict[str, str]

    def run_ids(self) -> list[str]:
        """Stored runs in the default store, oldest first."""
        with RunStore(Path(self.env["CRUXTUI_DATA_DIR"]) / "runs.sqlite") as store:
            return [info.id for info in sorted(store.runs(), key=lambda r: r.created)]


PLACEHOLDERS: dict[str, Callable[[Context], str]] = {
    "NAME": lambda ctx: "fake-model",  # `--model NAME`: the model the local server serves
    "RUN": lambda ctx: ctx.run_ids()[0],  # a stored run
    "RUN_A": lambda ctx: ctx.run_ids()[0],
    "RUN_B": lambda ctx: ctx.run_ids()[-1],
    "DIRECT_RUN": lambda ctx: ctx.run_ids()[0],  # docs/insights.md: SETUP runs direct, then CoT
    "COT_RUN": lambda ctx: ctx.run_ids()[-1],
    "T": lambda ctx: "talk",  # `--tag T`: a tag the gallery uses
    "8000": lambda ctx: "0",  # `--port 8000`: any free port
    "cruxeval.jsonl": lambda ctx: ctx.env["CRUXTUI_DATASET"],  # the benchmark file
}
"""Whole words of a documented command -> what the test runs instead (URLs: `SERVER_URL`)."""


def _generations(ctx: Context) -> str:
    released = json.loads((CODELLAMA_OUTPUT / "generations.json").read_text())
    return json.dumps({f"sample_{i}": released[f"sample_{i}"] for i in range(SAMPLES)})


def _scored(ctx: Context) -> str:
    released = json.loads((CODELLAMA_OUTPUT / "scored.json").read_text())
    ids = [f"sample_{i}" for i in range(SAMPLES)]
    return json.dumps(
        {
            "raw_generations": {k: released["raw_generations"][k] for k in ids},
            "raw_scored_generations": {k: released["raw_scored_generations"][k] for k in ids},
        }
    )


def _sweep_file(name: str, shown_models: tuple[str, ...]) -> Callable[[Context], str]:
    """A sweep file docs/runs.md shows (```toml starting `# NAME`), aimed at the local server and
    the models it serves."""
    served = {
        "Qwen/Qwen2.5-Coder-7B-Instruct": "fake-model",
        "deepseek-ai/deepseek-coder-6.7b-instruct": "other",
    }

    def make(ctx: Context) -> str:
        doc = (REPO / "docs" / "runs.md").read_text(encoding="utf-8")
        text = doc.split(f"```toml\n# {name}\n", 1)[1].split("```", 1)[0]
        for shown, instead in [(SERVER_URL, ctx.server_url)] + [
            (m, served[m]) for m in shown_models
        ]:
            assert shown in text, f"docs/runs.md's {name} no longer shows {shown}"
            text = text.replace(shown, instead)
        return text

    return make


FILES: dict[str, Callable[[Context], str]] = {
    "generations.json": _generations,  # the paper's Code Llama output predictions, sliced
    "scored.json": _scored,  # the benchmark's own scored file, sliced
    "sweep.toml": _sweep_file(  # docs/runs.md's example sweep
        "sweep.toml",
        ("Qwen/Qwen2.5-Coder-7B-Instruct", "deepseek-ai/deepseek-coder-6.7b-instruct"),
    ),
    "perturbed.toml": _sweep_file(  # its sweep with a transform axis
        "perturbed.toml", ("Qwen/Qwen2.5-Coder-7B-Instruct",)
    ),
    "cot.txt": lambda ctx: "text_list is ['b', 'c', 'k']. The function returns 'bcksrutq'.\n",
}
"""Files the docs' commands read, written into each doc's working directory first."""

SETUP: dict[str, list[str]] = {
    "docs/guide.md": ["cruxtui runs --import generations.json --task output --name codellama-7b"],
    "docs/insights.md": [
        # a direct and a CoT run of the local server over every sample, to slice and compare
        f"cruxtui run --base-url {SERVER_URL} --model fake-model --mode direct -n 2",
        f"cruxtui run --base-url {SERVER_URL} --model fake-model --mode cot -n 2",
    ],
    "docs/cases.md": [
        # a run with failures for `cases from-run RUN` (the local server answers wrongly)
        f"cruxtui run --base-url {SERVER_URL} --model fake-model --mode cot -n 2"
        " --samples sample_0,sample_3,sample_12",
    ],
}
"""Commands run before a doc's own (same substitutions), for what its commands take as given."""

EXPECTED_STATUS: dict[str, int] = {}
"""Documented command (as extracted) -> its exit status, where the docs say it is not 0."""


# -------------------------------------------------------------------------------- extraction


@dataclass(frozen=True)
class DocCommand:
    doc: str
    line: int
    words: tuple[str, ...]
    """The command as the doc writes it, as shell words (continuations joined, comment dropped)."""

    @property
    def text(self) -> str:
        return shlex.join(self.words)

    def variants(self) -> list[list[str]]:
        """Without the optional `[...]` parts, and (if there are any) with all of them."""
        bare: list[str] = []
        full: list[str] = []
        optional = False
        for word in self.words:
            opens, closes = word.startswith("["), word.endswith("]")
            optional = optional or opens
            plain = word[1 if opens else 0 : -1 if closes else None]
            full.append(plain)
            if not optional:
                bare.append(plain)
            optional = optional and not closes
        return [bare] if bare == full else [bare, full]


_FENCE = re.compile(r"^```(\w*)\s*$")
_SHELL = {"bash", "sh", "shell", "console"}


def documented_commands(doc: str) -> list[DocCommand]:
    out = []
    lines = (REPO / doc).read_text(encoding="utf-8").splitlines()
    lang = None
    pending: tuple[int, str] | None = None
    for number, raw in enumerate(lines, 1):
        fence = _FENCE.match(raw.strip())
        if fence:
            lang = None if lang is not None else fence.group(1)
            continue
        if lang not in _SHELL:
            continue
        text = raw.strip().removeprefix("$ ")
        if pending is not None:
            start, head = pending
            text = f"{head} {text}"
        elif not text.startswith(("cruxtui ", "python -m cruxtui")):
            continue
        else:
            start = number
        if text.endswith("\\"):
            pending = (start, text[:-1].rstrip())
            continue
        pending = None
        out.append(DocCommand(doc, start, tuple(shlex.split(text, comments=True))))
    return out


def all_docs() -> list[str]:
    others = sorted(str(p.relative_to(REPO)) for p in (REPO / "docs").glob("*.md"))
    return DOCS + [d for d in others if d not in DOCS]


def test_extraction_sees_every_form() -> None:
    doc = REPO / "README.md"
    commands = documented_commands("README.md")
    assert commands, "the README shows commands"
    assert all(
        doc.read_text().splitlines()[c.line - 1].strip().startswith("cruxtui") for c in commands
    )
    words = shlex.split(
        "cruxtui run --grep 'a b' [--samples a,b] [--tag T] # comment", comments=True
    )
    assert DocCommand("x", 1, tuple(words)).variants() == [
        ["cruxtui", "run", "--grep", "a b"],
        ["cruxtui", "run", "--grep", "a b", "--samples", "a,b", "--tag", "T"],
    ]


# -------------------------------------------------------------------------------- running


def substitute(words: list[str], ctx: Context) -> list[str]:
    words = [w.replace(SERVER_URL, ctx.server_url) for w in words]
    out = [PLACEHOLDERS[w](ctx) if w in PLACEHOLDERS else w for w in words]
    if out[0] == "cruxtui":
        script = Path(sys.executable).parent / "cruxtui"
        assert script.exists(), (
            f"the cruxtui console script is not installed next to {sys.executable}"
        )
        out[0] = str(script)
    elif out[:2] == ["python", "-m"]:
        out[0] = sys.executable
    return out


def is_tui(argv: list[str]) -> bool:
    return Path(argv[0]).name == "cruxtui" and not set(argv[1:]) & set(COMMANDS)


def is_server(argv: list[str]) -> bool:
    return argv[1:3] == ["-m", "cruxtui.testing.fake_openai"]


def is_tui_server(argv: list[str]) -> bool:
    """`cruxtui serve ...`: the TUI in a browser, a server until Ctrl+C."""
    return Path(argv[0]).name == "cruxtui" and "serve" in argv[1:] and not is_tui(argv)


@dataclass
class Result:
    status: int | None
    output: str


def run_command(argv: list[str], ctx: Context) -> Result:
    if is_tui(argv):
        return run_in_terminal(argv, ctx)
    if is_server(argv):
        return run_server(argv, ctx)
    if is_tui_server(argv):
        return run_tui_server(argv, ctx)
    proc = subprocess.run(
        argv, cwd=ctx.cwd, env=ctx.env, capture_output=True, text=True, timeout=240, check=False
    )
    return Result(proc.returncode, proc.stdout + proc.stderr)


def run_server(argv: list[str], ctx: Context) -> Result:
    """Start the server, wait for the URL line it prints, send SIGTERM, collect the rest."""
    proc = subprocess.Popen(
        argv, cwd=ctx.cwd, env=ctx.env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        assert proc.stdout is not None
        ready, _, _ = select.select([proc.stdout], [], [], 60)
        first = proc.stdout.readline() if ready else ""
        if not re.fullmatch(r"http://127\.0\.0\.1:\d+/v1\n", first):
            proc.kill()
        else:
            proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    return Result(proc.returncode, first + out + err)


def run_tui_server(argv: list[str], ctx: Context) -> Result:
    """`cruxtui serve`, on a free port instead of the one the doc shows (another program may hold
    it): wait for the address it prints, press Ctrl+C (SIGINT), collect the rest."""
    from cruxtui.testing.served import free_port

    words = list(argv)
    if "--port" in words:
        words[words.index("--port") + 1] = str(free_port())
    else:
        words += ["--port", str(free_port())]
    proc = subprocess.Popen(
        words, cwd=ctx.cwd, env=ctx.env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        assert proc.stdout is not None
        ready, _, _ = select.select([proc.stdout], [], [], 60)
        first = proc.stdout.readline() if ready else ""
        if not re.fullmatch(r"cruxtui serve: open http://\S+/ .*\n", first):
            proc.kill()
        else:
            proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    return Result(proc.returncode, first + out + err)


def run_in_terminal(argv: list[str], ctx: Context, rows: int = 40, cols: int = 120) -> Result:
    """The TUI in a real pseudo-terminal: wait until it shows samples, quit with ctrl+q."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))
    env = ctx.env | {"TERM": "xterm-256color", "COLUMNS": str(cols), "LINES": str(rows)}
    proc = subprocess.Popen(
        argv, cwd=ctx.cwd, env=env, stdin=slave, stdout=slave, stderr=slave, start_new_session=True
    )
    os.close(slave)
    seen = b""
    try:
        seen += _read_until(master, lambda text: b"sample_" in text, 60)
        if b"sample_" in seen:
            os.write(master, b"\x11")  # ctrl+q
        deadline = time.monotonic() + 30
        while proc.poll() is None and time.monotonic() < deadline:
            seen += _read_until(master, lambda text: False, 0.2)
        seen += _read_until(master, lambda text: False, 0.2)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
        os.close(master)
    shown = b"sample_" in seen
    return Result(proc.returncode if shown else None, seen.decode("utf-8", "replace"))


def _read_until(fd: int, done: Callable[[bytes], bool], timeout: float) -> bytes:
    data = b""
    deadline = time.monotonic() + timeout
    while not done(data) and (left := deadline - time.monotonic()) > 0:
        ready, _, _ = select.select([fd], [], [], min(left, 0.2))
        if ready:
            try:
                chunk = os.read(fd, 65536)
            except OSError:  # the terminal closed: the app has exited
                break
            if not chunk:
                break
            data += chunk
    return data


# -------------------------------------------------------------------------------- fixtures


@contextlib.contextmanager
def serve_file(path: Path) -> Iterator[str]:
    """A local HTTP server for `cruxtui download` (the docs' URL is the real one; the test's is not)."""
    body = path.read_bytes()

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 - the http.server name
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/cruxeval.jsonl"
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture(scope="module")
def benchmark_slice(tmp_path_factory: pytest.TempPathFactory, shared_data: Path) -> Path:
    named = {w for d in all_docs() for c in documented_commands(d) for w in c.words}
    wanted = {f"sample_{i}" for i in range(SAMPLES)} | {
        m for w in named for m in re.findall(r"sample_\d+", w)
    }
    path = tmp_path_factory.mktemp("data") / "cruxeval.jsonl"
    with CRUXEVAL_JSONL.open(encoding="utf-8") as fh:
        lines = [line for line in fh if json.loads(line)["id"] in wanted]
    path.write_text("".join(lines), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def server() -> Iterator[FakeOpenAI]:
    """Answers every benchmark prompt wrongly, so runs and replays have failures to show."""
    responder = CruxevalResponder(read_jsonl(CRUXEVAL_JSONL), "wrong")
    with FakeOpenAI(responder, models=("fake-model", "other")) as fake:
        yield fake


def environment(cwd: Path, dataset: Path, server_url: str, dataset_url: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CRUXTUI_", "OPENAI_"))}
    for folder in ("cache", "data", "config"):
        (cwd.parent / folder).mkdir(exist_ok=True)
        env[f"CRUXTUI_{folder.upper()}_DIR"] = str(cwd.parent / folder)
    (cwd.parent / "config" / "config.toml").write_text(
        f'[endpoints.local]\nbase_url = "{server_url}"\nmodel = "fake-model"\n', encoding="utf-8"
    )
    env["CRUXTUI_DATASET"] = str(dataset)
    env["CRUXTUI_DATASET_URL"] = dataset_url  # `cruxtui download` fetches from this test's server
    return env


def test_every_doc_named_shows_commands() -> None:
    """`DOCS` names docs that show commands (a stale entry would run nothing)."""
    assert [d for d in DOCS if not documented_commands(d)] == []


@pytest.mark.parametrize("doc", [d for d in all_docs() if documented_commands(d)])
def test_documented_commands_run(
    doc: str, tmp_path: Path, benchmark_slice: Path, server: FakeOpenAI
) -> None:
    commands = documented_commands(doc)
    cwd = tmp_path / "work"
    cwd.mkdir()
    shutil.copytree(REPO / "cases", cwd / "cases")  # the example gallery, as in a checkout
    with serve_file(CRUXEVAL_JSONL) as dataset_url:
        ctx = Context(cwd, server.url, environment(cwd, benchmark_slice, server.url, dataset_url))
        for name, make in FILES.items():
            (cwd / name).write_text(make(ctx), encoding="utf-8")
        for step in SETUP.get(doc, []):
            result = run_command(substitute(shlex.split(step), ctx), ctx)
            assert result.status in (0, 1), f"setup `{step}` failed:\n{result.output}"
        problems = []
        ran = 0
        for command in commands:
            expected = EXPECTED_STATUS.get(command.text, 0)
            for variant in command.variants():
                argv = substitute(variant, ctx)
                result = run_command(argv, ctx)
                ran += 1
                if result.status != expected or "Traceback" in result.output:
                    problems.append(
                        f"{doc}:{command.line}: `{shlex.join(variant)}` ended with {result.status} "
                        f"(expected {expected}):\n{result.output[-3000:]}"
                    )
    assert ran >= len(commands)
    assert not problems, "\n\n".join(problems)
