"""The CLI's one error type."""

from __future__ import annotations


class CliError(Exception):
    """A user-facing error: printed as one clear line, exit status 2, no traceback."""
