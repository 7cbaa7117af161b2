"""Dataset loading: the official file, the bundled starter set, bad files, source order, download.

The download tests run a real HTTP server on 127.0.0.1 (stdlib `http.server` in a thread) that
serves the benchmark's bytes read from ../shared/data — served, never committed.
"""

from __future__ import annotations

import hashlib
import json
import re
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from conftest import CRUXEVAL_JSONL, REPO

from cruxtui.cli.main import main as cli_main
from cruxtui.core.data.dataset import (
    OFFICIAL_SHA256,
    Dataset,
    DatasetError,
    DownloadError,
    Source,
    cached_official_path,
    called_methods,
    download_official,
    load_dataset,
    read_jsonl,
    starter_path,
)

# --------------------------------------------------------------------------- official file


def test_official_file_loads_all_800_samples_in_order(official: Dataset) -> None:
    assert len(official) == 800
    assert [s.id for s in official] == [f"sample_{i}" for i in range(800)]
    assert official.source is Source.PATH
    assert official["sample_42"].id == "sample_42"
    assert "sample_800" not in official
    with pytest.raises(KeyError, match="sample_800"):
        official["sample_800"]


@pytest.mark.shared_data
def test_official_file_matches_the_pinned_checksum() -> None:
    """The shared copy is the pinned official file, so serving it exercises the real check."""
    assert hashlib.sha256(CRUXEVAL_JSONL.read_bytes()).hexdigest() == OFFICIAL_SHA256


def test_metadata_of_known_samples(official: Dataset) -> None:
    s0 = official["sample_0"]
    # def f(nums): / output = [] / for n in nums: / output.append(...) / output.sort(...) / return
    assert s0.lines == 6
    assert s0.chars == len(s0.code)
    assert s0.first_line == "output = []"
    assert s0.output_type == "list"
    assert {"append", "count", "sort"} <= set(s0.methods)
    assert s0.call == "f([1, 1, 3, 1, 3, 1])"
    assert official["sample_1"].output_type == "dict"  # "{1: None, 2: None}"
    assert official["sample_3"].output_type == "str"  # "'bcksrutq'"
    assert official["sample_5"].output_type == "tuple"  # "(0, 'xxxxxxxxxxxxxxxxxx')"


def test_lines_count_every_line_of_code(official: Dataset) -> None:
    for s in official:
        assert s.lines == s.code.strip("\n").count("\n") + 1, s.id


def test_output_types_cover_the_benchmark(official: Dataset) -> None:
    counts: dict[str, int] = {}
    for s in official:
        counts[s.output_type] = counts.get(s.output_type, 0) + 1
    assert {"str", "list", "int", "bool", "dict", "tuple"} <= counts.keys()
    assert max(counts, key=counts.__getitem__) == "str"
    assert sum(counts.values()) == 800


def test_methods_found_by_ast_agree_with_a_textual_scan(official: Dataset) -> None:
    """`.rfind(` in the text and `rfind` in `methods` pick the same samples (none in strings)."""
    by_text = {s.id for s in official if re.search(r"\.rfind\(", s.code)}
    by_ast = {s.id for s in official if "rfind" in s.methods}
    assert by_text, "the benchmark has rfind samples"
    assert by_ast == by_text


def test_called_methods_counts_calls_only() -> None:
    code = (
        "def f(s, d):\n"
        "    # s.rfind('x') in a comment\n"
        "    t = 'a.partition(b)'\n"
        "    g = s.upper\n"  # attribute, not a call
        "    d.setdefault('k', []).append(s.strip())\n"
        "    return s.frobnicate(), g()\n"  # not a str/list/dict method
    )
    assert called_methods(code) == ("append", "setdefault", "strip")
    assert called_methods("def f(:") == ()


