"""Making cases: from scored generations of one sample (the TUI's `s`), or in bulk from a run.

A case is filled in once, when it is saved: the real execution is traced and, for reasoning
modes, the first divergence of the first failing response is located, so a gallery shows the
truth without anyone re-running anything.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from cruxtui.core.cases.case_file import (
    FailureCase,
    ModelInfo,
    Sampling,
    TraceSummary,
    prompt_json,
    recorded,
)
from cruxtui.core.data.dataset import Dataset, Sample
from cruxtui.core.runs.store import Generation
from cruxtui.core.util.natural import natural_key

if TYPE_CHECKING:
    from cruxtui.core.reasoning.alignment import Judgement
    from cruxtui.core.trace.steps import Trace

REASONING_MODES = ("cot", "scratchpad")


def trace_summary(sample: Sample) -> tuple[TraceSummary | None, Trace | None]:
    """The sample's real run in brief, and the full trace (for alignment); None if tracing fails."""
    try:
        from cruxtui.core.trace.steps import trace_sample

        tr = trace_sample(sample)
    except Exception:  # noqa: BLE001 - a case is still worth saving without its trace
        return None, None
    summary = TraceSummary(
        steps=len(tr.steps),
        numsteps=tr.numsteps,
        return_repr=tr.return_repr,
        exception=tr.exception,
        truncated=tr.truncated,
        error=tr.error,
    )
    return summary, tr


def first_divergence(raw: str, trace: Trace | None) -> dict[str, Any] | None:
    """Where `raw`'s reasoning first contradicts the trace: align's JSON, plus `kind` and the
    source `line` to mark in the code (None when the reasoning cannot be aligned)."""
    if trace is None or not trace.steps:
        return None
    try:
        from cruxtui.core.reasoning.alignment import align_text

        alignment = align_text(raw, trace)
        div: dict[str, Any] | None = alignment.to_json()["first_divergence"]
    except Exception:  # noqa: BLE001 - reasoning that cannot be aligned has no known divergence
        return None
    judgement = alignment.first_divergence
    if div is None or judgement is None:
        return None
    div["kind"] = judgement.claim.kind
    line = _divergence_line(judgement, trace)
    if line is not None:
        div["line"] = line
    return dict(div)


def _divergence_line(judgement: Judgement, trace: Trace) -> int | None:
    """The line the wrong claim is about. A trace step shows the state BEFORE its line runs, so a
    wrong value bound by a line is seen at the frame's next step: the line is the one before."""
    if judgement.claim.line:
        return judgement.claim.line
    index = judgement.trace_step
    steps = {s.index: s for s in trace.steps}
    if index is None or index not in steps:
        return None
    step = steps[index]
    if judgement.claim.kind == "binding":
        before = [
            s
            for s in trace.steps
            if s.index < index and s.depth == step.depth and s.event == "line"
        ]
        if before:
            return int(before[-1].line)
    return int(step.line)


def build_case(
    sample: Sample,
    *,
    task: str,
    mode: str,
    prompt: Any,
    model: ModelInfo,
    sampling: Sampling,
    generations: Sequence[Generation],
    perturbations: Sequence[dict[str, Any]] = (),
    base_sample_id: str = "",
    extraction: str = "strict",
    tags: Iterable[str] = (),
    note: str = "",
    origin: str = "",
    trace: bool = True,
) -> FailureCase:
    """A complete case; `prompt` is a `Prompt` or already its case JSON (`prompt_json`)."""
    summary, tr = trace_summary(sample) if trace else (None, None)
    divergence = None
    if mode in REASONING_MODES:
        failing = next((g for g in generations if not g.passed), None)
        if failing is not None:
            from cruxtui.core.models.thinking import chain_of_thought

            prefix = (
                prompt.get("response_prefix", "")
                if isinstance(prompt, dict)
                else getattr(prompt, "response_prefix", "")
            )
            # A reasoning model's thinking is its chain of thought: aligned with the answer text.
            divergence = first_divergence(
                chain_of_thought(failing.reasoning, prefix + failing.raw), tr
            )
    return FailureCase(
        sample_id=sample.id,
        code=sample.code,
        input=sample.input,
        output=sample.output,
        task=task,
        mode=mode,
        template_version=(
            prompt.template_version
            if not isinstance(prompt, dict)
            else str(prompt.get("template_version", ""))
        ),
        prompt=prompt if isinstance(prompt, dict) else prompt_json(prompt),
        model=model,
        sampling=sampling,
        generations=[recorded(g, sample.id, i) for i, g in enumerate(generations)],
        base_sample_id=base_sample_id or sample.id.split("~", 1)[0],
        perturbations=list(perturbations),
        trace=summary,
        first_divergence=divergence,
        extraction=extraction,
        tags=list(tags),
        note=note,
        origin=origin,
    )


