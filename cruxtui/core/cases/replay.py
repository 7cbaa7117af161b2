"""Replay a saved case: send its recorded prompt again, N times, score, and say what changed.

"Reproduced k/N" counts the replays that still fail. A case reproduces when at least `min_rate`
of its replays fail (default: all of them), which is what a CI job over a gallery checks: the
failures a paper shows are still failures with the pinned model, prompt, extraction and scorer.

Cases recorded with the "replay" backend (imported generation files) are replayed from the raw
responses stored in the case itself: no file or server is needed, and the replay re-checks the
extraction and the verdicts with today's code. Any case can be replayed on a live model instead
(`model=` another ModelInfo): the stored prompt is sent as chat messages or as completion text,
whichever the endpoint takes.
"""

from __future__ import annotations

import asyncio
import functools
import os
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from cruxtui.core.cases.case_file import FailureCase, ModelInfo
from cruxtui.core.data.dataset import Sample
from cruxtui.core.util.bounded_repr import shorten

REPRODUCED, PARTLY, FIXED, UNREACHABLE, ERROR = (
    "reproduced",
    "partly",
    "fixed",
    "unreachable",
    "error",
)
_UNREACHABLE_KINDS = frozenset({"unreachable", "connection", "timeout"})

Scorer = Callable[[Sample, str, str], Any]
ChunkHook = Callable[[int, str], None]
"""Called with (replay index, text chunk) as a replay streams in."""


@dataclass
class Attempt:
    raw: str
    answer: str | None
    passed: bool
    kind: str
    reason: str
    reasoning: str | None = None
    """The model's thinking in this replay (never where the answer is taken from)."""
    seed: int | None = None


@dataclass
class ReplayReport:
    case: str
    sample_id: str
    recorded: ModelInfo
    model: ModelInfo
    n: int
    min_rate: float = 1.0
    attempts: list[Attempt] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    error_kind: str | None = None
    changes: list[str] = field(default_factory=list)

    @property
    def failed(self) -> int:
        """Replays that failed: the 'k' of 'reproduced k/N'."""
        return sum(not a.passed for a in self.attempts)

    @property
    def status(self) -> str:
        if not self.attempts:
            return UNREACHABLE if self.error_kind in _UNREACHABLE_KINDS else ERROR
        if self.failed == 0:
            return FIXED
        if self.failed >= self.min_rate * len(self.attempts):
            return REPRODUCED
        return PARTLY

    @property
    def summary(self) -> str:
        """One line for tables: `reproduced 4/5`, `fixed 0/5`, `unreachable: ...`."""
        if not self.attempts:
            return f"{self.status}: {self.errors[0] if self.errors else 'no replay completed'}"
        text = f"reproduced {self.failed}/{len(self.attempts)}"
        if len(self.attempts) < self.n:
            text += f" ({self.n - len(self.attempts)} request(s) failed)"
        return text

    def to_json(self) -> dict[str, Any]:
        return {
            "case": self.case,
            "sample_id": self.sample_id,
            "status": self.status,
            "reproduced": self.failed,
            "replays": len(self.attempts),
            "n": self.n,
            "min_rate": self.min_rate,
            "summary": self.summary,
            "recorded_model": _model_json(self.recorded),
            "model": _model_json(self.model),
            "changes": self.changes,
            "errors": self.errors,
            "attempts": [a.__dict__ for a in self.attempts],
        }


def _model_json(m: ModelInfo) -> dict[str, Any]:
    return {"backend": m.backend, "model": m.model, "base_url": m.base_url, "api": m.api}


def case_prompt(case: FailureCase) -> Any:
    """The case's stored prompt as a `Prompt` the backends take (nothing is re-rendered)."""
    from cruxtui.core.models.prompts import Prompt

    p = case.prompt
    messages = p.get("messages") or [{"role": "user", "content": p.get("text", "")}]
    return Prompt(
        task=case.task,
        mode=case.mode,
        style=p.get("style", "chat"),
        sample_id=case.sample_id,
        messages=[dict(m) for m in messages],
        text=p.get("text") or messages[-1]["content"],
        stop=tuple(p.get("stop") or case.sampling.stop),
        response_prefix=p.get("response_prefix", ""),
        template_version=case.template_version,
    )


