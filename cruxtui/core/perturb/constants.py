"""Transforms of constants in the code: a number in a comparison or `range(...)`, a string literal.

These probe the paper's observation that models misjudge comparisons such as `6173 < 1000` and
small perturbations of them; the output is re-derived by executing the variant.
"""

from __future__ import annotations

from cruxtui.core.perturb.edits import (
    NUMBER_OPS,
    STRING_OPS,
    edit_number,
    edit_text,
    string_literal,
    text_value,
)
from cruxtui.core.perturb.sites import code_sites
from cruxtui.core.perturb.transform import (
    Choices,
    Subject,
    Transform,
    code_of,
    parse_site_params,
    pick_site,
    register,
    replaced,
)


def _const(subject: Subject, params: str, choices: Choices) -> tuple[Subject, str]:
    site, op = parse_site_params(params, NUMBER_OPS)
    found = code_sites(subject.code)
    node = pick_site(found.constants, site, choices, "integer constant in a comparison or range()")
    new = edit_number(node, op, choices)
    code = replaced(found.module, node, new).code
    return Subject(code, subject.input), f"constant {code_of(node)} -> {code_of(new)}"


def _string(subject: Subject, params: str, choices: Choices) -> tuple[Subject, str]:
    site, op = parse_site_params(params, STRING_OPS)
    found = code_sites(subject.code)
    node = pick_site(found.strings, site, choices, "string literal")
    new = string_literal(edit_text(text_value(node), op, choices), node)
    code = replaced(found.module, node, new).code
    return Subject(code, subject.input), f"string {node.value} -> {new.value}"


register(
    Transform(
        "const",
        False,
        "change an integer constant in a comparison or range()",
        "[N][,OP]: N-th such constant; OP one of +1, -1, drop (a digit), digit (replace one), "
        "=VALUE (e.g. const:1,=1000); default: the seed picks",
        _const,
    )
)
register(
    Transform(
        "string",
        False,
        "change one character of a string literal in the code",
        "[N][,OP]: N-th string literal; OP one of replace, insert, delete; default: the seed picks",
        _string,
    )
)
