"""Regexes tried only where a match can begin give exactly the regex's own matches."""

from __future__ import annotations

import random
import re

import pytest

from ragrail.scoring import answers, claims, markers, scan

# (pattern, the characters every match of it begins with), as the scorers use them
PATTERNS = [
    (claims._END, claims._END_MARKS),
    (claims._BRACKET, claims._OPENING_BRACKETS),
    (markers._BRACKETS, "[［【"),
    (answers._SENTENCE_END, answers._SENTENCE_MARKS),
]
PIECES = [
    *"    \n\t..!??!\"'”)]」。！？।॥؟[］【】［,%-",
    *["word", "Word", "a#1", "sso #2", "[x", "e.g.", "No.", "5", "10", "2.5", "1,000"],
    *[" %", "x" * 30, "日本"],
]


def texts(seed: int, count: int = 400) -> list[str]:
    rng = random.Random(seed)
    return ["".join(rng.choice(PIECES) for _ in range(rng.randint(0, 40))) for _ in range(count)]


@pytest.mark.parametrize(("pattern", "starts"), PATTERNS)
def test_finditer_gives_the_patterns_own_matches(pattern: re.Pattern[str], starts: str):
    for text in texts(sum(map(ord, pattern.pattern)) % 1000):
        expected = [(m.span(), m.groups()) for m in pattern.finditer(text)]
        assert [(m.span(), m.groups()) for m in scan.finditer(pattern, text, starts)] == expected
        first = pattern.search(text)
        found = scan.search(pattern, text, starts)
        assert (found.span() if found else None) == (first.span() if first else None)


def test_numbers_in_ascii_text_start_at_an_ascii_digit():
    # the lookbehind still sees the text before the position tried: "1.5" is one number
    # and the "5" of "x.5" or the "0" of "10" never starts one
    for text in [*texts(7), "1.5", "x.5", "10", "v2 and 3", "a1 2b 33%"]:
        expected = [m.span() for m in claims._NUMBER.finditer(text)]
        assert [m.span() for m in scan.finditer(claims._NUMBER, text, "0123456789")] == expected


def test_positions_are_ascending_and_cover_every_start():
    assert scan.positions("a.b!c.d", ".!") == [1, 3, 5]
    assert scan.positions("", ".!") == []
    assert scan.positions("no marks", ".!") == []
    # in ASCII text the non-ASCII starts are not looked for, and could not be there
    assert scan.positions("a.b", ".。") == [1]
    assert scan.positions("a。b.", ".。") == [1, 3]
