"""Failure cases: the file format, atomic saves, validation, replay, gallery export and the CLI."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable
from html.parser import HTMLParser
from pathlib import Path

import pytest

from cruxtui.cli.main import main
from cruxtui.core.cases.case_file import (
    SCHEMA_VERSION,
    CaseError,
    FailureCase,
    ModelInfo,
    Sampling,
    TraceSummary,
    edit_case,
    load_case,
    load_gallery,
    save_case,
)
from cruxtui.core.cases.gallery import export_html, export_markdown
from cruxtui.core.runs.store import Generation
from tests.conftest import REPO, NotingApp, wait_for


def make_case(
    sample_id: str = "sample_0",
    tags: list[str] | None = None,
    raw: str | None = None,
    model: str = "tiny-coder",
    note: str = "",
) -> FailureCase:
    """A realistic output-task failure (CRUXEval sample_0, a CoT answer that ignores duplicates)."""
    raw = (
        raw
        if raw is not None
        else (
            "[THOUGHT]\nnums.count(1) is 3, so the first tuple is (3, 1). Sorting in reverse gives "
            "[(3, 1), (2, 3), (1, 1)].\n[/THOUGHT]\n[ANSWER]\n"
            "assert f([1, 1, 3, 1, 3, 1]) == [(3, 1), (2, 3), (1, 1)]\n[/ANSWER]"
        )
    )
    return FailureCase(
        sample_id=sample_id,
        code=(
            "def f(nums):\n    output = []\n    for n in nums:\n"
            "        output.append((nums.count(n), n))\n    output.sort(reverse=True)\n    return output"
        ),
        input="[1, 1, 3, 1, 3, 1]",
        output="[(4, 1), (4, 1), (4, 1), (4, 1), (2, 3), (2, 3)]",
        task="output",
        mode="cot",
        template_version="cruxtui-1",
        prompt={
            "style": "chat",
            "messages": [
                {"role": "system", "content": "You are..."},
                {"role": "user", "content": "Complete ?? ...é"},
            ],
            "text": "USER: ...",
            "stop": ["[/ANSWER]"],
            "response_prefix": "",
        },
        model=ModelInfo(
            backend="openai", model=model, base_url="http://127.0.0.1:8000/v1", api="chat"
        ),
        sampling=Sampling(
            temperature=0.2, top_p=0.95, max_tokens=1024, n=2, seed=7, stop=["[/ANSWER]"]
        ),
        generations=[
            Generation(
                sample_id=sample_id,
                index=0,
                raw=raw,
                answer="[(3, 1), (2, 3), (1, 1)]",
                passed=False,
                kind="wrong",
                reason="got [(3, 1), (2, 3), (1, 1)], expected [(4, 1), ...]",
                produced="[(3, 1), (2, 3), (1, 1)]",
            ),
            Generation(
                sample_id=sample_id,
                index=1,
                raw="no answer here",
                answer=None,
                passed=False,
                kind="unparsable",
                reason="no [ANSWER] tags",
                extraction_error="no [ANSWER] tags",
            ),
        ],
        perturbations=[{"name": "rename", "params": "anonymize", "seed": 3}]
        if "~" in sample_id
        else [],
        trace=TraceSummary(
            steps=21, numsteps=73, return_repr="[(4, 1), (4, 1), (4, 1), (4, 1), (2, 3), (2, 3)]"
        ),
        first_divergence={
            "reasoning_step": 0,
            "trace_step": 4,
            "claim": "nums.count(1) is 3",
            "claimed": "3",
            "true": "4",
        },
        tags=tags if tags is not None else ["counting", "sort"],
        note=note or "Ignores the repeated 1s.\nSecond line <b>not html</b>.",
        origin="test",
    )


# Format and round trip ------------------------------------------------------------------------
def test_round_trip_is_lossless(tmp_path: Path) -> None:
    case = make_case("sample_0~anon")
    case.extra["future_field"] = {"kept": [1, 2]}
    path = save_case(case, tmp_path)
    loaded = load_case(path)
    assert loaded == case
    assert loaded.to_json() == case.to_json()
    # Saving what was loaded writes byte-identical text (diff-friendly, nothing reordered).
    before = path.read_bytes()
    save_case(loaded)
    assert path.read_bytes() == before
    text = before.decode()
    assert text.startswith('{\n  "base_sample_id": "sample_0"')  # sorted keys, indent 2
    assert list(json.loads(text)) == sorted(json.loads(text))
    assert "api_key" not in text and "é" in text


def test_file_name_is_stable_and_ignores_tags_and_note(tmp_path: Path) -> None:
    a = make_case(tags=["x"], note="one")
    b = make_case(tags=["y", "z"], note="two")
    assert a.case_id == b.case_id
    assert a.case_id.startswith("sample_0--tiny-coder--")
    c = make_case(model="other/Model 7B")
    assert c.case_id != a.case_id and "other-Model-7B" in c.case_id
    variant = make_case("sample_0~anon")
    assert variant.case_id.startswith("sample_0~anon--")
    path = save_case(a, tmp_path)
    edited = edit_case(path, add_tags=["new tag"], remove_tags=["x"], note="changed")
    assert edited.path == path and sorted(p.name for p in tmp_path.iterdir()) == [path.name]
    again = load_case(path)
    assert again.tags == ["new-tag"] and again.note == "changed"
    assert again.created == a.created


def test_a_save_never_overwrites_another_case(tmp_path: Path) -> None:
    """Were two cases to share the 8-digit hash (or a broken file sit on the name), the new case
    gets a longer hash instead of overwriting; saving it again finds its own file."""
    a, b = make_case(note="a"), make_case("sample_12", note="b")
    squatter = tmp_path / f"{a.case_id}.json"
    squatter.write_text(b.dumps())
    first = save_case(a, tmp_path)
    assert first.name == f"{a.stem(12)}.json" and load_case(squatter).note == "b"
    assert save_case(make_case(note="a again"), tmp_path) == first
    assert load_case(first).note == "a again"
    broken = tmp_path / f"{b.case_id}.json"
    broken.write_text("{")
    assert save_case(b, tmp_path).name == f"{b.stem(12)}.json" and broken.read_text() == "{"


def test_model_never_holds_a_key(tmp_path: Path) -> None:
    data = make_case().to_json()
    data["model"]["api_key"] = "sk-secret"
    (tmp_path / "k.json").write_text(json.dumps(data))
    with pytest.raises(CaseError, match=r"k\.json: field 'model\.api_key' must not be stored"):
        load_case(tmp_path / "k.json")


# Bad files --------------------------------------------------------------------------------------
def _write(folder: Path, name: str, data: object) -> Path:
    path = folder / name
    path.write_text(data if isinstance(data, str) else json.dumps(data))
    return path


def test_bad_files_are_named_and_the_rest_still_loads(tmp_path: Path) -> None:
    good = save_case(make_case(), tmp_path)
    newer = make_case().to_json() | {"schema_version": SCHEMA_VERSION + 1}
    missing = make_case().to_json()
    del missing["task"]
    wrong_type = make_case().to_json()
    wrong_type["generations"][0]["passed"] = "no"
    _write(tmp_path, "newer.json", newer)
    _write(tmp_path, "missing.json", missing)
    _write(tmp_path, "broken.json", '{"schema_version": 1, "task": ')
    _write(tmp_path, "wrongtype.json", wrong_type)
    _write(tmp_path, "list.json", [1, 2])
    _write(tmp_path, "notacase.json", {"hello": 1})
    (tmp_path / "binary.json").write_bytes(b"\xff\xfe\x00")
    _write(tmp_path, "deep.json", "[" * 100_000 + "]" * 100_000)
    _write(tmp_path, "bigint.json", '{"schema_version": ' + "9" * 5000 + "}")
    _write(tmp_path, ".hidden.json.tmp", "partial")

    cases, errors = load_gallery(tmp_path)
    assert [c.path for c in cases] == [good]
    by_file = {Path(e.path).name: e.problem for e in errors}
    assert set(by_file) == {
        "newer.json",
        "missing.json",
        "broken.json",
        "wrongtype.json",
        "list.json",
        "notacase.json",
        "binary.json",
        "deep.json",
        "bigint.json",
    }
    assert f"schema_version {SCHEMA_VERSION + 1} is newer" in by_file["newer.json"]
    assert "upgrade cruxtui" in by_file["newer.json"]
    assert by_file["missing.json"] == "missing field 'task'"
    assert by_file["broken.json"].startswith("not valid JSON")
    assert "line 1" in by_file["broken.json"]
    assert (
        by_file["wrongtype.json"] == "field 'generations[0].passed' must be a boolean, got a string"
    )
    assert "expected a JSON object, got a list" in by_file["list.json"]
    assert "is this a cruxtui case file?" in by_file["notacase.json"]
    assert "UTF-8" in by_file["binary.json"]
    assert "nested too deeply" in by_file["deep.json"] and "JSON" in by_file["bigint.json"]
    for err in errors:
        assert str(err).startswith(str(tmp_path))


def test_missing_gallery_folder_is_empty(tmp_path: Path) -> None:
    assert load_gallery(tmp_path / "nope") == ([], [])


# Kill -9 mid-save ---------------------------------------------------------------------------------
_WRITER = textwrap.dedent("""
    import os, stat, sys, time
    sys.path.insert(0, sys.argv[2])
    real_fsync = os.fsync
    def slow_fsync(fd):  # a slow disk: most kills land between writing the temp file and the rename
        if stat.S_ISREG(os.fstat(fd).st_mode):
            time.sleep(0.15)
        real_fsync(fd)
    os.fsync = slow_fsync
    from dataclasses import replace
    from tests.cases.test_cases import make_case
    from cruxtui.core.cases.case_file import save_case
    # Two large versions of the same case (same identity, so the same file): 4 MB each.
    versions = [make_case(note=tag) for tag in ("old", "new")]
    for v, fill in zip(versions, "ab"):
        v.generations[1] = replace(v.generations[1], reason=fill * 4_000_000, extraction_error=fill)
    save_case(versions[0], sys.argv[1])
    print("ready", flush=True)
    i = 0
    while True:
        i += 1
        save_case(versions[i % 2], sys.argv[1])
