"""Laying text out for the terminal's width: cells, cuts, wrapping."""

from __future__ import annotations

import re
import shutil
from collections.abc import Sequence
from typing import TYPE_CHECKING

from rich.cells import cell_len as _rich_cell_len
from rich.cells import get_character_cell_size

if TYPE_CHECKING:
    pass


DEFAULT_WIDTH = 100  # output to a pipe, a file or a CI log: no terminal to ask
MIN_WIDTH = 40
ELLIPSIS = "…"
# A long scorecard is printed compact (each reason and cause on one line) once its
# per-question lines would run past this many a question, and past LONG_REPORT lines.
LINES_PER_QUESTION = 2.5
LONG_REPORT = 40


def terminal_width() -> int:
    """The width to lay out for: ``COLUMNS`` when set (as rich and click read it), else
    the terminal's, else 100 when output goes to a pipe, a file or a CI log."""
    return max(MIN_WIDTH, shutil.get_terminal_size((DEFAULT_WIDTH, 24)).columns)


def cell_len(text: str) -> int:
    """Terminal cells ``text`` takes: two for a wide (CJK) character, none for a combining
    mark. Text that went through visible() has no control characters, so ASCII is one
    cell a character (the common case, and fast)."""
    return len(text) if text.isascii() else _rich_cell_len(text)


def cut(text: str, width: int) -> str:
    """``text`` in at most ``width`` terminal cells (a CJK character takes two), ending
    in … where it had to be cut."""
    if cell_len(text) <= width:
        return text
    if text.isascii():
        return text[: max(0, width - 1)].rstrip() + ELLIPSIS
    kept, used = [], 0
    for ch in text:
        size = get_character_cell_size(ch)
        if used + size > width - 1:
            break
        kept.append(ch)
        used += size
    return "".join(kept).rstrip() + ELLIPSIS


def cut_middle(text: str, width: int) -> str:
    """``text`` in at most ``width`` cells, its middle replaced by … where it is too long:
    ids often share a prefix (``billing-refund-...``) or differ only in a tail number."""
    if cell_len(text) <= width:
        return text
    head_room = width // 2
    tail_room = width - 1 - head_room
    if text.isascii():
        return text[:head_room] + ELLIPSIS + (text[-tail_room:] if tail_room > 0 else "")
    head = cut(text, head_room + 1).removesuffix(ELLIPSIS)
    tail, used = [], 0
    for ch in reversed(text):
        size = get_character_cell_size(ch)
        if used + size > tail_room:
            break
        tail.append(ch)
        used += size
    return head + ELLIPSIS + "".join(reversed(tail))


def pad(text: str, width: int) -> str:
    """``text`` padded with spaces to ``width`` cells (a CJK character takes two)."""
    return text + " " * max(0, width - cell_len(text))


def id_column(ids: Sequence[str], width: int, rest: int, least: int = len("question")) -> int:
    """Cells for an id column: the longest id (at least ``least``, the header's), but at
    most 2/5 of the line and never so wide that fewer than ``rest`` cells are left for
    what follows. Longer ids are cut in the middle."""
    longest = max([least, *(cell_len(i) for i in ids)])
    return min(longest, max(12, min(width * 2 // 5, width - rest)))


def _spans(text: str, first: int, rest: int, keep_quotes: bool = True) -> list[tuple[int, int]]:
    """Greedy line breaking of ``text`` measured in cells: lines of at most ``first``,
    then ``rest`` cells, as (start, end) offsets. With ``keep_quotes`` a double-quoted
    string (a fact) stays on one line where it fits; a word wider than a line (CJK text
    has no spaces) is broken between characters; hyphens never break."""
    protected = text
    if keep_quotes:
        protected = re.sub(r'"[^"]*"', lambda m: m.group(0).replace(" ", "\x00"), text)
    todo = [m.span() for m in re.finditer(r"[^ \t\n]+", protected)]
    todo.reverse()
    lines: list[tuple[int, int]] = []
    start = end = used = 0
    open_line = False
    room = max(1, first)
    while todo:
        s, e = todo.pop()
        size = cell_len(text[s:e])
        if open_line and used + (s - end) + size <= room:  # the gap as written: 1 cell a space
            end, used = e, used + (s - end) + size
            continue
        if open_line:
            lines.append((start, end))
            room, open_line = max(1, rest), False
        if size > room and "\x00" in protected[s:e]:  # a quoted string too long: its words
            todo.extend(reversed([(s + a, s + b) for a, b in _words(text[s:e])]))
            continue
        while size > room:  # a single word wider than the line
            k, taken = s, 0
            while k < e and taken + get_character_cell_size(text[k]) <= room:
                taken += get_character_cell_size(text[k])
                k += 1
            k = max(k, s + 1)
            lines.append((s, k))
            room, s = max(1, rest), k
            size = cell_len(text[s:e])
        start, end, used, open_line = s, e, size, True
    if open_line:
        lines.append((start, end))
    return lines


def _words(text: str) -> list[tuple[int, int]]:
    return [m.span() for m in re.finditer(r"\S+", text)]


def fit(text: str, first: int, rest: int | None = None, max_lines: int | None = None) -> list[str]:
    """``text`` broken into lines of at most ``first`` cells (``rest`` after the first),
    at most ``max_lines`` of them: the last one kept ends in … when text was left over."""
    rest = first if rest is None else rest
    spans = _spans(text, first, rest)
    if not spans:
        return [""]
    if max_lines is not None and len(spans) > max_lines:
        # it will be cut anyway: fill the lines rather than move a fact down whole
        spans = _spans(text, first, rest, keep_quotes=False)
        head = [text[a:b] for a, b in spans[: max_lines - 1]]
        tail = " ".join(text[spans[max_lines - 1][0] :].split())
        return [*head, cut(tail, first if max_lines == 1 else rest)]
    return [text[a:b] for a, b in spans]


def wrap(text: str, width: int, subsequent: str = "", max_lines: int | None = None) -> list[str]:
    """Word-wrap one line to ``width`` cells, keeping its indent on the first line and
    ``subsequent`` on the others; never inside a double-quoted string where it fits
    (a fact stays whole), never at a hyphen (``account-recovery#1`` stays whole)."""
    body = text.lstrip(" ")
    lead = text[: len(text) - len(body)]
    lines = fit(body, width - cell_len(lead), width - cell_len(subsequent), max_lines=max_lines)
    return [lead + lines[0], *(subsequent + line for line in lines[1:])]
