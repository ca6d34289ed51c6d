"""The one fact matcher: normalisation, token boundaries, fact forms, offsets."""

from __future__ import annotations

import copy
import pickle

import pytest
from pydantic import BaseModel, ValidationError

from ragrail.text.matching import (
    Fact,
    FactField,
    at_boundaries,
    contains,
    find,
    find_all,
    normalise,
    normalise_with_offsets,
    original_spans,
    parse_fact,
    slug,
)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Don’t\n  Know", "don't know"),  # curly quote straightened, whitespace collapsed
        ("STRASSE Straße", "strasse strasse"),  # case folding
        ("Cafe\u0301", "café"),  # composed after folding
        ("ﬁle ３０", "file 30"),  # compatibility forms
        ("a\u200bb\u200cc\u200dd\u2060e\ufefff\u00adg", "abcdefg"),  # invisible characters go
        ("a\u00a0b\u202fc\u3000d\t\r\ne", "a b c d e"),  # every space is one space
        ("\n  indented\u00a0 \n", "indented"),  # none at either end
        ("9–5 − 2", "9-5 - 2"),  # en dash, minus sign
        ("ǰ", "ǰ"),  # folds to j + caron, composed again
    ],
)
def test_normalise(text, expected):
    assert normalise(text) == expected


def test_boundaries_by_hand():
    text = "in 130 days or 30 days"
    assert text.find("30 days") == 4
    assert not at_boundaries(text, 4, 11)  # "1" before "3": inside the number 130
    assert at_boundaries(text, 15, 22)
    assert not at_boundaries("$100", 0, 3)  # "$10" followed by "0"
    assert not at_boundaries("$10,000", 0, 3)  # a number goes on across ",0"
    assert at_boundaries("$10, then", 0, 3)  # a comma that ends the number
    assert not at_boundaries("2.10", 2, 4)  # "10" after "2."
    assert at_boundaries("US$10", 2, 5)  # "$" is free on its side
    assert not at_boundaries("abc", 1, 1)  # an empty span is no match


def test_spaceless_scripts_need_no_boundary_but_latin_next_to_them_does():
    assert find("返金", "返金ポリシー") == (0, 2)
    assert find("pro", "proプラン") == (0, 3)
    assert find("pro", "professional") is None


def test_find_returns_the_first_span_on_a_boundary():
    text = normalise("Pay $100 now or $10 later; $10 again")
    assert find("$10", text) == (16, 19)
    assert find_all("$10", text) == [(16, 19), (27, 30)]


def test_any_returns_the_earliest_alternative():
    fact = parse_fact({"any": ["10 percent", "10%"]})
    text = normalise("a 10% fee, or 10 percent")
    assert find(fact, text) == (2, 5)
    assert find_all(fact, text) == [(2, 5), (14, 24)]


def test_regex_is_case_insensitive_on_the_normalised_text_and_keeps_boundaries():
    fact = parse_fact({"regex": r"\d+ DAYS"})
    assert find(fact, normalise("kept for 14 Days")) == (9, 16)
    assert find(parse_fact({"regex": "30 days"}), normalise("130 days or 30 days")) == (12, 19)


def test_fact_labels_raw_forms_and_equality():
    text = parse_fact("30 days")
    alt = parse_fact({"any": ["10%", "10 percent"]})
    rx = parse_fact({"regex": r"\d+ days"})
    assert (text, alt, rx) == ("30 days", "10% | 10 percent", r"/\d+ days/")
    assert [f.kind for f in (text, alt, rx)] == ["text", "any", "regex"]
    assert (text.raw(), alt.raw(), rx.raw()) == (
        "30 days",
        {"any": ["10%", "10 percent"]},
        {"regex": r"\d+ days"},
    )
    assert f'missing "{alt}"' == 'missing "10% | 10 percent"'
    assert parse_fact(alt) is alt