""")


def test_kill_9_mid_save_leaves_old_or_new_file(tmp_path: Path) -> None:
    seen: set[str] = set()
    mid_save = 0
    for attempt in range(6):
        folder = tmp_path / f"g{attempt}"
        proc = subprocess.Popen(
            [sys.executable, "-c", _WRITER, str(folder), str(REPO)],
            stdout=subprocess.PIPE,
            text=True,
        )
        assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
        time.sleep(0.05 + 0.07 * attempt)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        cases, errors = load_gallery(folder)
        assert errors == [] and len(cases) == 1
        case = cases[0]
        # Whole and consistent: note and payload come from the same version.
        fill = {"old": "a", "new": "b"}[case.note]
        assert case.generations[1].reason == fill * 4_000_000
        assert case.generations[1].extraction_error == fill
        seen.add(case.note)
        # A temp file an interrupted save left behind is hidden and never read as a case.
        leftovers = [p for p in folder.iterdir() if p.name != case.path.name]
        assert all(p.name.startswith(".") and p.suffix == ".tmp" for p in leftovers)
        mid_save += bool(leftovers)
    assert mid_save >= 1, "no kill landed mid-save: the test did not test anything"


# Gallery export -------------------------------------------------------------------------------------
class _Page(HTMLParser):
    """Collects what the export tests check: tags, case articles, filter buttons, external refs."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.stack: list[str] = []
        self.articles: dict[str, dict[str, str]] = {}
        self.sections: list[str] = []
        self.buttons: list[str] = []
        self.external: list[str] = []
        self.marks: list[str] = []
        self.scripts = 0
        self.styles = 0
        self._in_mark = False
        self._in_script = False
        self.script = ""
        self.errors: list[str] = []

    VOID = {"meta", "br", "link", "img", "input", "hr"}

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: v or "" for k, v in attrs}
        if tag not in self.VOID:
            self.stack.append(tag)
        if tag == "article":
            self.articles[a["data-case"]] = a | {
                "group": self.sections[-1] if self.sections else ""
            }
        if tag == "section":
            self.sections.append(a.get("data-group", ""))
        if tag == "button":
            self.buttons.append(a.get("data-tag", ""))
        if tag == "mark":
            self._in_mark = True
            self.marks.append("")
        if tag == "script":
            self.scripts += 1
            self._in_script = True
            if "src" in a:
                self.external.append(a["src"])
        if tag == "style":
            self.styles += 1
        if tag in ("link", "img") and (a.get("href") or a.get("src")):
            self.external.append(a.get("href") or a.get("src", ""))

    def handle_endtag(self, tag: str) -> None:
        if tag in self.VOID:
            return
        if not self.stack or self.stack[-1] != tag:
            self.errors.append(f"unbalanced </{tag}> (open: {self.stack[-3:]})")
            return
        self.stack.pop()
        if tag == "mark":
            self._in_mark = False
        if tag == "script":
            self._in_script = False

    def handle_data(self, data: str) -> None:
        if self._in_mark:
            self.marks[-1] += data
        if self._in_script:
            self.script += data


