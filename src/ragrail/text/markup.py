"""Markdown emphasis and code marks that pair up as markup, found so they can be dropped.

Models and help centers write ``within **30 days**`` or ``run `npm ci```; a fact is
matched in the text without those marks (:mod:`ragrail.text.matching`). Only marks
that pair up are markup: ``_logs``, ``snake_case`` and ``5 * 3`` keep theirs, and a
code span keeps its text as written (```__init__.py``` is ``__init__.py``).

A text with markup dropped is an :class:`Unmarked` string that keeps the text as written,
so a fact with marks of its own (``__init__``) is also looked for where Markdown would
pair them (a bare ``__init__.py``, bold ``init`` as rendered): the fact's own characters
are never dropped from it, and the text as written is where they are.
"""

from __future__ import annotations

import re
import unicodedata
from bisect import bisect_left
from collections.abc import Iterable
from itertools import accumulate
from typing import Any

# A run of marks, and within one the runs of one mark each (``**`` and `````` ` `````` in
# ``**`npm ci`**``); a character class is searched for several times faster.
_MARKS = re.compile(r"[*_`]+")
_ONE_MARK = re.compile(r"\*+|_+|`+")


def has_marks(text: str) -> bool:
    """Whether the text holds any mark at all (most texts do not: nothing to pair)."""
    return "*" in text or "_" in text or "`" in text


def _mark_runs(text: str) -> list[tuple[int, int, bool, bool]]:
    """(start, end, opens, closes) of each run of one to three equal marks. A run opens
    when a non-space follows it and no letter, digit or combining mark precedes it (the start of a word),
    and closes when a non-space precedes it and none of those follows it (the end of
    a word); the start and the end of the text count as spaces."""
    runs: list[tuple[int, int, bool, bool]] = []
    n = len(text)
    for m in _MARKS.finditer(text):
        start, end = m.span()
        if end - start == 1 or text.count(text[start], start, end) == end - start:
            spans: Iterable[tuple[int, int]] = ((start, end),)
        else:  # mixed marks: one run per mark
            spans = [(start + x.start(), start + x.end()) for x in _ONE_MARK.finditer(m[0])]
        for a, b in spans:
            if b - a > 3:
                continue
            before = text[a - 1] if a else " "
            after = text[b] if b < n else " "
            # _in_word, inlined: this runs once per mark of every marked text
            opens = not after.isspace() and not (
                before.isalnum() or (before >= "\x80" and unicodedata.category(before)[0] == "M")
            )
            closes = not before.isspace() and not (
                after.isalnum() or (after >= "\x80" and unicodedata.category(after)[0] == "M")
            )
            if opens or closes:
                runs.append((a, b, opens, closes))
    return runs


def markup_spans(text: str) -> list[tuple[int, int]]:
    """The spans of ``text`` that are emphasis or code marks pairing up as markup, sorted.

    Rule (a subset of CommonMark's): only runs of one to three equal marks (``*``,
    ``_``, `````` ` ``````) that open at the start of a word or close at the end of one
    (:func:`_mark_runs`) can be markup. Code first: a backtick run that opens pairs with
    the next backtick run of the same length that closes, and everything between them is
    text (```__init__.py``` is ``__init__.py``). Then emphasis, outside code: a closing
    ``*`` or ``_`` run pairs with the nearest opening run of the same mark before it
    (marks left open between them stay text), each giving up as many marks as the shorter
    has, from their inner sides. Marks that pair with nothing stay text: ``_logs`` and
    ``npm_logs`` keep their ``_``, ``5 * 3`` its ``*``.
    """
    runs = _mark_runs(text)
    # each opening backtick run's partner: the next closing backtick run of its length
    partner: dict[int, int] = {}
    next_closing: dict[int, int] = {}
    for i in range(len(runs) - 1 if "`" in text else -1, -1, -1):
        a, b, opens, closes = runs[i]
        if text[a] == "`":
            if opens and b - a in next_closing:
                partner[i] = next_closing[b - a]
            if closes:
                next_closing[b - a] = i
    drop: list[tuple[int, int]] = []
    stack: list[list[Any]] = []  # [mark, start, end] of the emphasis runs still open
    i = 0
    while i < len(runs):
        a, b, opens, closes = runs[i]
        mark = text[a]
        i += 1
        if mark == "`":
            if i - 1 in partner:  # a code span: its marks go, its text stays as written
                j = partner[i - 1]
                drop += [(a, b), runs[j][:2]]
                i = j + 1
            continue
        while closes and a < b:
            at = len(stack) - 1
            while at >= 0 and stack[at][0] != mark:
                at -= 1
            if at < 0:
                break
            opener = stack[at]
            del stack[at + 1 :]  # marks opened inside the pair are text
            used = min(opener[2] - opener[1], b - a)
            drop += [(opener[2] - used, opener[2]), (a, a + used)]
            opener[2] -= used
            a += used
            if opener[2] == opener[1]:
                stack.pop()
        if opens and a < b:
            stack.append([mark, a, b])
    return sorted(drop)


class Unmarked(str):
    """A text without its markup that remembers the text as written (``marked``) and
    the marks dropped from it (``dropped``, spans of ``marked``), so a span found in
    ``marked`` maps onto this text (:meth:`from_marked`)."""

    marked: str
    dropped: tuple[tuple[int, int], ...]
    _starts: list[int]
    _before: list[int]

    def __new__(cls, marked: str, dropped: Iterable[tuple[int, int]]) -> Unmarked:
        dropped = tuple(dropped)
        self = super().__new__(cls, _without(marked, dropped))
        self.marked = marked
        self.dropped = dropped
        # the marks dropped before each run's start: _at bisects them, so mapping every
        # span of a text with many marks stays n log n, not n * marks
        self._starts = [a for a, _ in dropped]
        self._before = list(accumulate((b - a for a, b in dropped), initial=0))
        return self

    def __reduce__(self) -> tuple[Any, ...]:
        return (Unmarked, (self.marked, self.dropped))

    def _at(self, k: int) -> int:
        """Where position ``k`` of ``marked`` falls in this text: k less the marks
        dropped before it (a position inside a dropped run falls at its end)."""
        i = bisect_left(self._starts, k)  # the runs starting before k
        if not i:
            return k
        a, b = self.dropped[i - 1]
        return k - self._before[i - 1] - (min(b, k) - a)

    def from_marked(self, span: tuple[int, int]) -> tuple[int, int]:
        """A span of ``marked`` as a span of this text (``__init__`` in ``__init__.py``
        is ``init`` in ``init.py``)."""
        return self._at(span[0]), self._at(span[1])


def unmark_keeping(text: str) -> str:
    """``text`` without its markup: an :class:`Unmarked` (which remembers ``text``) when
    some was dropped, else ``text`` itself."""
    if not has_marks(text):
        return text
    spans = markup_spans(text)
    return Unmarked(text, spans) if spans else text


def unmark(text: str) -> str:
    """``text`` without its markup (:func:`markup_spans`)."""
    if not has_marks(text):
        return text
    spans = markup_spans(text)
    return _without(text, spans) if spans else text


def _without(text: str, spans: Iterable[tuple[int, int]]) -> str:
    """``text`` with the (sorted, disjoint) spans cut out."""
    pieces: list[str] = []
    at = 0
    for a, b in spans:
        pieces.append(text[at:a])
        at = b
    pieces.append(text[at:])
    return "".join(pieces)
