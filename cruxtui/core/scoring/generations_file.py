"""The benchmark's generations and scored files, in and out, with errors that name the bad entry.

Generations: `{"sample_0": ["prediction", ...], ...}` (a partial file, covering some samples, is
fine). Scored: the benchmark's own keys (`raw_generations`, `raw_scored_generations`, `pass_at_1`,
`pass_at_5`) so its tools read our files, plus ours under `"cruxtui"` (strict verdicts, reasons,
intervals). Reading a scored file yields its `raw_generations`.
"""

from __future__ import annotations

import json
import os
from typing import Any

from cruxtui.core.data.dataset import Dataset
from cruxtui.core.data.textfile import UnreadableFile, json_value_problem, read_text
from cruxtui.core.util.atomic import write_shared_text

Generations = dict[str, list[str]]


class GenerationsError(Exception):
    """A generations file that cannot be scored: the file, the entry and the problem named."""

    def __init__(self, path: str | os.PathLike[str], entry: str | None, problem: str) -> None:
        self.path = str(path)
        self.entry = entry
        self.problem = problem
        where = f"{self.path}: entry {entry}" if entry else self.path
        super().__init__(f"{where}: {problem}")


def load_generations(path: str | os.PathLike[str]) -> Generations:
    """Read a generations file, or the `raw_generations` of a scored file, checking every entry."""
    try:
        text = read_text(path, "a generations JSON file")
    except UnreadableFile as exc:
        raise GenerationsError(path, None, exc.problem) from None
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
    if isinstance(data, dict) and "raw_generations" in data:
        data = data["raw_generations"]
        prefix = "raw_generations."
    else:
        prefix = ""
    return parse_generations(data, path, prefix)


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
    for sample_id in generations:
        if sample_id not in dataset:
            raise GenerationsError(
                path,
                repr(sample_id),
                f"no such sample in the dataset ({dataset.description})",
            )


def write_scored(path: str | os.PathLike[str], document: dict[str, Any]) -> None:
    """Write a scored document atomically (a failure leaves no partial file)."""
    write_shared_text(path, json.dumps(document, indent=None, ensure_ascii=False) + "\n")


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