def test_facts_survive_pickle_and_deepcopy():
    alt = parse_fact({"any": ["10%", "10 percent"]})
    for copied in (pickle.loads(pickle.dumps(alt)), copy.deepcopy(alt)):
        assert isinstance(copied, Fact)
        assert (copied.kind, copied.values, copied.needles) == (alt.kind, alt.values, alt.needles)


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ("", "must not be empty"),
        ("\u200b\u00ad", "must not be empty"),  # invisible only
        (30, "a fact must be a string"),
        (["30 days"], "a fact must be a string"),
        ({"all": ["a"]}, "got keys all"),
        ({"any": ["a"], "regex": "b"}, "got keys any, regex"),
        ({"any": []}, "non-empty list"),
        ({"any": "10%"}, "non-empty list"),
        ({"any": ["10%", 10]}, "each alternative must be a string"),
        ({"any": ["10%", " "]}, "each alternative must not be empty"),
        ({"regex": "(unclosed"}, "does not compile"),
        ({"regex": "a*"}, "matches the empty string"),
        ({"regex": 5}, '"regex" must be a string'),
    ],
)
def test_parse_fact_refuses(raw, message):
    with pytest.raises(ValueError, match=message):
        parse_fact(raw)


class _Holder(BaseModel):
    facts: list[FactField]


def test_fact_field_reads_and_writes_the_golden_set_form():
    raw = ["30 days", {"any": ["10%", "10 percent"]}, {"regex": r"\d+ days"}]
    held = _Holder.model_validate({"facts": raw})
    assert all(isinstance(f, Fact) for f in held.facts)
    assert held.model_dump() == {"facts": raw}
    assert _Holder.model_validate_json(held.model_dump_json()) == held
    with pytest.raises(ValidationError, match="does not compile"):
        _Holder.model_validate({"facts": [{"regex": "["}]})


@pytest.mark.parametrize(
    "text",
    [
        "Cafe\u0301 \u00a0 ﬁle",
        "Don’t  share the re\u00adset link",
        "返金は３０日以内です。",
        "इस प्लान की \u092b\u093cीस 500 रुपये है।",
        "STRASSE Straße\n\tǰ",
        "\ufeffa\u200b\u0301b",
        "  \n padded  \u3000",
    ],
)
def test_offsets_version_agrees_with_normalise(text):
    norm, starts, ends = normalise_with_offsets(text)
    assert norm == normalise(text)
    assert len(starts) == len(ends) == len(norm)


def test_offsets_map_back_to_the_text_as_written():
    text = "Cafe\u0301 \u00a0 ﬁle"
    norm, starts, ends = normalise_with_offsets(text)
    assert norm == "café file"
    # "é" came from "e" + combining acute (offsets 3-5); "fi" from the one ligature at 8
    assert (starts[3], ends[3]) == (3, 5)
    assert (starts[5], ends[5], starts[6], ends[6]) == (8, 9, 8, 9)
    assert original_spans(["café", "file"], text) == [(0, 5), (8, 11)]
    assert [text[a:b] for a, b in original_spans(["café", "file"], text)] == ["Cafe\u0301", "ﬁle"]


def test_original_spans_drop_overlaps_keeping_the_earlier():
    assert original_spans(["30 days", "days of"], "in 30 days of use") == [(3, 10)]


def test_contains_normalises_the_text():
    assert contains("straße", "STRASSE")
    assert not contains("30 days", "130 days")


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("two-factor", "two-factor"),  # already a slug: unchanged (Kitebase ids stay)
        ("Refund Policy", "refund-policy"),
        ("  Refund   Policy  ", "refund-policy"),
        ("FAQ (2024)", "faq-2024"),
        ("a#b[c]", "a-b-c"),
        ("v1.2_notes", "v1.2_notes"),
        ("फ़ीस सूची", "फ़ीस-सूची"),  # combining marks kept
        ("!!!", "document"),
    ],
)
def test_slug(name, expected):
    assert slug(name) == expected


@pytest.mark.parametrize(
    ("fact", "text", "found"),
    [
        ("within 30 days", "Refunds within **30 days** of purchase.", True),
        ("Settings > Profile", "Open `Settings > Profile` and save.", True),
        ("end of the billing period", "It starts at the _end of the billing period_.", True),
        ("api key", "Set api_key in the file.", False),  # snake_case keeps its underscore
        ("5 3", "5 * 3 = 15", False),  # an operator between spaces is text
        ("30 days", "within **130 days**", False),  # markup removal keeps the boundaries
    ],
)
def test_markdown_emphasis_and_code_marks_do_not_hide_facts(fact, text, found):
    assert contains(fact, text) is found


def test_highlight_offsets_skip_markup():
    text = "Refunds within **30 days** now"
    assert [text[a:b] for a, b in original_spans(["30 days"], text)] == ["30 days"]
