"""The sweep file (errors name the key), endpoints by reference to config.toml, a dead endpoint
(its cells wait, retry and are reported incomplete while the others finish; run again once it is
back, only its cells are asked for), and the paper-style table."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from cruxtui.cli.main import main
from cruxtui.core.data.dataset import load_dataset
from cruxtui.core.runs.sweep import SweepError, load_sweep, table, to_csv, to_latex, to_markdown
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
            assert "cannot connect" in down["error"]
            assert f"incomplete: m1 @ down output/{mode}" in err
        assert "2 of 4 cells incomplete" in err
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