def test_digest_identifies_the_content(official: Dataset) -> None:
    again = load_dataset(CRUXEVAL_JSONL)
    assert again.digest == official.digest
    assert re.fullmatch(r"[0-9a-f]{64}", official.digest)
    assert load_dataset(starter_path()).digest != official.digest


# --------------------------------------------------------------------------- starter set


def test_starter_set_has_the_benchmark_format() -> None:
    raw = [json.loads(line) for line in starter_path().read_text(encoding="utf-8").splitlines()]
    assert len(raw) >= 30
    assert [r["id"] for r in raw] == [f"starter_{i}" for i in range(len(raw))]
    starter = load_dataset(starter_path())
    assert len(starter) == len(raw)
    for s in starter:
        assert s.code.startswith("def f("), s.id
        assert 3 <= s.lines <= 12, s.id
        assert s.output_type != "expr", s.id


@pytest.mark.shared_data
def test_starter_set_has_the_benchmarks_keys_in_its_order() -> None:
    raw = [json.loads(line) for line in starter_path().read_text(encoding="utf-8").splitlines()]
    with CRUXEVAL_JSONL.open(encoding="utf-8") as fh:
        official_keys = list(json.loads(fh.readline()))
    assert raw and all(list(r) == official_keys for r in raw)


def test_starter_set_uses_the_methods_the_benchmark_is_about() -> None:
    used = {m for s in load_dataset(starter_path()) for m in s.methods}
    assert {"rfind", "removeprefix", "partition", "count", "insert", "pop", "setdefault"} <= used


def test_starter_set_is_not_copied_from_the_benchmark(official: Dataset) -> None:
    def norm(code: str) -> str:
        return re.sub(r"\s+", " ", code).strip()

    benchmark = {norm(s.code) for s in official}
    copied = [s.id for s in load_dataset(starter_path()) if norm(s.code) in benchmark]
    assert copied == []


_VERIFY = r"""
import json, sys
bad = []
n = 0
for line in open(sys.argv[1], encoding="utf-8"):
    row = json.loads(line)
    ns = {}
    exec(row["code"], ns)
    args = eval("(" + row["input"] + ",)", {})
    got = ns["f"](*args)
    n += 1
    if eval(row["output"], {}) != got or type(eval(row["output"], {})) is not type(got):
        bad.append([row["id"], row["output"], repr(got)])
print(json.dumps({"checked": n, "bad": bad}))
"""