def case_sample(case: FailureCase) -> Sample:
    """The code, input and output exactly as run (a variant's own, not the base sample's)."""
    return Sample(case.sample_id, case.code, case.input, case.output, origin=case.name)


def default_scorer(sample: Sample, task: str, prediction: str) -> Any:
    """One verdict through the runner's scorer (which judges a round of pairs at once)."""
    from cruxtui.core.runs.runner import default_scorer as run_scorer

    return run_scorer([(sample, prediction)], task)[0]


async def replay_case(
    case: FailureCase,
    n: int = 5,
    *,
    backend: Any = None,
    timeout: float = 60.0,
    min_rate: float = 1.0,
    on_chunk: ChunkHook | None = None,
    scorer: Scorer | None = None,
) -> ReplayReport:
    """Replay `case` n times on its recorded model, or on `backend` (an open backend, e.g. for
    `--model`); score each replay and compare with the recording.

    Never raises for an endpoint problem: a dead server, a wrong key or an unknown model end up in
    `report.errors` (and `status` "unreachable" / "error"), so a gallery replay reports every case.
    With `on_chunk`, replays are streamed one after the other (for a screen to show them live).
    """
    target = case.model
    if backend is not None:
        spec = backend.spec
        target = ModelInfo(spec.backend, spec.model, spec.base_url, spec.api)
    report = ReplayReport(
        case=case.name,
        sample_id=case.sample_id,
        recorded=case.model,
        model=target,
        n=n,
        min_rate=min_rate,
    )
    prompt = case_prompt(case)
    texts: list[Any]
    if backend is None and target.backend == "replay":
        from cruxtui.core.models.backend import Completion

        texts = (
            [
                Completion(text=g.raw, reasoning=g.reasoning)
                for g in (case.generations[i % len(case.generations)] for i in range(n))
            ]
            if case.generations
            else [RuntimeError("the case has no recorded responses")]
        )
        for i, item in enumerate(texts):
            if on_chunk and not isinstance(item, BaseException):
                on_chunk(i, item.text)
    else:
        own = backend is None
        try:
            if own:
                from cruxtui.core.models.endpoints import open_backend

                backend = open_backend(**recorded_endpoint(target, timeout))
            texts = await _request(case, prompt, n, on_chunk, backend)
        except Exception as exc:  # noqa: BLE001 - any backend failure is reported per case
            texts = [exc]
        finally:
            if own and backend is not None:
                await backend.aclose()
    scorer = scorer or default_scorer
    sample = case_sample(case)
    for item in texts:
        if isinstance(item, BaseException):
            report.errors.append(_describe(item))
            report.error_kind = report.error_kind or getattr(item, "kind", None) or _kind_of(item)
            continue
        report.attempts.append(await _judge(case, prompt, sample, item, scorer))
    report.errors = list(dict.fromkeys(report.errors))
    report.changes = what_changed(case, report)
    return report


def recorded_endpoint(model: ModelInfo, timeout: float) -> dict[str, Any]:
    """`open_backend`'s arguments for a recorded model, found the way `cruxtui run` finds one,
    without handing a key to a server the user has not chosen.

    A case file may come from anyone, and its base URL with it. The key is used only where the
    user has sent it before: a config.toml endpoint with the same base URL (its own key setting
    applies), `$OPENAI_BASE_URL`, or api.openai.com (the home of `$OPENAI_API_KEY`). Any other
    server is asked without a key, which is what local servers (vLLM, llama.cpp, Ollama) expect.
    """
    from cruxtui.core.models.backend import RetryPolicy
    from cruxtui.core.models.endpoints import load_endpoints
    from cruxtui.core.models.openai_compat import NO_KEY, OPENAI_URL, normalize_base_url

    # Fewer retries than a bulk run, so a gallery replay reports a dead endpoint in seconds.
    common: dict[str, Any] = {
        "model": model.model,
        "api": model.api,
        "timeout": timeout,
        "retry": RetryPolicy(attempts=3),
    }
    if model.backend != "openai":
        return {"backend": model.backend, "base_url": model.base_url, **common}
    url = normalize_base_url(model.base_url or OPENAI_URL)
    endpoints, _default = load_endpoints()
    for name, table in sorted(endpoints.items()):
        if table.get("base_url") and _same_url(str(table["base_url"]), url):
            return {"endpoint": name, "base_url": url, **common}
    env_url = os.environ.get("OPENAI_BASE_URL")
    trusted = _same_url(url, OPENAI_URL) or bool(env_url and _same_url(env_url, url))
    # `backend=` keeps config.toml's default endpoint from replacing the recorded server.
    return {"backend": "openai", "base_url": url, "api_key": None if trusted else NO_KEY, **common}


