"""Claims in trace tables: a markdown table (`| i | nums[i] | out |`) or an arrow table
(`line -> line.center(5)` over rows `'bc' -> ' bc  '`).

The header says what each column is: a variable of `f` (each row binds it), an expression over
the variables or over the other columns (`nums[a]`, `index('r')`, `line.center(5)`: each row
states its value; a column that is not a variable of `f` is written into the expression as the
row's value), "`x` after ..." or "`x` so far" (the variable once the row's work is done), or a
question (`i == 4?`, answered yes/no). Anything else is not read. Each row is one reasoning step.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

from cruxtui.core.reasoning.claim_types import BINDING, CONDITION, EXPRESSION, Claim
from cruxtui.core.reasoning.code_facts import CodeFacts
from cruxtui.core.reasoning.literal_scan import is_literal
from cruxtui.core.reasoning.prose_claims import resolve_expression
from cruxtui.core.util import safe_ast

_SEPARATOR = re.compile(r"^\s*\|?\s*:?-{2,}:?\s*(?:\|\s*:?-{2,}:?\s*)*\|?\s*$")
_ARROW = re.compile(r"\s+(?:->|→|=>)\s+")
_AFTER = re.compile(
    r"^`?([A-Za-z_]\w*)`?\s+(?:after|so\s+far|now|afterwards|then|at\s+the\s+end)\b", re.I
)
_YES = {"yes": "True", "true": "True", "y": "True", "no": "False", "false": "False", "n": "False"}


@dataclass
class Column:
    kind: str  # "name" | "expr" | "after" | "question"
    name: str


def _column(header: str, facts: CodeFacts, names_here: set[str]) -> Column | None:
    h = header.strip().strip("`*").strip()
    if not h:
        return None
    question = h.endswith("?")
    h = h.rstrip("?").strip().strip("`")
    if re.fullmatch(r"[A-Za-z_]\w*", h) and h in facts.names and not question:
        return Column("name", h)
    words = re.match(r"`?([A-Za-z_]\w*)`?\s+(?:at|before|when|in|on|for|during)\s+([a-z ]+)$", h)
    if (
        words
        and words.group(1) in facts.names
        and not question
        and words.group(2).strip() not in facts.names  # `v in values`: a test, not "v in ..."
    ):
        return Column("name", words.group(1))  # "i at the check", "x before the if"
    if (m := _AFTER.match(h)) and m.group(1) in facts.names:
        return Column("after", m.group(1))
    try:
        safe_ast.parse(h, mode="eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    return Column("question" if question else "expr", h)


def _cells(line: str) -> list[tuple[int, str]]:
    """(offset, text) of each cell of a `| a | b |` row."""
    out = []
    inner_start = line.index("|") + 1 if line.lstrip().startswith("|") else 0
    pos = inner_start
    for part in line[inner_start:].rstrip().rstrip("|").split("|"):
        out.append((pos + len(part) - len(part.lstrip()), part.strip()))
        pos += len(part) + 1
    return out


def table_rows(text: str, facts: CodeFacts) -> dict[int, list[Claim]]:
    """Claims per table row, keyed by the row's offset in `text`."""
    lines = []
    pos = 0
    for raw in text.splitlines(keepends=True):
        lines.append((pos, raw.rstrip("\r\n")))
        pos += len(raw)
    out: dict[int, list[Claim]] = {}
    i = 0
    while i < len(lines):
        start, line = lines[i]
        if "|" in line and i + 1 < len(lines) and _SEPARATOR.match(lines[i + 1][1]):
            headers = [c for _, c in _cells(line)]
            j = i + 2
            while j < len(lines) and "|" in lines[j][1]:
                row_start, row = lines[j]
                cells = [(row_start + off, cell) for off, cell in _cells(row)]
                claims = _row_claims(headers, cells, facts)
                if claims:
                    out[row_start] = claims
                j += 1
            i = j
            continue
        arrow = _ARROW.split(line.strip())
        if len(arrow) == 2 and not is_literal(arrow[0]) and i + 1 < len(lines):
            headers = arrow
            j = i + 1
            while j < len(lines):
                row_start, row = lines[j]
                parts = list(_ARROW.finditer(row))
                if len(parts) != 1:
                    break
                left, right = row[: parts[0].start()], row[parts[0].end() :]
                lead = len(left) - len(left.lstrip())
                cells = [
                    (row_start + lead, left.strip()),
                    (row_start + parts[0].end(), right.strip()),
                ]
                if not is_literal(cells[0][1]):
                    break
                claims = _row_claims(headers, cells, facts)
                if claims:
                    out[row_start] = claims
                j += 1
            if j > i + 1:
                i = j
                continue
        i += 1
    return out


_VALUE_HEADER = re.compile(r"(?:value|result|gives|evaluates\s+to|=|->|→)", re.I)
_SUBJECT_HEADER = re.compile(
    r"(?:variable|var|name|expression|expr|check|condition|test|call|what|quantity|item)s?", re.I
)
_REMARK = re.compile(r"\s*(?:\(.*\)|(?:→|->|=>)\s*[A-Za-z].*)$")


