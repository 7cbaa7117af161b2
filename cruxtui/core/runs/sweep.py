"""Sweeps: a grid of run configurations over several endpoints, run as ordinary stored runs.

A sweep file (TOML) names endpoints and a grid; every cell of the grid (endpoint x model x task x
mode x temperature x n x seed x transform) is one `RunSession`, the same path `cruxtui run` takes,
so the runs it stores are seen by `runs`, `compare`, `export`, `cases from-run` and the TUI, and a
killed sweep resumes through the store's configuration hash: the same file asks only for what is
missing. A perturbed cell runs the transform's verified variants (`cruxtui.core.perturb.variant_set`) in the run of
its configuration, as the Perturb screen's run panels do; cells that share a run take turns.

Cells run several at once: per endpoint, `cells_per_endpoint` cells share one semaphore of the
endpoint's `concurrency`, so the tail of one cell overlaps the start of the next and the endpoint
is never asked for more than it was given. An endpoint that stops answering (the runner stops a
cell after a row of failed requests, or at once when nothing listens) is marked down: its cells
wait, then try again, the wait doubling each round from `retry_wait` up to `max_retry_wait`; after
`attempts` rounds without a generation stored the endpoint is given up and its remaining cells are
reported incomplete without being tried. The other endpoints' cells go on all the while. Errors no
retry can fix (a wrong key, an unknown model) end the cell at once.
"""

from __future__ import annotations

import asyncio
import itertools
import os
import time
import tomllib
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cruxtui.core.perturb.variant_set import (
    NONE,
    TransformError,
    VariantSet,
    build_variants,
    check_transform,
)
from cruxtui.core.runs.runner import Progress, RunListener
from cruxtui.core.runs.session import RunSettings

if TYPE_CHECKING:
    from cruxtui.core.data.dataset import Dataset
    from cruxtui.core.models.backend import Backend
    from cruxtui.core.runs.store import RunStore

TASKS = ("output", "input")
MODES = ("direct", "cot", "scratchpad")
TOP_KEYS = frozenset({"sweep", "endpoints", "grid"})
SWEEP_KEYS = frozenset({"retry_wait", "max_retry_wait", "attempts", "cells_per_endpoint"})
ENDPOINT_KEYS = frozenset(
    {
        "use",
        "base_url",
        "model",
        "models",
        "api",
        "api_key_env",
        "api_key",
        "timeout",
        "retries",
        "concurrency",
    }
)
GRID_KEYS = frozenset(
    {
        "models",
        "tasks",
        "modes",
        "temperatures",
        "n",
        "seeds",
        "samples",
        "top_p",
        "max_tokens",
        "transforms",
    }
)


class SweepError(Exception):
    """The sweep file is wrong; the message is one line naming the file and the key."""


@dataclass(frozen=True)
class SweepEndpoint:
    """Where cells run: connection settings (inline, or `use` = a config.toml endpoint)."""

    name: str
    models: tuple[str, ...]
    concurrency: int
    use: str | None = None
    base_url: str | None = None
    api: str | None = None
    api_key: str | None = field(default=None, repr=False)
    timeout: float | None = None
    retries: int | None = None


@dataclass(frozen=True)
class Cell:
    """One configuration of the grid: one stored run."""

    endpoint: str
    model: str
    task: str
    mode: str
    temperature: float
    n: int
    seed: int | None
    top_p: float = 0.95
    max_tokens: int | None = None
    transform: str = NONE
    """`none` (the original samples) or a `cruxtui perturb --apply` spec, e.g. `rename:anonymize`."""

    @property
    def label(self) -> str:
        seed = f" seed={self.seed}" if self.seed is not None else ""
        perturbed = f" [{self.transform}]" if self.transform != NONE else ""
        return (
            f"{self.model} @ {self.endpoint} {self.task}/{self.mode} "
            f"t={self.temperature:g} n={self.n}{seed}{perturbed}"
        )

    @property
    def run_key(self) -> Cell:
        """The cell's stored run: cells differing only in their transform share it."""
        return replace(self, transform=NONE)

    def settings(self, ep: SweepEndpoint) -> RunSettings:
        return RunSettings(
            task=self.task,
            mode=self.mode,
            n=self.n,
            temperature=self.temperature,
            top_p=self.top_p,
            max_tokens=self.max_tokens,
            seed=self.seed,
            endpoint=ep.use,
            base_url=ep.base_url,
            model=self.model,
            api=ep.api,
            api_key=ep.api_key,
            timeout=ep.timeout,
            retries=ep.retries,
            concurrency=ep.concurrency,
        )


