"""Which emphasis and code marks pair up as markup (ragrail.text.markup), by hand."""

from __future__ import annotations

import pytest

from ragrail.text.markup import markup_spans, unmark


@pytest.mark.parametrize(
    ("text", "spans", "plain"),
    [
        ("run **npm ci** now", [(4, 6), (12, 14)], "run npm ci now"),
        ("the `_logs` folder", [(4, 5), (10, 11)], "the _logs folder"),  # code keeps its _
        ("the _logs folder", [], "the _logs folder"),  # a lone mark is text
        ("npm_logs and snake_case", [], "npm_logs and snake_case"),  # inside words
        ("5 * 3 = 15", [], "5 * 3 = 15"),  # between spaces
        ("__init__.py", [(0, 2), (6, 8)], "init.py"),  # "." ends a word: bold, as Markdown
        ("`__init__.py`", [(0, 1), (12, 13)], "__init__.py"),  # a code span is as written
        ("**`npm ci`**", [(0, 2), (2, 3), (9, 10), (10, 12)], "npm ci"),  # mixed runs
        ("***both***", [(0, 3), (7, 10)], "both"),
        # the closing *** gives one mark to the nearer *, two to the **
        ("**bold *em***", [(0, 2), (7, 8), (10, 11), (11, 13)], "bold em"),
        # the closer pairs with the nearest opener: "_logs" stays, "_foo_" is emphasis
        ("_logs and _foo_", [(10, 11), (14, 15)], "_logs and foo"),
        # the _ opened inside the ** pair never closes there: text
        ("**a _b** c_", [(0, 2), (6, 8)], "a _b c_"),
        ("`a **b` c**", [(0, 1), (6, 7)], "a **b c**"),  # no emphasis inside code
        ("ci** installs", [], "ci** installs"),  # half a pair (a chunk cut in it) is text
        ("****", [], "****"),  # four marks are never markup
    ],
)
def test_marks_pair_up_as_markup(text: str, spans: list[tuple[int, int]], plain: str) -> None:
    assert markup_spans(text) == spans
    assert unmark(text) == plain


def test_unmarked_maps_positions_of_the_text_as_written() -> None:
    from ragrail.text.markup import Unmarked

    text = Unmarked("a __b__ **c** d", [(2, 4), (5, 7), (8, 10), (11, 13)])
    assert text == "a b c d"
    # before, at the start of, inside and after a dropped run, checked by hand
    assert [text._at(k) for k in (0, 2, 3, 4, 5, 6, 7, 8, 10, 11, 13, 15)] == [
        0, 2, 2, 2, 3, 3, 3, 4, 4, 5, 5, 7,
    ]  # fmt: skip
    assert text.from_marked((2, 7)) == (2, 3)  # __b__ is b
    assert Unmarked("x", []).from_marked((0, 1)) == (0, 1)
