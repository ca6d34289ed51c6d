"""The response cache: SQLite under ``.ragrail/`` in the project folder.

Keyed on everything that can change a reply: provider, base URL, model, the
full prompt, the call parameters and the repeat index. An unchanged re-run
makes no calls. Each reply is committed as it arrives, so an interrupted run
keeps what finished. A damaged cache file is moved aside with a warning; one
that is locked, read-only, full or from a newer ragrail is left alone and the
run goes on without a cache (one warning). Never a crash. No API key is ever
part of a key or a row.
"""

from __future__ import annotations

import hashlib
import json
import re
import sqlite3
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ragrail.errors import SystemFailure
from ragrail.store.cachefile import CacheFile

SCHEMA = """
CREATE TABLE IF NOT EXISTS responses (
    key TEXT PRIMARY KEY,
    provider TEXT NOT NULL,
    model TEXT NOT NULL,
    reply TEXT NOT NULL,
    created REAL NOT NULL
)
"""
# Versioned with user_version like the history. 1: the responses table ("IF NOT EXISTS":
# caches from before versioning already have it, at user_version 0).
MIGRATIONS: tuple[str, ...] = (SCHEMA,)


def cache_key(
    provider: str,
    base_url: str | None,
    model: str,
    prompt: str,
    params: dict[str, Any],
    repeat: int,
    namespace: str = "",
    history: Sequence[tuple[str, str]] = (),
) -> str:
    """The key of one reply. ``namespace`` keeps families of calls apart that share
    prompts and repeat indexes (``"rerun"``: --rerun-failures never takes a reply
    cached by --repeats); ``history``, a conversation's earlier turns sent before the
    prompt, is part of what was asked. The defaults leave older caches' keys unchanged."""
    fields: dict[str, Any] = {
        "provider": provider,
        "base_url": base_url or "",
        "model": model,
        "prompt": prompt,
        "params": params,
        "repeat": repeat,
    }
    if namespace:
        fields["namespace"] = namespace
    if history:
        fields["history"] = [list(turn) for turn in history]
    payload = json.dumps(fields, sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(payload.encode()).hexdigest()


@dataclass
class CacheStats:
    hits: int = 0
    misses: int = 0
    writes: int = 0


class CacheUnavailable(SystemFailure):
    """The cache file cannot be opened or written (exit 3 where the cache is the point)."""


class ResponseCache(CacheFile):
    """The reply cache at ``path``: one warning and no cache when it cannot be used, an
    error with ``required=True`` (see :class:`~ragrail.store.cachefile.CacheFile`)."""

    label = "response cache"
    table = "responses"
    migrations = MIGRATIONS
    unavailable = CacheUnavailable

    def __init__(self, path: Path, required: bool = False) -> None:
        self.stats = CacheStats()
        super().__init__(path, required)

    def get(self, key: str) -> dict[str, Any] | None:
        """The cached reply for ``key``, or None (a miss): a row that is not a reply this
        ragrail wrote is a miss too, and the fresh reply replaces it."""
        reply = None
        if self._db is not None:
            try:
                row = self._db.execute(
                    "SELECT reply FROM responses WHERE key = ?", (key,)
                ).fetchone()
            except sqlite3.Error as exc:
                self._disable(exc)
                row = None
            if row is not None:
                reply = _reply(row[0])
        if reply is None:
            self.stats.misses += 1
            return None
        self.stats.hits += 1
        return reply

    def put(self, key: str, provider: str, model: str, reply: dict[str, Any]) -> None:
        if self._db is None:
            return
        try:
            self._db.execute(
                "INSERT OR REPLACE INTO responses (key, provider, model, reply, created)"
                " VALUES (?, ?, ?, ?, ?)",
                (key, provider, model, json.dumps(reply), time.time()),
            )
        except sqlite3.Error as exc:
            # a full disk or a read-only file mid-run: the replies are still used, just not kept
            self._disable(exc)
            return
        self.stats.writes += 1

    def by_model(self) -> list[tuple[str, str, int]]:
        rows = self._query(
            "SELECT provider, model, count(*) FROM responses GROUP BY provider, model ORDER BY 1, 2"
        )
        return [(str(p), str(m), int(n)) for p, m, n in rows]


MAX_TOKENS = 2**53  # as a reply's usage: a larger count is not one


def _reply(text: object) -> dict[str, Any] | None:
    """A cached reply as the call layer stored it, or None for anything else: a row
    edited by hand (nested too deeply, a count no server sends, a lone surrogate that no
    results file could hold) is a miss, and the fresh reply replaces it."""
    try:
        reply = json.loads(text)  # type: ignore[arg-type]
    except (ValueError, TypeError, RecursionError):
        return None
    if not isinstance(reply, dict) or not isinstance(reply.get("text"), str):
        return None
    if _SURROGATE.search(reply["text"]):
        return None
    for field in ("input_tokens", "output_tokens"):
        n = reply.get(field)
        if n is not None and (
            not isinstance(n, int) or isinstance(n, bool) or not 0 <= n <= MAX_TOKENS
        ):
            return None
    return reply


_SURROGATE = re.compile("[\ud800-\udfff]")