def case_from_scored(
    sample: Sample,
    task: str,
    answers: Sequence[str],
    verdicts: Sequence[Any],
    *,
    model: str,
    source: str = "",
) -> FailureCase:
    """A case from a scored generations file (`cruxtui --generations FILE`): the benchmark's format
    holds extracted answers only, so each answer is also the raw response, and the model is the
    file (backend "replay"), named like an imported run."""
    from cruxtui.core.models.backend import SamplingParams

    prompt, mode, caveat = run_prompt(sample, task, "imported", "benchmark")
    defaults = SamplingParams()
    gens = [
        Generation(
            sample.id,
            index,
            raw=a,
            answer=a,
            kind=v.kind,
            passed=bool(v.passed),
            reason=v.reason,
            produced=getattr(v, "produced", None),
        )
        for index, (a, v) in enumerate(zip(answers, verdicts, strict=True))
    ]
    origin = f"generations file {source}" if source else "a generations file"
    return build_case(
        sample,
        task=task,
        mode=mode,
        prompt=prompt,
        model=ModelInfo(backend="replay", model=model, api="completions", path=source or None),
        sampling=Sampling(
            temperature=defaults.temperature,
            top_p=defaults.top_p,
            max_tokens=defaults.max_tokens,
            n=len(gens),
        ),
        generations=gens,
        origin=f"{origin}; {caveat}",
    )


# From a stored run -----------------------------------------------------------------------------
@dataclass
class FromRunResult:
    cases: list[FailureCase] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    """Samples not turned into cases, with the reason (passed everything, unknown id...)."""


def run_prompt(sample: Sample, task: str, mode: str, style: str) -> tuple[Any, str, str]:
    """The prompt a run sent for `sample`, its mode as a case records it, and a caveat if any.

    Runs made by cruxtui are re-rendered with the same template (the template version is part of
    the run's identity). Imported generation files record no prompt: their cases carry cruxtui's
    direct completion prompt, which is what a replay on a live model sends, and say so.
    """
    from cruxtui.core.models.prompts import MODES, build_prompt

    if mode in MODES and style in ("chat", "completion"):
        return build_prompt(sample, task, mode, style), mode, ""
    caveat = (
        "the generations file records no prompt; the prompt stored here is cruxtui's direct "
        "completion prompt, sent when the case is replayed on a live model"
    )
    return build_prompt(sample, task, "direct", "completion"), "direct", caveat