def _key_value(headers: list[str]) -> tuple[int, int] | None:
    """A table that lists subjects and their values (`| variable | value |`, `| check | value |`,
    `| step | expression | value |`): the columns of the subject and of the value."""
    names = [h.strip().strip("`*").strip() for h in headers]
    values = [i for i, h in enumerate(names) if _VALUE_HEADER.fullmatch(h)]
    subjects = [i for i, h in enumerate(names) if _SUBJECT_HEADER.fullmatch(h)]
    if len(values) != 1 or len(subjects) != 1:
        return None
    return subjects[0], values[0]


def _stated_value(cell: str) -> str | None:
    """The value a value cell states: a literal, bare or with a remark after it ("0 (counting
    from the right)", "False → exit"), or the result of a worked expression ("1 - 0 - 1 = 0")."""
    value = cell.strip().strip("`").strip()
    if is_literal(value):
        return value
    bare = _REMARK.sub("", value).strip().strip("`")
    if bare != value and is_literal(bare):
        return bare
    if "=" in value and not re.search(r"[=!<>]=", value):
        last = value.rsplit("=", 1)[1].strip().strip("`")
        work = value.rsplit("=", 1)[0]
        if is_literal(last) and _literals_only(work):
            return last
    return None


def _literals_only(src: str) -> bool:
    try:
        tree = safe_ast.parse(src.strip(), mode="eval")
    except SyntaxError:
        return False
    return not any(isinstance(n, ast.Name | ast.Call | ast.Attribute) for n in ast.walk(tree))


def _key_value_claim(
    subject: tuple[int, str], value: tuple[int, str], facts: CodeFacts
) -> Claim | None:
    """A row of a subject/value table: the subject cell names a variable of f (also as
    `name = expr`, the name being what is stated) or an expression over the frame (its worked
    form after `=` or `→` dropped: "len(old) = len('va')", "m >= index → 0 >= 1")."""
    offset, cell = value
    stated = _stated_value(cell)
    if stated is None:
        return None
    src = subject[1].strip().strip("`").strip()
    src = re.split(r"\s+(?:→|->|=>)\s+", src)[0].strip()
    m = re.fullmatch(r"([A-Za-z_]\w*)\s*=(?!=).*", src)
    if m and m.group(1) in facts.names:
        src = m.group(1)
    elif re.search(r"(?<![=!<>])=(?!=)", src):
        src = re.split(r"(?<![=!<>])=(?!=)", src)[0].strip()
    end = offset + len(cell)
    if re.fullmatch(r"[A-Za-z_]\w*", src):
        if src not in facts.names:
            return None
        return Claim(BINDING, cell, stated, name=src, start=offset, end=end)
    expr = resolve_expression(src, facts)
    if expr is None:
        return None
    if stated in ("True", "False"):
        return Claim(CONDITION, cell, stated, name=expr, condition=expr, start=offset, end=end)
    return Claim(EXPRESSION, cell, stated, name=expr, start=offset, end=end)


def _row_claims(headers: list[str], cells: list[tuple[int, str]], facts: CodeFacts) -> list[Claim]:
    if len(cells) != len(headers):
        return []
    if (kv := _key_value(headers)) is not None:
        claim = _key_value_claim(cells[kv[0]], cells[kv[1]], facts)
        return [claim] if claim is not None else []
    row_values: dict[str, str] = {}
    columns = []
    for header, (_, cell) in zip(headers, cells, strict=True):
        col = _column(header, facts, set())
        columns.append(col)
        h = header.strip().strip("`*").strip()
        if col is not None and re.fullmatch(r"[A-Za-z_]\w*", h) and is_literal(cell):
            row_values[h] = cell
    claims: list[Claim] = []
    for col, (offset, cell) in zip(columns, cells, strict=True):
        if col is None or not cell:
            continue
        value = cell.strip("`")
        if col.kind == "question":
            value = _YES.get(value.lower().split()[0] if value.split() else "", "")
            if not value:
                continue
        elif not is_literal(value):
            stated = _stated_value(cell)  # "True (1 is in bag)": the value, a remark after it
            if stated is None:
                continue
            value = stated
        end = offset + len(cell)
        if col.kind == "name":
            claims.append(Claim(BINDING, cell, value, name=col.name, start=offset, end=end))
        elif col.kind == "after":
            claims.append(
                Claim(BINDING, cell, value, name=col.name, change=True, start=offset, end=end)
            )
        else:
            expr = _substituted(col.name, row_values, facts)
            if expr is None:
                continue
            kind = CONDITION if col.kind == "question" else EXPRESSION
            claim = Claim(kind, cell, value, name=expr, start=offset, end=end)
            if kind == CONDITION:
                claim.name, claim.condition = expr, expr
            claims.append(claim)
    return claims


def _substituted(expr: str, row: dict[str, str], facts: CodeFacts) -> str | None:
    """The column's expression over f's frame, with the row's values written in for the names
    that are other columns but not variables of f."""
    try:
        tree = safe_ast.parse(expr, mode="eval")
    except SyntaxError:
        return None

    class Fill(ast.NodeTransformer):
        def visit_Name(self, node: ast.Name) -> ast.AST:
            if node.id not in facts.names and node.id in row:
                parsed = safe_ast.parse(row[node.id], mode="eval").body
                return ast.copy_location(parsed, node)
            return node

    try:
        filled = ast.unparse(Fill().visit(tree))
    except RecursionError:
        return None
    return resolve_expression(filled, facts)
