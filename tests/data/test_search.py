"""SampleIndex: substring search, fuzzy matches for typos, and the `method:` / `type:` filters.

Expected results are computed independently in the test (plain `in`, `ast`, output text), not
with the code under test.
"""

from __future__ import annotations

import ast

import pytest

from cruxtui.core.data.dataset import Dataset, load_dataset, starter_path
from cruxtui.core.data.search import Query, SampleIndex, parse_query


@pytest.fixture(scope="module")
def index(official: Dataset) -> SampleIndex:
    return SampleIndex(official.samples)


def calls(code: str, name: str) -> bool:
    """True if `code` calls `<something>.name(...)` (independent of cruxtui's method finder)."""
    return any(
        isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == name
        for n in ast.walk(ast.parse(code))
    )


def containing(official: Dataset, word: str) -> list[str]:
    word = word.lower()
    return [
        s.id
        for s in official
        if any(word in part.lower() for part in (s.id, s.code, s.input, s.output))
    ]


def test_empty_query_lists_everything_in_order(index: SampleIndex, official: Dataset) -> None:
    assert index.search("") == [s.id for s in official]
    assert index.search("   ") == [s.id for s in official]


@pytest.mark.parametrize(
    "word", ["rfind", "removeprefix", "partition", "sample_7", "'abc'", "True"]
)
def test_exact_word_finds_exactly_the_samples_containing_it(
    index: SampleIndex, official: Dataset, word: str
) -> None:
    expected = containing(official, word)
    assert expected, f"{word!r} occurs in the benchmark"
    assert index.search(word) == expected  # all score 100: dataset order kept


def test_search_is_case_insensitive(index: SampleIndex) -> None:
    assert index.search("RFind") == index.search("rfind")


def test_every_word_must_match(index: SampleIndex, official: Dataset) -> None:
    both = index.search("rfind partition")
    expected = [i for i in containing(official, "rfind") if i in containing(official, "partition")]
    assert both == expected
    assert len(both) < len(index.search("rfind"))


def test_fuzzy_search_catches_a_typo(index: SampleIndex, official: Dataset) -> None:
    rfind = [s.id for s in official if calls(s.code, "rfind")]
    found = index.search("rfnid")
    assert found, "a typo still finds something"
    assert set(rfind) <= set(found)
    assert set(found[: len(rfind)]) == set(rfind)  # the real rfind samples rank first


def test_fuzzy_search_catches_a_dropped_letter(index: SampleIndex, official: Dataset) -> None:
    removeprefix = {s.id for s in official if calls(s.code, "removeprefix")}
    assert removeprefix
    assert removeprefix <= set(index.search("removeprefx"))


def test_short_words_are_never_fuzzy(index: SampleIndex) -> None:
    assert index.search("qzj") == []


def test_method_filter(index: SampleIndex, official: Dataset) -> None:
    expected = [s.id for s in official if calls(s.code, "pop")]
    assert expected
    assert index.search("method:pop") == expected
    assert index.search("m:pop") == expected
    assert index.search("", methods=["pop"]) == expected


def test_two_method_filters_must_both_hold(index: SampleIndex, official: Dataset) -> None:
    expected = [s.id for s in official if calls(s.code, "split") and calls(s.code, "join")]
    assert expected
    assert index.search("method:split method:join") == expected
    assert index.search("method:join", methods=["split"]) == expected


def test_type_filter(index: SampleIndex, official: Dataset) -> None:
    bools = [s.id for s in official if s.output in ("True", "False")]
    assert bools
    assert index.search("type:bool") == bools
    assert index.search("TYPE:Bool") == bools
    assert index.search("", types=["bool"]) == bools
    dicts = [s.id for s in official if isinstance(ast.literal_eval(s.output), dict)]
    assert index.search("type:dict") == dicts


def test_filters_combine_with_words(index: SampleIndex, official: Dataset) -> None:
    expected = [
        s.id
        for s in official
        if calls(s.code, "rfind") and s.output.startswith(("'", '"')) and "text" in s.code
    ]
    assert index.search("text type:str method:rfind") == expected


def test_unknown_filter_values_match_nothing(index: SampleIndex) -> None:
    assert index.search("method:nosuchmethod") == []
    assert index.search("type:frozenset rfind") == []


def test_parse_query() -> None:
    assert parse_query("Foo m:rfind type:STR bar method:pop") == Query(
        words=("foo", "bar"), methods=("rfind", "pop"), types=("str",)
    )
    # a colon inside a word that is not a filter stays a word
    assert parse_query("d[k]: x:") == Query(words=("d[k]:", "x:"), methods=(), types=())


def test_search_on_the_starter_set() -> None:
    starter = load_dataset(starter_path())
    idx = SampleIndex(starter.samples)
    expected = [s.id for s in starter if calls(s.code, "rfind")]
    assert expected
    assert idx.search("method:rfind") == expected
    assert set(expected) <= set(idx.search("rfnid"))
