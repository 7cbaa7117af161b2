"""Search over samples: exact substrings first, fuzzy (rapidfuzz) matches for typos, and filters.

The query language is what a researcher types in the Browse search box or `--grep`:
plain words are searched in id, code, input and output (every word must match; a word with
no exact hit matches fuzzily, so typos still find something); `method:NAME`
(or `m:NAME`) keeps samples calling that method; `type:NAME` keeps samples whose output has that
type. Results keep the dataset order unless fuzzy scores differ, so exact hits stay stable.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from rapidfuzz import fuzz, process

from cruxtui.core.data.dataset import Sample

FUZZY_MIN_LEN = 4
"""Shorter words match only as substrings: fuzzy matching 3 letters hits nearly everything."""

FUZZY_CUTOFF = 80.0


@dataclass(frozen=True)
class Query:
    words: tuple[str, ...]
    methods: tuple[str, ...]
    types: tuple[str, ...]


def parse_query(text: str) -> Query:
    words: list[str] = []
    methods: list[str] = []
    types: list[str] = []
    for tok in text.split():
        key, sep, value = tok.partition(":")
        key = key.lower()
        if sep and value and key in ("m", "method"):
            methods.append(value)
        elif sep and value and key == "type":
            types.append(value.lower())
        else:
            words.append(tok.lower())
    return Query(tuple(words), tuple(methods), tuple(types))


class SampleIndex:
    """Precomputed haystacks so a keystroke costs one C-level rapidfuzz pass per word."""

    def __init__(self, samples: Sequence[Sample]) -> None:
        self.samples = list(samples)
        self._hay = [f"{s.id}\n{s.code}\n{s.input}\n{s.output}".lower() for s in self.samples]

    def scores(self, word: str) -> dict[int, float]:
        """Index -> score for one word: 100 for each substring hit; only when there is none,
        fuzzy partial-ratio matches (so `rfind` finds exactly the `rfind` samples, `rfnid` too)."""
        hits = {i: 100.0 for i, h in enumerate(self._hay) if word in h}
        if hits or len(word) < FUZZY_MIN_LEN:
            return hits
        for _, score, i in process.extract(
            word, self._hay, scorer=fuzz.partial_ratio, score_cutoff=FUZZY_CUTOFF, limit=None
        ):
            hits[i] = float(score)
        return hits

    def search(
        self,
        text: str,
        methods: Iterable[str] = (),
        types: Iterable[str] = (),
    ) -> list[str]:
        """Ids of matching samples: best score first, dataset order among equals."""
        q = parse_query(text)
        want_methods = set(q.methods) | set(methods)
        want_types = set(q.types) | {t.lower() for t in types}
        candidates = [
            i
            for i, s in enumerate(self.samples)
            # Test the set first: `s.methods` parses the code on first use (~50 ms for 800).
            if (not want_methods or want_methods.issubset(s.methods))
            and (not want_types or s.output_type in want_types)
        ]
        if not q.words:
            return [self.samples[i].id for i in candidates]
        total = dict.fromkeys(candidates, 0.0)
        for word in q.words:
            found = self.scores(word)
            total = {i: t + found[i] for i, t in total.items() if i in found}
        ranked = sorted(total, key=lambda i: (-total[i], i))
        return [self.samples[i].id for i in ranked]
