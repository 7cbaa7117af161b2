"""One round of a run settled: its answers read, scored and committed, in the scoring process.

The process that keeps a bulk run's requests going is bound by its own CPU, and Python runs one
thread at a time: reading, scoring and storing a round in a worker thread of that process took
its time from the event loop (and SQLite's many small steps, each giving up and taking back the
interpreter's lock, made the loop wait behind them), measured in `benchmarks/bench_runner.py` at
concurrency 64. So the whole round goes to the scoring process (`offload`) as one call: the texts
and what the server said of them in, and back only what the runner counts (sample, passed), or
the stored generations when a listener shows them. The scoring process writes through its own
connection to the same SQLite file (WAL: the runner's own connection still records failures and
the run's status beside it).

`settle` is a plain function of plain values: when the scoring process is not there (or a scorer
does not pickle) the runner calls it in its worker thread with its own store, and the rows are
the same.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from cruxtui.core.data.dataset import Sample
from cruxtui.core.models.backend import truncated_while_thinking
from cruxtui.core.runs.store import Generation, RunStore
from cruxtui.core.util.redact import register

VERDICTS_KEPT = 20_000
"""Verdicts remembered, (store, run, scorer, sample, answer) -> verdict, most recently used: at
low temperature most of a sample's answers are the same text, scored once per run (a run is its
id in its store: the same configuration in another store file is scored afresh)."""
STORES_KEPT = 8
"""Run stores the scoring process keeps open (one per file a caller commits to)."""

TRUNCATED_WHILE_THINKING = "truncated while thinking"


def truncated_reason(max_tokens: int | None) -> str:
    """The verdict reason of a generation cut by max_tokens before its thinking ended."""
    budget = f"max_tokens={max_tokens}" if max_tokens else "max_tokens"
    return (
        f"{TRUNCATED_WHILE_THINKING}: {budget} ran out before the model answered; "
        "give reasoning models more room with --max-tokens"
    )


@dataclass
class Round:
    """What one round brought back, and how to settle it."""

    store: RunStore | str
    """The run store, or its path (the scoring process opens its own connection)."""
    run_id: str
    task: str
    extract: Callable[[str], tuple[str | None, str]]
    scorer: Callable[[Sequence[tuple[Sample, str]], str], list[Any]]
    scorer_key: str
    """Names the scorer in the verdict cache (two runners of one run never mix verdicts)."""
    max_tokens: int | None
    samples: dict[str, Sample]
    """The round's samples (a scorer needs the sample of each new answer)."""
    responses: list[tuple[str, list[tuple[int, Any, str]]]]
    """Per request: its sample and (index, completion, raw text) of each completion."""
    secrets: list[str]
    """Keys the caller uses: redacted from what is stored, in whichever process stores it."""
    whole: bool
    """Return the stored generations themselves (a listener shows them), else (sample, passed)."""


@dataclass
class Settled:
    stored: list[Generation] | list[tuple[str, bool]]
    """In order of the round's responses: what was committed."""
    unscored: list[tuple[int, Exception]]
    """Responses (by position) that could not be scored, with why: left missing."""


class StoreFailed(Exception):
    """Committing the round failed (a full disk...): the run cannot go on. Carries the cause."""

    def __init__(self, error: BaseException) -> None:
        super().__init__(error)
        self.error = error


_verdicts: OrderedDict[tuple[str, str, str, str, str], Any] = OrderedDict()
_stores: OrderedDict[str, RunStore] = OrderedDict()
_lock = threading.Lock()
"""One round at a time per process: the caches above are shared by every runner in it."""


