"""Gallery export: cases as one Markdown file or ONE self-contained HTML page, grouped by tag.

The HTML page is meant to be mailed, attached to a paper's artifact or opened from a USB stick, so
it has no external references: styles, the Pygments highlighting and the small tag filter script
are all inline. Cases are grouped by their first tag (the one the curator put first); the filter
bar shows every tag, and picking one shows the cases carrying it, whatever their group.
"""

from __future__ import annotations

import html
import json
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexers import PythonLexer

from cruxtui.core.cases.case_file import FailureCase

UNTAGGED = "untagged"


def group_by_tag(cases: Iterable[FailureCase]) -> list[tuple[str, list[FailureCase]]]:
    """Cases under their first tag, groups in name order with `untagged` last."""
    groups: dict[str, list[FailureCase]] = {}
    for case in cases:
        groups.setdefault(case.tags[0] if case.tags else UNTAGGED, []).append(case)
    order = sorted(groups, key=lambda t: (t == UNTAGGED, t.lower()))
    return [(t, sorted(groups[t], key=lambda c: c.name)) for t in order]


def all_tags(cases: Iterable[FailureCase]) -> list[str]:
    return sorted({t for c in cases for t in c.tags}, key=str.lower)


@dataclass(frozen=True)
class Divergence:
    """The first divergence of a case's reasoning, in the terms the gallery shows."""

    claim: str
    claimed: str | None
    true: str | None
    reasoning_step: int | None
    trace_step: int | None
    line: int | None

    @classmethod
    def of(cls, data: dict[str, Any] | None) -> Divergence | None:
        if not data:
            return None

        def pick(*keys: str) -> Any:
            return next((data[k] for k in keys if data.get(k) is not None), None)

        def text(*keys: str) -> str | None:
            value = pick(*keys)
            return None if value is None else str(value)

        def number(*keys: str) -> int | None:
            value = pick(*keys)
            return value if isinstance(value, int) and not isinstance(value, bool) else None

        return cls(
            claim=text("claim", "claim_text", "text") or "",
            claimed=text("claimed", "claimed_value"),
            true=text("true", "true_value", "actual"),
            reasoning_step=number("reasoning_step", "reasoning_index", "step"),
            trace_step=number("trace_step", "trace_index"),
            line=number("line", "source_line"),
        )

    def sentence(self) -> str:
        where = (
            f"reasoning step {self.reasoning_step}"
            if self.reasoning_step is not None
            else "the reasoning"
        )
        truth = f"; the real execution has {self.true}" if self.true is not None else ""
        claimed = f" (claims {self.claimed})" if self.claimed is not None else ""
        at = f" at trace step {self.trace_step}" if self.trace_step is not None else ""
        if self.line is not None:
            at += f" (line {self.line})"
        return f"First divergence in {where}: “{self.claim}”{claimed}{truth}{at}."


def split_at_claim(raw: str, claim: str) -> tuple[str, str, str] | None:
    """`raw` split around the first occurrence of the claim (whitespace-insensitive ends)."""
    needle = claim.strip()
    if not needle:
        return None
    at = raw.find(needle)
    if at < 0:
        return None
    return raw[:at], needle, raw[at + len(needle) :]


def shown_generation(case: FailureCase) -> int | None:
    """Which response the gallery shows as 'the reasoning': the first failing one."""
    for i, g in enumerate(case.generations):
        if not g.passed:
            return i
    return 0 if case.generations else None


def truth_line(case: FailureCase) -> str:
    return f"assert f({case.input}) == {case.output}"


def verdict_label(passed: bool, kind: str, reason: str) -> str:
    """`pass`, `wrong` (the truth is shown beside the answer), or the kind with its reason."""
    if passed:
        return "pass"
    return "wrong" if kind == "wrong" else f"{kind}: {reason}"


def answer_counts(case: FailureCase) -> list[tuple[str, int, bool, str]]:
    """Distinct answers, most frequent first: (answer, count, passed, verdict label)."""
    counts = Counter(g.answer if g.answer is not None else "" for g in case.generations)
    first: dict[str, tuple[bool, str]] = {}
    for g in case.generations:
        key = g.answer if g.answer is not None else ""
        reason = g.reason if g.answer is not None else (g.extraction_error or g.reason)
        first.setdefault(key, (g.passed, verdict_label(g.passed, g.kind, reason)))
    return [(a, n, *first[a]) for a, n in counts.most_common()]