def test_html_export_is_one_self_contained_page(tmp_path: Path) -> None:
    cases = [
        make_case("sample_0", ["counting", "sort"]),
        make_case("sample_12", ["prefix"], model="m2"),
        make_case("sample_14~anon", [], model="m3", raw="plain answer, no claim text"),
    ]
    for c in cases:
        save_case(c, tmp_path)
    page = export_html(cases, title="My <gallery>")
    parser = _Page()
    parser.feed(page)
    parser.close()
    assert parser.errors == [] and parser.stack == []
    assert page.startswith("<!DOCTYPE html>")
    assert parser.external == [] and "http://" not in page.replace("http://127.0.0.1:8000/v1", "")
    assert parser.scripts == 1 and parser.styles == 1
    assert "My &lt;gallery&gt;" in page
    # Every case present once, with its tags as filter data.
    assert set(parser.articles) == {c.name for c in cases}
    assert {k: v["data-tags"] for k, v in parser.articles.items()} == {
        cases[0].name: "counting sort",
        cases[1].name: "prefix",
        cases[2].name: "",
    }
    # Grouped by first tag, untagged last; one filter button per tag plus "all".
    assert parser.sections == ["counting", "prefix", "untagged"]
    assert parser.buttons == ["", "counting", "prefix", "sort"]
    # Highlighted code (Pygments spans), the divergence marked in the reasoning.
    assert '<span class="k">def</span>' in page and ".code .k" in page
    assert parser.marks == ["marked", "nums.count(1) is 3", "nums.count(1) is 3"]  # legend + 2
    assert "the real execution has 4" in page
    assert "&lt;b&gt;not html&lt;/b&gt;" in page  # notes are escaped
    assert "assert f([1, 1, 3, 1, 3, 1]) == [(4, 1)" in page.replace("&#x27;", "'")


_FILTER_HARNESS = """
// The page's own filter script run against a minimal DOM built from the parsed page.
const page = JSON.parse(require('fs').readFileSync(0, 'utf8'));
function el(dataset, extra) {
  return Object.assign({dataset, hidden: false, listeners: {},
    classList: {set: new Set(), toggle(c, on) { on ? this.set.add(c) : this.set.delete(c); }},
    addEventListener(type, f) { this.listeners[type] = f; }}, extra || {});
}
const buttons = page.buttons.map(t => el({tag: t}));
const articles = page.articles.map(a => el({tags: a.tags, case: a.case}, {group: a.group}));
const sections = page.sections.map(g => el({group: g}, {
  querySelectorAll: () => articles.filter(a => a.group === g && !a.hidden)}));
global.document = {querySelectorAll(sel) {
  return {'.filters button': buttons, 'article.case': articles, 'section.group': sections}[sel]; }};
global.location = {hash: page.hash};
eval(page.script);
const state = () => ({cases: articles.filter(a => !a.hidden).map(a => a.dataset.case).sort(),
  groups: sections.filter(s => !s.hidden).map(s => s.dataset.group),
  active: buttons.filter(b => b.classList.set.has('active')).map(b => b.dataset.tag)});
const out = {initial: state()};
for (const t of page.click) { buttons.find(b => b.dataset.tag === t).listeners.click(); out[t] = state(); }
console.log(JSON.stringify(out));
"""


def test_html_tag_filter_script_works(tmp_path: Path) -> None:
    """Runs the page's inline filter script in Node against the parsed page structure."""
    import shutil

    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed (the filter script is checked where it is)")
    cases = [
        make_case("sample_0", ["counting", "sort"]),
        make_case("sample_12", ["prefix", "sort"], model="m2"),
        make_case("sample_14", [], model="m3"),
    ]
    parser = _Page()
    parser.feed(export_html(cases))
    names = {c.sample_id: c.name for c in cases}
    page = {
        "buttons": parser.buttons,
        "sections": parser.sections,
        "script": parser.script,
        "articles": [
            {"case": k, "tags": v["data-tags"], "group": v["group"]}
            for k, v in parser.articles.items()
        ],
        "hash": "",
        "click": ["sort", "prefix", ""],
    }

    def run(hash_: str = "") -> dict:
        done = subprocess.run(
            [node, "-e", _FILTER_HARNESS],
            input=json.dumps(page | {"hash": hash_}),
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout)

    out = run()
    everything = sorted(names.values())
    assert out["initial"] == {
        "cases": everything,
        "groups": ["counting", "prefix", "untagged"],
        "active": [""],
    }
    # "sort" is no case's first tag: both cases carrying it show, in their own groups.
    assert out["sort"] == {
        "cases": sorted([names["sample_0"], names["sample_12"]]),
        "groups": ["counting", "prefix"],
        "active": ["sort"],
    }
    assert out["prefix"]["cases"] == [names["sample_12"]] and out["prefix"]["groups"] == ["prefix"]
    assert out[""]["cases"] == everything
    assert run("#tag=counting")["initial"]["cases"] == [names["sample_0"]]


