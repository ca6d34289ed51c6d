"""Placing a passage in the documents, and the cell and id helpers importers share."""

from __future__ import annotations

from pathlib import Path

import pytest

from ragrail.errors import InputError
from ragrail.interop.common import assign_ids, short_reference
from ragrail.interop.placing import Placer, words
from ragrail.interop.rows import RawCase, list_cell, one_of, python_strings
from tests.interop.conftest import DOCS


@pytest.fixture
def placer() -> Placer:
    return Placer(DOCS)


def test_a_passage_is_placed_in_the_document_and_section_holding_it(placer):
    p = placer.place("Refunds go back to the original payment method")
    assert (p.source, p.chunk_id, p.how) == ("returns", "returns#3", "text")
    # case, line breaks and curly quotes do not matter (the fact matcher's normalisation)
    p = placer.place("OPEN ORDERS > TRACK TO SEE WHERE YOUR PARCEL\n\n   IS.")
    assert (p.source, p.chunk_id) == ("shipping", "shipping#3")
    # a character splitter's chunk, cut mid-word at both ends
    p = placer.place("efunds go back to the original payment meth")
    assert (p.source, p.chunk_id, p.how) == ("returns", "returns#3", "text")
    assert placer.place("our original paying method") is None  # words in no such order


def test_markup_and_punctuation_fall_back_to_the_words(placer):
    # the document has "the **next business\nday** if"
    p = placer.place("Express delivery arrives the next business day, if you order before 2 pm")
    assert (p.source, p.chunk_id, p.how) == ("shipping", "shipping#2", "words")


def test_a_passage_across_two_sections_keeps_the_section_it_starts_in(placer):
    p = placer.place("their original packaging. Refund timing Refunds go back")
    assert (p.source, p.chunk_id) == ("returns", "returns#2")


def test_a_recorded_name_decides_between_documents_and_places_what_text_cannot(placer):
    # "30 days" is in returns and in account
    assert placer.place("within 30 days").source == "account"  # the first, counted
    assert placer.tally.ambiguous == 1
    assert (
        placer.place("within 30 days", hint="https://help.example.com/returns.html?x=1").source
        == "returns"
    )
    p = placer.place("A paraphrase in no document.", hint="docs/Billing.md")
    assert (p.source, p.chunk_id, p.how) == ("billing", "billing", "hint")
    assert placer.place("A paraphrase in no document.", hint="other.md", where="f:3") is None
    assert placer.tally.unplaced == ["f:3"]
    assert placer.tally.line() == (
        "placed 3 of 4 contexts; 1 could not be placed (1 found in several documents (the "
        "first was taken); 1 placed by the source name the tool recorded)"
    )


def test_an_empty_passage_is_never_placed(placer):
    assert placer.place("   ") is None and placer.place("***") is None


def test_documents_with_a_fact_use_the_fact_matcher(placer):
    assert placer.documents_with("30 days") == ["account", "returns"]
    assert placer.documents_with("3 days") == []  # token boundaries: not in "30 days"
    from ragrail.text.matching import parse_fact

    assert placer.documents_with(parse_fact({"regex": "orders > (track|invoices)"})) == [
        "billing",
        "shipping",
    ]


def test_words_drop_markup(tmp_path: Path):
    assert words("**Bold** _text_, [a link](x)!") == "bold text a link x"


@pytest.mark.parametrize(
    ("cell", "expected"),
    [
        ('["a", "b"]', ["a", "b"]),  # JSON
        ("['a, b', \"it's\"]", ["a, b", "it's"]),  # Python's str of a list (RAGAS to_csv)
        ("['first one' 'second one'\n 'third']", ["first one", "second one", "third"]),  # numpy
        ("[]", []),
        ("", []),
        ("one passage", ["one passage"]),
        ("[not a list", ["[not a list"]),
        ("['a', 3]", ["['a', 3]"]),  # not all strings: one text
    ],
)
def test_list_cells_as_tools_print_them(cell, expected):
    assert list_cell(cell) == expected


def test_a_delimited_cell_splits_at_the_delimiter():
    assert list_cell("first|second||third", "|") == ["first", "second", "third"]


def test_the_strings_after_a_key_of_a_printed_dict():
    cell = "{'text': array(['5 days', 'five days'], dtype=object), 'answer_start': array([3, 9], dtype=int32)}"
    assert python_strings(cell, after_key="text") == ["5 days", "five days"]
    assert python_strings(cell, after_key="missing") is None


@pytest.mark.parametrize(
    ("reference", "fact"),
    [
        ("30 days", "30 days"),
        ("Within 5 business days.", "Within 5 business days"),
        ("Go to Settings > Addresses.", "Go to Settings > Addresses"),
        ("One two three four five six seven eight", "One two three four five six seven eight"),
        ("One two three four five six seven eight nine", None),
        ("...", None),
    ],
)
def test_a_short_reference_is_a_fact(reference, fact):
    assert short_reference(reference) == fact


def test_alternatives_collapse_when_they_are_the_same():
    assert one_of(["x", " x "]) == "x"
    assert one_of(["x", "y", "x"]) == {"any": ["x", "y"]}


def test_ids_are_the_tools_own_else_slugs_numbered_when_they_meet():
    cases = [
        RawCase(where="f:1", question="How do I track my parcel?"),
        RawCase(where="f:2", question="How do I track my parcel??"),
        RawCase(where="f:3", question="x", id="how-do-i-track-my-parcel"),
        RawCase(where="f:4", question="Anything", name="Refund timing"),
        RawCase(where="f:5", question="!!!"),
    ]
    assert assign_ids(cases) == [
        "how-do-i-track-my-parcel-2",
        "how-do-i-track-my-parcel-3",
        "how-do-i-track-my-parcel",
        "refund-timing",
        "case",
    ]
    with pytest.raises(InputError, match="id 'a' is given twice") as err:
        assign_ids(
            [RawCase(where="f:1", question="q", id="a"), RawCase(where="f:2", question="r", id="a")]
        )
    assert err.value.where == "f:2"