@dataclass(frozen=True)
class Sweep:
    endpoints: dict[str, SweepEndpoint]
    cells: list[Cell]
    samples: list[str] | int | None
    """Sample ids, the first N samples, or None for all."""
    retry_wait: float = 10.0
    max_retry_wait: float = 300.0
    attempts: int = 5
    cells_per_endpoint: int = 2

    @property
    def transforms(self) -> list[str]:
        return list(dict.fromkeys(c.transform for c in self.cells))

    def backoff(self, round_: int) -> float:
        """The wait before round `round_` + 1 of an endpoint that is down: doubling, capped."""
        return float(min(self.retry_wait * 2 ** (round_ - 1), self.max_retry_wait))

    def sample_ids(self, dataset: Dataset) -> list[str]:
        if self.samples is None:
            return [s.id for s in dataset.samples]
        if isinstance(self.samples, int):
            return [s.id for s in dataset.samples[: self.samples]]
        unknown = [s for s in self.samples if s not in dataset]
        if unknown:
            raise SweepError(
                f"grid.samples: {', '.join(unknown[:5])} not in the dataset "
                f"({len(dataset)} samples, e.g. {dataset.samples[0].id})"
            )
        return list(dict.fromkeys(self.samples))


# -- loading -------------------------------------------------------------------------------------


