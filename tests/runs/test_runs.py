"""The run store: identity of runs, resume bookkeeping, durability, export and comparison."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from cruxtui.core.runs.comparison import compare_runs
from cruxtui.core.runs.store import (
    DONE,
    INTERRUPTED,
    RUNNING,
    Generation,
    RunConfig,
    RunStore,
    RunStoreError,
    pass_rate,
    public_base_url,
    spec_to_json,
)


def config(**changes: object) -> RunConfig:
    base = dict(
        spec={
            "backend": "openai",
            "model": "m",
            "base_url": "http://127.0.0.1:1/v1",
            "api": "chat",
        },
        task="output",
        mode="direct",
        style="chat",
        params={
            "temperature": 0.2,
            "top_p": 0.95,
            "max_tokens": 64,
            "n": 3,
            "seed": None,
            "stop": ["[/ANSWER]"],
        },
        template_version="t1",
        dataset_digest="d1",
    )
    base.update(changes)
    return RunConfig(**base)  # type: ignore[arg-type]


def gen(sid: str, i: int, passed: bool, answer: str | None = "1") -> Generation:
    return Generation(
        sample_id=sid,
        index=i,
        raw=f"raw {sid} {i}",
        answer=answer,
        kind="pass" if passed else "wrong",
        passed=passed,
        reason="" if passed else "got 1, expected 2",
        latency=0.1,
        tokens_in=10,
        tokens_out=3,
        finish_reason="stop",
    )


@pytest.fixture
def store(tmp_path):
    with RunStore(tmp_path / "runs.sqlite") as s:
        yield s


def test_same_config_is_the_same_run_and_any_change_is_a_new_one(store: RunStore) -> None:
    a = store.open_run(config())
    assert store.open_run(config()).id == a.id
    others = [
        config(task="input"),
        config(mode="cot"),
        config(style="completion"),
        config(template_version="t2"),
        config(dataset_digest="d2"),
        config(params={**config().params, "n": 5}),
        config(params={**config().params, "seed": 1}),
        config(spec={**config().spec, "model": "other"}),
    ]
    ids = {store.open_run(c).id for c in others}
    assert a.id not in ids and len(ids) == len(others)
    assert len(store.runs()) == len(others) + 1


def test_spec_never_stores_secrets() -> None:
    spec = {
        "backend": "openai",
        "model": "m",
        "api_key": "sk-secret",
        "base_url": "https://user:pw@host.example:8443/v1?token=abc",
        "api": "chat",
    }
    clean = spec_to_json(spec)
    assert "api_key" not in clean
    assert clean["base_url"] == "https://host.example:8443/v1"
    assert "sk-secret" not in json.dumps(clean) and "pw" not in json.dumps(clean)
    assert public_base_url(None) is None


def test_missing_lists_only_what_is_not_stored(store: RunStore) -> None:
    run = store.open_run(config())
    assert store.add_generation(run.id, gen("s1", 0, True))
    assert store.add_generation(run.id, gen("s1", 2, False))
    assert not store.add_generation(run.id, gen("s1", 0, False)), (
        "a stored generation is never replaced"
    )
    assert store.missing(run.id, ["s1", "s2"], 3) == {"s1": [1], "s2": [0, 1, 2]}
    for i in range(3):
        store.add_generation(run.id, gen("s2", i, i == 0))
    store.add_generation(run.id, gen("s1", 1, True))
    assert store.missing(run.id, ["s1", "s2"], 3) == {}
    assert store.counts(run.id) == {"s1": (3, 2), "s2": (3, 1)}
    info = store.run(run.id)
    assert (info.generations, info.passed, info.samples) == (6, 3, 2)
    assert store.generations(run.id, "s1")[0].passed is True


def test_every_generation_is_visible_to_another_connection_at_once(tmp_path) -> None:
    """Committed per generation: a second reader (another process, the TUI) sees it immediately."""
    path = tmp_path / "runs.sqlite"
    with RunStore(path) as writer:
        run = writer.open_run(config())
        writer.add_generation(run.id, gen("s1", 0, True))
        reader = sqlite3.connect(path)
        assert reader.execute("SELECT COUNT(*) FROM generations").fetchone()[0] == 1
        assert reader.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        reader.close()


def test_run_left_running_by_a_dead_process_reads_as_interrupted(store: RunStore) -> None:
    run = store.open_run(config())
    assert store.run(run.id).status == RUNNING
    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    store._db.execute("UPDATE runs SET pid = ? WHERE id = ?", (int(dead), run.id))
    assert store.run(run.id).status == INTERRUPTED
    store.finish(run.id, DONE)
    assert store.run(run.id).status == DONE


def test_run_refs_by_prefix_and_clear_errors(store: RunStore) -> None:
    run = store.open_run(config())
    assert store.run(run.id[:4]).id == run.id
    with pytest.raises(RunStoreError, match="no run 'zzz'"):
        store.run("zzz")


def test_export_is_the_benchmark_generations_format(store: RunStore) -> None:
    run = store.open_run(config())
    store.add_generation(run.id, gen("sample_1", 1, True, answer="'b'"))
    store.add_generation(run.id, gen("sample_1", 0, True, answer="'a'"))
    store.add_generation(run.id, gen("sample_2", 0, False, answer=None))
    assert store.export(run.id) == {"sample_1": ["'a'", "'b'"], "sample_2": [""]}


def test_corrupt_store_is_a_clear_error(tmp_path) -> None:
    path = tmp_path / "runs.sqlite"
    path.write_bytes(b"this is not a database" * 100)
    with pytest.raises(RunStoreError, match="cannot open the run store"):
        RunStore(path)


def test_pass_rate_is_averaged_per_sample() -> None:
    assert pass_rate({"a": (4, 1), "b": (2, 2)}) == pytest.approx((0.25 + 1) / 2)


def test_compare_uses_shared_samples_and_lists_disagreements(store: RunStore) -> None:
    a = store.open_run(config())
    b = store.open_run(config(mode="cot"))
    for i in range(3):
        store.add_generation(a.id, gen("sample_1", i, True))
        store.add_generation(b.id, gen("sample_1", i, False))
        store.add_generation(a.id, gen("sample_2", i, True))
        store.add_generation(b.id, gen("sample_2", i, True))
        store.add_generation(a.id, gen("sample_10", i, i == 0))
        store.add_generation(b.id, gen("sample_10", i, True))
        store.add_generation(a.id, gen("sample_3", i, False))  # only in a: not compared
    cmp = compare_runs(store, a.id, b.id)
    assert cmp.shared == 3
    assert cmp.pass_a == pytest.approx((1 + 1 + 1 / 3) / 3)
    assert cmp.pass_b == pytest.approx(2 / 3)
    assert [(d.sample_id, d.rate_a, d.rate_b) for d in cmp.disagreements] == [
        ("sample_1", 1.0, 0.0),
        ("sample_10", pytest.approx(1 / 3), 1.0),
    ]
    lo, hi = cmp.interval_delta
    assert lo <= cmp.pass_b - cmp.pass_a <= hi
    for rate, (lo, hi) in ((cmp.pass_a, cmp.interval_a), (cmp.pass_b, cmp.interval_b)):
        assert 0 <= lo <= rate <= hi <= 1


# -- CLI: run --json, runs, export, compare, import ---------------------------------------------


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    from conftest import REPO

    return subprocess.run(
        [sys.executable, "-m", "cruxtui", *args],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=120,
    )


def test_cli_run_export_import_compare_roundtrip(tmp_path, capsys) -> None:
    from cruxtui.core.data.dataset import load_dataset
    from cruxtui.testing.fake_openai import CruxevalResponder, FakeOpenAI

    starter = load_dataset(offline=True)
    store = str(tmp_path / "runs.sqlite")
    ids = ",".join(s.id for s in starter.samples[:12])
    with FakeOpenAI(CruxevalResponder(starter.samples, "mixed")) as server:
        result = cli(
            "run",
            "--base-url",
            server.url,
            "--model",
            "fake-model",
            "--task",
            "output",
            "--mode",
            "cot",
            "-n",
            "4",
            "--temperature",
            "0.2",
            "--seed",
            "5",
            "--samples",
            ids,
            "--store",
            store,
            "--json",
        )
        assert result.returncode == 0, result.stderr
        summary = json.loads(result.stdout)  # exactly one JSON object on stdout
        # One request with n=4 per sample; a request the run itself reports as retried after a
        # transient failure (a loaded machine) reached the server twice, and is counted so.
        asked = [r.body.get("n") for r in server.log.requests]
        assert server.request_count == 12 + summary["retries"], summary
        assert summary["retries"] <= 1 and set(asked) == {4}, (summary, asked)
        again = json.loads(
            cli(
                "run",
                "--base-url",
                server.url,
                "--model",
                "fake-model",
                "--mode",
                "cot",
                "-n",
                "4",
                "--seed",
                "5",
                "--samples",
                ids,
                "--store",
                store,
                "--json",
            ).stdout
        )
        assert server.request_count == 12 + summary["retries"], "the same run requests nothing"
    assert (
        summary["status"] == "done" and summary["generations"] == 48 and summary["completed"] == 48
    )
    assert 0 < summary["pass@1"] < 100 and summary["pass@1"] <= summary["pass@4"]
    assert again["run_id"] == summary["run_id"] and again["stored_before"] == 48
    assert again["pass@1"] == summary["pass@1"]

    def cruxtui(*args: str) -> str:
        """The other commands in this process (fast): stdout, after checking the exit status."""
        from cruxtui.cli.main import main

        capsys.readouterr()
        assert main(list(args)) == 0
        return capsys.readouterr().out

    listed = [json.loads(line) for line in cruxtui("runs", "--store", store, "--json").splitlines()]
    assert [r["id"] for r in listed] == [summary["run_id"]]
    assert listed[0]["spec"]["model"] == "fake-model" and listed[0]["params"]["n"] == 4
    assert listed[0]["pass_at_1"] == pytest.approx(summary["pass@1"])

    out = tmp_path / "generations.json"
    cruxtui("export", summary["run_id"][:6], "--out", str(out), "--store", store)
    exported = json.loads(out.read_text())
    assert sorted(exported) == sorted(ids.split(",")) and all(
        len(v) == 4 for v in exported.values()
    )

    # The exported answers imported back as a replay run score the same, sample by sample.
    cruxtui("runs", "--import", str(out), "--task", "output", "--name", "again", "--store", store)
    imported = [
        r
        for r in (json.loads(x) for x in cruxtui("runs", "--store", store, "--json").splitlines())
        if r["spec"]["backend"] == "replay"
    ]
    assert len(imported) == 1 and imported[0]["generations"] == 48
    cmp = json.loads(
        cruxtui("compare", summary["run_id"], imported[0]["id"], "--store", store, "--json")
    )
    assert cmp["shared_samples"] == 12 and cmp["disagreements"] == []
    assert cmp["pass_at_1_a"] == pytest.approx(cmp["pass_at_1_b"])
    text = cruxtui("compare", summary["run_id"], imported[0]["id"], "--store", store)
    assert "12 samples in common" in text and "95% CI" in text


def test_cli_import_official_scored_file_keeps_its_verdicts(tmp_path, official) -> None:
    from conftest import CODELLAMA_OUTPUT, CRUXEVAL_JSONL

    store = str(tmp_path / "runs.sqlite")
    result = cli(
        "runs",
        "--import",
        str(CODELLAMA_OUTPUT / "scored.json"),
        "--dataset",
        str(CRUXEVAL_JSONL),
        "--store",
        store,
    )
    assert result.returncode == 0, result.stderr
    scored = json.loads((CODELLAMA_OUTPUT / "scored.json").read_text())
    with RunStore(store) as s:
        [run] = s.runs()
        gens = s.generations(run.id)
    assert len(gens) == 8000
    # our verdict agrees with the benchmark's recorded one for every generation
    assert all(g.official == scored["raw_scored_generations"][g.sample_id][g.index] for g in gens)
    assert 100 * run.pass1 == pytest.approx(scored["pass_at_1"])


def test_cli_errors_are_one_line(tmp_path) -> None:
    store = str(tmp_path / "runs.sqlite")
    for args, needle in (
        (("export", "nope", "--out", str(tmp_path / "x.json"), "--store", store), "no run 'nope'"),
        (("compare", "a", "b", "--store", store), "no run 'a'"),
        (("runs", "--import", str(tmp_path / "missing.json"), "--store", store), "file not found"),
    ):
        result = cli(*args)
        assert result.returncode == 2 and "Traceback" not in result.stderr
        assert result.stderr.count("\n") == 1 and needle in result.stderr, result.stderr


def test_replaying_the_papers_generations_reproduces_its_scores(tmp_path, official) -> None:
    """The paper's Code Llama generations replayed through the whole runner (prompts, extraction,
    scoring, store) give the benchmark's own pass@1 and pass@5."""
    import os

    from conftest import CODELLAMA_OUTPUT, CRUXEVAL_JSONL

    config = Path(os.environ["CRUXTUI_CONFIG_DIR"])
    config.mkdir(parents=True, exist_ok=True)
    (config / "config.toml").write_text(
        f'[endpoints.paper]\nbackend = "replay"\npath = "{CODELLAMA_OUTPUT / "generations.json"}"\n',
        encoding="utf-8",
    )
    result = cli(
        "run",
        "--endpoint",
        "paper",
        "-n",
        "10",
        "--dataset",
        str(CRUXEVAL_JSONL),
        "--store",
        str(tmp_path / "runs.sqlite"),
        "--json",
    )
    assert result.returncode == 0, result.stderr
    summary = json.loads(result.stdout)
    scored = json.loads((CODELLAMA_OUTPUT / "scored.json").read_text())
    assert summary["generations"] == 8000 and summary["failed"] == 0
    assert summary["pass@1"] == pytest.approx(scored["pass_at_1"])
    assert summary["pass@5"] == pytest.approx(scored["pass_at_5"])
