"""Failure cases: one JSON file per saved failure, holding everything needed to replay it later.

A case is meant to live in git next to a paper or talk, so the file is diff-friendly (sorted keys,
indent 2, one case per file) and its name is stable: the same failure saved twice lands on the same
file, and editing its tags or note never renames it. Loading validates every field and reports a
broken file by name without stopping the rest of the gallery from loading.
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import re
from collections.abc import Iterable
from dataclasses import dataclass, field, fields, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from cruxtui import __version__
from cruxtui.core.data.textfile import UnreadableFile, json_value_problem, read_text
from cruxtui.core.runs.store import CASE_FIELDS, Generation
from cruxtui.core.util.atomic import write_shared_text
from cruxtui.core.util.natural import natural_key

SCHEMA_VERSION = 1
"""Bump when a field changes meaning or becomes required; readers refuse newer files."""

CASES_ENV = "CRUXTUI_CASES_DIR"
DEFAULT_CASES_DIR = "cases"
TASKS = ("output", "input")


class CaseError(Exception):
    """A case file that cannot be used: the file and the problem, in one line."""

    def __init__(self, path: str | os.PathLike[str], problem: str) -> None:
        self.path = str(path)
        self.problem = problem
        super().__init__(f"{self.path}: {problem}")


def cases_dir(explicit: str | os.PathLike[str] | None = None) -> Path:
    """The gallery folder: `--cases DIR`, else `$CRUXTUI_CASES_DIR`, else `cases/` under the cwd.

    Relative to the working directory on purpose: cases belong to a project (a paper's repo),
    not to the user's profile.
    """
    return Path(explicit or os.environ.get(CASES_ENV) or DEFAULT_CASES_DIR)


@dataclass
class ModelInfo:
    """Which model produced the responses. Deliberately has no field for a key."""

    backend: str
    model: str
    base_url: str | None = None
    api: str = "chat"
    path: str | None = None
    """The generations file a "replay" backend read (informative: replay uses the recorded raw
    responses stored in the case itself, so the case stays replayable on another machine)."""


@dataclass
class Sampling:
    temperature: float = 0.0
    top_p: float = 1.0
    max_tokens: int = 512
    n: int = 1
    seed: int | None = None
    stop: list[str] = field(default_factory=list)


@dataclass
class TraceSummary:
    """The real execution in brief, so a reader sees the truth without re-running anything."""

    steps: int
    numsteps: int | None
    return_repr: str | None
    exception: str | None = None
    truncated: bool = False
    error: str | None = None


@dataclass
class FailureCase:
    """One saved failure: what was asked, of which model, how, what came back and how it was
    judged, and the truth beside it. Enough to replay it years later on the same or another model.
    """

    sample_id: str
    """The sample or variant id as run, e.g. `sample_12` or `sample_12~anon`."""
    code: str
    input: str
    output: str
    task: str
    mode: str
    template_version: str
    prompt: dict[str, Any]
    """The fully rendered prompt as sent (see `prompt_json`): `style`, chat `messages`, completion
    `text`, the template's `stop` sequences and the `response_prefix` a completion prompt wrote."""
    model: ModelInfo
    sampling: Sampling
    generations: list[Generation]
    """The recorded responses (`runs.store.Generation`, of this case's sample, index = position);
    the file keeps their `CASE_FIELDS`."""
    base_sample_id: str = ""
    """The benchmark sample a variant was derived from (equals `sample_id` for originals)."""
    perturbations: list[dict[str, Any]] = field(default_factory=list)
    """The transform chain that produced `code`/`input`/`output` from the base sample, in order."""
    trace: TraceSummary | None = None
    first_divergence: dict[str, Any] | None = None
    extraction: str = "strict"
    """How answers were extracted from the raw responses (`strict` or the benchmark's `official`)."""
    tags: list[str] = field(default_factory=list)
    note: str = ""
    origin: str = ""
    """Where the case came from, for people: `run 3`, a generations file, `tui`."""
    created: str = ""
    cruxtui_version: str = __version__
    python_version: str = field(default_factory=platform.python_version)
    schema_version: int = SCHEMA_VERSION
    extra: dict[str, Any] = field(default_factory=dict)
    """Unknown top-level fields from the file, written back unchanged (nothing is lost on edit)."""
    path: Path | None = field(default=None, compare=False)
    """The file it was loaded from or saved to (not stored in the file)."""

    def __post_init__(self) -> None:
        if not self.base_sample_id:
            self.base_sample_id = self.sample_id.split("~", 1)[0]
        if not self.created:
            self.created = datetime.now(UTC).replace(microsecond=0).isoformat()
        self.tags = merge_tags([], self.tags)

    # Identity ------------------------------------------------------------------------------
    @property
    def failures(self) -> int:
        return sum(not g.passed for g in self.generations)

    @property
    def fingerprint(self) -> str:
        """SHA-256 over what makes this failure this failure (not tags, note or timestamps)."""
        identity = {
            "sample_id": self.sample_id,
            "code": self.code,
            "input": self.input,
            "output": self.output,
            "task": self.task,
            "mode": self.mode,
            "template_version": self.template_version,
            "prompt": self.prompt,
            "model": _plain(self.model),
            "sampling": _plain(self.sampling),
            "raw": [g.raw for g in self.generations],
        }
        blob = json.dumps(identity, sort_keys=True, ensure_ascii=False).encode()
        return hashlib.sha256(blob).hexdigest()

    @property
    def case_id(self) -> str:
        """Stable file stem: `<sample>--<model>--<hash8>`, safe on every file system."""
        return self.stem(8)

    def stem(self, digits: int) -> str:
        return f"{_slug(self.sample_id)}--{_slug(self.model.model)}--{self.fingerprint[:digits]}"

    @property
    def name(self) -> str:
        """How the case is referred to: its file stem if loaded, else the id it would get."""
        return self.path.stem if self.path else self.case_id

    # JSON ----------------------------------------------------------------------------------
    def to_json(self) -> dict[str, Any]:
        data = {
            f.name: _plain(getattr(self, f.name))
            for f in fields(self)
            if f.name not in ("extra", "path", "generations")
        }
        data["generations"] = [
            {
                k: getattr(g, k)
                for k in CASE_FIELDS
                if not (k in _OMIT_WHEN_NONE and getattr(g, k) is None)
            }
            for g in self.generations
        ]
        return {**self.extra, **data}

    def dumps(self) -> str:
        return json.dumps(self.to_json(), sort_keys=True, indent=2, ensure_ascii=False) + "\n"

    @classmethod
    def from_json(cls, data: Any, path: str | os.PathLike[str] = "<case>") -> FailureCase:
        """Validate and build a case; any problem raises `CaseError` naming `path` and the field."""
        return _Reader(path).case(data)


def recorded(gen: Generation, sample_id: str, index: int) -> Generation:
    """`gen` as a case records it: only its `CASE_FIELDS`, under the case's sample, at `index`
    (its position), so a saved case reads back equal to the one built."""
    return Generation(sample_id, index, **{k: getattr(gen, k) for k in CASE_FIELDS})


def prompt_json(prompt: Any) -> dict[str, Any]:
    """A `cruxtui.core.models.prompts.Prompt` as case data (both renderings, so any endpoint can replay)."""
    return {
        "style": prompt.style,
        "messages": [dict(m) for m in prompt.messages],
        "text": prompt.text,
        "stop": list(prompt.stop),
        "response_prefix": prompt.response_prefix,
    }


_OMIT_WHEN_NONE = frozenset({"reasoning"})
"""Generation fields added after the first release: left out when empty, so older files stay as
written."""


def _plain(value: Any) -> Any:
    """Dataclasses to dicts, recursively, leaving JSON data as it is."""
    if hasattr(value, "__dataclass_fields__"):
        return {f.name: _plain(getattr(value, f.name)) for f in fields(value)}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return value


_UNSAFE = re.compile(r"[^A-Za-z0-9._~-]+")


def _slug(text: str, limit: int = 40) -> str:
    """File-name-safe, readable: `codellama/CodeLlama-7b` -> `codellama-CodeLlama-7b`."""
    return (_UNSAFE.sub("-", text).strip("-.") or "x")[:limit]


def normalize_tag(tag: str) -> str:
    """Tags are single words for filtering on the command line: trimmed, inner spaces to `-`."""
    cleaned = "-".join(tag.split())
    if not cleaned:
        raise ValueError("a tag cannot be empty")
    if "," in cleaned:
        raise ValueError(f"tag {tag!r} contains a comma (give several tags separately)")
    return cleaned


def merge_tags(
    tags: Iterable[str], add: Iterable[str] = (), remove: Iterable[str] = ()
) -> list[str]:
    """Keep the existing order (the first tag is the case's group), append new ones, drop removed."""
    gone = {normalize_tag(t) for t in remove}
    out: list[str] = []
    for tag in [*tags, *(normalize_tag(t) for t in add)]:
        if tag not in gone and tag not in out:
            out.append(tag)
    return out


# Validation -----------------------------------------------------------------------------------
_NONE = type(None)


class _Reader:
    """Checks a parsed case file field by field, so an error names the exact field at fault."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = path

    def fail(self, problem: str) -> CaseError:
        return CaseError(self.path, problem)

    def get(
        self, obj: dict[str, Any], key: str, types: tuple[type, ...], where: str, default: Any = ...
    ) -> Any:
        """`obj[key]` checked against `types`; `default` (if given) when the key is absent."""
        name = f"{where}.{key}" if where else key
        if key not in obj:
            if default is ...:
                raise self.fail(f"missing field '{name}'")
            return default
        value = obj[key]
        # bool is an int subclass: never accept True where a number is expected, or vice versa.
        ok = isinstance(value, types) and not (isinstance(value, bool) and bool not in types)
        if float in types and isinstance(value, int) and not isinstance(value, bool):
            ok = True
        if not ok:
            wanted = " or ".join(
                "null" if t is _NONE else _TYPE_NAMES.get(t, t.__name__) for t in types
            )
            raise self.fail(f"field '{name}' must be {wanted}, got {_json_type(value)}")
        return value

    def obj(self, value: Any, where: str) -> dict[str, Any]:
        if not isinstance(value, dict):
            raise self.fail(f"field '{where}' must be an object, got {_json_type(value)}")
        return value

    def str_list(self, obj: dict[str, Any], key: str, where: str, default: Any = ...) -> list[str]:
        items = self.get(obj, key, (list,), where, default)
        name = f"{where}.{key}" if where else key
        for i, item in enumerate(items):
            if not isinstance(item, str):
                raise self.fail(f"field '{name}[{i}]' must be a string, got {_json_type(item)}")
        return list(items)

    def case(self, data: Any) -> FailureCase:
        if not isinstance(data, dict):
            raise self.fail(f"expected a JSON object, got {_json_type(data)}")
        if "schema_version" not in data:
            raise self.fail("missing field 'schema_version' (is this a cruxtui case file?)")
        version = self.get(data, "schema_version", (int,), "")
        if version > SCHEMA_VERSION:
            raise self.fail(
                f"schema_version {version} is newer than this cruxtui reads ({SCHEMA_VERSION}); "
                "upgrade cruxtui to open it"
            )
        if version < 1:
            raise self.fail(f"schema_version {version} is not a valid version")
        s = (str,)
        task = self.get(data, "task", s, "")
        if task not in TASKS:
            raise self.fail(f"field 'task' must be 'output' or 'input', got {task!r}")
        prompt = self.obj(self.get(data, "prompt", (dict,), ""), "prompt")
        self._prompt(prompt)
        gens = self.get(data, "generations", (list,), "")
        trace = self.get(data, "trace", (dict, _NONE), "", None)
        known = {f.name for f in fields(FailureCase)}
        sample_id = self.get(data, "sample_id", s, "")
        tags = self.str_list(data, "tags", "", [])
        try:
            merge_tags([], tags)
        except ValueError as exc:
            raise self.fail(f"field 'tags': {exc}") from None
        return FailureCase(
            sample_id=sample_id,
            code=self.get(data, "code", s, ""),
            input=self.get(data, "input", s, ""),
            output=self.get(data, "output", s, ""),
            task=task,
            mode=self.get(data, "mode", s, ""),
            template_version=self.get(data, "template_version", s, ""),
            prompt=prompt,
            model=self._model(self.obj(self.get(data, "model", (dict,), ""), "model")),
            sampling=self._sampling(self.obj(self.get(data, "sampling", (dict,), ""), "sampling")),
            generations=[
                self._generation(
                    self.obj(g, f"generations[{i}]"), f"generations[{i}]", sample_id, i
                )
                for i, g in enumerate(gens)
            ],
            base_sample_id=self.get(data, "base_sample_id", s, "", ""),
            perturbations=[
                self.obj(p, f"perturbations[{i}]")
                for i, p in enumerate(self.get(data, "perturbations", (list,), "", []))
            ],
            trace=None if trace is None else self._trace(trace),
            first_divergence=self.get(data, "first_divergence", (dict, _NONE), "", None),
            extraction=self.get(data, "extraction", s, "", "strict"),
            tags=tags,
            note=self.get(data, "note", s, "", ""),
            origin=self.get(data, "origin", s, "", ""),
            created=self.get(data, "created", s, ""),
            cruxtui_version=self.get(data, "cruxtui_version", s, ""),
            python_version=self.get(data, "python_version", s, ""),
            schema_version=version,
            extra={k: v for k, v in data.items() if k not in known},
        )

    def _prompt(self, prompt: dict[str, Any]) -> None:
        if "messages" in prompt:
            for i, m in enumerate(self.get(prompt, "messages", (list,), "prompt")):
                m = self.obj(m, f"prompt.messages[{i}]")
                self.get(m, "role", (str,), f"prompt.messages[{i}]")
                self.get(m, "content", (str,), f"prompt.messages[{i}]")
        elif "text" in prompt:
            self.get(prompt, "text", (str,), "prompt")
        else:
            raise self.fail("field 'prompt' must hold 'messages' (chat) or 'text' (completions)")

    def _model(self, m: dict[str, Any]) -> ModelInfo:
        w = "model"
        for secret in ("api_key", "key", "token"):
            if secret in m:
                raise self.fail(f"field 'model.{secret}' must not be stored in a case file")
        return ModelInfo(
            backend=self.get(m, "backend", (str,), w),
            model=self.get(m, "model", (str,), w),
            base_url=self.get(m, "base_url", (str, _NONE), w, None),
            api=self.get(m, "api", (str,), w, "chat"),
            path=self.get(m, "path", (str, _NONE), w, None),
        )

    def _sampling(self, p: dict[str, Any]) -> Sampling:
        w = "sampling"
        return Sampling(
            temperature=self.get(p, "temperature", (float,), w),
            top_p=self.get(p, "top_p", (float,), w, 1.0),
            max_tokens=self.get(p, "max_tokens", (int,), w),
            n=self.get(p, "n", (int,), w, 1),
            seed=self.get(p, "seed", (int, _NONE), w),
            stop=self.str_list(p, "stop", w, []),
        )

    def _generation(self, g: dict[str, Any], w: str, sample_id: str, index: int) -> Generation:
        return Generation(
            sample_id=sample_id,
            index=index,
            raw=self.get(g, "raw", (str,), w),
            answer=self.get(g, "answer", (str, _NONE), w),
            passed=self.get(g, "passed", (bool,), w),
            kind=self.get(g, "kind", (str,), w),
            reason=self.get(g, "reason", (str,), w),
            produced=self.get(g, "produced", (str, _NONE), w, None),
            extraction_error=self.get(g, "extraction_error", (str, _NONE), w, None),
            reasoning=self.get(g, "reasoning", (str, _NONE), w, None),
        )

    def _trace(self, t: dict[str, Any]) -> TraceSummary:
        w = "trace"
        return TraceSummary(
            steps=self.get(t, "steps", (int,), w),
            numsteps=self.get(t, "numsteps", (int, _NONE), w, None),
            return_repr=self.get(t, "return_repr", (str, _NONE), w),
            exception=self.get(t, "exception", (str, _NONE), w, None),
            truncated=self.get(t, "truncated", (bool,), w, False),
            error=self.get(t, "error", (str, _NONE), w, None),
        )


_TYPE_NAMES = {
    str: "a string",
    int: "an integer",
    float: "a number",
    bool: "a boolean",
    list: "a list",
    dict: "an object",
}


def _json_type(value: Any) -> str:
    return {
        dict: "an object",
        list: "a list",
        str: "a string",
        bool: "a boolean",
        int: "an integer",
        float: "a number",
        _NONE: "null",
    }.get(type(value), type(value).__name__)


# Files ----------------------------------------------------------------------------------------
def load_case(path: str | os.PathLike[str]) -> FailureCase:
    """Read and validate one case file; every problem is a `CaseError` naming the file."""
    p = Path(path)
    try:
        text = read_text(p, "a case file")
    except UnreadableFile as exc:
        raise CaseError(p, exc.problem) from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise CaseError(
            p, f"not valid JSON ({exc.msg} at line {exc.lineno}, column {exc.colno})"
        ) from None
    except RecursionError:
        raise CaseError(p, "not a case file (JSON nested too deeply)") from None
    except ValueError as exc:  # e.g. an integer longer than Python converts
        raise CaseError(p, f"not usable JSON ({json_value_problem(exc)})") from None
    case = FailureCase.from_json(data, p)
    case.path = p
    return case


def save_case(case: FailureCase, folder: str | os.PathLike[str] | None = None) -> Path:
    """Write the case atomically to its own file (its loaded path, else `<folder>/<case_id>.json`).

    Atomic (temp file, fsync, rename): a kill mid-save leaves the old file or the new one.
    """
    target = (
        case.path
        if case.path is not None and folder is None
        else case_path(case, cases_dir(folder))
    )
    write_shared_text(target, case.dumps())
    case.path = target
    return target


def case_path(case: FailureCase, folder: Path) -> Path:
    """Where `save_case(case, folder)` writes: `<case_id>.json`, unless another case (a hash
    prefix clash, or an unreadable file) holds that name, then a longer hash, so a save never
    overwrites a different case. If the returned file exists, it holds this same case."""
    for digits in (8, 12, 16, 64):
        path = folder / f"{case.stem(digits)}.json"
        if not path.exists():
            return path
        try:
            if load_case(path).fingerprint == case.fingerprint:
                return path
        except CaseError:
            pass
    raise CaseError(
        folder / f"{case.case_id}.json", "every name for this case is taken by another file"
    )


def case_files(folder: str | os.PathLike[str]) -> list[Path]:
    """Case files in a folder in natural order of their names (`sample_2--` before `sample_12--`);
    hidden files, e.g. an interrupted save's temp, are skipped."""
    return sorted(
        (p for p in Path(folder).glob("*.json") if not p.name.startswith(".")),
        key=lambda p: natural_key(p.name),
    )


def load_gallery(folder: str | os.PathLike[str]) -> tuple[list[FailureCase], list[CaseError]]:
    """Every case in `folder` that loads, plus one error per file that does not.

    A missing folder is an empty gallery (a project that has saved nothing yet), not an error.
    """
    cases: list[FailureCase] = []
    errors: list[CaseError] = []
    if not Path(folder).is_dir():
        return cases, errors
    for path in case_files(folder):
        try:
            cases.append(load_case(path))
        except CaseError as exc:
            errors.append(exc)
    return cases, errors


def load_paths(
    paths: Iterable[str | os.PathLike[str]],
) -> tuple[list[FailureCase], list[CaseError]]:
    """Cases from a mix of files and folders (as the CLI takes them); a missing path is an error."""
    cases: list[FailureCase] = []
    errors: list[CaseError] = []
    for raw in paths:
        p = Path(raw)
        if p.is_dir():
            got, bad = load_gallery(p)
            cases += got
            errors += bad
        elif p.exists():
            try:
                cases.append(load_case(p))
            except CaseError as exc:
                errors.append(exc)
        else:
            errors.append(CaseError(p, "no such file or folder"))
    return cases, errors


def find_case(cases: Iterable[FailureCase], ref: str) -> FailureCase:
    """A case by file name, stem, sample id (when one case has it) or unique stem prefix."""
    pool = list(cases)
    stem = Path(ref).name.removesuffix(".json")
    exact = [c for c in pool if c.name == stem]
    if exact:
        return exact[0]
    of_sample = [c for c in pool if c.sample_id == stem]
    if len(of_sample) == 1:
        return of_sample[0]
    hits = of_sample or [c for c in pool if c.name.startswith(stem)]
    if len(hits) == 1:
        return hits[0]
    if not hits:
        raise KeyError(f"no case matches {ref!r}")
    raise KeyError(f"{ref!r} matches {len(hits)} cases: " + ", ".join(c.name for c in hits[:5]))


def edit_case(
    path: str | os.PathLike[str],
    *,
    tags: Iterable[str] | None = None,
    add_tags: Iterable[str] = (),
    remove_tags: Iterable[str] = (),
    note: str | None = None,
) -> FailureCase:
    """Change tags (replace them with `tags`, or add / remove some) and/or the note, in place:
    the file name stays, since a case's identity excludes tags and note."""
    case = load_case(path)
    base = case.tags if tags is None else merge_tags([], tags)
    updated = replace(
        case, tags=merge_tags(base, add_tags, remove_tags), note=case.note if note is None else note
    )
    updated.path = case.path
    save_case(updated)
    return updated


def select_cases(
    cases: Iterable[FailureCase],
    *,
    tag: str | None = None,
    model: str | None = None,
    task: str | None = None,
) -> list[FailureCase]:
    """Filter as the CLI and the Cases screen do: exact tag, model name substring, exact task."""
    needle = (model or "").lower()
    return [
        c
        for c in cases
        if (not tag or tag in c.tags)
        and (not needle or needle in c.model.model.lower())
        and (not task or c.task == task)
    ]
