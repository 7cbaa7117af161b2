"""CRUXEval samples: the `Sample` type, loading with precise errors, and where the data comes from.

Loading is plain Python (no Textual) so the CLI, the TUI and the tests all read samples the same way.
A dataset always opens: if neither a path, the environment, the cache nor a download provides the
official file, the bundled starter set is used and `Dataset.notice` says how to get the full benchmark.
"""

from __future__ import annotations

import ast
import hashlib
import http.client
import json
import os
import urllib.error
import urllib.request
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from enum import StrEnum
from functools import cached_property
from importlib import resources
from pathlib import Path

from cruxtui.core.data.textfile import UnreadableFile, json_value_problem, read_text
from cruxtui.core.util import safe_ast
from cruxtui.core.util.atomic import atomic_write_bytes
from cruxtui.core.util.paths import cache_dir

DATASET_ENV = "CRUXTUI_DATASET"
"""Environment variable naming a JSONL dataset file (used when `--dataset` is not given)."""

OFFLINE_ENV = "CRUXTUI_OFFLINE"
"""Set to 1 to never try the download (CI, air-gapped machines)."""

URL_ENV = "CRUXTUI_DATASET_URL"
"""Override of the download address (tests point it at a local HTTP server)."""

OFFICIAL_COMMIT = "c7c787365a9a448f4a07058fb57b19fee7d4c471"
OFFICIAL_URL = f"https://raw.githubusercontent.com/facebookresearch/cruxeval/{OFFICIAL_COMMIT}/data/cruxeval.jsonl"
OFFICIAL_SHA256 = "8368b81047dc5014e4caf5a2f97604eff7644e0ecd7415e3ceeb184bbc2e0c96"
OFFICIAL_SIZE = 800
MAX_DOWNLOAD_BYTES = 16 * 2**20
"""The official file is ~187 KB; a wrong address serving something huge is cut off here, not
read into memory."""

REQUIRED_FIELDS = ("id", "code", "input", "output")

# Methods of the three container types the paper's analysis groups samples by. A call `x.name(...)`
# counts when `name` is one of these; the receiver's type is not known statically, so a name shared
# by two types (e.g. `count`, `index`) is reported once.
_STR_METHODS = {n for n in dir(str) if not n.startswith("_")}
_LIST_METHODS = {n for n in dir(list) if not n.startswith("_")}
_DICT_METHODS = {n for n in dir(dict) if not n.startswith("_")}
KNOWN_METHODS = frozenset(_STR_METHODS | _LIST_METHODS | _DICT_METHODS)


class DatasetError(Exception):
    """A dataset file that cannot be used, with the file, line and problem named."""

    def __init__(self, path: str | os.PathLike[str], line: int | None, problem: str) -> None:
        self.path = str(path)
        self.line = line
        self.problem = problem
        where = f"{self.path}:{line}" if line is not None else self.path
        super().__init__(f"{where}: {problem}")


@dataclass(frozen=True)
class Sample:
    """One benchmark item: the function `f`, one input (the text of its arguments) and its output.

    `input` and `output` are Python source text exactly as in the benchmark (`f(<input>) == <output>`).
    Derived metadata is computed lazily: parsing 800 functions up front would slow the first paint.
    """

    id: str
    code: str
    input: str
    output: str
    origin: str = field(default="", compare=False)
    """Where the sample came from, for messages: `path:line`."""

    @cached_property
    def lines(self) -> int:
        return len(self.code.strip("\n").splitlines())

    @cached_property
    def chars(self) -> int:
        return len(self.code)

    @cached_property
    def first_line(self) -> str:
        """The first line of the body that is not the `def` line: what makes a row recognisable."""
        body = [ln.strip() for ln in self.code.splitlines()[1:] if ln.strip()]
        return body[0] if body else self.code.splitlines()[0]

    @cached_property
    def output_type(self) -> str:
        """The builtin type name of the expected output (`str`, `list`, ...), or `expr` if not a literal."""
        try:
            return type(ast.literal_eval(self.output)).__name__
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            return "expr"

    @cached_property
    def methods(self) -> tuple[str, ...]:
        """The str / list / dict method names called in the code, sorted, each once."""
        return called_methods(self.code)

    @property
    def call(self) -> str:
        """The call the benchmark checks: `f(<input>)`."""
        return f"f({self.input})"

    def to_json(self) -> dict[str, str]:
        return {"id": self.id, "code": self.code, "input": self.input, "output": self.output}


def called_methods(code: str) -> tuple[str, ...]:
    """Names of known container methods called as `obj.name(...)` in `code` (empty if unparsable)."""
    try:
        tree = safe_ast.parse(code)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return ()
    found = {
        node.func.attr
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in KNOWN_METHODS
    }
    return tuple(sorted(found))


