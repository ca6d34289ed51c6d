"""Ingesting an export again: rows whose id was stored before this ingest began are
counted as already stored without being read further (no parse past the id, no mapping,
no redaction), so a re-ingest costs a fraction of the first one.

Only ids stored *before* the ingest count: a row whose id an earlier row of the same
ingest stored is read in full, as the first ingest reads it, so one process and worker
processes count alike whatever their batches. A row whose id is stored is "already
stored" even when the rest of it would have been a bad row: it is never read.
"""

from __future__ import annotations

import json
import re
from typing import Any

import orjson

from ragrail.online.mapping import RowMapper, find
from ragrail.online.store import LogStore

# A JSON string without control characters, or an integer (a float is left to the full read)
_TOKEN = rb'("(?:[^"\\\x00-\x1f]|\\.)*"|-?(?:0|[1-9][0-9]*)(?=[ \t\r\n]*[,}]))'


class KnownIds:
    """Which rows hold an id stored before this ingest (see the module's docstring)."""

    def __init__(self, store: LogStore, mapper: RowMapper, upto: int) -> None:
        """``upto``: the store's last rowid when the ingest began (LogStore.last_rowid)."""
        self.store, self.mapper, self.upto = store, mapper, upto
        path = mapper.paths["id"]
        self.path = path
        self.first: re.Pattern[bytes] | None = None
        if len(path) == 1 and not mapper.columns:
            # exports write the id first: read from the line's head, the rest never parsed
            key = json.dumps(path[0], ensure_ascii=False)[1:-1].encode("utf-8")
            self.first = re.compile(rb'[ \t\r\n]*\{[ \t\r\n]*"' + re.escape(key) + rb'"[ \t\r\n]*:[ \t\r\n]*' + _TOKEN)  # fmt: skip

    def __bool__(self) -> bool:
        return self.upto > 0

    def raw_id(self, raw: bytes) -> str | None:
        """The id of one JSON Lines row as the mapper reads it (before redaction), or None
        when that is not plain (then the row is read in full, and that reading decides)."""
        m = self.first.match(raw) if self.first is not None else None
        value: Any
        if m is not None:
            token = m.group(1)
            try:
                if token[:1] != b'"':
                    value = token.decode("ascii")
                elif b"\\" in token:
                    value = json.loads(token)
                else:
                    value = token[1:-1].decode("utf-8")
            except ValueError:  # not UTF-8, a bad escape
                return None
        else:
            try:
                value = find(orjson.loads(raw), self.path)
            except orjson.JSONDecodeError:
                return None
            if type(value) is int:
                value = str(value)
        return value if type(value) is str and value else None

    def stored(self, raw_ids: list[str | None]) -> list[bool]:
        """For each raw id (None: not plain), whether it was stored before this ingest."""
        keys: list[str | None] = []
        for raw in raw_ids:
            key = None
            if raw is not None:
                key = self.mapper.redact_id(raw)  # an id is stored as this gives it
                try:
                    key.encode("utf-8")
                except UnicodeEncodeError:  # a lone surrogate: the full read refuses it
                    key = None
            keys.append(key)
        found = self.store.stored_ids([k for k in keys if k is not None], self.upto)
        return [k is not None and k in found for k in keys]

    def rows(self, lines: list[bytes]) -> list[bool]:
        """For each JSON Lines row, whether its id was stored before this ingest."""
        return self.stored([self.raw_id(raw) for raw in lines])
