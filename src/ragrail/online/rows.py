"""One JSON Lines row read into a conversation, or into a bad row that says where and why.

Shared by ingest in this process and its worker processes (ragrail.online.ingest).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Literal, overload

import orjson

from ragrail.errors import InputError
from ragrail.fileio import parse_json
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


# The C scanner, refusing NaN and Infinity. Unlike fileio.parse_json it lets a key given
# twice in one object pass (the last counts, as in every JSON reader): its check runs in
# Python per object and would halve the lines per second. Exports are written by programs.
_FAST = json.JSONDecoder(parse_constant=_reject_constant)


def _parse(raw: bytes, text: str) -> object:
    """One JSON Lines row by the standard readers: a row with \\u escapes through
    parse_json, which refuses a lone surrogate (no UTF-8 file, the database included, can
    hold one), any other through the C scanner."""
    if b"\\u" in raw:
        return parse_json(text, "-")
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
    try:
        return convert(orjson.loads(raw))
    except (orjson.JSONDecodeError, BadField):
        pass
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return BadRow(name, lineno, "-", "not UTF-8 text")
    try:
        data = _parse(raw, text)
    except (ValueError, RecursionError, InputError):
        try:  # again, slowly, for the message (line, column, field)
            parse_json(text, name, lineno)
            message = "invalid JSON"
        except InputError as exc:
            message = exc.message
        return BadRow(name, lineno, "-", message)
    try:
        return convert(data)
    except BadField as exc:
        return BadRow(name, lineno, exc.field, exc.reason)