def settle(job: Round) -> Settled:
    """Read, score and commit one round; scoring that fails for the round is tried response by
    response, so one answer that cannot be scored does not take the others with it."""
    with _lock:
        for secret in job.secrets:
            register(secret)
        store = _store(job.store)
        try:
            gens = _scored(job, range(len(job.responses)))
            unscored: list[tuple[int, Exception]] = []
        except Exception as exc:  # noqa: BLE001 - scoring failed: find which responses it was
            if len(job.responses) == 1:
                return Settled([], [(0, _plain(exc))])
            gens, unscored = [], []
            for at in range(len(job.responses)):
                try:
                    gens += _scored(job, [at])
                except Exception as one:  # noqa: BLE001 - recorded as a failure of its request
                    unscored.append((at, _plain(one)))
        try:
            store.add_generations(job.run_id, gens)
        except Exception as exc:
            raise StoreFailed(exc) from exc
        while len(_verdicts) > VERDICTS_KEPT:
            _verdicts.popitem(last=False)
        if job.whole:
            return Settled(gens, unscored)
        return Settled([(g.sample_id, g.passed) for g in gens], unscored)


def _store(where: RunStore | str) -> RunStore:
    if isinstance(where, RunStore):
        return where
    store = _stores.get(where)
    if store is None:
        store = _stores[where] = RunStore(where)
        while len(_stores) > STORES_KEPT:
            _stores.popitem(last=False)[1].close()
    _stores.move_to_end(where)
    return store


def _where(store: RunStore | str) -> str:
    return str(store.path.absolute()) if isinstance(store, RunStore) else store


def _scored(job: Round, positions: Sequence[int] | range) -> list[Generation]:
    """The generations of the responses at `positions`, each distinct text read once and each new
    (sample, answer) scored once, in one scorer call."""
    chosen = [job.responses[at] for at in positions]
    raws = dict.fromkeys(raw for _, done in chosen for _, _, raw in done)
    read = {raw: job.extract(raw) for raw in raws}
    run = (_where(job.store), job.run_id, job.scorer_key)  # the verdicts' key, but for the answer
    fresh: dict[tuple[str, str, str, str, str], tuple[str, str]] = {}
    for sid, done in chosen:
        for _, _, raw in done:
            answer = read[raw][0]
            key = (*run, sid, answer or "")
            if answer is not None and key not in _verdicts:
                fresh[key] = (sid, answer)
    if fresh:
        keys = list(fresh)
        verdicts = job.scorer([(job.samples[sid], a) for sid, a in fresh.values()], job.task)
        if len(verdicts) != len(keys):
            raise RuntimeError(f"the scorer gave {len(verdicts)} verdicts for {len(keys)} answers")
        _verdicts.update(zip(keys, verdicts, strict=True))
    return [
        _generation(job, run, sid, index, comp, raw, *read[raw])
        for sid, done in chosen
        for index, comp, raw in done
    ]


def _generation(
    job: Round,
    run: tuple[str, str, str],
    sid: str,
    index: int,
    comp: Any,
    raw: str,
    answer: str | None,
    why: str,
) -> Generation:
    reasoning = getattr(comp, "reasoning", None)
    if answer is None:
        passed, kind, reason, official = False, "unparsable", why, None
        if truncated_while_thinking(comp.finish_reason, reasoning, comp.text):
            reason = truncated_reason(job.max_tokens)
        elif reasoning and not comp.text.strip() and comp.finish_reason == "stop":
            reason = (
                "stopped while thinking: the model wrote a stop sequence "
                "(e.g. [/ANSWER]) inside its thinking"
            )
    else:
        key = (*run, sid, answer)
        verdict = _verdicts[key]
        _verdicts.move_to_end(key)
        passed, kind, reason = verdict.passed, verdict.kind, verdict.reason
        official = getattr(verdict, "official", None)
    return Generation(
        sample_id=sid,
        index=index,
        raw=raw,
        answer=answer,
        kind=kind,
        passed=passed,
        reason=reason,
        official=official,
        latency=comp.latency,
        tokens_in=comp.tokens_in,
        tokens_out=comp.tokens_out,
        finish_reason=comp.finish_reason,
        reasoning=reasoning,
        seed=getattr(comp, "seed", None),
        obtained=getattr(comp, "obtained", None) or None,
    )


def _plain(exc: Exception) -> Exception:
    """An exception that surely pickles back to the caller, saying the same thing."""
    if type(exc).__module__ == "builtins":
        return exc
    return RuntimeError(str(exc).strip() or type(exc).__name__)
