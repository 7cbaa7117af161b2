"""The benchmark's generations and scored files, in and out, with errors that name the bad entry.

The one reader of these files: scoring (`cruxtui score`, `--generations`), importing them as runs
(`runs --import`) and replaying them as a model (backend "replay") all read through it, so a file
is accepted, refused and explained the same way everywhere.

Generations: `{"sample_0": ["prediction", ...], ...}` (a partial file, covering some samples, is
fine). Scored: the benchmark's own keys (`raw_generations`, `raw_scored_generations`, `pass_at_1`,
`pass_at_5`) so its tools read our files, plus ours under `"cruxtui"` (strict verdicts, reasons,
intervals). Reading a scored file yields its `raw_generations` (and its recorded verdicts).
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from typing import Any

from cruxtui.core.data.dataset import Dataset
from cruxtui.core.data.textfile import UnreadableFile, json_value_problem, read_bytes
from cruxtui.core.util.atomic import write_shared_text

Generations = dict[str, list[str]]


class GenerationsError(Exception):
    """A generations file that cannot be used: the file, the entry and the problem named."""

    def __init__(self, path: str | os.PathLike[str], entry: str | None, problem: str) -> None:
        self.path = str(path)
        self.entry = entry
        self.problem = problem
        where = f"{self.path}: entry {entry}" if entry else self.path
        super().__init__(f"{where}: {problem}")


@dataclass(frozen=True)
class GenerationsFile:
    """A generations or scored file as read: its predictions, any verdicts it records, its digest."""

    path: str
    generations: Generations
    official: dict[str, list[bool]]
    """The benchmark's verdicts recorded in a scored file (`raw_scored_generations`); else empty."""
    digest: str
    """SHA-256 of the file's bytes: the same content is recognised however it is named."""


def read_generations_file(path: str | os.PathLike[str]) -> GenerationsFile:
    """Read a generations file or a scored file, checking every entry."""
    return parse_document(*read_document(path), path)


def parse_document(data: Any, digest: str, path: str | os.PathLike[str]) -> GenerationsFile:
    """Check decoded JSON (from `read_document`) as a generations or scored file."""
    official: dict[str, list[bool]] = {}
    if isinstance(data, dict) and "raw_generations" in data:
        official = _parse_verdicts(data.get("raw_scored_generations", {}), path)
        generations = parse_generations(data["raw_generations"], path, "raw_generations.")
    else:
        generations = parse_generations(data, path)
    return GenerationsFile(str(path), generations, official, digest)


def load_generations(path: str | os.PathLike[str]) -> Generations:
    """Read a generations file, or the `raw_generations` of a scored file, checking every entry."""
    return read_generations_file(path).generations


def read_document(path: str | os.PathLike[str]) -> tuple[Any, str]:
    """The decoded JSON of a generations file and the SHA-256 of its bytes, unchecked."""
    try:
        raw = read_bytes(path, "a generations JSON file")
        text = raw.decode("utf-8")
    except UnreadableFile as exc:
        raise GenerationsError(path, None, exc.problem) from None
    except UnicodeDecodeError as exc:
        raise GenerationsError(
            path, None, f"not UTF-8 text ({exc.reason} at byte {exc.start})"
        ) from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise GenerationsError(
            path, None, f"not valid JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})"
        ) from None
    except RecursionError:
        raise GenerationsError(path, None, "not valid JSON: nested too deeply") from None
    except ValueError as exc:  # an integer longer than Python converts, say
        raise GenerationsError(path, None, f"not usable JSON: {json_value_problem(exc)}") from None
    return data, hashlib.sha256(raw).hexdigest()


def parse_generations(
    data: Any, path: str | os.PathLike[str] = "<generations>", prefix: str = ""
) -> Generations:
    """Check the decoded JSON shape: an object of sample id -> list of strings."""
    if not isinstance(data, dict):
        raise GenerationsError(
            path,
            None,
            f"expected a JSON object of sample id -> list of predictions, got {_json_type(data)}",
        )
    if not data:
        raise GenerationsError(path, None, "has no samples")
    out: Generations = {}
    for sample_id, predictions in data.items():
        entry = f"{prefix}{sample_id!r}" if prefix else repr(sample_id)
        if not isinstance(predictions, list):
            raise GenerationsError(
                path, entry, f"expected a list of predictions, got {_json_type(predictions)}"
            )
        for index, prediction in enumerate(predictions):
            if not isinstance(prediction, str):
                raise GenerationsError(
                    path, f"{entry}[{index}]", f"expected a string, got {_json_type(prediction)}"
                )
        out[sample_id] = list(predictions)
    return out


def check_sample_ids(
    generations: Generations, dataset: Dataset, path: str | os.PathLike[str]
) -> None:
    """Every sample id must exist in the dataset (a typo must not silently score nothing)."""
    unknown = [sample_id for sample_id in generations if sample_id not in dataset]
    if unknown:
        more = f"; {len(unknown) - 1} more of its ids are not either" if len(unknown) > 1 else ""
        raise GenerationsError(
            path,
            repr(unknown[0]),
            f"no such sample in the dataset ({dataset.description}){more}",
        )


def write_generations(path: str | os.PathLike[str], generations: Generations) -> None:
    """Write a generations file atomically, in the benchmark's format (`cruxtui export`): a file
    meant to be shared, so keys are redacted and its mode follows the umask."""
    write_shared_text(path, json.dumps(generations, indent=1) + "\n")


def write_scored(path: str | os.PathLike[str], document: dict[str, Any]) -> None:
    """Write a scored document atomically (a failure leaves no partial file)."""
    write_shared_text(path, json.dumps(document, indent=None, ensure_ascii=False) + "\n")


def _parse_verdicts(data: Any, path: str | os.PathLike[str]) -> dict[str, list[bool]]:
    """`raw_scored_generations`: sample id -> one true/false per generation."""
    entry = "raw_scored_generations"
    if not isinstance(data, dict):
        raise GenerationsError(path, entry, f"expected an object, got {_json_type(data)}")
    out: dict[str, list[bool]] = {}
    for sample_id, marks in data.items():
        if not isinstance(marks, list) or not all(isinstance(m, bool) for m in marks):
            raise GenerationsError(
                path, f"{entry}.{sample_id!r}", "expected a list of true/false verdicts"
            )
        out[sample_id] = list(marks)
    return out


def _json_type(value: Any) -> str:
    return {
        dict: "an object",
        list: "a list",
        str: "a string",
        bool: "true/false",
        int: "a number",
        float: "a number",
        type(None): "null",
    }.get(type(value), type(value).__name__)
