"""One JSON Lines row read into a conversation, or into a bad row that says where and why.

Shared by ingest in this process and its worker processes (ragrail.online.ingest).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, BinaryIO, Literal, overload

import orjson

from ragrail.errors import InputError
from ragrail.jsonio import parse_json
from ragrail.online.mapping import BadField, RowMapper
from ragrail.online.record import Conversation


@dataclass(frozen=True, slots=True)
class BadRow:
    """A row that was skipped: where, which field and why (never the row's content)."""

    file: str
    line: int
    field: str
    reason: str

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}"
        return (
            f"{where}: {self.reason}"
            if self.field == "-"
            else f"{where} {self.field}: {self.reason}"
        )


def _reject_constant(literal: str) -> object:
    raise ValueError(f"{literal} is not JSON")


# The C scanner, refusing NaN and Infinity. It lets a key given twice pass (the last
# counts); rows where that can have happened are read by jsonio.parse_json instead (see
# _may_repeat_a_key), so a log row follows the one rule of every JSON ragrail reads.
_FAST = json.JSONDecoder(parse_constant=_reject_constant)
# A key's closing quote and its colon, JSON white space between: every key of a row has one.
_KEY_END = re.compile(rb'"[ \t\r\n]*:')


def _keys(data: object) -> int:
    """How many keys the objects of ``data`` hold, nested ones included."""
    count = 0
    todo: list[Any] = [data]
    while todo:
        item = todo.pop()
        if type(item) is dict:
            count += len(item)
            item = item.values()
        elif type(item) is not list:  # a row that is a number or a string has no keys
            continue
        todo.extend([v for v in item if type(v) is dict or type(v) is list])
    return count


def _may_repeat_a_key(raw: bytes, data: object) -> bool:
    """False when no object of the row can have named a key twice: a reader keeps one of
    two equal keys, so the row's text then shows more key endings than the read row has
    keys. Text that merely holds ``":`` (a quoted colon in a string) says True too, and
    the exact reader decides: correct either way, slow only for such rows."""
    return len(_KEY_END.findall(raw)) != _keys(data)


def _parse(raw: bytes, text: str, exact: bool, keys: frozenset[str]) -> object:
    """One JSON Lines row by the standard readers: through parse_json (a key given twice
    and a lone surrogate refused: no UTF-8 file, the database included, can hold one) when
    ``exact`` or the row has \\u escapes, else through the C scanner."""
    if exact or b"\\u" in raw:
        return parse_json(text, "-", keys=keys)
    return _FAST.decode(text)


@overload
def jsonl_row(
    raw: bytes, lineno: int, name: str, mapper: RowMapper, stored: Literal[False] = False
) -> Conversation | BadRow | None: ...


@overload
def jsonl_row(
    raw: bytes, lineno: int, name: str, mapper: RowMapper, stored: Literal[True]
) -> tuple[object, ...] | BadRow | None: ...


def jsonl_row(
    raw: bytes, lineno: int, name: str, mapper: RowMapper, stored: bool = False
) -> Conversation | tuple[object, ...] | BadRow | None:
    """One JSON Lines line as a conversation (``stored``: as its database row), a bad
    row, or None when it is blank."""
    convert = mapper.stored_row if stored else mapper.conversation
    raw = raw.strip()
    if not raw:
        return None
    # orjson first: three times the standard reader's speed, and as strict (no NaN, no
    # lone surrogate, no control character in a string). It reads an integer past 64 bits
    # as a float, so a row it refuses, or that its reading makes bad, is read again by the
    # standard readers, and only their reading decides.
    exact = False
    try:
        fast = orjson.loads(raw)
        exact = _may_repeat_a_key(raw, fast)
        if not exact:
            return convert(fast)
    except (orjson.JSONDecodeError, BadField):
        pass
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return BadRow(name, lineno, "-", "not UTF-8 text")
    try:
        data = _parse(raw, text, exact, mapper.names)
    except (ValueError, RecursionError, InputError):
        try:  # again, slowly, for the message (line, column, field)
            parse_json(text, name, lineno, keys=mapper.names)
            message = "invalid JSON"
        except InputError as exc:
            message = exc.message
        return BadRow(name, lineno, "-", message)
    try:
        return convert(data)
    except BadField as exc:
        return BadRow(name, lineno, exc.field, exc.reason)


# A line longer than this is a bad row, read past in pieces and never held whole: a
# conversation is a few KB, and reading, parsing, redacting and storing a line holds it
# several times over (a 50 MB line took 1.1 GB).
MAX_LINE = 16 * 1024 * 1024
TOO_LONG = (
    f"a line longer than {MAX_LINE // (1024 * 1024)} MB: not read (no conversation is that "
    "large; is it a dump of a document?)"
)
_PIECE = 1024 * 1024


def bounded_lines(fh: BinaryIO) -> Iterator[tuple[bytes | None, int]]:
    """Each line of ``fh`` with its length in bytes; None for a line over MAX_LINE, whose
    bytes are read past a piece at a time (memory stays within MAX_LINE)."""
    readline = fh.readline
    while True:
        raw = readline(MAX_LINE + 1)
        if not raw:
            return
        if len(raw) <= MAX_LINE or raw.endswith(b"\n"):
            yield raw, len(raw)
            continue
        size = len(raw)
        del raw
        while True:
            piece = readline(_PIECE)
            size += len(piece)
            if not piece or piece.endswith(b"\n"):
                break
        yield None, size
