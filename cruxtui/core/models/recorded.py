"""Replay recorded generations as if a model produced them: offline demos, re-scoring, tests.

Sources: a benchmark generations file (`{"sample_0": ["...", ...], ...}`, e.g. the paper's
released generations), a mapping built from a stored run, or a plain list of texts served for
every sample. Generation `index` of a sample is its `index`-th recorded text, so a resumed run
gets the same text for the same index; without an index, each sample's texts are served in turn.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Mapping, Sequence
from pathlib import Path

from cruxtui.core.models.backend import (
    OBTAINED_RECORDED,
    Completion,
    ModelError,
    ModelSpec,
    SamplingParams,
    StreamStats,
    TextStream,
)
from cruxtui.core.models.prompts import Prompt
from cruxtui.core.models.thinking import Piece
from cruxtui.core.scoring.generations_file import (
    GenerationsError,
    parse_document,
    read_document,
)


def load_generations(path: str | Path) -> dict[str, list[str]]:
    """Read a generations (or scored) file through the one reader, as `cruxtui score` does; a JSON
    list of texts is also accepted and served for every sample. Problems are `ModelError`s."""
    try:
        data, digest = read_document(path)
        if isinstance(data, list) and data and all(isinstance(t, str) for t in data):
            return {"*": list(data)}
        return parse_document(data, digest, path).generations
    except GenerationsError as exc:
        raise ModelError("replay", str(exc)) from None


class ReplayBackend:
    """Serves recorded texts; `delay` seconds per completion imitates a model's latency."""

    supports_n = True
    concurrency: int | None = None
    """Requests in flight the endpoint asks for (config.toml `concurrency`); None: caller decides."""

    def __init__(
        self,
        generations: Mapping[str, Sequence[str]] | Sequence[str] | str | Path,
        spec: ModelSpec | None = None,
        delay: float = 0.0,
        chunk_chars: int = 16,
    ) -> None:
        if isinstance(generations, str | Path):
            source = str(generations)
            table = load_generations(generations)
        elif isinstance(generations, Mapping):
            source, table = "generations", {k: list(v) for k, v in generations.items()}
        else:
            source, table = "texts", {"*": list(generations)}
        self.spec = spec or ModelSpec(
            "replay", Path(source).stem if source else "replay", path=source
        )
        self._table = table
        self._cursor: dict[str, int] = {}
        self.delay = delay
        self.chunk_chars = max(1, chunk_chars)

    def __repr__(self) -> str:
        return f"ReplayBackend({self.spec.path!r}, {len(self._table)} samples)"

    def texts_for(self, sample_id: str) -> list[str]:
        texts = self._table.get(sample_id) or self._table.get("*")
        if not texts:
            raise ModelError(
                "replay", f"no recorded generations for {sample_id} in {self.spec.path}"
            )
        return texts

    def _pick(self, sample_id: str, index: int | None) -> str:
        texts = self.texts_for(sample_id)
        if index is None:
            index = self._cursor.get(sample_id, 0)
            self._cursor[sample_id] = index + 1
        return texts[index % len(texts)]

    async def complete(
        self, prompt: Prompt, params: SamplingParams, *, index: int | None = None
    ) -> list[Completion]:
        out = []
        for k in range(max(1, params.n)):
            if self.delay:
                await asyncio.sleep(self.delay)
            text = self._pick(prompt.sample_id, None if index is None else index + k)
            out.append(
                Completion.of(
                    text, finish_reason="stop", latency=self.delay, obtained=OBTAINED_RECORDED
                )
            )
        return out

    def stream(
        self, prompt: Prompt, params: SamplingParams, *, index: int | None = None
    ) -> TextStream:
        return TextStream(lambda stats: self._stream(prompt, index, stats))

    async def _stream(
        self, prompt: Prompt, index: int | None, stats: StreamStats
    ) -> AsyncIterator[Piece]:
        text = self._pick(prompt.sample_id, index)
        pieces = [text[i : i + self.chunk_chars] for i in range(0, len(text), self.chunk_chars)]
        for piece in pieces:
            if self.delay:
                await asyncio.sleep(self.delay / max(len(pieces), 1))
            yield Piece(piece)
        stats.finish_reason = "stop"

    async def aclose(self) -> None:
        """Nothing to release."""