def _defines_f(code: str) -> str | None:
    """None if `code` parses and defines a top-level `f`; otherwise the problem, in words."""
    try:
        tree = safe_ast.parse(code)
    except SyntaxError as exc:
        where = f" (code line {exc.lineno})" if exc.lineno else ""
        return f"code does not parse: {exc.msg}{where}"
    except (ValueError, RecursionError, MemoryError) as exc:  # null bytes, absurd nesting
        return f"code does not parse: {exc}"
    if not any(isinstance(n, ast.FunctionDef) and n.name == "f" for n in tree.body):
        return "code does not define a function `f`"
    return None


def parse_jsonl(lines: Iterable[str], path: str) -> list[Sample]:
    """Parse benchmark JSONL text into samples, failing on the first bad line with its number."""
    samples: list[Sample] = []
    seen: dict[str, int] = {}
    for lineno, raw in enumerate(lines, start=1):
        if not raw.strip():
            continue
        try:
            obj = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise DatasetError(
                path, lineno, f"not valid JSON ({exc.msg} at column {exc.colno})"
            ) from None
        except RecursionError:
            raise DatasetError(path, lineno, "not usable JSON (nested too deeply)") from None
        except ValueError as exc:  # an integer longer than Python converts, say
            raise DatasetError(
                path, lineno, f"not usable JSON ({json_value_problem(exc)})"
            ) from None
        if not isinstance(obj, dict):
            raise DatasetError(path, lineno, f"expected a JSON object, got {type(obj).__name__}")
        missing = [k for k in REQUIRED_FIELDS if k not in obj]
        if missing:
            raise DatasetError(path, lineno, f"missing field(s): {', '.join(missing)}")
        wrong = [k for k in REQUIRED_FIELDS if not isinstance(obj[k], str)]
        if wrong:
            raise DatasetError(path, lineno, f"field(s) must be strings: {', '.join(wrong)}")
        sid = obj["id"]
        if sid in seen:
            raise DatasetError(path, lineno, f"duplicate id {sid!r} (first on line {seen[sid]})")
        problem = _defines_f(obj["code"])
        if problem:
            raise DatasetError(path, lineno, f"{sid}: {problem}")
        seen[sid] = lineno
        samples.append(
            Sample(sid, obj["code"], obj["input"], obj["output"], origin=f"{path}:{lineno}")
        )
    if not samples:
        raise DatasetError(path, None, "no samples in file")
    return samples


def read_jsonl(path: str | os.PathLike[str]) -> list[Sample]:
    """Read a benchmark JSONL file (fields id, code, input, output)."""
    p = Path(path)
    try:
        # utf-8-sig: a byte-order mark (some Windows editors add one) is not a JSON error.
        text = read_text(p, "a JSONL file", encoding="utf-8-sig")
    except UnreadableFile as exc:
        raise DatasetError(p, None, exc.problem) from None
    # Split on "\n" only: str.splitlines() also breaks at U+2028, U+0085 etc., which JSON allows
    # unescaped inside strings, and would then report a valid file as broken (and miscount lines).
    return parse_jsonl(text.split("\n"), str(p))


class Source(StrEnum):
    """Where the open dataset came from, in the order they are tried."""

    PATH = "path"
    ENV = "env"
    CACHE = "cache"
    DOWNLOAD = "download"
    STARTER = "starter"


@dataclass
class Dataset:
    """The open samples plus where they came from, and a notice for the user when it matters."""

    samples: list[Sample]
    source: Source
    location: str
    notice: str = ""

    def __post_init__(self) -> None:
        self._by_id = {s.id: s for s in self.samples}

    def __len__(self) -> int:
        return len(self.samples)

    def __iter__(self) -> Iterator[Sample]:
        return iter(self.samples)

    def __contains__(self, sample_id: object) -> bool:
        return sample_id in self._by_id

    def get(self, sample_id: str) -> Sample | None:
        return self._by_id.get(sample_id)

    def __getitem__(self, sample_id: str) -> Sample:
        try:
            return self._by_id[sample_id]
        except KeyError:
            raise KeyError(
                f"unknown sample id {sample_id!r} (the dataset has {len(self)})"
            ) from None

    @cached_property
    def digest(self) -> str:
        """SHA-256 over the samples' canonical JSON: identifies exactly what a run was made on."""
        h = hashlib.sha256()
        for s in self.samples:
            h.update(json.dumps(s.to_json(), sort_keys=True).encode())
            h.update(b"\n")
        return h.hexdigest()

    @property
    def description(self) -> str:
        """One line naming the source, for the title bar and CLI headers. The file name only:
        the full path is in `location`, and a title that does not depend on where the checkout
        lives keeps screenshots and snapshots identical on every machine."""
        return f"{len(self)} samples from {self.source.value}: {Path(self.location).name}"