def test_markdown_export_groups_by_tag() -> None:
    cases = [
        make_case("sample_0", ["counting"]),
        make_case("sample_12", ["prefix", "counting"], model="m"),
    ]
    md = export_markdown(cases)
    assert md.index("## counting") < md.index("## prefix")
    assert md.count("### ") == 2
    assert "⟪nums.count(1) is 3⟫" in md
    assert "```python\ndef f(nums):" in md
    assert "| `[(3, 1), (2, 3), (1, 1)]` | 1 | wrong |" in md
    assert "| *(none extracted)* | 1 | unparsable: no \\[ANSWER\\] tags |" in md  # renders [ANSWER]


# CLI ---------------------------------------------------------------------------------------------
def test_cli_list_show_tag_note_export(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "gallery"
    a = save_case(make_case("sample_0", ["counting"]), folder)
    save_case(make_case("sample_12", ["prefix"], model="m2"), folder)
    _write(folder, "zz-broken.json", "{")
    monkeypatch.setenv("CRUXTUI_CASES_DIR", str(folder))

    assert main(["cases", "list", "--json"]) == 0
    out, err = capsys.readouterr()
    rows = [json.loads(line) for line in out.splitlines()]
    assert [r["sample_id"] for r in rows] == ["sample_0", "sample_12"]
    assert "zz-broken.json: not valid JSON" in err

    assert main(["cases", "list", "--json", "--tag", "prefix"]) == 0
    assert [json.loads(x)["sample_id"] for x in capsys.readouterr().out.splitlines()] == [
        "sample_12"
    ]

    assert main(["cases", "show", a.stem, "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == load_case(a).to_json()
    assert main(["cases", "show", "sample_0"]) == 0
    shown = capsys.readouterr().out
    assert "nums.count(1) is 3" in shown and "counting" in shown

    assert main(["cases", "tag", "sample_0", "paper", "--remove", "counting"]) == 0
    assert main(["cases", "note", "sample_0", "Seen in the paper."]) == 0
    capsys.readouterr()
    edited = load_case(a)
    assert edited.tags == ["paper"] and edited.note == "Seen in the paper."

    save_case(make_case("sample_1", ["x"]), folder)
    assert main(["cases", "show", "sample_1", "--json"]) == 0  # a sample id, not a name prefix
    assert json.loads(capsys.readouterr().out)["sample_id"] == "sample_1"
    assert main(["cases", "show", "sample_1", "--json", "--cases", str(folder)]) == 0
    capsys.readouterr()
    save_case(make_case("sample_1", ["x"], model="m9"), folder)
    assert main(["cases", "show", "sample_1"]) == 2
    assert "'sample_1' matches 2 cases" in capsys.readouterr().err
    assert main(["cases", "show", "nothing-like-this"]) == 2
    assert "no case matches 'nothing-like-this'" in capsys.readouterr().err
    assert main(["cases", "show", "zz-broken"]) == 2
    assert "zz-broken.json: not valid JSON" in capsys.readouterr().err

    out_html = tmp_path / "g.html"
    assert main(["cases", "export", "--html", str(out_html), "--tag", "paper"]) == 0
    parser = _Page()
    parser.feed(out_html.read_text())
    assert list(parser.articles) == [a.stem]
    out_md = tmp_path / "g.md"
    assert main(["cases", "export", "--markdown", str(out_md), "--cases", str(folder)]) == 0
    assert out_md.read_text().count("### ") == 4
    assert main(["cases", "export", "--markdown", str(out_md), "--tag", "nope"]) == 2


# TUI ---------------------------------------------------------------------------------------------
TUI_SIZE = (100, 32)
COT_WRONG = (
    "[THOUGHT]\nf starts with output = []. In the first iteration n = 1 and nums.count(1) is 3, "
    "so output becomes [(3, 1)]. After the loop output is sorted in reverse, and f returns "
    "[(3, 1), (2, 3), (1, 1)].\n[/THOUGHT]\n[ANSWER]\nassert f([1, 1, 3, 1, 3, 1]) == "
    "[(3, 1), (2, 3), (1, 1)]\n[/ANSWER]"
)


def _fixed(case: FailureCase) -> FailureCase:
    """Pin what varies between machines and runs, for snapshots."""
    case.created = "2026-01-01T00:00:00+00:00"
    case.python_version = "3.11.0"
    return case


@pytest.fixture
def gallery(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Three cases and one broken file in ./gallery (relative, so screens show the same path)."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("CRUXTUI_CASES_DIR", "gallery")
    folder = tmp_path / "gallery"
    save_case(_fixed(make_case("sample_0", ["counting", "sort"])), folder)
    save_case(_fixed(make_case("sample_12", ["prefix"], model="m2")), folder)
    inp = _fixed(make_case("sample_3", ["prefix", "input-task"], model="m2"))
    inp.task = "input"
    save_case(inp, folder)
    _write(folder, "zz-broken.json", "{")
    return folder


def _store_failing_run(
    dataset: object, sample_id: str, raws: list[tuple[str, str | None, bool]]
) -> str:
    """A stored cot run with the given (raw, answer, passed) generations for one sample."""
    from cruxtui.core.models.prompts import TEMPLATE_VERSION
    from cruxtui.core.runs.store import Generation as RunGeneration
    from cruxtui.core.runs.store import RunConfig, RunStore

    with RunStore() as store:
        info = store.open_run(
            RunConfig(
                spec={
                    "backend": "openai",
                    "model": "fake-model",
                    "base_url": "http://127.0.0.1:9/v1",
                    "api": "chat",
                },
                task="output",
                mode="cot",
                style="chat",
                params={
                    "temperature": 0.2,
                    "top_p": 0.95,
                    "max_tokens": 1024,
                    "n": len(raws),
                    "seed": 5,
                    "stop": None,
                },
                template_version=TEMPLATE_VERSION,
                dataset_digest=dataset.digest,
            )
        )  # type: ignore[attr-defined]
        for i, (raw, answer, passed) in enumerate(raws):
            store.add_generation(
                info.id,
                RunGeneration(
                    sample_id=sample_id,
                    index=i,
                    raw=raw,
                    answer=answer,
                    passed=passed,
                    kind="pass" if passed else "wrong",
                    reason="" if passed else "got [(3, 1), (2, 3), (1, 1)], expected [(4, 1), ...]",
                ),
            )
        store.finish(info.id, "done")
        return info.id


async def _open_case_form(app: object, pilot: object) -> None:
    """Press `s` and wait for the tags/note form (the failure is looked up in a worker)."""
    from cruxtui.tui.screens.case_form_screen import CaseFormScreen

    await pilot.press("s")  # type: ignore[attr-defined]
    await wait_for(
        pilot,  # type: ignore[arg-type]
        lambda: isinstance(app.screen, CaseFormScreen) and app.screen.query("#case-note"),  # type: ignore[attr-defined]
        what="the tags/note form",
    )


def _saved(folder: Path, keep: Callable[[FailureCase], bool]) -> list[FailureCase]:
    """The cases in `folder` that `keep` accepts (the save is atomic: a file is whole or absent)."""
    return [c for c in load_gallery(folder)[0] if keep(c)]


async def test_cases_screen_lists_filters_shows_edits_exports(
    gallery: Path, official: object
) -> None:
    from textual.widgets import DataTable, Input, Select, Static

    from cruxtui.tui.app import CruxApp
    from cruxtui.tui.screens.case_export_screen import ExportScreen
    from cruxtui.tui.screens.case_form_screen import CaseFormScreen
    from cruxtui.tui.screens.cases_screen import CasesScreen

    app = CruxApp(official)  # type: ignore[arg-type]
    async with app.run_test(size=TUI_SIZE) as pilot:
        await pilot.press("C")
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, CasesScreen)
        table = screen.query_one("#cases-table", DataTable)
        assert table.row_count == 3
        status = str(screen.query_one("#cases-status", Static).render())
        assert "3 of 3 case(s) in gallery" in status and "zz-broken.json: not valid JSON" in status
        # Filter by tag, then by task.
        screen.query_one("#cases-tag", Select).value = "prefix"
        await pilot.pause()
        assert [c.sample_id for c in screen.shown] == ["sample_3", "sample_12"]  # natural order
        screen.query_one("#cases-task", Select).value = "input"
        await pilot.pause()
        assert [c.sample_id for c in screen.shown] == ["sample_3"] and table.row_count == 1
        screen.query_one("#cases-task", Select).clear()
        screen.query_one("#cases-tag", Select).clear()
        screen.query_one("#cases-model", Select).value = "m2"
        await pilot.pause()
        assert {c.sample_id for c in screen.shown} == {"sample_12", "sample_3"}
        screen.query_one("#cases-model", Select).clear()
        await pilot.pause()
        # The selected case is shown; moving the cursor shows another.
        table.focus()
        first = screen.current
        assert first is not None and screen.showing is first
        await pilot.press("down")
        await pilot.pause()
        assert screen.current is not first and screen.showing is screen.current
        # Edit tags and note through the modal: the file changes, its name does not.
        target = screen.current
        await pilot.press("t")
        await pilot.pause()
        assert isinstance(app.screen, CaseFormScreen)
        app.screen.query_one("#case-tags", Input).value = "paper, prefix"
        app.screen.query_one("#case-note", Input).value = "Shown in the talk."
        await pilot.press("ctrl+s")
        await wait_for(
            pilot, lambda: load_case(target.path).note == "Shown in the talk.", what="the edit"
        )
        edited = load_case(target.path)
        assert edited.tags == ["paper", "prefix"] and edited.note == "Shown in the talk."
        assert len(list(gallery.glob("*.json"))) == 4
        # Export what is listed.
        await pilot.press("e")
        await pilot.pause()
        assert isinstance(app.screen, ExportScreen)
        app.screen.query_one("#case-export-path", Input).value = "out/g.html"
        await pilot.press("enter")
        exported = gallery.parent / "out" / "g.html"
        await wait_for(pilot, exported.exists, what="the export (written atomically)")
        page = _Page()
        page.feed(exported.read_text())
        assert len(page.articles) == 3 and "paper" in page.buttons


async def test_s_on_sample_screen_saves_the_failure(gallery: Path, official: object) -> None:
    from textual.widgets import Input

    from cruxtui.tui.screens.case_form_screen import CaseFormScreen

    run_id = _store_failing_run(
        official,
        "sample_0",
        [
            (COT_WRONG, "[(3, 1), (2, 3), (1, 1)]", False),
            (COT_WRONG.replace("[THOUGHT]", "[THOUGHT]\n"), "[(3, 1), (2, 3), (1, 1)]", False),
        ],
    )
    app = NotingApp(official)  # type: ignore[arg-type]
    async with app.run_test(size=TUI_SIZE) as pilot:
        app.open_sample("sample_1")  # no stored failure: a clear message, nothing saved
        await pilot.pause()
        await pilot.press("s")
        await wait_for(
            pilot,
            lambda: any("No failure of sample_1" in n.message for n in app.notes),
            what="the message",
        )
        assert not isinstance(app.screen, CaseFormScreen)
        await pilot.press("escape")
        app.open_sample("sample_0")
        await pilot.pause()
        await _open_case_form(app, pilot)
        await pilot.press(*"counting", "space", *"sort", "enter")
        await pilot.press(*"Counts each 1 as 3.")
        assert app.screen.query_one("#case-note", Input).value == "Counts each 1 as 3."
        await pilot.press("enter")
        await wait_for(
            pilot,
            lambda: _saved(gallery, lambda c: c.origin.startswith(f"run {run_id}")),
            what="the saved case",
        )
    saved = _saved(gallery, lambda c: c.origin.startswith(f"run {run_id}"))
    assert len(saved) == 1
    case = saved[0]
    assert case.tags == ["counting", "sort"] and case.note == "Counts each 1 as 3."
    assert case.sample_id == "sample_0" and case.mode == "cot" and case.sampling.seed == 5
    assert [g.raw for g in case.generations][0] == COT_WRONG and case.failures == 2
    assert case.model.model == "fake-model" and case.model.base_url == "http://127.0.0.1:9/v1"
    # The prompt is the one the run sent (cruxtui's cot chat prompt for this sample).
    assert (
        case.prompt["style"] == "chat"
        and "assert f([1, 1, 3, 1, 3, 1]) == ??" in case.prompt["text"]
    )
    # Saved with the truth: the trace summary and where the reasoning first went wrong.
    assert case.trace is not None and case.trace.return_repr == official["sample_0"].output  # type: ignore[index]
    assert case.first_divergence is not None
    # The first wrong claim is "nums.count(1) is 3" (an expression over the frame: it is 4).
    assert case.first_divergence["claim"] in COT_WRONG and case.first_divergence["line"] == 4
    assert case.first_divergence["kind"] == "expression" and case.first_divergence["true"] == "4"


def test_cases_screen_snapshot(snap_compare, gallery: Path, official: object) -> None:
    from cruxtui.tui.app import CruxApp

    assert snap_compare(CruxApp(official), terminal_size=TUI_SIZE, press=["C"])  # type: ignore[arg-type]


# Replay against the real local OpenAI-compatible server ----------------------------------------
@pytest.fixture
def scripted(official: object, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):  # noqa: ANN201
    """A local server whose model answers CRUXEval prompts wrongly; one cot run stored from it
    (through `cruxtui run`) and its failures saved as cases (through `cases from-run`)."""
    from cruxtui.testing.fake_openai import CruxevalResponder, FakeOpenAI
    from tests.conftest import CRUXEVAL_JSONL

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("CRUXTUI_DATASET", str(CRUXEVAL_JSONL))
    monkeypatch.setenv("CRUXTUI_CASES_DIR", "gallery")
    samples = [official["sample_0"], official["sample_3"]]  # type: ignore[index]
    server = FakeOpenAI(CruxevalResponder(samples, "wrong"), models=("fake-model", "other-model"))
    server.start()
    try:
        assert (
            main(
                [
                    "run",
                    "--base-url",
                    server.url,
                    "--model",
                    "fake-model",
                    "--mode",
                    "cot",
                    "--samples",
                    "sample_0,sample_3",
                    "-n",
                    "2",
                    "--seed",
                    "1",
                    "--json",
                ]
            )
            == 0
        )
        from cruxtui.core.runs.store import RunStore

        with RunStore() as store:
            run_id = store.runs()[0].id
        assert main(["cases", "from-run", run_id, "--failed", "--tag", "scripted"]) == 0
        yield server, samples
    finally:
        server.close()


def _replay_json(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, dict]:
    capsys.readouterr()
    code = main(["cases", "replay", "--json", *argv])
    return code, json.loads(capsys.readouterr().out)


def test_replay_reproduces_scripted_failure_then_reports_fixed_then_unreachable(
    scripted, capsys: pytest.CaptureFixture[str]
) -> None:  # noqa: ANN001
    from cruxtui.testing.fake_openai import CruxevalResponder

    server, samples = scripted
    cases, errors = load_gallery("gallery")
    assert errors == [] and sorted(c.sample_id for c in cases) == ["sample_0", "sample_3"]
    assert all(
        c.mode == "cot"
        and c.model.base_url == server.url
        and c.tags == ["scripted"]
        and c.failures == 2
        for c in cases
    )
    before = server.request_count

    # Still wrong: every replay fails, as recorded; exit 0 for CI.
    code, out = _replay_json(capsys, "gallery", "-n", "3")
    assert code == 0 and out["exit_status"] == 0 and out["reproduced"] == 2
    for r in out["results"]:
        assert r["status"] == "reproduced" and r["summary"] == "reproduced 3/3"
        assert r["changes"] == ["same answers and verdicts as recorded"]
    assert server.request_count > before
    prompts = {q.prompt for q in server.log.requests[-3:]}
    assert any(
        c.prompt["text"].strip() in p or c.prompt["messages"][-1]["content"] in p
        for c in cases
        for p in prompts
    )

    # The model got fixed: every replay passes; exit 1, and the new answer is named.
    server.responder = CruxevalResponder(samples, "correct")
    code, out = _replay_json(capsys, "gallery", "-n", "2")
    assert code == 1 and out["reproduced"] == 0
    for r in out["results"]:
        assert r["status"] == "fixed" and r["summary"] == "reproduced 0/2"
        assert any(ch.startswith("new answer") and ch.endswith(": pass") for ch in r["changes"])

    # Another model on the same server (--model), still wrong there: the change is reported.
    server.responder = CruxevalResponder(samples, "wrong")
    code, out = _replay_json(
        capsys,
        "gallery",
        "-n",
        "1",
        "--model",
        "other-model",
        "--base-url",
        server.url,
        "--tag",
        "scripted",
        "--task",
        "output",
    )
    assert code == 0
    assert all(
        r["model"]["model"] == "other-model"
        and r["changes"][0] == "model fake-model (openai) -> other-model (openai)"
        for r in out["results"]
    )

    # The endpoint is gone: each case says so, exit 3.
    server.close()
    code, out = _replay_json(capsys, "gallery", "-n", "2")
    assert code == 3 and len(out["results"]) == 2
    for r in out["results"]:
        assert r["status"] == "unreachable" and r["replays"] == 0 and r["errors"]
    # The table form names the status per case too.
    capsys.readouterr()
    assert main(["cases", "replay", "gallery", "-n", "1"]) == 3
    text = capsys.readouterr().out
    assert text.count("unreachable") >= 2


async def test_cases_screen_replay_streams_and_reports(scripted, official: object) -> None:  # noqa: ANN001
    from textual.widgets import Static

    from cruxtui.tui.app import CruxApp
    from cruxtui.tui.screens.cases_screen import REPLAYS, CasesScreen

    app = CruxApp(official)  # type: ignore[arg-type]
    async with app.run_test(size=TUI_SIZE) as pilot:
        await pilot.press("C")
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, CasesScreen) and len(screen.shown) == 2
        await pilot.press("r")
        await wait_for(pilot, lambda: screen.last_replay is not None, what="the replay")
        report = screen.last_replay
        assert report is not None and report.status == "reproduced"
        assert report.summary == f"reproduced {REPLAYS}/{REPLAYS}"
        # Every replay streamed in: the text shown is what the server sent.
        assert sorted(screen.replay_text) == list(range(REPLAYS))
        assert all(
            "".join(parts).strip() == a.raw.strip()
            for parts, a in zip(screen.replay_text.values(), report.attempts, strict=True)
        )
        shown = str(screen.query_one("#case-replay", Static).render())
        assert f"\nreproduced {REPLAYS}/{REPLAYS}\n" in shown and "replay 3 WRONG" in shown


def test_from_run_on_imported_codellama_generations(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    official: object,
) -> None:
    from tests.conftest import CODELLAMA_OUTPUT, CRUXEVAL_JSONL

    released = json.loads((CODELLAMA_OUTPUT / "generations.json").read_text())
    subset = {k: released[k] for k in ("sample_0", "sample_1", "sample_12")}
    (tmp_path / "gen.json").write_text(json.dumps(subset))
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("CRUXTUI_DATASET", str(CRUXEVAL_JSONL))
    assert main(["runs", "--import", "gen.json", "--task", "output", "--name", "codellama-7b"]) == 0
    assert main(["runs", "--json"]) == 0
    run_id = json.loads(capsys.readouterr().out.splitlines()[-1])["id"]

    argv = [
        "cases",
        "from-run",
        run_id[:6],
        "--failed",
        "--samples",
        "sample_0,sample_1,sample_12",
        "--tag",
        "llama",
        "--cases",
        "g",
    ]
    assert main(argv) == 0
    out, err = capsys.readouterr()
    assert "saved 2 case(s) in g (2 new, 0 updated)" in out
    assert "sample_1: every generation passed" in err
    cases = {c.sample_id: c for c in load_gallery(tmp_path / "g")[0]}
    assert set(cases) == {"sample_0", "sample_12"}
    c12 = cases["sample_12"]
    assert [g.raw for g in c12.generations] == released["sample_12"]
    assert all(not g.passed and g.kind == "wrong" for g in c12.generations)
    assert c12.model.backend == "replay" and c12.model.model == "codellama-7b"
    assert "records no prompt" in c12.origin and c12.prompt["style"] == "completion"
    assert c12.trace is not None and c12.trace.return_repr == official["sample_12"].output  # type: ignore[index]

    # Curated, then collected again: tags merge, the note and creation time stay.
    edit_case(c12.path, note="prefix confusion")
    assert main([*argv[:-4], "--tag", "again", "--cases", "g"]) == 0
    assert "(0 new, 2 updated)" in capsys.readouterr().out
    again = load_case(c12.path)
    assert again.tags == ["llama", "again"] and again.note == "prefix confusion"
    assert again.created == c12.created

    # Replaying a replay-backend case re-reads its recorded responses: reproduced, exit 0.
    assert main(["cases", "replay", "g", "-n", "4", "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert [r["summary"] for r in summary["results"]] == ["reproduced 4/4"] * 2

    assert main(["cases", "from-run", "nosuchrun", "--cases", "g"]) == 2
    assert "no run 'nosuchrun'" in capsys.readouterr().err


async def test_committed_example_gallery_loads_and_reproduces() -> None:
    """cases/ holds real Code Llama failures (scripts/seed_cases.py): each loads, each is a genuine
    failure by today's scorer, and replaying its recorded responses reproduces it."""
    from cruxtui.core.cases.replay import replay_case

    cases, errors = load_gallery(REPO / "cases")
    assert errors == [] and 2 <= len(cases) <= 6
    for case in cases:
        assert case.path is not None and case.path.stem == case.case_id  # stable names
        assert case.model.backend == "replay" and case.tags and case.note
        assert case.trace is not None and case.trace.return_repr == case.output
        report = await replay_case(case, 3)
        assert report.status == "reproduced", (case.name, report.changes)


def test_variant_case_records_its_code_output_and_chain(tmp_path: Path, official: object) -> None:
    from cruxtui.core.cases.build import cases_from_run
    from cruxtui.core.perturb import make_variant, parse_spec
    from cruxtui.core.runs.store import RunStore

    variant = make_variant(official["sample_12"], [parse_spec("rename:anonymize")])  # type: ignore[index]
    vid = variant.id
    assert vid.startswith("sample_12~")
    _store_failing_run(
        official,
        vid,
        [
            (
                "[THOUGHT]\nx1 does not start with x2.\n[/THOUGHT]\n"
                "[ANSWER]\nassert f(...) == 'x'\n[/ANSWER]",
                "'x'",
                False,
            )
        ],
    )
    with RunStore() as store:
        run_id = store.runs()[0].id
        plain = cases_from_run(store, run_id, official)  # type: ignore[arg-type]
        made = cases_from_run(store, run_id, official, variants={vid: variant})  # type: ignore[arg-type]
    assert plain.cases == [] and "not in the open dataset" in plain.skipped[0]
    [case] = made.cases
    assert case.sample_id == vid and case.base_sample_id == "sample_12"
    assert case.code == variant.sample.code != official["sample_12"].code  # type: ignore[index]
    assert case.output == variant.sample.output and case.input == variant.sample.input
    assert [(p["name"], p["params"]) for p in case.perturbations] == [("rename", "anonymize")]
    assert case.prompt["text"].count(variant.sample.code.strip()) == 1  # the variant was asked
    assert case.trace is not None and case.trace.return_repr == variant.sample.output
    loaded = load_case(save_case(case, tmp_path))
    assert loaded == case and loaded.case_id.startswith(vid.replace(":", "-"))


def test_replay_sends_the_key_only_to_a_server_the_user_chose(
    scripted, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:  # noqa: ANN001
    """A case file names its server; the user's key must not go to whatever server a shared file
    names, only to one the user configured (here: $OPENAI_BASE_URL)."""
    server, _samples = scripted
    secret = "sk-test-secret-123"
    monkeypatch.setenv("OPENAI_API_KEY", secret)
    server.log.auth_headers.clear()
    code, _out = _replay_json(capsys, "gallery", "-n", "1")
    assert code == 0 and server.log.auth_headers
    assert not any(secret in h for h in server.log.auth_headers)

    monkeypatch.setenv("OPENAI_BASE_URL", server.url)
    server.log.auth_headers.clear()
    code, _out = _replay_json(capsys, "gallery", "-n", "1")
    assert code == 0 and all(secret in h for h in server.log.auth_headers)


def test_latest_failure_prefers_the_watched_run(official: object) -> None:
    from cruxtui.core.cases.build import latest_failure
    from cruxtui.core.models.prompts import TEMPLATE_VERSION
    from cruxtui.core.runs.store import Generation as RunGeneration
    from cruxtui.core.runs.store import RunConfig, RunStore

    older = _store_failing_run(
        official, "sample_0", [(COT_WRONG, "[(3, 1), (2, 3), (1, 1)]", False)]
    )
    with RunStore() as store:
        assert latest_failure(store, official, "sample_0").origin.startswith(f"run {older}")  # type: ignore[arg-type, union-attr]
        assert latest_failure(store, official, "sample_1") is None  # type: ignore[arg-type]
        # A run that passed everything is no failure, unless it is the run being watched.
        info = store.open_run(
            RunConfig(
                spec={"backend": "openai", "model": "good", "api": "chat"},
                task="output",
                mode="direct",
                style="chat",
                params={"n": 1},
                template_version=TEMPLATE_VERSION,
                dataset_digest=official.digest,
            )
        )  # type: ignore[attr-defined]
        store.add_generation(
            info.id,
            RunGeneration(
                sample_id="sample_0",
                index=0,
                raw="x",
                answer=official["sample_0"].output,  # type: ignore[index]
                kind="pass",
                passed=True,
                reason="",
            ),
        )
        assert latest_failure(store, official, "sample_0").model.model == "fake-model"  # type: ignore[arg-type, union-attr]
        watched = latest_failure(store, official, "sample_0", run_id=info.id)  # type: ignore[arg-type]
        assert watched is not None and watched.model.model == "good" and watched.failures == 0


async def test_s_saves_from_the_scored_generations_file(gallery: Path, official: object) -> None:
    """`cruxtui --generations FILE --task output`: `s` on a sample saves what its Sample screen
    lists, the released Code Llama answers with their verdicts."""
    from textual.widgets import Input

    from cruxtui.tui.app import CruxApp
    from cruxtui.tui.state import TuiOptions
    from tests.conftest import CODELLAMA_OUTPUT

    released = json.loads((CODELLAMA_OUTPUT / "generations.json").read_text())
    folder = gallery.parent / "codellama-7b_temp0.2_output"
    folder.mkdir()
    (folder / "generations.json").write_text(
        json.dumps({k: released[k] for k in ("sample_14", "sample_1")})
    )
    options = TuiOptions(generations=str(folder / "generations.json"), task="output")
    app = CruxApp(official, options)  # type: ignore[arg-type]
    async with app.run_test(size=TUI_SIZE) as pilot:
        await wait_for(pilot, lambda: app.state.scored is not None, what="the scored set")
        app.open_sample("sample_14")
        await pilot.pause()
        await _open_case_form(app, pilot)
        app.screen.query_one("#case-tags", Input).value = "whitespace"
        await pilot.press("ctrl+s")
        await wait_for(
            pilot, lambda: _saved(gallery, lambda c: c.sample_id == "sample_14"), what="the case"
        )
    [case] = _saved(gallery, lambda c: c.sample_id == "sample_14")
    assert [g.answer for g in case.generations] == released["sample_14"]
    assert case.failures == 10 and case.tags == ["whitespace"]
    assert case.model.backend == "replay" and case.model.model == "codellama-7b_temp0.2_output"
    assert "records no prompt" in case.origin


def test_replay_status_counts_failures_against_min_rate() -> None:
    from cruxtui.core.cases.replay import Attempt, ReplayReport

    model = ModelInfo("openai", "m")

    def report(fails: int, n: int, min_rate: float = 1.0) -> ReplayReport:
        attempts = [
            Attempt("r", "1", i >= fails, "pass" if i >= fails else "wrong", "") for i in range(n)
        ]
        return ReplayReport("c", "sample_0", model, model, n, min_rate, attempts)

    assert (report(5, 5).status, report(5, 5).summary) == ("reproduced", "reproduced 5/5")
    assert report(3, 5).status == "partly" and report(3, 5, min_rate=0.6).status == "reproduced"
    assert report(0, 5).status == "fixed"
    gone = ReplayReport(
        "c", "sample_0", model, model, 5, errors=["connection refused"], error_kind="connection"
    )
    assert gone.status == "unreachable" and gone.summary == "unreachable: connection refused"
    assert (
        ReplayReport("c", "s", model, model, 5, error_kind="auth", errors=["bad key"]).status
        == "error"
    )
    partial = report(2, 2)
    partial.n = 5
    assert partial.summary == "reproduced 2/2 (3 request(s) failed)"


async def test_s_saves_a_variant_made_on_the_perturb_screen(
    gallery: Path, official: object
) -> None:
    from textual.widgets import Input

    from cruxtui.core.perturb import make_variant, parse_spec
    from cruxtui.tui.app import CruxApp

    variant = make_variant(official["sample_12"], [parse_spec("rename:anonymize")])  # type: ignore[index]
    _store_failing_run(
        official, variant.id, [("[ANSWER]\nassert f(1) == 'x'\n[/ANSWER]", "'x'", False)]
    )
    app = CruxApp(official)  # type: ignore[arg-type]
    async with app.run_test(size=TUI_SIZE) as pilot:
        app.state.variants[variant.id] = variant  # as the Perturb screen registers it
        app.open_sample(variant.id)
        await pilot.pause()
        await _open_case_form(app, pilot)
        app.screen.query_one("#case-tags", Input).value = "renamed"
        await pilot.press("ctrl+s")
        await wait_for(
            pilot, lambda: _saved(gallery, lambda c: c.sample_id == variant.id), what="the case"
        )
    [case] = _saved(gallery, lambda c: c.sample_id == variant.id)
    assert case.base_sample_id == "sample_12" and case.code == variant.sample.code
    assert [p["name"] for p in case.perturbations] == ["rename"] and case.tags == ["renamed"]
