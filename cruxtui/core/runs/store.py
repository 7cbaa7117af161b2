"""The run store: every model run and each of its generations, in one SQLite file.

Why SQLite (stdlib, WAL): a bulk run over 800 samples can take hours against a slow endpoint and
can be killed at any moment. Each generation is committed the moment it is scored, so a killed run
loses nothing finished, and a WAL database lets the TUI read a run while the CLI is writing it.

A run is identified by everything that decides what its generations mean — the model spec (never a
key), task, mode, prompt style, sampling parameters (including n and seed), prompt template version
and dataset digest. Starting the same configuration again therefore *resumes* it: the runner asks
`missing()` what is left and requests only that. Which samples are run is not part of the identity,
so running more samples later extends the same run.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import asdict, dataclass, is_dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from cruxtui.core.util.paths import data_dir
from cruxtui.core.util.redact import redact, redactor

STORE_NAME = "runs.sqlite"
SCHEMA_VERSION = 2
"""1: the first release. 2: generations gain `reasoning` (the model's thinking, kept apart from
`raw`), `seed` (of the request that produced it) and `obtained` (how: a choice of an n-request,
its own request, a stream...)."""

_SCHEMA = """
CREATE TABLE IF NOT EXISTS runs (
    id TEXT PRIMARY KEY,
    key TEXT NOT NULL UNIQUE,
    created REAL NOT NULL,
    updated REAL NOT NULL,
    backend TEXT NOT NULL,
    model TEXT NOT NULL,
    spec TEXT NOT NULL,
    task TEXT NOT NULL,
    mode TEXT NOT NULL,
    style TEXT NOT NULL,
    params TEXT NOT NULL,
    template_version TEXT NOT NULL,
    dataset_digest TEXT NOT NULL,
    status TEXT NOT NULL,
    pid INTEGER,
    note TEXT NOT NULL DEFAULT ''
);
CREATE TABLE IF NOT EXISTS generations (
    run TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    sample_id TEXT NOT NULL,
    idx INTEGER NOT NULL,
    raw TEXT NOT NULL,
    answer TEXT,
    kind TEXT NOT NULL,
    passed INTEGER NOT NULL,
    reason TEXT NOT NULL,
    official INTEGER,
    latency REAL,
    tokens_in INTEGER,
    tokens_out INTEGER,
    finish_reason TEXT,
    created REAL NOT NULL,
    reasoning TEXT,
    seed INTEGER,
    obtained TEXT,
    PRIMARY KEY (run, sample_id, idx)
);
CREATE TABLE IF NOT EXISTS failures (
    run TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    sample_id TEXT NOT NULL,
    idx INTEGER,
    error TEXT NOT NULL,
    created REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS failures_run ON failures(run);
"""

_ADDED_COLUMNS: tuple[tuple[str, str, str], ...] = (
    ("generations", "reasoning", "TEXT"),
    ("generations", "seed", "INTEGER"),
    ("generations", "obtained", "TEXT"),
)
"""Columns added since the first release, in order: a store that lacks them gains them, in place."""

_GEN_COLUMNS = (
    "sample_id, idx, raw, answer, kind, passed, reason, official, latency, tokens_in, tokens_out,"
    " finish_reason, created, reasoning, seed, obtained"
)
_INSERT_GEN = (
    f"INSERT OR IGNORE INTO generations (run, {_GEN_COLUMNS})"
    " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)


def _migrate(db: sqlite3.Connection) -> None:
    """Bring an older store up to this schema in one transaction, losing nothing: added columns
    are NULL in existing rows (no thinking, seed or origin recorded then). Checked by column, not
    by `user_version` alone: two processes may open the same old store at once, and an older
    cruxtui writes its own version number back."""
    db.execute("BEGIN IMMEDIATE")
    try:
        for table, column, kind in _ADDED_COLUMNS:
            have = {row[1] for row in db.execute(f"PRAGMA table_info({table})")}
            if column not in have:
                db.execute(f"ALTER TABLE {table} ADD COLUMN {column} {kind}")
        (version,) = db.execute("PRAGMA user_version").fetchone()
        if version < SCHEMA_VERSION:  # a newer cruxtui's store keeps its number
            db.execute(f"PRAGMA user_version={SCHEMA_VERSION}")
    except BaseException:
        db.execute("ROLLBACK")
        raise
    db.execute("COMMIT")


# Run status values. "running" whose process is gone is shown as "interrupted".
RUNNING, DONE, INCOMPLETE, INTERRUPTED, IMPORTED = (
    "running",
    "done",
    "incomplete",
    "interrupted",
    "imported",
)


class RunStoreError(Exception):
    """A store that cannot be opened, or a run reference that names no run (message is for users)."""


def default_store_path() -> Path:
    return data_dir() / STORE_NAME


def public_base_url(url: str | None) -> str | None:
    """`url` without user:password@ and query string: what may be stored and shown."""
    if not url:
        return url
    parts = urlsplit(url)
    host = parts.hostname or ""
    if parts.port:
        host = f"{host}:{parts.port}"
    return urlunsplit((parts.scheme, host, parts.path, "", ""))


def spec_to_json(spec: Any) -> dict[str, Any]:
    """A model spec (dataclass or mapping) as plain JSON data, with any secret-looking field dropped."""
    data = _plain_fields(spec)
    clean = {
        k: v for k, v in data.items() if not any(s in k.lower() for s in ("key", "token", "secret"))
    }
    if "base_url" in clean:
        clean["base_url"] = public_base_url(clean["base_url"])
    return clean


def _plain_fields(obj: Any) -> dict[str, Any]:
    """A dataclass instance's fields, or a mapping's items, as a new dict."""
    if is_dataclass(obj) and not isinstance(obj, type):
        return asdict(obj)
    return dict(obj)


def params_to_json(params: Any) -> dict[str, Any]:
    data = _plain_fields(params)
    return {k: (list(v) if isinstance(v, tuple) else v) for k, v in data.items()}


@dataclass(frozen=True)
class RunConfig:
    """Everything that decides what a run's generations mean; equal configs are the same run."""

    spec: Mapping[str, Any]
    task: str
    mode: str
    style: str
    params: Mapping[str, Any]
    template_version: str
    dataset_digest: str

    @classmethod
    def of(cls, spec: Any, params: Any, **rest: str) -> RunConfig:
        return cls(spec=spec_to_json(spec), params=params_to_json(params), **rest)

    @property
    def n(self) -> int:
        return int(self.params.get("n") or 1)

    def key(self) -> str:
        ident = {
            "spec": dict(self.spec),
            "task": self.task,
            "mode": self.mode,
            "style": self.style,
            "params": dict(self.params),
            "template_version": self.template_version,
            "dataset_digest": self.dataset_digest,
        }
        return hashlib.sha256(json.dumps(ident, sort_keys=True).encode()).hexdigest()


@dataclass(frozen=True)
class Generation:
    """One scored completion of one sample (or variant): what the model said, the answer taken
    from it and the verdict. The one kind of generation: runs store it, cases record it (a case
    file keeps `CASE_FIELDS`; the store keeps all but `produced` and `extraction_error`)."""

    sample_id: str
    index: int
    raw: str
    answer: str | None
    kind: str
    passed: bool
    reason: str
    official: bool | None = None
    latency: float | None = None
    tokens_in: int | None = None
    tokens_out: int | None = None
    finish_reason: str | None = None
    created: float | None = None
    """When it was stored (the store sets it on adding; None before, and in a case)."""
    produced: str | None = None
    """What the answer evaluated to (the verdict's `produced`), when it was evaluated."""
    extraction_error: str | None = None
    """Why no answer could be extracted from `raw`, when none could."""
    reasoning: str | None = None
    """The model's thinking (a reasoning field or a `<think>` block), None when it had none; never
    part of `raw`, and never where the answer is taken from."""
    seed: int | None = None
    """The seed of the request that produced it (None: none sent)."""
    obtained: str | None = None
    """How it was obtained: a choice of a request for n, its own request, a stream, recorded..."""

    @property
    def chain(self) -> str:
        """The thinking and the answer text together: the chain of thought to align and show."""
        from cruxtui.core.models.thinking import chain_of_thought

        return chain_of_thought(self.reasoning, self.raw)

    def row(self, run_id: str, now: float, scrub: Callable[[str], str] = redact) -> tuple[Any, ...]:
        """The generation as a row of the `generations` table (`now` when not yet stored); every
        text is redacted (by `scrub`: `redactor()` for a batch), as everything the store keeps may
        end up in a shared case file."""
        return (
            run_id,
            self.sample_id,
            self.index,
            scrub(self.raw),
            None if self.answer is None else scrub(self.answer),
            self.kind,
            int(self.passed),
            scrub(self.reason),
            None if self.official is None else int(self.official),
            self.latency,
            self.tokens_in,
            self.tokens_out,
            self.finish_reason,
            now if self.created is None else self.created,
            None if self.reasoning is None else scrub(self.reasoning),
            self.seed,
            self.obtained,
        )


CASE_FIELDS = (
    "raw",
    "answer",
    "passed",
    "kind",
    "reason",
    "produced",
    "extraction_error",
    "reasoning",
)
"""The fields of a `Generation` a case file records (its sample and index are the case's)."""


@dataclass(frozen=True)
class RunInfo:
    id: str
    created: float
    updated: float
    config: RunConfig
    status: str
    note: str
    generations: int
    passed: int
    samples: int
    failures: int
    pass1: float
    """pass@1 (0..1): per-sample fraction of passing generations, averaged over samples."""

    @property
    def backend(self) -> str:
        return str(self.config.spec.get("backend", ""))

    @property
    def model(self) -> str:
        return str(self.config.spec.get("model", ""))

    @property
    def label(self) -> str:
        """Short human description: `model task/mode n=.. t=..`."""
        p = self.config.params
        temperature = f" t={p['temperature']}" if p.get("temperature") is not None else ""
        return f"{self.model} {self.config.task}/{self.config.mode} n={p.get('n', 1)}{temperature}"

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "created": self.created,
            "updated": self.updated,
            "status": self.status,
            "spec": dict(self.config.spec),
            "task": self.config.task,
            "mode": self.config.mode,
            "style": self.config.style,
            "params": dict(self.config.params),
            "template_version": self.config.template_version,
            "dataset_digest": self.config.dataset_digest,
            "note": self.note,
            "generations": self.generations,
            "passed": self.passed,
            "samples": self.samples,
            "failures": self.failures,
            "pass_at_1": 100 * self.pass1,
        }