def cached_official_path() -> Path:
    return cache_dir() / f"cruxeval-{OFFICIAL_SHA256[:12]}.jsonl"


def starter_path() -> Path:
    return Path(str(resources.files("cruxtui.core.data").joinpath("starter.jsonl")))


class DownloadError(Exception):
    """The official file could not be fetched or did not verify; nothing was written."""


def _read_bounded(resp: http.client.HTTPResponse, limit: int) -> bytes:
    """Read the body in chunks until its end or `limit` bytes; a body that ends before its
    Content-Length is an IncompleteRead (a bounded `read(n)` alone would return it silently)."""
    chunks: list[bytes] = []
    total = 0
    while total < limit:
        chunk = resp.read(min(1 << 16, limit - total))
        if not chunk:
            break
        chunks.append(chunk)
        total += len(chunk)
    missing = getattr(resp, "length", None)  # bytes the Content-Length still promises
    if total < limit and missing:
        raise http.client.IncompleteRead(b"".join(chunks), missing)
    return b"".join(chunks)


def download_official(
    url: str | None = None, dest: Path | None = None, timeout: float = 10.0
) -> Path:
    """Fetch the official JSONL, verify its SHA-256, and only then move it into the cache.

    The file is written atomically (temp file + rename), so a failed or interrupted download never
    leaves a half-written cache entry that a later start would trust.
    """
    url = url or os.environ.get(URL_ENV) or OFFICIAL_URL
    dest = dest or cached_official_path()
    try:
        with urllib.request.urlopen(url, timeout=timeout) as resp:  # noqa: S310 - https or test URL
            data = _read_bounded(resp, MAX_DOWNLOAD_BYTES + 1)
    except urllib.error.HTTPError as exc:
        raise DownloadError(f"download failed: HTTP {exc.code} from {url}") from None
    except (urllib.error.URLError, http.client.HTTPException, OSError) as exc:
        # URLError/OSError: refused, DNS, timeout; HTTPException: e.g. the body cut short.
        reason = getattr(exc, "reason", None) or str(exc) or type(exc).__name__
        raise DownloadError(f"download failed ({reason}) from {url}") from None
    except ValueError as exc:  # "unknown url type", invalid URL
        raise DownloadError(f"download failed: bad URL {url!r} ({exc})") from None
    if len(data) > MAX_DOWNLOAD_BYTES:
        raise DownloadError(
            f"download from {url} is larger than {MAX_DOWNLOAD_BYTES // 2**20} MiB, far more than "
            "the benchmark file; stopped reading, nothing saved"
        )
    digest = hashlib.sha256(data).hexdigest()
    if digest != OFFICIAL_SHA256:
        raise DownloadError(
            f"downloaded file from {url} has the wrong SHA-256 checksum ({digest[:16]}..., "
            f"expected {OFFICIAL_SHA256[:16]}...); not saved"
        )
    try:
        atomic_write_bytes(dest, data)
    except OSError as exc:
        raise DownloadError(
            f"could not save the download to {dest}: {exc.strerror or exc}"
        ) from None
    return dest


def _full_benchmark_hint() -> str:
    return (
        "Showing the bundled starter set, not CRUXEval. For the 800 benchmark samples run "
        "`cruxtui download` when online, or pass `--dataset path/to/cruxeval.jsonl` "
        f"(or set {DATASET_ENV})."
    )


def load_dataset(
    path: str | os.PathLike[str] | None = None, *, offline: bool | None = None
) -> Dataset:
    """Open the first available source: path, environment, cache, download, starter set.

    An explicit path (argument or environment) that is bad raises `DatasetError`: the user asked
    for that file and must hear what is wrong with it. A bad cache entry or a failed download only
    adds to the notice, and the next source is tried.
    """
    if path is not None:
        return Dataset(read_jsonl(path), Source.PATH, str(path))
    env = os.environ.get(DATASET_ENV)
    if env:
        return Dataset(read_jsonl(env), Source.ENV, env)
    notes: list[str] = []
    cached = cached_official_path()
    if cached.exists():
        try:
            return Dataset(read_jsonl(cached), Source.CACHE, str(cached))
        except DatasetError as exc:
            notes.append(f"Cached file unusable ({exc}).")
    if offline is None:
        offline = os.environ.get(OFFLINE_ENV, "") not in ("", "0")
    if not offline:
        try:
            got = download_official(timeout=5.0)
            return Dataset(read_jsonl(got), Source.DOWNLOAD, str(got))
        except (DownloadError, DatasetError) as exc:
            notes.append(f"{exc}.")
    notes.append(_full_benchmark_hint())
    return Dataset(
        read_jsonl(starter_path()), Source.STARTER, "bundled starter set", " ".join(notes)
    )