def cases_from_run(
    store: Any,
    run_ref: str,
    dataset: Dataset,
    *,
    failed_only: bool = False,
    samples: Sequence[str] | None = None,
    tags: Iterable[str] = (),
    note: str = "",
    variants: Mapping[str, Any] | None = None,
) -> FromRunResult:
    """One case per sample of a stored run (all its generations); `failed_only` keeps samples
    with at least one failing generation. Raises `RunStoreError` for an unknown run.

    A run's variants (`sample_12~anon`) are not in the dataset: pass them as `variants` (id ->
    `cruxtui.core.perturb.Variant`), and their cases record the variant's code, input, output and
    transform chain."""
    from cruxtui.core.models.backend import SamplingParams
    from cruxtui.core.models.prompts import TEMPLATE_VERSION

    info = store.run(run_ref)
    cfg = info.config
    spec = dict(cfg.spec)
    params = dict(cfg.params)
    model = ModelInfo(
        backend=str(spec.get("backend", "")),
        model=str(spec.get("model", "")),
        base_url=spec.get("base_url"),
        api=str(spec.get("api") or "chat"),
        path=spec.get("path"),
    )
    if cfg.dataset_digest and cfg.dataset_digest != dataset.digest:
        raise ValueError(
            f"run {info.id} was made on another dataset than the open one "
            f"({dataset.description}); pass the run's --dataset"
        )
    # An imported file records no sampling parameters: the backends' defaults (the benchmark's
    # temperature 0.2, top_p 0.95) stand in, and are what a live replay uses.
    defaults = SamplingParams()
    sampling = Sampling(
        temperature=float(params.get("temperature", defaults.temperature)),
        top_p=float(params.get("top_p", defaults.top_p)),
        max_tokens=int(params.get("max_tokens") or defaults.max_tokens),
        n=int(params.get("n") or 1),
        seed=params.get("seed"),
        stop=list(params.get("stop") or []),
    )
    result = FromRunResult()
    by_sample: dict[str, list[Any]] = {}
    for gen in store.generations(info.id):
        by_sample.setdefault(gen.sample_id, []).append(gen)
    wanted = list(dict.fromkeys(samples)) if samples else sorted(by_sample, key=natural_key)
    for sid in wanted:
        gens = by_sample.get(sid)
        if not gens:
            result.skipped.append(f"{sid}: no generations in run {info.id}")
            continue
        if failed_only and all(g.passed for g in gens):
            result.skipped.append(f"{sid}: every generation passed")
            continue
        variant = (variants or {}).get(sid)
        sample = variant.sample if variant is not None else dataset.get(sid)
        if sample is None:
            result.skipped.append(f"{sid}: not in the open dataset (a variant or another dataset)")
            continue
        prompt, mode, caveat = run_prompt(sample, cfg.task, cfg.mode, cfg.style)
        origin = f"run {info.id} ({info.model}, {cfg.task}/{cfg.mode}, n={sampling.n})"
        if cfg.template_version not in (TEMPLATE_VERSION, "benchmark"):
            caveat = (
                f"the run used template {cfg.template_version}; the prompt stored here is "
                f"today's {TEMPLATE_VERSION}"
            )
        if caveat:
            origin += f"; {caveat}"
        case_gens = sorted(gens, key=lambda g: g.index)
        result.cases.append(
            build_case(
                sample,
                task=cfg.task,
                mode=mode,
                prompt=prompt,
                model=model,
                sampling=sampling,
                generations=case_gens,
                tags=tags,
                note=note,
                origin=origin,
                perturbations=variant.to_json()["chain"] if variant is not None else (),
                base_sample_id=variant.parent_id if variant is not None else "",
            )
        )
    return result


def latest_failure(
    store: Any, dataset: Dataset, sample_id: str, run_id: str | None = None, variant: Any = None
) -> FailureCase | None:
    """The case to save for a sample (or `variant`): from `run_id` if given (the run just
    watched), else from the newest stored run in which it has a failing generation; None when
    there is none."""
    runs = [store.run(run_id)] if run_id else store.runs()
    for info in runs:
        gens = store.generations(info.id, sample_id)
        if not gens or (run_id is None and all(g.passed for g in gens)):
            continue
        if info.config.dataset_digest and info.config.dataset_digest != dataset.digest:
            continue
        made = cases_from_run(
            store,
            info.id,
            dataset,
            samples=[sample_id],
            variants={sample_id: variant} if variant is not None else None,
        )
        return made.cases[0] if made.cases else None
    return None
