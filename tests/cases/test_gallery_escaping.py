"""The Markdown gallery shows untrusted text as text: no raw HTML, no markup, whatever a case holds.

Rendered with a real CommonMark renderer (markdown-it-py, which Rich already depends on), as a
site would show the gallery.
"""

from __future__ import annotations

import pytest

from cruxtui.core.cases.gallery import export_markdown
from tests.cases.test_cases import make_case

markdown_it = pytest.importorskip("markdown_it")

# payload -> what its HTML would be if the gallery let it through as markup
PAYLOADS = {
    "<script>alert(1)</script>": "<script",
    '<img src=x onerror="alert(2)">': "<img",
    "[click](javascript:alert(3))": 'href="javascript',
    "**bold** _it_ ~~x~~": "<strong>bold</strong>",
    "_it_ here": "<em>it</em>",
    "# not a heading": "<h1>not a heading",
    "1. not a list": "<ol",
    "- not an item": "<li>not an item",
}


@pytest.mark.parametrize("payload", list(PAYLOADS))
def test_model_name_note_and_tags_render_as_plain_text(payload: str) -> None:
    case = make_case(model=payload, note=f"{payload}\n{payload}", tags=[payload])
    html = markdown_it.MarkdownIt("commonmark").enable("table").render(export_markdown([case]))
    assert PAYLOADS[payload] not in html, html
    if payload.startswith("<script"):
        assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html


def test_code_spans_hold_any_backtick_run() -> None:
    case = make_case(raw="[ANSWER]\nassert f(1) == '``<b>x</b>``'\n[/ANSWER]")
    html = markdown_it.MarkdownIt("commonmark").enable("table").render(export_markdown([case]))
    assert "<b>x</b>" not in html
