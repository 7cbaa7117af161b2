"""Natural order for ids and names: `sample_2` before `sample_12`, as a person reads them."""

from __future__ import annotations

import re

_DIGITS = re.compile(r"(\d+)")


def natural_key(text: str) -> tuple[tuple[int, int | str], ...]:
    """A sort key that compares runs of digits as numbers and everything else as text.

    Each part is tagged (0 for text, 1 for a number) so a number and a word never meet in one
    comparison: `sample_12~anon` sorts after `sample_12` and before `sample_13`.
    """
    return tuple(
        (1, int(part)) if part.isdigit() else (0, part) for part in _DIGITS.split(text) if part
    )
