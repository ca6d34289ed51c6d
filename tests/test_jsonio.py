"""Strict JSON reading (jsonio.parse_json and friends): positions, fields, BOM, depth."""

from __future__ import annotations

import pytest

from ragrail.errors import InputError
from ragrail.jsonio import json_array_items, json_path_at, parse_json


@pytest.mark.parametrize(
    ("text", "path"),
    [
        ('{"a": X}', "a"),
        ('{"a": {"b": [1, 2, X]}}', "a.b.2"),
        ('[{"a": 1}, {"b": X}]', "1.b"),
        ('{"a": [1, {"k": 2}], "b": X}', "b"),
        ('{"a,b": {"c:d": X}}', "a,b.c:d"),
        ('{"q\\"x": [X]}', 'q"x.0'),
        ('{"s": "}]{[", "t": X}', "t"),
        ("X", "(top level)"),
    ],
)
def test_json_path_at_names_the_field_at_an_offset(text, path):
    assert json_path_at(text, text.index("X")) == path


@pytest.mark.parametrize(
    ("text", "where", "message"),
    [
        ('{"score": NaN}', "f.json:1:11", "field 'score': NaN is not valid JSON"),
        ('{"s": "NaN", "x": [\n  1,\n  -Infinity]}', "f.json:3:3", "field 'x.1': -Infinity"),
        ("[Infinity]", "f.json:1:2", "field '0': Infinity"),
        ('{"a": 1,}', "f.json:1:9", "invalid JSON"),
        ("[" * 50_000 + "]" * 50_000, "f.json", "nested too deeply"),
    ],
)
def test_parse_json_refuses_what_is_not_strict_json(text, where, message):
    with pytest.raises(InputError) as info:
        parse_json(text, "f.json")
    assert info.value.where == where
    assert message in info.value.message


def test_a_jsonl_line_reports_its_own_line_number():
    with pytest.raises(InputError) as info:
        parse_json('{"a": NaN}', "f.jsonl", line=7)
    assert info.value.where == "f.jsonl:7:7"
    with pytest.raises(InputError) as info:
        parse_json("[" * 50_000, "f.jsonl", line=7)
    assert info.value.where == "f.jsonl:7"


def test_a_bom_is_skipped_and_lines_still_count_from_one():
    assert parse_json('\ufeff{"a": 1}', "f.json") == {"a": 1}
    assert json_array_items('\ufeff[\n{"a": 1},\n\n{"b": 2}]', "f.json") == [
        ({"a": 1}, 2),
        ({"b": 2}, 4),
    ]


@pytest.mark.parametrize(
    ("text", "where", "field"),
    [
        ('{"id": "a", "id": "b"}', "f.json:1:13", "'id'"),
        ('[{"q": 1},\n {"a": 1, "b": 2, "a": 3}]', "f.json:2:19", "'1.a'"),
        ('{"x": {"k": {"y": 1}, "k": 2}}', "f.json:1:23", "'x.k'"),
    ],
)
def test_a_key_given_twice_is_refused_naming_it(text, where, field):
    """json keeps the last of two equal keys silently: a hand-edited second "question"
    would replace the first unseen."""
    with pytest.raises(InputError) as info:
        parse_json(text, "f.json")
    assert info.value.where == where
    assert f"field {field} is given twice" in info.value.message


def test_the_same_key_in_different_objects_is_fine():
    assert parse_json('[{"id": 1}, {"id": 2}, {"a": {"id": 3}, "id": 4}]', "f.json")[2]["id"] == 4


@pytest.mark.parametrize(
    ("text", "where"),
    [
        ('{"a": "x\\ud800y"}', "f.json:1:7"),
        ('{"a": "ok",\n "b": ["\\udc00"]}', "f.json:2:8"),
        ('{"a": "\\ude00\\ud83d"}', "f.json:1:7"),  # a pair in the wrong order
    ],
)
def test_a_lone_surrogate_escape_is_refused(text, where):
    with pytest.raises(InputError) as info:
        parse_json(text, "f.json")
    assert info.value.where == where and "without its pair" in info.value.message


def test_a_surrogate_pair_and_an_escaped_backslash_are_fine():
    assert parse_json('{"a": "\\ud83d\\ude00", "b": "\\\\ud800"}', "f.json") == {
        "a": "\U0001f600",
        "b": "\\ud800",
    }


def test_scrub_surrogates_marks_lone_surrogates_everywhere():
    from ragrail.jsonio import scrub_surrogates

    assert scrub_surrogates({"a\udc00": ["x\ud800", 1, None]}) == {"a\ufffd": ["x\ufffd", 1, None]}


def test_an_array_item_nested_too_deeply_names_the_line_it_starts_on():
    deep = "[" * 100_000 + "]" * 100_000
    text = '[\n{"a": 1},\n{"b": 2},\n{"c": ' + deep + "}\n]"
    with pytest.raises(InputError, match="nested too deeply") as info:
        json_array_items(text, "g.json")
    assert info.value.where == "g.json:4"


def test_a_control_character_error_does_not_end_on_a_dangling_word():
    with pytest.raises(InputError) as info:
        parse_json('{"a": "x\x00y"}', "f.json")
    assert info.value.where == "f.json:1:9"
    assert not info.value.message.endswith(" at")


def test_a_number_of_thousands_of_digits_is_an_input_error_not_a_crash():
    import pytest

    from ragrail.errors import InputError
    from ragrail.jsonio import parse_json

    with pytest.raises(InputError, match="number too long"):
        parse_json('{"a": ' + "1" * 5000 + "}", "x.json")
