"""stdout and stderr of a subcommand, with keys redacted from everything printed."""

from __future__ import annotations

from typing import Any, TextIO

from cruxtui.core.util.redact import redact


class RedactingStream:
    """A text stream that passes every write through `redact` (everything else is the stream's
    own: encoding, isatty, fileno, so Rich and json.dump see a terminal or a pipe as before)."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        self._stream.write(redact(text))
        return len(text)

    def writelines(self, lines: Any) -> None:
        for line in lines:
            self.write(line)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)
