"""Reading a user's text file with every way it can fail said in words, once for all callers
(dataset, generations, case files, chains of thought), each of which wraps it in its own error."""

from __future__ import annotations

import os
from pathlib import Path


class UnreadableFile(Exception):
    """The file could not be read as UTF-8 text; `problem` is the reason, without the path."""

    def __init__(self, path: str | os.PathLike[str], problem: str) -> None:
        self.path = str(path)
        self.problem = problem
        super().__init__(f"{self.path}: {problem}")


def read_text(
    path: str | os.PathLike[str], expected: str = "a text file", encoding: str = "utf-8"
) -> str:
    """The file's text; `expected` names what it should be, for the message about a folder."""
    try:
        return Path(path).read_text(encoding=encoding)
    except FileNotFoundError:
        raise UnreadableFile(path, "file not found") from None
    except IsADirectoryError:
        raise UnreadableFile(path, f"is a directory, expected {expected}") from None
    except UnicodeDecodeError as exc:
        raise UnreadableFile(path, f"not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    except OSError as exc:
        raise UnreadableFile(path, exc.strerror or str(exc)) from None
