"""A reasoning model's thinking travels from the run store into case files and gallery exports,
and is aligned as the chain of thought; case files made before it existed stay byte for byte."""

from __future__ import annotations

import shutil
from pathlib import Path

from cruxtui.core.cases.build import cases_from_run
from cruxtui.core.cases.case_file import load_case, save_case
from cruxtui.core.cases.gallery import export_html, export_markdown
from cruxtui.core.cases.render import reasoning_text
from cruxtui.core.data.dataset import load_dataset
from cruxtui.core.models.backend import ModelSpec, SamplingParams
from cruxtui.core.runs.store import Generation, RunConfig, RunStore

REPO = Path(__file__).resolve().parents[2]


def test_thinking_reaches_case_files_and_galleries(tmp_path: Path) -> None:
    starter = load_dataset(offline=True)
    sample = starter.samples[0]
    config = RunConfig.of(
        ModelSpec("openai", "r1-distill", "http://127.0.0.1:8000/v1"),
        SamplingParams(n=1, seed=3),
        task="output",
        mode="cot",
        style="chat",
        template_version="cruxtui-1",
        dataset_digest=starter.digest,
    )
    thinking = "The function returns its input <b>unchanged</b>, so the result is 0."
    with RunStore(tmp_path / "r.sqlite") as store:
        info = store.open_run(config)
        store.add_generation(
            info.id,
            Generation(
                sample.id,
                0,
                "[THOUGHT]\nsee above\n[/THOUGHT]\n[ANSWER]\nassert f('x') == 0\n[/ANSWER]",
                "0",
                "wrong",
                False,
                "f(...) returned something else",
                reasoning=thinking,
                seed=3,
            ),
        )
        [case] = cases_from_run(store, info.id, starter).cases
    assert case.generations[0].reasoning == thinking
    path = save_case(case, tmp_path / "cases")
    again = load_case(path)
    assert again.generations[0].reasoning == thinking
    assert '"reasoning":' in path.read_text(encoding="utf-8")
    markdown = export_markdown([again])
    html = export_html([again])
    assert "unchanged" in markdown and "<think>" in markdown
    assert "&lt;b&gt;unchanged&lt;/b&gt;" in html  # escaped like any model text
    assert "unchanged" in reasoning_text(again).plain


def test_a_case_file_without_thinking_is_rewritten_unchanged(tmp_path: Path) -> None:
    original = sorted((REPO / "cases").glob("*.json"))[0]
    copy = tmp_path / original.name
    shutil.copy(original, copy)
    case = load_case(copy)
    assert all(g.reasoning is None for g in case.generations)
    save_case(case)
    assert copy.read_bytes() == original.read_bytes()
