"""Regular expressions run only where a match can begin.

Python's regex engine tries a pattern at every position of the text, and a pattern
that opens with a character class (a sentence end, a bracket, a digit) costs tens
of nanoseconds a character even where nothing matches: 20-70 microseconds per
answer-sized text. ``str.find`` skips to a given character at memory speed. So for
a pattern every match of which is non-empty and begins with one of a few known
characters, :func:`finditer` finds those characters with ``str.find`` and tries the
pattern only there (``pattern.match(text, pos)``; lookbehinds still see the text
before ``pos``), giving exactly the matches ``pattern.finditer(text)`` gives.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator


@functools.cache
def _ascii(starts: str) -> str:
    return "".join(ch for ch in starts if ch.isascii())


def positions(text: str, starts: str) -> list[int]:
    """Every index of ``text`` holding one of the characters ``starts``, ascending."""
    if text.isascii():  # a constant-time flag of str: look only for the ASCII ones
        starts = _ascii(starts)
    out: list[int] = []
    for ch in starts:
        at = text.find(ch)
        while at >= 0:
            out.append(at)
            at = text.find(ch, at + 1)
    if len(out) > 1:
        out.sort()
    return out


def finditer(pattern: re.Pattern[str], text: str, starts: str) -> Iterator[re.Match[str]]:
    """``pattern.finditer(text)`` for a pattern whose every match is non-empty and begins
    with one of the characters in ``starts`` (see the module docstring)."""
    end = 0
    for pos in positions(text, starts):
        if pos < end:
            continue  # inside the previous match: finditer resumes after it
        match = pattern.match(text, pos)
        if match is not None:
            end = match.end()
            yield match


def search(pattern: re.Pattern[str], text: str, starts: str) -> re.Match[str] | None:
    """``pattern.search(text)`` for such a pattern: the leftmost match, or None."""
    return next(finditer(pattern, text, starts), None)