def _pid_alive(pid: int | None) -> bool:
    if not pid:
        return False
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _create_private(path: Path) -> None:
    """Create the store file 0600 before SQLite does (it would follow the umask, and the WAL and
    shared-memory files take the database file's mode): runs hold raw model answers."""
    with contextlib.suppress(FileExistsError):
        os.close(os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600))


class RunStore:
    """One SQLite file of runs. Thread-safe (one connection behind a lock); usable as a context manager."""

    def __init__(self, path: str | os.PathLike[str] | None = None) -> None:
        self.path = Path(path) if path else default_store_path()
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            _create_private(self.path)
            self._db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
            self._db.execute("PRAGMA journal_mode=WAL")
            # NORMAL in WAL mode survives the process being killed (only power loss can drop the
            # last commits), and keeps a commit per generation cheap.
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.execute("PRAGMA foreign_keys=ON")
            self._db.execute("PRAGMA busy_timeout=5000")
            self._db.executescript(_SCHEMA)
            _migrate(self._db)
        except sqlite3.DatabaseError as exc:
            raise RunStoreError(f"{self.path}: cannot open the run store ({exc})") from None
        self._lock = threading.Lock()

    def __enter__(self) -> RunStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        with self._lock, contextlib.suppress(sqlite3.Error):
            self._db.close()

    @contextlib.contextmanager
    def _tx(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                yield self._db
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")

    def _query(self, sql: str, args: Iterable[Any] = ()) -> list[tuple[Any, ...]]:
        with self._lock:
            return self._db.execute(sql, tuple(args)).fetchall()

    # -- runs ------------------------------------------------------------------------------------

    def open_run(self, config: RunConfig, *, status: str = RUNNING, note: str = "") -> RunInfo:
        """The run with this configuration, created if new; marked `status` and owned by this process."""
        key = config.key()
        now = time.time()
        with self._tx() as db:
            row = db.execute("SELECT id FROM runs WHERE key = ?", (key,)).fetchone()
            if row:
                run_id = row[0]
                db.execute(
                    "UPDATE runs SET status = ?, pid = ?, updated = ? WHERE id = ?",
                    (status, os.getpid(), now, run_id),
                )
            else:
                run_id = self._new_id(db, key)
                db.execute(
                    "INSERT INTO runs (id, key, created, updated, backend, model, spec, task, mode,"
                    " style, params, template_version, dataset_digest, status, pid, note)"
                    " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (
                        run_id,
                        key,
                        now,
                        now,
                        str(config.spec.get("backend", "")),
                        str(config.spec.get("model", "")),
                        json.dumps(dict(config.spec), sort_keys=True),
                        config.task,
                        config.mode,
                        config.style,
                        json.dumps(dict(config.params), sort_keys=True),
                        config.template_version,
                        config.dataset_digest,
                        status,
                        os.getpid(),
                        note,
                    ),
                )
        return self.run(run_id)

    @staticmethod
    def _new_id(db: sqlite3.Connection, key: str) -> str:
        """Ten hex digits of the key (short enough to type); longer on the rare prefix clash."""
        for length in range(10, len(key) + 1):
            candidate = key[:length]
            if not db.execute("SELECT 1 FROM runs WHERE id = ?", (candidate,)).fetchone():
                return candidate
        raise RunStoreError(
            "run id space exhausted"
        )  # pragma: no cover - needs a SHA-256 collision

    def finish(self, run_id: str, status: str) -> None:
        with self._tx() as db:
            db.execute(
                "UPDATE runs SET status = ?, updated = ? WHERE id = ?",
                (status, time.time(), run_id),
            )

    def delete(self, run_id: str) -> None:
        with self._tx() as db:
            db.execute("DELETE FROM runs WHERE id = ?", (run_id,))

    _RUN_SELECT = (
        "SELECT r.id, r.created, r.updated, r.spec, r.task, r.mode, r.style, r.params,"
        " r.template_version, r.dataset_digest, r.status, r.pid, r.note,"
        " (SELECT COUNT(*) FROM generations g WHERE g.run = r.id),"
        " (SELECT COALESCE(SUM(passed), 0) FROM generations g WHERE g.run = r.id),"
        " (SELECT COUNT(DISTINCT sample_id) FROM generations g WHERE g.run = r.id),"
        " (SELECT COUNT(*) FROM failures f WHERE f.run = r.id),"
        " (SELECT AVG(c * 1.0 / n) FROM (SELECT COUNT(*) AS n, SUM(passed) AS c FROM generations g"
        "  WHERE g.run = r.id GROUP BY sample_id))"
        " FROM runs r"
    )

    @staticmethod
    def _info(row: tuple[Any, ...]) -> RunInfo:
        (
            rid,
            created,
            updated,
            spec,
            task,
            mode,
            style,
            params,
            tv,
            digest,
            status,
            pid,
            note,
            gens,
            passed,
            samples,
            failures,
            pass1,
        ) = row
        if status == RUNNING and not _pid_alive(pid):
            status = INTERRUPTED
        config = RunConfig(
            spec=json.loads(spec),
            task=task,
            mode=mode,
            style=style,
            params=json.loads(params),
            template_version=tv,
            dataset_digest=digest,
        )
        return RunInfo(
            id=rid,
            created=created,
            updated=updated,
            config=config,
            status=status,
            note=note,
            generations=gens,
            passed=passed,
            samples=samples,
            failures=failures,
            pass1=pass1 or 0.0,
        )

    def runs(self) -> list[RunInfo]:
        """All runs, newest first."""
        return [self._info(r) for r in self._query(self._RUN_SELECT + " ORDER BY r.created DESC")]

    def run(self, ref: str) -> RunInfo:
        """The run whose id is `ref` or starts with it; `RunStoreError` if none or ambiguous."""
        rows = self._query(self._RUN_SELECT + " WHERE r.id = ?", (ref,))
        if not rows:
            like = ref.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
            rows = self._query(self._RUN_SELECT + " WHERE r.id LIKE ? ESCAPE '\\'", (like,))
        if not rows:
            raise RunStoreError(f"no run {ref!r} in {self.path} (see `cruxtui runs`)")
        if len(rows) > 1:
            ids = ", ".join(sorted(r[0] for r in rows))
            raise RunStoreError(f"run id {ref!r} is ambiguous: {ids}")
        return self._info(rows[0])

    # -- generations -----------------------------------------------------------------------------

    def add_generation(self, run_id: str, gen: Generation) -> bool:
        """Commit one generation now. False if that (sample, index) was already stored."""
        created = time.time() if gen.created is None else gen.created
        with self._tx() as db:
            cur = db.execute(_INSERT_GEN, gen.row(run_id, created))
            db.execute("UPDATE runs SET updated = ? WHERE id = ?", (created, run_id))
            return cur.rowcount == 1

    def add_generations(self, run_id: str, gens: Iterable[Generation]) -> int:
        """Many generations in one transaction (a run's group commit, imports); returns how many
        were new."""
        now = time.time()
        scrub = redactor()
        rows = [g.row(run_id, now, scrub) for g in gens]
        with self._tx() as db:
            before = db.total_changes
            db.executemany(_INSERT_GEN, rows)
            added = db.total_changes - before
            db.execute("UPDATE runs SET updated = ? WHERE id = ?", (time.time(), run_id))
            return added

    def add_failure(self, run_id: str, sample_id: str, index: int | None, error: str) -> None:
        """Record a request that produced no generation (it will be requested again on resume)."""
        with self._tx() as db:
            db.execute(
                "INSERT INTO failures (run, sample_id, idx, error, created) VALUES (?, ?, ?, ?, ?)",
                (run_id, sample_id, index, redact(error), time.time()),
            )

    def failures(self, run_id: str) -> list[tuple[str, int | None, str]]:
        return [
            (s, i, e)
            for s, i, e in self._query(
                "SELECT sample_id, idx, error FROM failures WHERE run = ? ORDER BY created",
                (run_id,),
            )
        ]

    def done_indices(self, run_id: str) -> dict[str, set[int]]:
        out: dict[str, set[int]] = {}
        for sid, idx in self._query(
            "SELECT sample_id, idx FROM generations WHERE run = ?", (run_id,)
        ):
            out.setdefault(sid, set()).add(idx)
        return out

    def missing(self, run_id: str, sample_ids: Iterable[str], n: int) -> dict[str, list[int]]:
        """For each sample, the generation indices (< n) not stored yet; samples with none left omitted."""
        done = self.done_indices(run_id)
        out: dict[str, list[int]] = {}
        for sid in sample_ids:
            have = done.get(sid, set())
            todo = [i for i in range(n) if i not in have]
            if todo:
                out[sid] = todo
        return out

    def generations(self, run_id: str, sample_id: str | None = None) -> list[Generation]:
        sql = f"SELECT {_GEN_COLUMNS} FROM generations WHERE run = ?"
        args: list[Any] = [run_id]
        if sample_id is not None:
            sql += " AND sample_id = ?"
            args.append(sample_id)
        rows = self._query(sql + " ORDER BY sample_id, idx", args)
        return [
            Generation(
                sample_id=r[0],
                index=r[1],
                raw=r[2],
                answer=r[3],
                kind=r[4],
                passed=bool(r[5]),
                reason=r[6],
                official=None if r[7] is None else bool(r[7]),
                latency=r[8],
                tokens_in=r[9],
                tokens_out=r[10],
                finish_reason=r[11],
                created=r[12],
                reasoning=r[13],
                seed=r[14],
                obtained=r[15],
            )
            for r in rows
        ]

    def counts(self, run_id: str) -> dict[str, tuple[int, int]]:
        """sample id -> (generations, passed): what pass@k and the Browse column are computed from."""
        return {
            sid: (n, c)
            for sid, n, c in self._query(
                "SELECT sample_id, COUNT(*), SUM(passed) FROM generations WHERE run = ? GROUP BY sample_id",
                (run_id,),
            )
        }

    def export(self, run_id: str) -> dict[str, list[str]]:
        """The benchmark's generations format: sample id -> extracted answers in index order.

        An answer that could not be extracted is exported as the empty string, which the benchmark
        scores as wrong (as it would score the unusable text)."""
        out: dict[str, list[str]] = {}
        for sid, answer in self._query(
            "SELECT sample_id, answer FROM generations WHERE run = ? ORDER BY sample_id, idx",
            (run_id,),
        ):
            out.setdefault(sid, []).append(answer or "")
        return out


def pass_rate(counts: Mapping[str, tuple[int, int]]) -> float:
    """pass@1 (0..1) averaged over samples: the mean per-sample fraction of passing generations."""
    rates = [c / n for n, c in counts.values() if n]
    return sum(rates) / len(rates) if rates else 0.0
