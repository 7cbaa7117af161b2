"""`cruxtui generations RUN` and `cruxtui runs` against runs made by `cruxtui run` on the local test
server: a reasoning model's thinking, seeds, how each generation was obtained, API and base URL."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cruxtui.cli.main import main
from cruxtui.core.data.dataset import load_dataset
from cruxtui.testing.fake_openai import CruxevalResponder, FakeOpenAI

REQUIRED = {
    "sample",
    "index",
    "text",
    "reasoning",
    "answer",
    "verdict",
    "reason",
    "seed",
    "finish_reason",
    "latency_s",
}


def cruxtui(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    capsys.readouterr()
    code = main(list(args))
    out = capsys.readouterr()
    assert code == 0, out.err
    return out.out


def test_generations_json_and_runs_listing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    starter = load_dataset(offline=True)
    ids = [s.id for s in starter.samples[:2]]
    store = str(tmp_path / "runs.sqlite")
    responder = CruxevalResponder(starter.samples, "correct")
    with FakeOpenAI(
        responder, think="I trace f line by line.", think_style="reasoning_content"
    ) as think_srv:
        report = json.loads(
            cruxtui(
                capsys,
                "run", "--base-url", think_srv.url, "--model", "fake-model", "--samples",
                ",".join(ids), "-n", "2", "--seed", "5", "--store", store, "--json",
            )
        )  # fmt: skip
    with FakeOpenAI(responder, max_choices=1) as plain:
        second = json.loads(
            cruxtui(
                capsys,
                "run", "--base-url", plain.url, "--model", "fake-model", "--api", "completions",
                "--samples", ids[0], "--store", store, "--json",
            )
        )  # fmt: skip
    lines = cruxtui(capsys, "generations", report["run_id"], "--json", "--store", store)
    rows = [json.loads(line) for line in lines.splitlines()]
    assert len(rows) == 4 and all(set(r) >= REQUIRED for r in rows)
    assert all(r["reasoning"] == "I trace f line by line." for r in rows)
    assert all(r["verdict"] == "pass" and r["answer"] for r in rows)
    assert sorted(r["seed"] for r in rows) == [5, 5, 5, 5]  # one n=2 request per sample
    assert all(isinstance(r["latency_s"], float) for r in rows)
    only = cruxtui(
        capsys, "generations", report["run_id"], "--json", "--sample", ids[1], "--store", store
    )
    assert {json.loads(line)["sample"] for line in only.splitlines()} == {ids[1]}

    plain_rows = [
        json.loads(line)
        for line in cruxtui(
            capsys, "generations", second["run_id"], "--json", "--store", store
        ).splitlines()
    ]
    assert [r["reasoning"] for r in plain_rows] == [None]

    text = cruxtui(capsys, "generations", report["run_id"], "--store", store)
    assert "thinking:" in text and "I trace f line by line." in text and "PASS" in text

    listing = cruxtui(capsys, "runs", "--store", store)
    rows_by_id = {line.split()[0]: line for line in listing.splitlines()[1:]}
    assert "chat" in rows_by_id[report["run_id"]] and think_srv.url in rows_by_id[report["run_id"]]
    assert (
        "completions" in rows_by_id[second["run_id"]] and plain.url in rows_by_id[second["run_id"]]
    )


def test_generations_of_an_unknown_run_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["generations", "nope", "--store", str(tmp_path / "r.sqlite")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("cruxtui: error: no run 'nope'") and err.count("\n") == 1


def test_align_takes_a_stored_generations_thinking_as_the_chain(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The thinking claims a wrong intermediate value: align finds it there."""
    starter = load_dataset(offline=True)
    sample = next(s for s in starter.samples if "return" in s.code)
    store = str(tmp_path / "runs.sqlite")
    responder = CruxevalResponder(starter.samples, "correct")
    think = f"f is called with {sample.input}. So f returns 987654321."
    with FakeOpenAI(responder, think=think, think_style="inline") as srv:
        report = json.loads(
            cruxtui(
                capsys,
                "run", "--base-url", srv.url, "--model", "fake-model", "--samples", sample.id,
                "--mode", "cot", "--store", store, "--json",
            )
        )  # fmt: skip
    out = json.loads(
        cruxtui(capsys, "align", sample.id, "--run", report["run_id"], "--store", store, "--json")
    )
    assert out["first_divergence"]["claimed"] == "987654321"  # found in the thinking
    assert (
        main(["align", sample.id, "--run", report["run_id"], "--index", "3", "--store", store]) == 2
    )
    assert "has no generation 3" in capsys.readouterr().err