def model_line(case: FailureCase) -> str:
    m, p = case.model, case.sampling
    where = f" @ {m.base_url}" if m.base_url else ""
    seed = f", seed {p.seed}" if p.seed is not None else ""
    return f"{m.model} ({m.backend}/{m.api}{where}), temperature {p.temperature}, top_p {p.top_p}{seed}"


# Markdown ---------------------------------------------------------------------------------------
def _fence(text: str, lang: str = "") -> str:
    """A code fence longer than any backtick run inside the text."""
    run, best = 0, 0
    for ch in text:
        run = run + 1 if ch == "`" else 0
        best = max(best, run)
    fence = "`" * max(3, best + 1)
    return f"{fence}{lang}\n{text.rstrip()}\n{fence}"


def _md_inline(text: str) -> str:
    """A code span: its content is never Markdown nor HTML, whatever it holds (the delimiter is
    a backtick run longer than any inside; line breaks become spaces)."""
    text = " ".join(text.splitlines())
    run, best = 0, 0
    for ch in text:
        run = run + 1 if ch == "`" else 0
        best = max(best, run)
    ticks = "`" * (best + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{ticks}{pad}{text}{pad}{ticks}"


_MD_SPECIAL = frozenset("\\`*_[]|~")
"""What can start markup in the middle of a line (links need `[`, images `![`)."""


def _md_text(text: object) -> str:
    """Untrusted text as Markdown that shows exactly that text: no markup, no raw HTML, one line
    (`<`, `>`, `&` as entities; Markdown punctuation backslash-escaped)."""
    out = []
    for ch in str(text):
        if ch == "&":
            out.append("&amp;")
        elif ch == "<":
            out.append("&lt;")
        elif ch == ">":
            out.append("&gt;")
        elif ch in "\r\n\x0b\x0c\x85\u2028\u2029":
            out.append(" ")
        elif ch in _MD_SPECIAL:
            out.append("\\" + ch)
        else:
            out.append(ch)
    return "".join(out)


def _md_line(text: str) -> str:
    """`_md_text` for text that starts a line: a leading `#`, `-`, `+`, `=` or `1.` would make
    a heading, a list or a rule of it."""
    escaped = _md_text(text)
    stripped = escaped.lstrip(" ")
    lead = escaped[: len(escaped) - len(stripped)]
    digits = len(stripped) - len(stripped.lstrip("0123456789"))
    if stripped[:1] in ("#", "-", "+", "=", ">"):
        return f"{lead}\\{stripped}"
    if digits and stripped[digits : digits + 1] in (".", ")"):
        return f"{lead}{stripped[:digits]}\\{stripped[digits:]}"
    return escaped


def export_markdown(cases: Sequence[FailureCase], title: str = "cruxtui failure gallery") -> str:
    groups = group_by_tag(cases)
    out = [
        f"# {_md_text(title)}",
        "",
        f"{len(cases)} case(s), grouped by first tag. "
        "In the reasoning, ⟪…⟫ marks the first claim that contradicts the real execution.",
        "",
    ]
    for tag, members in groups:
        out.append(f"- [{_md_text(tag)}](#{_anchor('tag-' + tag)}) ({len(members)})")
    for tag, members in groups:
        out += ["", f'<a id="{_anchor("tag-" + tag)}"></a>', f"## {_md_text(tag)}", ""]
        for case in members:
            out += _md_case(case)
    return "\n".join(out).rstrip() + "\n"


def _md_case(case: FailureCase) -> list[str]:
    out = [f"### {_md_text(case.name)}", ""]
    out.append(
        f"- **Sample:** {_md_inline(case.sample_id)} · task **{_md_text(case.task)}** · mode "
        f"**{_md_text(case.mode)}** (template {_md_text(case.template_version)})"
    )
    out.append(f"- **Model:** {_md_text(model_line(case))}")
    out.append(f"- **Failed:** {_md_text(case.failures)} of {len(case.generations)} response(s)")
    if case.tags:
        out.append("- **Tags:** " + ", ".join(_md_inline(t) for t in case.tags))
    if case.perturbations:
        chain = " → ".join(_md_text(_chain_step(p)) for p in case.perturbations)
        out.append(f"- **Variant of** {_md_inline(case.base_sample_id)}: {chain}")
    if case.trace is not None:
        t = case.trace
        end = t.return_repr if t.exception is None else f"raises {t.exception}"
        out.append(f"- **Real execution:** {t.steps} steps, returns {_md_inline(str(end))}")
    if case.note:
        out += ["", *(f"> {_md_line(line)}" for line in case.note.splitlines())]
    out += ["", _fence(case.code, "python"), "", "**Truth:** " + _md_inline(truth_line(case)), ""]
    out += ["| answer | count | verdict |", "|---|---:|---|"]
    for answer, count, _passed, verdict in answer_counts(case):
        cell = _md_inline(answer) if answer else "*(none extracted)*"
        out.append(f"| {_md_cell(cell)} | {count} | {_md_text(verdict)} |")
    gi = shown_generation(case)
    if gi is not None:
        raw = case.generations[gi].chain
        div = Divergence.of(case.first_divergence)
        parts = split_at_claim(raw, div.claim) if div else None
        shown = f"{parts[0]}⟪{parts[1]}⟫{parts[2]}" if parts else raw
        out += ["", f"**Reasoning** (response {gi + 1}):", "", _fence(shown or "(empty)", "text")]
        if div:
            out += ["", f"**{_md_text(div.sentence())}**"]
    out.append("")
    return out


def _md_cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _chain_step(step: dict[str, Any]) -> str:
    """A transform step as typed on the command line: `flip-compare:1` (seed shown when set)."""
    name = str(step.get("name", "?"))
    params = step.get("params")
    text = name
    if params:
        text += (
            f":{params}" if isinstance(params, str) else f":{json.dumps(params, sort_keys=True)}"
        )
    return f"{text} (seed {step['seed']})" if step.get("seed") else text


def _anchor(text: str) -> str:
    return "".join(ch if ch.isalnum() or ch in "-_" else "-" for ch in text.lower())


# HTML -------------------------------------------------------------------------------------------
_CSS = """
body { font-family: system-ui, sans-serif; margin: 0 auto; max-width: 70rem; padding: 1rem 2rem;
       color: #1f2328; background: #fff; }
h1 { margin-bottom: .2rem; }
.filters { position: sticky; top: 0; background: #fff; padding: .5rem 0; border-bottom: 1px solid #d0d7de; }
.filters button { margin: .15rem; border: 1px solid #d0d7de; border-radius: 1rem; background: #f6f8fa;
                  padding: .2rem .7rem; cursor: pointer; }
.filters button.active { background: #0969da; color: #fff; border-color: #0969da; }
section.group > h2 { border-bottom: 2px solid #d0d7de; padding-bottom: .2rem; }
article.case { border: 1px solid #d0d7de; border-radius: .5rem; padding: .5rem 1rem; margin: 1rem 0; }
article.case h3 { margin: .3rem 0; font-family: ui-monospace, monospace; font-size: 1rem; }
.meta { color: #57606a; font-size: .9rem; }
.tag { display: inline-block; background: #ddf4ff; color: #0550ae; border-radius: 1rem;
       padding: 0 .5rem; margin-right: .25rem; font-size: .85rem; }
.note { border-left: 3px solid #d4a72c; padding-left: .7rem; color: #3d3d3d; white-space: pre-line; }
.cols { display: grid; grid-template-columns: minmax(0, 1fr) minmax(0, 1fr); gap: 1rem; }
pre, code { font-family: ui-monospace, SFMono-Regular, Menlo, monospace; font-size: .85rem; }
pre.reasoning { white-space: pre-wrap; background: #f6f8fa; padding: .6rem; border-radius: .3rem; }
mark.divergence { background: #ffd8d3; outline: 1px solid #cf222e; }
table.answers { border-collapse: collapse; }
table.answers td, table.answers th { border: 1px solid #d0d7de; padding: .15rem .5rem; text-align: left; }
td.pass { color: #1a7f37; } td.fail { color: #cf222e; }
.truth { font-weight: 600; }
.code .hll { background-color: #fff3b0; }
"""

_JS = """
(function () {
  var buttons = document.querySelectorAll('.filters button');
  function show(tag) {
    buttons.forEach(function (b) { b.classList.toggle('active', b.dataset.tag === tag); });
    document.querySelectorAll('article.case').forEach(function (a) {
      var tags = (a.dataset.tags || '').split(' ');
      a.hidden = !(tag === '' || tags.indexOf(tag) >= 0);
    });
    document.querySelectorAll('section.group').forEach(function (s) {
      s.hidden = s.querySelectorAll('article.case:not([hidden])').length === 0;
    });
  }
  buttons.forEach(function (b) { b.addEventListener('click', function () { show(b.dataset.tag); }); });
  var wanted = decodeURIComponent((location.hash.match(/^#tag=(.*)$/) || [])[1] || '');
  show(wanted);
})();
"""


def export_html(cases: Sequence[FailureCase], title: str = "cruxtui failure gallery") -> str:
    esc = html.escape
    formatter: HtmlFormatter[str] = HtmlFormatter(cssclass="code", style="default")
    tags = all_tags(cases)
    buttons = ['<button type="button" data-tag="">all</button>'] + [
        f'<button type="button" data-tag="{esc(t)}">{esc(t)}</button>' for t in tags
    ]
    body = [
        f"<h1>{esc(title)}</h1>",
        f'<p class="meta">{len(cases)} case(s) grouped by first tag; pick a tag to see every case '
        "carrying it. In the reasoning, the first claim that contradicts the real execution is "
        '<mark class="divergence">marked</mark>.</p>',
        f'<nav class="filters">{"".join(buttons)}</nav>',
    ]
    for tag, members in group_by_tag(cases):
        body.append(
            f'<section class="group" id="{esc(_anchor("tag-" + tag))}" data-group="{esc(tag)}">'
        )
        body.append(f'<h2>{esc(tag)} <small class="meta">({len(members)})</small></h2>')
        body += [_html_case(c, formatter) for c in members]
        body.append("</section>")
    style = _CSS + formatter.get_style_defs(".code")
    return (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f'<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{esc(title)}</title>\n<style>{style}</style>\n</head>\n<body>\n"
        + "\n".join(body)
        + f"\n<script>{_JS}</script>\n</body>\n</html>\n"
    )


def _html_case(case: FailureCase, formatter: HtmlFormatter[str]) -> str:
    esc = html.escape
    div = Divergence.of(case.first_divergence)
    if div and div.line:
        formatter = HtmlFormatter(cssclass="code", style="default", hl_lines=[div.line])
    code_html = highlight(case.code, PythonLexer(), formatter)
    chips = "".join(f'<span class="tag">{esc(t)}</span>' for t in case.tags)
    meta = [
        f"sample <code>{esc(case.sample_id)}</code> · task <b>{esc(case.task)}</b> · mode "
        f"<b>{esc(case.mode)}</b> (template {esc(case.template_version)})",
        f"model {esc(model_line(case))}",
        f"failed {case.failures} of {len(case.generations)} response(s) · saved {esc(case.created)}",
    ]
    if case.perturbations:
        chain = " → ".join(esc(_chain_step(p)) for p in case.perturbations)
        meta.append(f"variant of <code>{esc(case.base_sample_id)}</code>: {chain}")
    if case.trace is not None:
        t = case.trace
        end = (
            f"returns <code>{esc(str(t.return_repr))}</code>"
            if t.exception is None
            else (f"raises <code>{esc(t.exception)}</code>")
        )
        meta.append(f"real execution: {t.steps} steps, {end}")
    rows = []
    for answer, count, passed, verdict in answer_counts(case):
        cell = f"<code>{esc(answer)}</code>" if answer else "<i>(none extracted)</i>"
        rows.append(
            f'<tr><td>{cell}</td><td>{count}</td><td class="{"pass" if passed else "fail"}">'
            f"{esc(verdict)}</td></tr>"
        )
    reasoning = ""
    gi = shown_generation(case)
    if gi is not None:
        raw = case.generations[gi].chain
        parts = split_at_claim(raw, div.claim) if div else None
        if parts:
            title = esc(div.sentence()) if div else ""
            text = (
                f'{esc(parts[0])}<mark class="divergence" title="{title}">{esc(parts[1])}'
                f"</mark>{esc(parts[2])}"
            )
        else:
            text = esc(raw) or "<i>(empty)</i>"
        reasoning = f'<h4>Reasoning (response {gi + 1})</h4><pre class="reasoning">{text}</pre>'
        if div:
            reasoning += f'<p class="divergence-note">{esc(div.sentence())}</p>'
    note = f'<p class="note">{esc(case.note)}</p>' if case.note else ""
    return (
        f'<article class="case" id="{esc(case.name)}" data-case="{esc(case.name)}" '
        f'data-tags="{esc(" ".join(case.tags))}">'
        f"<h3>{esc(case.name)}</h3><div>{chips}</div>"
        f'<p class="meta">{"<br>".join(meta)}</p>{note}'
        f'<div class="cols"><div>{code_html}<p class="truth"><code>{esc(truth_line(case))}</code></p></div>'
        f'<div><table class="answers"><tr><th>answer</th><th>n</th><th>verdict</th></tr>'
        f"{''.join(rows)}</table>{reasoning}</div></div>"
        "</article>"
    )
