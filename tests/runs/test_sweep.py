"""The sweep file (errors name the key), endpoints by reference to config.toml, a dead endpoint
(its cells wait, retry and are reported incomplete while the others finish; run again once it is
back, only its cells are asked for), and the paper-style table."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path

import pytest

from cruxtui.cli.main import main
from cruxtui.core.data.dataset import load_dataset
from cruxtui.core.runs.sweep import (
    Sweep,
    SweepError,
    load_sweep,
    table,
    to_csv,
    to_latex,
    to_markdown,
)
from cruxtui.testing.fake_openai import CruxevalResponder, FakeOpenAI

GRID = '[grid]\nmodels = ["m1"]\nmodes = ["direct"]\nsamples = 4\n'


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "sweep.toml"
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("text", "named"),
    [
        ('[endpoints.a]\nbase_url = "http://h/v1"\n[grid]\ntemps = [0.2]\n', "grid.temps"),
        (
            '[endpoints.a]\nbase_url = "http://h/v1"\nconcurrancy = 2\n' + GRID,
            "endpoints.a.concurrancy",
        ),
        ('[endpoints.a]\nbase_url = "http://h/v1"\n[sweeps]\n' + GRID, "unknown key sweeps"),
        ('[endpoints.a]\nbase_url = "http://h/v1"\n[sweep]\nattempt = 1\n' + GRID, "sweep.attempt"),
        (
            '[endpoints.a]\nbase_url = "http://h/v1"\n[grid]\nmodels = ["m"]\nmodes = ["cto"]\n',
            "grid.modes: unknown 'cto'",
        ),
        ('[endpoints.a]\nbase_url = "http://h/v1"\n[grid]\nmodels = ["m"]\nn = 0\n', "grid.n"),
        ('[endpoints.a]\nuse = "nowhere"\n' + GRID, "endpoints.a: no endpoint named 'nowhere'"),
        ("[endpoints.a]\n" + GRID, "endpoints.a needs base_url"),
        ('[endpoints.a]\nbase_url = "http://h/v1"\n', "no [grid] table"),
        ('[endpoints.a\nbase_url = "x"\n', "not valid TOML"),
        (
            '[endpoints.a]\nbase_url = "http://h/v1"\n' + GRID + 'transforms = ["anonymize"]\n',
            "grid.transforms: unknown transform 'anonymize' (known: ",
        ),
        (
            '[endpoints.a]\nbase_url = "http://h/v1"\n' + GRID + 'transforms = ["flip compare"]\n',
            "grid.transforms: bad transform spec 'flip compare'",
        ),
        (
            '[endpoints.a]\nbase_url = "http://h/v1"\n[sweep]\nretry_wait = 5\nmax_retry_wait = 1\n'
            + GRID,
            "sweep.max_retry_wait",
        ),
    ],
)
def test_bad_sweep_files_name_the_key(tmp_path: Path, text: str, named: str) -> None:
    path = write(tmp_path, text)
    with pytest.raises(SweepError) as err:
        load_sweep(path)
    assert named in str(err.value) and str(path) in str(err.value)


def test_cli_reports_a_bad_key_on_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path, '[endpoints.a]\nbase_url = "http://h/v1"\n[grid]\nmodel = ["m"]\n')
    assert main(["sweep", str(path), "--store", str(tmp_path / "s.sqlite")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("cruxtui: error: ") and "grid.model" in err[0]
    assert not (tmp_path / "s.sqlite").exists()


def test_grid_expands_per_endpoint_models_and_references(tmp_path: Path) -> None:
    config = Path(os.environ["CRUXTUI_CONFIG_DIR"])
    config.mkdir(parents=True, exist_ok=True)
    (config / "config.toml").write_text(
        '[endpoints.local]\nbase_url = "http://127.0.0.1:9/v1"\nmodel = "served"\nconcurrency = 3\n'
    )
    sweep = load_sweep(
        write(
            tmp_path,
            '[endpoints.router]\nbase_url = "http://r/v1"\nmodels = ["x", "y"]\n'
            '[endpoints.mine]\nuse = "local"\n'
            '[[grid]]\ntasks = ["output", "input"]\nmodes = ["direct", "cot"]\n'
            "temperatures = [0.2]\nn = 10\n"
            '[[grid]]\nmodes = ["direct"]\ntemperatures = [0.8]\nn = [5]\n',
        )
    )
    cells = {(c.endpoint, c.model, c.task, c.mode, c.temperature, c.n) for c in sweep.cells}
    first = {
        (e, m, t, d, 0.2, 10)
        for e, m in (("router", "x"), ("router", "y"), ("mine", "served"))
        for t in ("output", "input")
        for d in ("direct", "cot")
    }
    second = {
        (e, m, "output", "direct", 0.8, 5)
        for e, m in (("router", "x"), ("router", "y"), ("mine", "served"))
    }
    assert cells == first | second and len(sweep.cells) == len(cells)
    assert sweep.endpoints["mine"].concurrency == 3  # from config.toml
    assert sweep.endpoints["router"].concurrency == 8  # the default


def test_dead_endpoint_cells_wait_retry_and_resume_later(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    dataset = load_dataset(offline=True)
    responder = CruxevalResponder(dataset.samples, "correct")
    probe = FakeOpenAI(responder).start()
    dead_port = probe.port
    probe.close()  # nothing listens there now
    with FakeOpenAI(responder, models=("m1",)) as alive:
        path = write(
            tmp_path,
            f"[sweep]\nretry_wait = 0.1\nattempts = 3\n"
            f'[endpoints.up]\nbase_url = "{alive.url}"\nconcurrency = 2\n'
            f'[endpoints.down]\nbase_url = "http://127.0.0.1:{dead_port}/v1"\nretries = 0\n'
            '[grid]\nmodels = ["m1"]\nmodes = ["direct", "cot"]\nn = 2\nseeds = [1]\nsamples = 5\n',
        )
        argv = ["sweep", str(path), "--store", str(tmp_path / "s.sqlite"), "--json"]
        assert main(argv) == 1
        out, err = capsys.readouterr()
        summaries = [json.loads(line) for line in out.splitlines()]
        by_endpoint = {(s["endpoint"], s["mode"]): s for s in summaries}
        assert len(by_endpoint) == 4
        for mode in ("direct", "cot"):
            up, down = by_endpoint["up", mode], by_endpoint["down", mode]
            assert (up["status"], up["generations"], up["pass_at_1"]) == ("done", 10, 100.0)
            assert (down["status"], down["missing"], down["attempts"]) == ("incomplete", 10, 3)
            assert "cannot connect" in down["error"] and "gave up after 3 round(s)" in down["error"]
            assert f"incomplete: m1 @ down output/{mode}" in err
            assert up["endpoint_down"] is None and "cannot connect" in down["endpoint_down"]
        assert "2 of 4 cells incomplete" in err
        assert "cruxtui: endpoint down is down (cannot connect" in err
        assert "endpoint up is down" not in err
        asked = alive.request_count

        with FakeOpenAI(responder, models=("m1",), port=dead_port) as revived:
            assert main(argv) == 0
            summaries = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
            assert all(s["status"] == "done" and s["generations"] == 10 for s in summaries)
            assert revived.request_count == 2 * 5  # one request (n=2) per sample and mode
        assert alive.request_count == asked  # its cells were complete: nothing asked again


def test_table_layout_models_in_rows_task_mode_columns() -> None:
    def s(model: str, task: str, mode: str, temp: float, p1: float) -> dict[str, object]:
        return {
            "model": model,
            "endpoint": "e",
            "task": task,
            "mode": mode,
            "temperature": temp,
            "n": 10,
            "seed": None,
            "run_id": "abc",
            "status": "done",
            "pass_at_1": p1,
            "interval": [p1 - 2, p1 + 2],
        }

    summaries = [
        s(m, t, d, temp, 40.0 + i)
        for i, (m, t, d, temp) in enumerate(
            (m, t, d, temp)
            for m in ("a_1", "b")
            for t in ("output", "input")
            for d in ("direct", "cot")
            for temp in (0.2, 0.8)
        )
    ]
    t = table(summaries)
    assert t.columns[:2] == ["output direct T=0.2", "output direct T=0.8"] and len(t.columns) == 8
    assert [name for name, _ in t.rows] == ["a_1", "b"]
    md = to_markdown(t)
    assert "| a_1 | 40.0 (38.0–42.0) | 41.0 (39.0–43.0) |" in md
    assert to_csv(t).splitlines()[1].startswith("a_1,40.0,38.0,42.0,abc,41.0")
    latex = to_latex(t)
    assert r"a\_1 & 40.0 (38.0--42.0)" in latex and latex.count(r"\\") == 3


def test_bad_transform_name_hints_at_the_spec_perturb_takes(tmp_path: Path) -> None:
    path = write(tmp_path, '[endpoints.a]\nbase_url = "http://h/v1"\n' + GRID)
    path.write_text(path.read_text() + 'transforms = ["none", "anonymize"]\n')
    with pytest.raises(SweepError, match=r"did you mean rename:anonymize\?"):
        load_sweep(path)


def test_transform_axis_expands_cells_that_share_their_configuration_run(tmp_path: Path) -> None:
    sweep = load_sweep(
        write(
            tmp_path,
            '[endpoints.a]\nbase_url = "http://h/v1"\n[grid]\nmodels = ["m"]\n'
            'modes = ["direct", "cot"]\ntransforms = ["none", " rename:anonymize", "const:1,=1000"]\n',
        )
    )
    assert [(c.mode, c.transform) for c in sweep.cells] == [
        (mode, t)
        for mode in ("direct", "cot")
        for t in ("none", "rename:anonymize", "const:1,=1000")
    ]
    assert sweep.transforms == ["none", "rename:anonymize", "const:1,=1000"]
    assert len({c.run_key for c in sweep.cells}) == 2  # one stored run per mode
    assert "[const:1,=1000]" in sweep.cells[2].label and "[" not in sweep.cells[0].label


def test_backoff_doubles_up_to_the_cap() -> None:
    sweep = Sweep(endpoints={}, cells=[], samples=None, retry_wait=0.5, max_retry_wait=3.0)
    assert [sweep.backoff(r) for r in range(1, 6)] == [0.5, 1.0, 2.0, 3.0, 3.0]


def test_given_up_endpoint_leaves_its_queued_cells_untried(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    probe = FakeOpenAI(lambda request: "x").start()
    dead_port = probe.port
    probe.close()
    path = write(
        tmp_path,
        "[sweep]\nretry_wait = 0.05\nattempts = 2\ncells_per_endpoint = 1\n"
        f'[endpoints.down]\nbase_url = "http://127.0.0.1:{dead_port}/v1"\nretries = 0\n'
        '[grid]\nmodels = ["m1"]\nmodes = ["direct", "cot", "scratchpad"]\nsamples = 3\n',
    )
    assert main(["sweep", str(path), "--store", str(tmp_path / "s.sqlite"), "--json"]) == 1
    out, err = capsys.readouterr()
    summaries = [json.loads(line) for line in out.splitlines()]
    assert [s["attempts"] for s in summaries] == [2, 0, 0]  # the first cell found it down twice
    for s in summaries:
        assert (s["status"], s["missing"], s["run_id"]) == ("incomplete", 3, None)
        assert s["error"].startswith("endpoint down is down (cannot connect")
    assert "endpoint down is still down" in err and "its cells left are not tried" in err
    assert "cruxtui: endpoint down is down (cannot connect" in err
    assert "3 of its cells incomplete" in err


def test_table_puts_transforms_in_the_columns_and_notes_what_they_skipped() -> None:
    def s(model: str, mode: str, transform: str, p1: float, skipped: int) -> dict[str, object]:
        return {
            "model": model,
            "endpoint": "e",
            "task": "output",
            "mode": mode,
            "temperature": 0.2,
            "n": 5,
            "seed": None,
            "transform": transform,
            "run_id": f"{model}{mode}",
            "status": "done",
            "samples": 10 - skipped,
            "skipped": skipped,
            "skipped_reasons": {"not-applicable": skipped} if skipped else {},
            "missing": 0,
            "pass_at_1": p1,
            "interval": [p1 - 1, p1 + 1],
        }

    summaries = [
        s(m, d, t, 50.0 + i, 4 if t == "const:1" else 0)
        for i, (m, d, t) in enumerate(
            (m, d, t) for m in ("a", "b") for d in ("direct", "cot") for t in ("none", "const:1")
        )
    ]
    t = table(summaries)
    assert t.columns == [
        "output direct",
        "output direct, const:1",
        "output cot",
        "output cot, const:1",
    ]
    assert [name for name, _ in t.rows] == ["a", "b"]
    assert t.notes == [
        "const:1: 4 of 10 samples skipped (not-applicable 4); its columns are over the other 6"
    ]
    md = to_markdown(t)
    assert "| a | 50.0 (49.0–51.0) | 51.0 (50.0–52.0) | 52.0" in md
    assert md.rstrip().endswith("- " + t.notes[0])
    assert (
        to_csv(t)
        .splitlines()[0]
        .startswith(
            "model,output direct pass@1,output direct low,output direct high,output direct run,"
            '"output direct, const:1 pass@1"'
        )
    )
    assert "% " + t.notes[0] in to_latex(t)
    # A sweep without transforms keeps its columns as they were.
    plain = table([x for x in summaries if x["transform"] == "none"])
    assert plain.columns == ["output direct", "output cot"] and plain.notes == []


def test_perturbed_sweep_cells_and_their_cases(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A perturbed cell runs the variants (truth re-derived) in its configuration's run;
    `cases from-run --transform` saves them as variant cases; a wrong parameter fails before
    any request."""
    from cruxtui.core.perturb.variant_set import build_variants

    dataset = load_dataset(offline=True)
    anon = build_variants("rename:anonymize", dataset.samples[:6])
    assert len(anon.samples) == 6 and all("~anon" in sid for sid in anon.samples)
    responder = CruxevalResponder([*dataset.samples, *anon.samples.values()], "wrong")
    with FakeOpenAI(responder, models=("m1",)) as server:
        grid = '[grid]\nmodels = ["m1"]\nsamples = 6\nseeds = [0]\n'
        path = write(
            tmp_path,
            f'[endpoints.e]\nbase_url = "{server.url}"\n'
            + grid
            + 'transforms = ["none", "rename:anonymize"]\n',
        )
        store = str(tmp_path / "s.sqlite")
        assert main(["sweep", str(path), "--store", store, "--json"]) == 0
        out, err = capsys.readouterr()
        none, perturbed = (json.loads(line) for line in out.splitlines())
        assert (none["transform"], perturbed["transform"]) == ("none", "rename:anonymize")
        assert none["run_id"] == perturbed["run_id"]
        assert (perturbed["samples"], perturbed["generations"], perturbed["pass_at_1"]) == (
            6,
            6,
            0.0,
        )
        assert server.request_count == 12  # each original and each variant once
        assert "rename:anonymize: 6 variants" in err

        # The run panel (Perturb screen, Ctrl+R) on the same variant with the same settings
        # finds the sweep's generation: shown, not asked for again.
        from cruxtui.core.runs.runner import RunListener
        from cruxtui.core.runs.session import RunSettings, live_run
        from cruxtui.core.runs.store import RunStore

        variant = next(iter(anon.samples.values()))
        shown = []
        with RunStore(store) as opened:
            summary = asyncio.run(
                live_run(
                    opened,
                    dataset,
                    variant,
                    RunSettings(base_url=server.url, model="m1", seed=0),
                    listener=RunListener(),
                    show_stored=shown.append,
                )
            )
        assert summary.run_id == none["run_id"] and summary.requested == 0
        assert [g.sample_id for g in shown] == [variant.id] and server.request_count == 12

        cases = tmp_path / "cases"
        run = none["run_id"]
        base = ["cases", "from-run", run, "--store", store, "--cases", str(cases)]
        assert main([*base, "--transform", "rename:anonymize"]) == 0
        saved = sorted(p.name for p in cases.iterdir())
        assert len(saved) == 12 and sum("~anon" in name for name in saved) == 6
        variant_case = json.loads(next(cases.glob("*~anon*.json")).read_text())
        assert variant_case["perturbations"][0]["name"] == "rename"
        capsys.readouterr()

        bad = write(
            tmp_path,
            f'[endpoints.e]\nbase_url = "{server.url}"\n' + grid + 'transforms = ["const:zz"]\n',
        )
        assert main(["sweep", str(bad), "--store", store]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and "grid.transforms: const:zz:" in err[0]
        assert server.request_count == 12


def test_a_transform_that_applies_to_no_sample_is_an_empty_done_cell(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    dataset = load_dataset(offline=True)
    # input-element removes an element of a container in the input: samples whose input has
    # no container cannot take it.
    without = [s.id for s in dataset.samples if not any(c in s.input for c in "[({")][:2]
    assert len(without) == 2
    with FakeOpenAI(CruxevalResponder(dataset.samples), models=("m1",)) as server:
        path = write(
            tmp_path,
            f'[endpoints.e]\nbase_url = "{server.url}"\n[grid]\nmodels = ["m1"]\n'
            f'samples = {json.dumps(without)}\ntransforms = ["none", "input-element"]\n',
        )
        assert main(["sweep", str(path), "--store", str(tmp_path / "s.sqlite"), "--json"]) == 0
        none, empty = (json.loads(line) for line in capsys.readouterr().out.splitlines())
        assert none["status"] == "done" and none["generations"] == 2
        assert (empty["status"], empty["samples"], empty["skipped"], empty["run_id"]) == (
            "done",
            0,
            2,
            None,
        )
        assert empty["pass_at_1"] is None and server.request_count == 2


def test_gated_backend_passes_batches_through_and_notes_a_refusal() -> None:
    """A batch backend (vLLM in-process: no GPU here, so a stand-in) keeps its batch entry point
    through the sweep's wrapper, and a refusal from it ends the cell like one from `complete`."""
    from cruxtui.core.models.backend import ModelError
    from cruxtui.core.runs.sweep import _Gated

    class Batch:
        calls = 0

        async def complete_batch(self, requests: list[str]) -> list[str]:
            self.calls += 1
            if requests == ["bad"]:
                raise ModelError("unknown_model", "no such model")
            return [r.upper() for r in requests]

    class Plain:
        async def complete(self, prompt: str) -> str:
            raise ModelError("unreachable", "cannot connect")

    async def go() -> None:
        gated = _Gated(Batch(), asyncio.Semaphore(1))  # type: ignore[arg-type]
        assert await gated.complete_batch(["a", "b"]) == ["A", "B"]
        assert not gated.refused
        with pytest.raises(ModelError):
            await gated.complete_batch(["bad"])
        assert gated.refused and gated.calls == 2
        plain = _Gated(Plain(), asyncio.Semaphore(1))  # type: ignore[arg-type]
        assert not callable(getattr(plain, "complete_batch", None))  # the runner asks this
        with pytest.raises(ModelError):
            await plain.complete("p")
        assert not plain.refused  # an unreachable endpoint may come back

    asyncio.run(go())


def test_endpoint_health_counts_one_round_per_outage_however_many_cells_notice() -> None:
    from cruxtui.core.runs.sweep import EndpointHealth

    sweep = Sweep(endpoints={}, cells=[], samples=None, retry_wait=10, attempts=3)
    health = EndpointHealth("e")
    a = b = health.epoch  # two cells begin a try
    assert health.failed("down", sweep, a) == "round" and health.rounds == 1
    assert health.failed("down", sweep, b) == "joined" and health.rounds == 1  # late, same outage
    assert health.retry_at > 0 and health.down == "down"
    a = b = health.epoch  # both try again
    assert health.failed("down", sweep, b) == "round" and health.rounds == 2
    assert health.stored() and health.down is None and health.rounds == 0  # it came back
    assert not health.stored()  # already up
    a = health.epoch
    assert health.failed("down again", sweep, a) == "round"
    a = health.epoch
    assert health.failed("down again", sweep, a) == "round"
    a = health.epoch
    assert health.failed("down again", sweep, a) == "given-up" and health.given_up
    assert health.failed("down again", sweep, a) == "joined"
    assert not health.stored() and health.given_up  # given up stays given up in this sweep
    assert "gave up after 3 round(s)" in health.gave_up_message()