def load_sweep(
    path: str | os.PathLike[str],
    *,
    config_file: str | os.PathLike[str] | None = None,
    environ: Mapping[str, str] | None = None,
) -> Sweep:
    """Read and check a sweep file; `SweepError` names the first wrong key."""
    p = Path(path)
    try:
        data = tomllib.loads(p.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise SweepError(f"{p}: no such file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise SweepError(f"{p}: cannot read ({exc})") from None
    except tomllib.TOMLDecodeError as exc:
        raise SweepError(f"{p}: not valid TOML ({exc})") from None
    try:
        return _parse(data, config_file, os.environ if environ is None else environ)
    except SweepError as exc:
        raise SweepError(f"{p}: {exc}") from None


def _unknown(table: Mapping[str, Any], known: frozenset[str], where: str) -> None:
    unknown = sorted(set(table) - known)
    if unknown:
        prefix = f"{where}." if where else ""
        raise SweepError(
            f"unknown key {prefix}{unknown[0]} (known{' in ' + where if where else ''}: "
            f"{', '.join(sorted(known))})"
        )


def _table(data: Mapping[str, Any], key: str) -> dict[str, Any]:
    value = data.get(key, {})
    if not isinstance(value, dict):
        raise SweepError(f"{key} must be a table ([{key}])")
    return value


def _list(value: Any, key: str, kind: type | tuple[type, ...]) -> list[Any]:
    items = value if isinstance(value, list) else [value]
    for item in items:
        if isinstance(item, bool) or not isinstance(item, kind):
            raise SweepError(f"{key}: {item!r} is not a valid value")
    return items


def _parse(data: dict[str, Any], config_file: Any, environ: Mapping[str, str]) -> Sweep:
    _unknown(data, TOP_KEYS, "")
    opts = _table(data, "sweep")
    _unknown(opts, SWEEP_KEYS, "sweep")
    retry_wait = opts.get("retry_wait", 10.0)
    if not _number(retry_wait) or retry_wait < 0:
        raise SweepError("sweep.retry_wait must be a number of seconds, 0 or more")
    max_retry_wait = opts.get("max_retry_wait", max(300.0, retry_wait))
    if not _number(max_retry_wait) or max_retry_wait < retry_wait:
        raise SweepError("sweep.max_retry_wait must be a number of seconds, retry_wait or more")
    attempts = opts.get("attempts", 5)
    per_endpoint = opts.get("cells_per_endpoint", 2)
    for key, value in (("attempts", attempts), ("cells_per_endpoint", per_endpoint)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise SweepError(f"sweep.{key} must be a positive integer")

    grids = data.get("grid")
    if grids is None:
        raise SweepError("no [grid] table (models, tasks, modes, temperatures, n, ...)")
    if isinstance(grids, dict):
        grids = [grids]
    if not isinstance(grids, list) or not all(isinstance(g, dict) for g in grids):
        raise SweepError("grid must be a table ([grid]) or tables ([[grid]])")
    raw_endpoints = _table(data, "endpoints")
    if not raw_endpoints:
        raise SweepError("no endpoints: add an [endpoints.NAME] table")

    cells: list[Cell] = []
    samples: list[str] | int | None = None
    endpoints: dict[str, SweepEndpoint] = {}
    for grid in grids:
        _unknown(grid, GRID_KEYS, "grid")
        grid_models = _list(grid["models"], "grid.models", str) if "models" in grid else None
        for name, table in raw_endpoints.items():
            ep = _endpoint(name, table, grid_models, config_file, environ)
            endpoints.setdefault(name, ep)
        samples = _samples(grid.get("samples"), samples)
        cells.extend(_cells(grid, endpoints))
    return Sweep(
        endpoints=endpoints,
        cells=list(dict.fromkeys(cells)),
        samples=samples,
        retry_wait=float(retry_wait),
        max_retry_wait=float(max_retry_wait),
        attempts=attempts,
        cells_per_endpoint=per_endpoint,
    )


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _samples(value: Any, before: list[str] | int | None) -> list[str] | int | None:
    if value is None:
        return before
    if isinstance(value, int) and not isinstance(value, bool):
        if value < 1:
            raise SweepError("grid.samples must be a positive count or a list of sample ids")
        chosen: list[str] | int = value
    else:
        chosen = _list(value, "grid.samples", str)
    if before is not None and chosen != before:
        raise SweepError("grid.samples must be the same in every [[grid]] table")
    return chosen


def _endpoint(
    name: str,
    table: Any,
    grid_models: list[str] | None,
    config_file: Any,
    environ: Mapping[str, str],
) -> SweepEndpoint:
    """Check an endpoint table and resolve it once (so a bad reference fails before any cell)."""
    from cruxtui.core.models.backend import ModelError
    from cruxtui.core.models.endpoints import resolve_endpoint

    where = f"endpoints.{name}"
    if not isinstance(table, dict):
        raise SweepError(f"{where} must be a table")
    _unknown(table, ENDPOINT_KEYS, where)
    use = table.get("use")
    if use is not None and not isinstance(use, str):
        raise SweepError(f"{where}.use must name an endpoint of config.toml")
    if use is None and "base_url" not in table:
        raise SweepError(f"{where} needs base_url (or use = a config.toml endpoint)")
    if "models" in table:
        models = _list(table["models"], f"{where}.models", str)
    elif grid_models is not None:
        models = grid_models
    elif "model" in table:
        models = _list(table["model"], f"{where}.model", str)
    else:
        models = []
    if not models and use is None:
        raise SweepError(f"{where}: no model (give grid.models, or models in [{where}])")
    key = table.get("api_key")
    key_env = table.get("api_key_env")
    if key_env is not None:
        if not isinstance(key_env, str):
            raise SweepError(f"{where}.api_key_env must be the name of a variable")
        key = environ.get(key_env) or key
        if not key:
            raise SweepError(f"{where} reads its key from ${key_env}, which is not set")
    for k in ("base_url", "api", "api_key"):
        if k in table and not isinstance(table[k], str):
            raise SweepError(f"{where}.{k} must be a string")
    timeout = table.get("timeout")
    if timeout is not None and (isinstance(timeout, bool) or not isinstance(timeout, int | float)):
        raise SweepError(f"{where}.timeout must be a number of seconds")
    retries = table.get("retries")
    if retries is not None and (
        isinstance(retries, bool) or not isinstance(retries, int) or retries < 0
    ):
        raise SweepError(f"{where}.retries must be 0 or more")
    concurrency = table.get("concurrency")
    if concurrency is not None and (
        isinstance(concurrency, bool) or not isinstance(concurrency, int) or concurrency < 1
    ):
        raise SweepError(f"{where}.concurrency must be a positive integer")
    try:
        resolved = resolve_endpoint(
            use,
            base_url=table.get("base_url"),
            model=models[0] if models else None,
            api=table.get("api"),
            api_key=key,
            timeout=float(timeout) if timeout is not None else None,
            config_file=config_file,
            environ=environ,
        )
    except ModelError as exc:
        raise SweepError(f"{where}: {exc.message}") from None
    if not models:
        models = [resolved.spec.model]
    from cruxtui.core.runs.session import DEFAULT_CONCURRENCY

    return SweepEndpoint(
        name=name,
        models=tuple(dict.fromkeys(models)),
        concurrency=concurrency or resolved.concurrency or DEFAULT_CONCURRENCY,
        use=use,
        base_url=table.get("base_url"),
        api=table.get("api"),
        api_key=key,
        timeout=float(timeout) if timeout is not None else None,
        retries=retries,
    )


def _cells(grid: dict[str, Any], endpoints: Mapping[str, SweepEndpoint]) -> list[Cell]:
    tasks = _list(grid.get("tasks", ["output"]), "grid.tasks", str)
    modes = _list(grid.get("modes", ["direct"]), "grid.modes", str)
    for key, values, known in (("tasks", tasks, TASKS), ("modes", modes, MODES)):
        bad = [v for v in values if v not in known]
        if bad:
            raise SweepError(f"grid.{key}: unknown {bad[0]!r} (expected {', '.join(known)})")
    temps = _list(grid.get("temperatures", [0.2]), "grid.temperatures", (int, float))
    if any(not 0 <= t <= 2 for t in temps):
        raise SweepError("grid.temperatures must be between 0 and 2")
    ns = _list(grid.get("n", [1]), "grid.n", int)
    if any(n < 1 for n in ns):
        raise SweepError("grid.n must be at least 1")
    seeds: list[int | None] = (
        list(_list(grid["seeds"], "grid.seeds", int)) if "seeds" in grid else [None]
    )
    top_p = grid.get("top_p", 0.95)
    if isinstance(top_p, bool) or not isinstance(top_p, int | float) or not 0 < top_p <= 1:
        raise SweepError("grid.top_p must be in (0, 1]")
    max_tokens = grid.get("max_tokens")
    if max_tokens is not None and (
        isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or max_tokens < 1
    ):
        raise SweepError("grid.max_tokens must be at least 1")
    transforms = []
    for text in _list(grid.get("transforms", [NONE]), "grid.transforms", str):
        try:
            transforms.append(check_transform(text))
        except TransformError as exc:
            raise SweepError(f"grid.transforms: {exc}") from None
    cells = []
    for ep in endpoints.values():
        for model, task, mode, temp, n, seed, transform in itertools.product(
            ep.models, tasks, modes, temps, ns, seeds, dict.fromkeys(transforms)
        ):
            cells.append(
                Cell(
                    ep.name,
                    model,
                    task,
                    mode,
                    float(temp),
                    n,
                    seed,
                    float(top_p),
                    max_tokens,
                    transform,
                )
            )
    return cells


# -- running -------------------------------------------------------------------------------------


@dataclass
class CellResult:
    """How a cell ended: its run and what it holds (`missing` generations still to get)."""

    cell: Cell
    run_id: str | None = None
    counts: dict[str, tuple[int, int]] = field(default_factory=dict)
    missing: int = 0
    attempts: int = 0
    error: str | None = None
    skipped: Counter[str] = field(default_factory=Counter)
    """Samples the cell's transform left out, by reason (see `cruxtui.core.perturb.variant_set`)."""
    endpoint_down: str | None = None
    """Why the cell's endpoint was down when the sweep ended (None: it was answering)."""
    nothing_to_run: bool = False
    """The cell's transform applies to none of the samples (all `skipped`): done, empty."""

    @property
    def complete(self) -> bool:
        return self.nothing_to_run or (self.run_id is not None and self.missing == 0)

    def summary(self) -> dict[str, Any]:
        """The `--json` object of this cell; pass@k and the interval are x100."""
        from cruxtui.core.scoring.passk import bootstrap, mean_pass_at_k

        counts = list(self.counts.values())

        def at(k: int) -> float | None:
            scored = [(m, c) for m, c in counts if m >= k]
            return round(mean_pass_at_k(scored, k), 2) if scored and k <= self.cell.n else None

        interval = None
        if counts:
            pct = bootstrap(counts, 1, resamples=1000, percentiles=(2.5, 97.5))
            interval = [round(pct["2.5"], 2), round(pct["97.5"], 2)]
        return {
            "model": self.cell.model,
            "endpoint": self.cell.endpoint,
            "task": self.cell.task,
            "mode": self.cell.mode,
            "temperature": self.cell.temperature,
            "n": self.cell.n,
            "seed": self.cell.seed,
            "transform": self.cell.transform,
            "run_id": self.run_id,
            "status": "done" if self.complete else "incomplete",
            "samples": len(counts),
            "skipped": sum(self.skipped.values()),
            "skipped_reasons": dict(self.skipped.most_common()),
            "generations": sum(m for m, _ in counts),
            "missing": self.missing,
            "pass_at_1": at(1),
            "pass_at_5": at(5),
            "interval": interval,
            "attempts": self.attempts,
            "error": self.error,
            "endpoint_down": self.endpoint_down,
        }


class SweepListener:
    """Callbacks from `run_sweep` (on the event loop thread). Override what you need."""

    def on_cell_start(self, cell: Cell, run_id: str, attempt: int) -> None: ...

    def on_cell_progress(self, cell: Cell, progress: Progress) -> None: ...

    def on_cell_wait(self, cell: Cell, reason: str, wait: float) -> None:
        """The cell's try failed; it tries again after `wait` seconds."""

    def on_endpoint_down(self, endpoint: str, reason: str, wait: float, round_: int) -> None:
        """The endpoint stopped answering: its cells wait `wait` seconds, then round `round_` + 1
        (of `Sweep.attempts`) begins."""

    def on_endpoint_up(self, endpoint: str) -> None:
        """A generation was stored from an endpoint that was down: it answers again."""

    def on_endpoint_given_up(self, endpoint: str, reason: str) -> None:
        """The endpoint failed `Sweep.attempts` rounds in a row: its cells left are not tried."""

    def on_cell_done(self, result: CellResult) -> None: ...


@dataclass
class EndpointHealth:
    """Whether an endpoint answers, shared by its cells: one outage is one round however many
    cells notice it, and the cells wait together (the wait doubling each round)."""

    name: str
    down: str | None = None
    """Why the endpoint is down (None while it answers)."""
    rounds: int = 0
    """Rounds failed in a row (reset by any generation stored)."""
    retry_at: float = 0.0
    """`time.monotonic()` before which its cells do not try."""
    given_up: bool = False
    epoch: int = 0
    """Rounds opened so far, ever: a cell notes it when it starts a try (`since`)."""

    def failed(self, reason: str, sweep: Sweep, since: int) -> str:
        """A cell's try, begun at epoch `since`, stopped on this endpoint: `round` (a new round
        of waiting opens, until `retry_at`), `joined` (another cell opened a round since this
        try began: the same outage, or the endpoint was given up) or `given-up` (that was the
        last round). Counting by epoch keeps cells that fail a little apart in one round."""
        if self.given_up or since != self.epoch:
            return "joined"
        self.epoch += 1
        self.down = reason
        self.rounds += 1
        if self.rounds >= sweep.attempts:
            self.given_up = True
            return "given-up"
        self.retry_at = time.monotonic() + sweep.backoff(self.rounds)
        return "round"

    def stored(self) -> bool:
        """A generation was stored from it; True if that ends an outage. (Once given up, it
        stays so for this sweep: its cells left have been told not to try.)"""
        if self.given_up:
            return False
        self.rounds = 0
        came_back = self.down is not None
        if came_back:
            self.down, self.retry_at = None, 0.0
        return came_back

    def gave_up_message(self) -> str:
        return f"endpoint {self.name} is down ({self.down}); gave up after {self.rounds} round(s)"

    async def ready(self) -> None:
        """Wait out the round in progress (returns at once while the endpoint answers)."""
        while not self.given_up and (wait := self.retry_at - time.monotonic()) > 0:
            await asyncio.sleep(wait)


class _Gated:
    """A backend whose requests pass through its endpoint's semaphore, shared by the cells that
    run on that endpoint at once (everything else is the real backend's)."""

    def __init__(self, backend: Backend, gate: asyncio.Semaphore) -> None:
        self._backend = backend
        self._gate = gate
        if callable(getattr(backend, "complete_batch", None)):
            # A batch backend (vLLM in-process) runs one call at a time already: no gate, but
            # a refusal must still end the cell.
            self.complete_batch = self._complete_batch

    def __getattr__(self, name: str) -> Any:
        return getattr(self._backend, name)

    refused = False
    """True once the endpoint refused this cell for good (a wrong key, an unknown model): no
    later attempt can do better. An unreachable endpoint is not that: it may come back."""

    async def complete(self, *args: Any, **kwargs: Any) -> Any:
        async with self._gate:
            try:
                return await self._backend.complete(*args, **kwargs)
            except Exception as exc:
                self._note(exc)
                raise

    async def _complete_batch(self, *args: Any, **kwargs: Any) -> Any:
        try:
            return await self._backend.complete_batch(*args, **kwargs)  # type: ignore[attr-defined]
        except Exception as exc:
            self._note(exc)
            raise

    def _note(self, exc: Exception) -> None:
        if getattr(exc, "fatal", False) and getattr(exc, "kind", "") != "unreachable":
            self.refused = True


class _CellRelay(RunListener):
    def __init__(self, cell: Cell, listener: SweepListener, health: EndpointHealth) -> None:
        self.cell = cell
        self.listener = listener
        self.health = health
        self._done = 0

    def on_progress(self, progress: Progress) -> None:
        if progress.done > self._done:
            self._done = progress.done
            if self.health.stored():
                self.listener.on_endpoint_up(self.health.name)
        self.listener.on_cell_progress(self.cell, progress)


def sweep_variants(
    sweep: Sweep, dataset: Dataset, sample_ids: Sequence[str]
) -> dict[str, VariantSet]:
    """Each transform of the grid -> its verified variants of the samples (`none`: the samples).
    Blocking (the sandbox runs every variant twice); `SweepError` if a transform's parameters are
    wrong, so a bad grid fails before any request."""
    parents = [dataset[sid] for sid in sample_ids]
    variants: dict[str, VariantSet] = {}
    for transform in sweep.transforms:
        try:
            variants[transform] = build_variants(transform, parents)
        except TransformError as exc:
            raise SweepError(f"grid.transforms: {exc}") from None
    return variants


async def run_sweep(
    sweep: Sweep,
    store: RunStore,
    dataset: Dataset,
    sample_ids: Sequence[str],
    listener: SweepListener | None = None,
    variants: Mapping[str, VariantSet] | None = None,
) -> list[CellResult]:
    """Run every cell (as many at once as the endpoints allow); results in the grid's order.
    `variants` is `sweep_variants(...)`, built here when not given."""
    listener = listener or SweepListener()
    if variants is None:
        variants = await asyncio.to_thread(sweep_variants, sweep, dataset, sample_ids)
    gates = {name: asyncio.Semaphore(ep.concurrency) for name, ep in sweep.endpoints.items()}
    slots = {name: asyncio.Semaphore(sweep.cells_per_endpoint) for name in sweep.endpoints}
    health = {name: EndpointHealth(name) for name in sweep.endpoints}
    turns = {cell.run_key: asyncio.Lock() for cell in sweep.cells}
    results = [CellResult(cell) for cell in sweep.cells]

    async def one(result: CellResult) -> None:
        name = result.cell.endpoint
        vs = variants[result.cell.transform]
        result.skipped = Counter(vs.skipped)
        # Cells sharing a stored run (the same configuration, other transforms) take turns.
        async with turns[result.cell.run_key], slots[name]:
            await _run_cell(
                result, sweep, store, dataset, vs.samples, gates[name], health[name], listener
            )
        listener.on_cell_done(result)

    async with asyncio.TaskGroup() as tg:
        for result in results:
            tg.create_task(one(result))
    for result in results:
        result.endpoint_down = health[result.cell.endpoint].down
    return results


async def _run_cell(
    result: CellResult,
    sweep: Sweep,
    store: RunStore,
    dataset: Dataset,
    samples: Mapping[str, Any],
    gate: asyncio.Semaphore,
    health: EndpointHealth,
    listener: SweepListener,
) -> None:
    from cruxtui.core.models.backend import ModelError
    from cruxtui.core.runs.session import connect, open_session

    cell = result.cell
    ep = sweep.endpoints[cell.endpoint]
    settings = cell.settings(ep)
    ids = list(samples)
    if not ids:
        result.nothing_to_run = True
        return
    result.missing = len(ids) * cell.n  # until a try says otherwise
    while True:
        await health.ready()
        if health.given_up:
            result.error = health.gave_up_message()
            return
        result.attempts += 1
        since = health.epoch
        try:
            backend = await asyncio.to_thread(connect, settings)
        except ModelError as exc:
            result.error = exc.message
            return
        gated = _Gated(backend, gate)
        session = await open_session(store, dataset, settings, backend=gated)
        result.run_id = session.run_id
        listener.on_cell_start(cell, session.run_id, result.attempts)
        summary = await session.run(samples, listener=_CellRelay(cell, listener, health))
        if session.discarded:
            result.run_id = None
            result.counts = {}
            result.missing = len(ids) * cell.n
        else:
            result.counts = {
                sid: nc for sid, nc in store.counts(session.run_id).items() if sid in samples
            }
            missing = store.missing(session.run_id, ids, cell.n)
            result.missing = sum(len(v) for v in missing.values())
        if result.missing == 0:
            result.error = None
            return
        last = summary.failures[-1][2] if summary.failures else None
        result.error = summary.aborted or last or "generations missing"
        if gated.refused:
            return
        if summary.aborted:  # the endpoint stopped answering: its cells wait together
            outcome = health.failed(result.error, sweep, since)
            wait = max(health.retry_at - time.monotonic(), 0.0)
            if outcome == "given-up":
                listener.on_endpoint_given_up(cell.endpoint, result.error)
            elif outcome == "round":
                listener.on_endpoint_down(cell.endpoint, result.error, wait, health.rounds)
            if health.given_up:
                result.error = health.gave_up_message()
                return
            listener.on_cell_wait(cell, result.error, wait)
        else:  # some requests failed, the endpoint answers: this cell alone tries again
            if result.attempts >= sweep.attempts:
                return
            wait = sweep.backoff(result.attempts)
            listener.on_cell_wait(cell, result.error, wait)
            await asyncio.sleep(wait)


# -- tables --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Table:
    """The paper's layout: one row per model, one column per task x mode (and per transform,
    temperature, n or seed when the sweep has several); each entry pass@1 with its 95% interval.
    `notes` say what a transform skipped (its entries cover fewer samples)."""

    columns: list[str]
    rows: list[tuple[str, list[dict[str, Any] | None]]]
    notes: list[str] = field(default_factory=list)


def table(summaries: Sequence[Mapping[str, Any]]) -> Table:
    def varies(key: str) -> bool:
        return len({s[key] for s in summaries}) > 1

    extra = [k for k in ("temperature", "n", "seed") if varies(k)]
    short = {"temperature": "T", "n": "n", "seed": "seed"}
    perturbed = any(s.get("transform", NONE) != NONE for s in summaries)

    def column(s: Mapping[str, Any]) -> str:
        parts = [f"{s['task']} {s['mode']}"] + [f"{short[k]}={s[k]}" for k in extra]
        transform = s.get("transform", NONE)
        return " ".join(parts) + (f", {transform}" if perturbed and transform != NONE else "")

    def row(s: Mapping[str, Any]) -> str:
        return f"{s['model']} @ {s['endpoint']}" if several_endpoints else str(s["model"])

    models = {
        s["model"]: {s2["endpoint"] for s2 in summaries if s2["model"] == s["model"]}
        for s in summaries
    }
    several_endpoints = any(len(eps) > 1 for eps in models.values())
    columns = list(dict.fromkeys(column(s) for s in summaries))
    entries: dict[str, dict[str, Mapping[str, Any]]] = {}
    for s in summaries:
        entries.setdefault(row(s), {})[column(s)] = s
    rows = [
        (name, [dict(cols[c]) if c in cols else None for c in columns])
        for name, cols in entries.items()
    ]
    notes: dict[str, str] = {}
    for s in summaries:
        transform = s.get("transform", NONE)
        if s.get("skipped") and transform not in notes:
            reasons = ", ".join(f"{k} {n}" for k, n in (s.get("skipped_reasons") or {}).items())
            covered = max(x["samples"] for x in summaries if x.get("transform") == transform)
            notes[transform] = (
                f"{transform}: {s['skipped']} of {s['skipped'] + covered} samples skipped "
                f"({reasons}); its columns are over the other {covered}"
            )
    return Table(columns, rows, list(notes.values()))


def _entry(s: Mapping[str, Any] | None, dash: str = "–") -> str:
    if s is None or s.get("pass_at_1") is None:
        return ""
    text = f"{s['pass_at_1']:.1f}"
    if s.get("interval"):
        lo, hi = s["interval"]
        text += f" ({lo:.1f}{dash}{hi:.1f})"
    if s.get("status") != "done":
        text += "*"
    return text


def to_markdown(t: Table) -> str:
    lines = [
        "| model | " + " | ".join(t.columns) + " |",
        "|---|" + "---:|" * len(t.columns),
    ]
    for name, entries in t.rows:
        lines.append(f"| {name} | " + " | ".join(_entry(e) for e in entries) + " |")
    footer = list(t.notes)
    if any(e is not None and e.get("status") != "done" for _, es in t.rows for e in es):
        footer.append("\\* incomplete: run the same sweep again to finish it")
    if footer:
        lines.append("")
        lines += [f"- {note}" if i < len(t.notes) else note for i, note in enumerate(footer)]
    return "\n".join(lines) + "\n"


def to_csv(t: Table) -> str:
    import csv
    import io

    out = io.StringIO()
    writer = csv.writer(out)
    header = ["model"]
    for c in t.columns:
        header += [f"{c} pass@1", f"{c} low", f"{c} high", f"{c} run"]
    writer.writerow(header)
    for name, entries in t.rows:
        line: list[Any] = [name]
        for e in entries:
            if e is None:
                line += ["", "", "", ""]
                continue
            lo, hi = e["interval"] or ("", "")
            p1 = e["pass_at_1"]
            line += ["" if p1 is None else p1, lo, hi, e["run_id"] or ""]
        writer.writerow(line)
    return out.getvalue()


_LATEX = {c: "\\" + c for c in "&%_#${}"} | {"\\": r"\textbackslash{}"}


def _latex_escape(text: str) -> str:
    return "".join(_LATEX.get(ch, ch) for ch in text)


def to_latex(t: Table) -> str:
    lines = [
        r"\begin{tabular}{l" + "r" * len(t.columns) + "}",
        r"\toprule",
        "Model & " + " & ".join(_latex_escape(c) for c in t.columns) + r" \\",
        r"\midrule",
    ]
    for name, entries in t.rows:
        cells = [_latex_escape(_entry(e, "--")) for e in entries]
        lines.append(_latex_escape(name) + " & " + " & ".join(cells) + r" \\")
    lines += [r"\bottomrule", r"\end{tabular}"]
    lines += [f"% {note}" for note in t.notes]
    return "\n".join(lines) + "\n"