def _same_url(a: str, b: str) -> bool:
    from cruxtui.core.models.openai_compat import normalize_base_url

    try:
        return (
            normalize_base_url(a).rstrip("/").lower() == normalize_base_url(b).rstrip("/").lower()
        )
    except Exception:  # noqa: BLE001 - a malformed URL matches nothing
        return False


async def _request(
    case: FailureCase, prompt: Any, n: int, on_chunk: ChunkHook | None, backend: Any
) -> list[Any]:
    """n completions (or the exception a request ended with), each sampled on its own: a backend
    that supports `n` emulates it honestly (seed + k) when its server returns fewer choices."""
    from cruxtui.core.models.backend import SamplingParams
    from cruxtui.core.models.generate import generate_one

    s = case.sampling
    params = SamplingParams(
        temperature=s.temperature,
        top_p=s.top_p,
        max_tokens=s.max_tokens,
        n=n,
        seed=s.seed,
        stop=tuple(s.stop) if s.stop else None,
    )
    if on_chunk is None and getattr(backend, "supports_n", False):
        return list(await backend.complete(prompt, params))[:n]
    results: list[Any] = []
    for i in range(n):
        # Separate requests with one fixed seed would all return the same text: seed + i, as the
        # runner does for its single requests.
        one = replace(params, n=1, seed=None if s.seed is None else s.seed + i)
        try:
            if on_chunk is None:
                results += list(await backend.complete(prompt, one))[:1]
            else:
                results.append(
                    await generate_one(backend, prompt, one, functools.partial(on_chunk, i))
                )
        except Exception as exc:  # noqa: BLE001
            results.append(exc)
            if getattr(exc, "fatal", False):
                break  # a dead endpoint or a wrong key fails every further request alike
    return results


async def _judge(
    case: FailureCase, prompt: Any, sample: Sample, completion: Any, scorer: Scorer
) -> Attempt:
    from cruxtui.core.scoring.answers import extract

    raw = completion.text
    extra = {"reasoning": completion.reasoning, "seed": getattr(completion, "seed", None)}
    got = extract(prompt.response(raw), case.task, case.extraction)
    if got.answer is None:
        return Attempt(raw, None, False, "unparsable", got.reason, **extra)
    verdict = await asyncio.to_thread(scorer, sample, case.task, got.answer)
    return Attempt(raw, got.answer, bool(verdict.passed), verdict.kind, verdict.reason, **extra)


def what_changed(case: FailureCase, report: ReplayReport) -> list[str]:
    """Differences from the recording, most telling first, in words for a table cell."""
    out: list[str] = []
    if report.model.model != case.model.model or report.model.backend != case.model.backend:
        out.append(
            f"model {case.model.model} ({case.model.backend}) -> "
            f"{report.model.model} ({report.model.backend})"
        )
    recorded = {g.answer: (g.passed, g.kind) for g in case.generations}
    counts = Counter(a.answer for a in report.attempts)
    verdicts = {a.answer: (a.passed, a.kind, a.reason) for a in report.attempts}
    new = []
    for answer, count in counts.most_common():
        passed, kind, reason = verdicts[answer]
        shown = "(no answer)" if answer is None else shorten(answer, 40)
        if answer not in recorded:
            new.append(f"new answer {shown} x{count}: {'pass' if passed else kind}")
        elif recorded[answer] != (passed, kind):
            was = "pass" if recorded[answer][0] else recorded[answer][1]
            out.append(
                f"answer {shown} was judged {was}, now {'pass' if passed else kind} ({reason})"
            )
    out += new
    if report.attempts and not out:
        out.append("same answers and verdicts as recorded")
    return out


def _describe(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    return text or type(exc).__name__


def _kind_of(exc: BaseException) -> str | None:
    if isinstance(exc, TimeoutError):
        return "timeout"
    if isinstance(exc, OSError):
        return "connection"
    return None
