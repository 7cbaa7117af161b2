"""Browse-table columns: the base ones and those features register on the app (pass rate, steps, run results).

Keeping this a small registry means a feature adds its column without the Browse screen knowing
about scoring, tracing or runs: the screen just renders whatever columns the app holds.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from rich.text import Text

from cruxtui.core.data.dataset import Sample


@dataclass(frozen=True)
class Column:
    key: str
    """Stable id (also the DataTable column key)."""
    label: str
    value: Callable[[Sample], str | Text]
    """The cell for a sample; must be cheap (it runs for every row on every refresh)."""
    sort_key: Callable[[Sample], Any]
    """What sorting by this column orders by (use a tuple to put missing values last)."""
    width: int | None = None