def test_every_starter_output_is_what_the_code_returns() -> None:
    """Execute each starter function on its input in a separate interpreter and compare."""
    proc = subprocess.run(
        [sys.executable, "-I", "-c", _VERIFY, str(starter_path())],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert report["checked"] >= 30
    assert report["bad"] == []


def test_starter_file_is_what_the_generator_writes() -> None:
    proc = subprocess.run(
        [sys.executable, str(REPO / "scripts" / "make_starter.py"), "--check"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr


# --------------------------------------------------------------------------- bad files

_GOOD = {"code": "def f(x):\n    return x", "input": "1", "output": "1", "id": "a"}


def _line(**changes: object) -> str:
    row = dict(_GOOD) | changes
    return json.dumps({k: v for k, v in row.items() if v is not ...})


BAD_FILES = [
    # (case, text, line, problem fragment)
    ("malformed", _line() + '\n{"id": "b", "code": \n', 2, "not valid JSON"),
    ("not-object", "[1, 2]\n", 1, "expected a JSON object, got list"),
    (
        "missing-field",
        _line(id="a") + "\n" + _line(id="b", output=...) + "\n",
        2,
        "missing field(s): output",
    ),
    ("non-string", _line(input=5) + "\n", 1, "must be strings: input"),
    (
        "duplicate-id",
        _line(id="a") + "\n" + _line(id="b") + "\n" + _line(id="a") + "\n",
        3,
        "duplicate id 'a' (first on line 1)",
    ),
    ("no-f", _line(code="def g(x):\n    return x") + "\n", 1, "does not define a function `f`"),
    (
        "nested-f-only",
        _line(code="def g():\n    def f():\n        pass") + "\n",
        1,
        "does not define a function `f`",
    ),
    ("unparsable", _line(code="def f(x)\n    return x") + "\n", 1, "code does not parse"),
    ("null-byte", _line(code="def f(x):\n    return x\x00") + "\n", 1, "code does not parse"),
    ("blank-lines-counted", _line() + "\n\n\n{oops\n", 4, "not valid JSON"),
    ("empty", "", None, "no samples in file"),
    ("only-blank", "\n\n  \n", None, "no samples in file"),
]


@pytest.mark.parametrize(
    ("case", "text", "line", "problem"), BAD_FILES, ids=[b[0] for b in BAD_FILES]
)
def test_bad_file_error_names_file_line_and_problem(
    tmp_path: Path, case: str, text: str, line: int | None, problem: str
) -> None:
    path = tmp_path / f"{case}.jsonl"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(DatasetError) as info:
        load_dataset(path)
    err = info.value
    assert err.path == str(path)
    assert err.line == line
    assert problem in err.problem
    where = f"{path}:{line}" if line is not None else str(path)
    assert str(err) == f"{where}: {err.problem}"


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(DatasetError, match=r"nope\.jsonl: file not found$"):
        load_dataset(tmp_path / "nope.jsonl")


def test_directory(tmp_path: Path) -> None:
    with pytest.raises(DatasetError, match="is a directory"):
        load_dataset(tmp_path)


def test_not_utf8(tmp_path: Path) -> None:
    path = tmp_path / "latin1.jsonl"
    path.write_bytes(_line(output="'caf\xe9'").encode("utf-8").replace(b"\\u00e9", b"\xe9"))
    with pytest.raises(DatasetError, match="not UTF-8") as info:
        load_dataset(path)
    assert info.value.path == str(path)


def test_valid_oddities_load(tmp_path: Path) -> None:
    """A BOM, CRLF line ends and unescaped U+2028/U+0085 inside strings are all valid JSONL."""
    rows = [
        _line(id="a"),
        json.dumps(_GOOD | {"id": "b", "output": "'\u2028\x85'"}, ensure_ascii=False),
        _line(id="c"),
    ]
    path = tmp_path / "odd.jsonl"
    path.write_bytes(b"\xef\xbb\xbf" + "\r\n".join(rows).encode("utf-8") + b"\r\n")
    ds = read_jsonl(path)
    assert [s.id for s in ds] == ["a", "b", "c"]
    assert ds[1].output == "'\u2028\x85'"
    assert ds[2].origin == f"{path}:3"


# --------------------------------------------------------------------------- local HTTP server


@dataclass
class LocalServer:
    """Serves fixed bytes per path on 127.0.0.1 and counts requests."""

    base: str
    routes: dict[str, bytes] = field(default_factory=dict)
    hits: list[str] = field(default_factory=list)

    def url(self, path: str) -> str:
        return f"{self.base}{path}"


@pytest.fixture
def server() -> Iterator[LocalServer]:
    state = LocalServer(base="")

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 - http.server API
            state.hits.append(self.path)
            if self.path == "/cut-short":
                # Promise more bytes than are sent, then close: the client sees IncompleteRead.
                self.send_response(200)
                self.send_header("Content-Length", "100000")
                self.end_headers()
                self.wfile.write(b'{"id": "sample_0"')
                self.close_connection = True
                return
            body = state.routes.get(self.path)
            if body is None:
                self.send_error(404)
                return
            self.send_response(200)
            self.send_header("Content-Type", "application/octet-stream")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: object) -> None:  # noqa: A002
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    state.base = f"http://127.0.0.1:{httpd.server_address[1]}"
    thread = threading.Thread(
        target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
    )
    thread.start()
    try:
        yield state
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(timeout=5)


@pytest.fixture
def official_bytes(shared_data: Path) -> bytes:
    return CRUXEVAL_JSONL.read_bytes()


@pytest.fixture
def closed_port_url() -> str:
    """An address on 127.0.0.1 where nothing listens (connection refused)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}/cruxeval.jsonl"


def _cache_files() -> list[str]:
    cache = cached_official_path().parent
    return sorted(p.name for p in cache.iterdir()) if cache.exists() else []


def test_download_good_file_is_cached_and_verified(
    server: LocalServer, official_bytes: bytes, monkeypatch: pytest.MonkeyPatch
) -> None:
    server.routes["/cruxeval.jsonl"] = official_bytes
    monkeypatch.setenv("CRUXTUI_DATASET_URL", server.url("/cruxeval.jsonl"))
    got = download_official()
    assert got == cached_official_path()
    assert got.read_bytes() == official_bytes
    assert _cache_files() == [got.name]  # no temp file left beside it
    assert server.hits == ["/cruxeval.jsonl"]


def test_download_wrong_file_raises_and_writes_nothing(
    server: LocalServer, official_bytes: bytes
) -> None:
    server.routes["/cruxeval.jsonl"] = official_bytes.replace(b"sample_7", b"sample_x", 1)
    with pytest.raises(DownloadError) as info:
        download_official(server.url("/cruxeval.jsonl"))
    message = str(info.value)
    assert "SHA-256 checksum" in message
    assert OFFICIAL_SHA256[:16] in message
    assert "not saved" in message
    assert _cache_files() == []


def test_download_wrong_file_keeps_an_existing_cache(
    server: LocalServer, official_bytes: bytes, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("CRUXTUI_OFFLINE")
    cached = cached_official_path()
    cached.parent.mkdir(parents=True)
    cached.write_bytes(official_bytes)
    server.routes["/bad"] = b"not the benchmark\n"
    assert cli_main(["download", "--url", server.url("/bad")]) == 2
    assert cached.read_bytes() == official_bytes
    assert _cache_files() == [cached.name]


@pytest.mark.parametrize("how", ["flag-before", "flag-after", "env"])
def test_download_while_offline_refuses_without_a_request(
    server: LocalServer,
    how: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    server.routes["/cruxeval.jsonl"] = b"anything\n"
    url = server.url("/cruxeval.jsonl")
    argv = {
        "flag-before": ["--offline", "download", "--url", url],
        "flag-after": ["download", "--offline", "--url", url],
        "env": ["download", "--url", url],
    }[how]
    if how != "env":
        monkeypatch.delenv("CRUXTUI_OFFLINE")
    assert cli_main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("cruxtui: error: ") and "nothing is downloaded" in err
    assert server.hits == []
    assert _cache_files() == []


def test_download_too_large_stops_reading_and_writes_nothing(
    server: LocalServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    import cruxtui.core.data.dataset as dataset_module

    monkeypatch.setattr(dataset_module, "MAX_DOWNLOAD_BYTES", 1000)
    server.routes["/huge"] = b"x" * 5000
    with pytest.raises(DownloadError, match="larger than .*nothing saved"):
        download_official(server.url("/huge"))
    assert _cache_files() == []


def test_download_cut_short_writes_nothing(server: LocalServer) -> None:
    with pytest.raises(DownloadError, match="download failed .*IncompleteRead"):
        download_official(server.url("/cut-short"))
    assert _cache_files() == []


def test_download_http_error(server: LocalServer) -> None:
    with pytest.raises(DownloadError, match="HTTP 404"):
        download_official(server.url("/missing.jsonl"))
    assert _cache_files() == []


def test_download_server_down(closed_port_url: str) -> None:
    with pytest.raises(
        DownloadError, match=r"download failed \(.*refused.*\) from http://127\.0\.0\.1"
    ):
        download_official(closed_port_url)
    assert _cache_files() == []


def test_download_bad_url_is_a_clear_error() -> None:
    with pytest.raises(DownloadError, match="bad URL 'not a url'"):
        download_official("not a url")


def test_download_unwritable_cache(
    server: LocalServer, official_bytes: bytes, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    monkeypatch.setenv("CRUXTUI_CACHE_DIR", str(blocker / "cache"))
    server.routes["/cruxeval.jsonl"] = official_bytes
    with pytest.raises(DownloadError, match="could not save the download"):
        download_official(server.url("/cruxeval.jsonl"))


# --------------------------------------------------------------------------- source order


def _tiny(path: Path, sid: str) -> Path:
    path.write_text(_line(id=sid) + "\n", encoding="utf-8")
    return path


def test_sources_are_tried_in_order(
    server: LocalServer, official_bytes: bytes, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    server.routes["/cruxeval.jsonl"] = official_bytes
    monkeypatch.setenv("CRUXTUI_DATASET_URL", server.url("/cruxeval.jsonl"))
    monkeypatch.setenv("CRUXTUI_DATASET", str(_tiny(tmp_path / "env.jsonl", "from_env")))
    cached = cached_official_path()
    cached.parent.mkdir(parents=True)
    cached.write_bytes(official_bytes)

    # 1. an explicit path beats everything
    ds = load_dataset(_tiny(tmp_path / "arg.jsonl", "from_arg"), offline=False)
    assert (ds.source, [s.id for s in ds]) == (Source.PATH, ["from_arg"])
    # 2. then the environment variable
    ds = load_dataset(offline=False)
    assert (ds.source, [s.id for s in ds]) == (Source.ENV, ["from_env"])
    # 3. then the cache
    monkeypatch.delenv("CRUXTUI_DATASET")
    ds = load_dataset(offline=False)
    assert (ds.source, ds.location, len(ds)) == (Source.CACHE, str(cached), 800)
    assert ds.notice == ""
    assert server.hits == []
    # 4. then a download (which fills the cache)
    cached.unlink()
    ds = load_dataset(offline=False)
    assert (ds.source, len(ds)) == (Source.DOWNLOAD, 800)
    assert server.hits == ["/cruxeval.jsonl"]
    assert cached.read_bytes() == official_bytes
    assert load_dataset(offline=False).source is Source.CACHE
    # 5. finally the starter set, saying how to get the benchmark
    cached.unlink()
    ds = load_dataset(offline=True)
    assert ds.source is Source.STARTER
    assert all(s.id.startswith("starter_") for s in ds)
    assert "cruxtui download" in ds.notice and "--dataset" in ds.notice
    assert server.hits == ["/cruxeval.jsonl"]


def test_bad_explicit_sources_are_errors_not_fallbacks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text("{\n", encoding="utf-8")
    with pytest.raises(DatasetError, match=r"bad\.jsonl:1: not valid JSON"):
        load_dataset(bad)
    monkeypatch.setenv("CRUXTUI_DATASET", str(bad))
    with pytest.raises(DatasetError, match=r"bad\.jsonl:1"):
        load_dataset()


def test_unusable_cache_falls_through_with_a_notice() -> None:
    cached = cached_official_path()
    cached.parent.mkdir(parents=True)
    cached.write_text("garbage\n", encoding="utf-8")
    ds = load_dataset(offline=True)
    assert ds.source is Source.STARTER
    assert "Cached file unusable" in ds.notice
    assert f"{cached}:1" in ds.notice


def test_server_down_falls_back_to_starter_with_notice(
    closed_port_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CRUXTUI_DATASET_URL", closed_port_url)
    ds = load_dataset(offline=False)
    assert ds.source is Source.STARTER
    assert "download failed" in ds.notice
    assert "cruxtui download" in ds.notice
    assert _cache_files() == []


def test_wrong_checksum_falls_back_to_starter_with_notice(
    server: LocalServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    server.routes["/cruxeval.jsonl"] = _line(id="sample_0").encode() + b"\n"
    monkeypatch.setenv("CRUXTUI_DATASET_URL", server.url("/cruxeval.jsonl"))
    ds = load_dataset(offline=False)
    assert ds.source is Source.STARTER
    assert "SHA-256 checksum" in ds.notice
    assert _cache_files() == []


def test_offline_skips_the_download(
    server: LocalServer, official_bytes: bytes, monkeypatch: pytest.MonkeyPatch
) -> None:
    server.routes["/cruxeval.jsonl"] = official_bytes
    monkeypatch.setenv("CRUXTUI_DATASET_URL", server.url("/cruxeval.jsonl"))
    assert load_dataset(offline=True).source is Source.STARTER
    monkeypatch.setenv("CRUXTUI_OFFLINE", "1")
    assert load_dataset().source is Source.STARTER
    assert server.hits == []
    monkeypatch.setenv("CRUXTUI_OFFLINE", "0")
    assert load_dataset().source is Source.DOWNLOAD
    assert server.hits == ["/cruxeval.jsonl"]


# --------------------------------------------------------------------------- CLI


@pytest.fixture
def online(monkeypatch: pytest.MonkeyPatch) -> None:
    """Downloads are allowed: the suite is offline by default (conftest), which download refuses."""
    monkeypatch.delenv("CRUXTUI_OFFLINE")


@pytest.mark.usefixtures("online")
def test_cli_download(
    server: LocalServer, official_bytes: bytes, capsys: pytest.CaptureFixture[str]
) -> None:
    server.routes["/cruxeval.jsonl"] = official_bytes
    assert cli_main(["download", "--url", server.url("/cruxeval.jsonl")]) == 0
    out = capsys.readouterr().out
    assert str(cached_official_path()) in out and "verified" in out
    assert cached_official_path().read_bytes() == official_bytes


@pytest.mark.usefixtures("online")
def test_cli_download_uses_the_url_variable(
    server: LocalServer, official_bytes: bytes, monkeypatch: pytest.MonkeyPatch
) -> None:
    server.routes["/mirror/cruxeval.jsonl"] = official_bytes
    monkeypatch.setenv("CRUXTUI_DATASET_URL", server.url("/mirror/cruxeval.jsonl"))
    assert cli_main(["download"]) == 0
    assert server.hits == ["/mirror/cruxeval.jsonl"]


@pytest.mark.usefixtures("online")
def test_cli_download_failure_is_one_line(
    closed_port_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli_main(["download", "--url", closed_port_url]) == 2
    err = capsys.readouterr().err
    assert err.startswith("cruxtui: error: download failed")
    assert err.count("\n") == 1
    assert _cache_files() == []


def test_cli_falls_back_to_starter_when_the_server_is_down(
    closed_port_url: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("CRUXTUI_OFFLINE", "0")
    monkeypatch.setenv("CRUXTUI_DATASET_URL", closed_port_url)
    assert cli_main(["samples"]) == 0
    captured = capsys.readouterr()
    assert captured.out.splitlines()[0].startswith("starter_0\t")
    assert "download failed" in captured.err and "cruxtui download" in captured.err


def test_cli_offline_flag_skips_the_download(
    server: LocalServer,
    official_bytes: bytes,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    server.routes["/cruxeval.jsonl"] = official_bytes
    monkeypatch.setenv("CRUXTUI_DATASET_URL", server.url("/cruxeval.jsonl"))
    monkeypatch.setenv("CRUXTUI_OFFLINE", "0")
    for argv in (["samples", "--offline"], ["--offline", "samples"]):
        assert cli_main(argv) == 0
        assert capsys.readouterr().out.startswith("starter_0\t")
    assert server.hits == []
    assert cli_main(["samples"]) == 0
    assert capsys.readouterr().out.startswith("sample_0\t")
    assert server.hits == ["/cruxeval.jsonl"]
