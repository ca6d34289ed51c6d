"""The response cache: SQLite under ``.ragrail/`` in the project folder.

Keyed on everything that can change a reply: provider, base URL, model, the
full prompt, the call parameters and the repeat index. An unchanged re-run
makes no calls. Each reply is committed as it arrives, so an interrupted run
keeps what finished. A cache file that SQLite cannot read is moved aside
with a warning, never a crash. No API key is ever part of a key or a row.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ragrail.fileio import set_aside

SCHEMA = """
CREATE TABLE IF NOT EXISTS responses (
    key TEXT PRIMARY KEY,
    provider TEXT NOT NULL,
    model TEXT NOT NULL,
    reply TEXT NOT NULL,
    created REAL NOT NULL
)
"""


def cache_key(
    provider: str,
    base_url: str | None,
    model: str,
    prompt: str,
    params: dict[str, Any],
    repeat: int,
) -> str:
    payload = json.dumps(
        {
            "provider": provider,
            "base_url": base_url or "",
            "model": model,
            "prompt": prompt,
            "params": params,
            "repeat": repeat,
        },
        sort_keys=True,
        ensure_ascii=False,
    )
    return hashlib.sha256(payload.encode()).hexdigest()


@dataclass
class CacheStats:
    hits: int = 0
    misses: int = 0
    writes: int = 0


class ResponseCache:
    def __init__(self, path: Path) -> None:
        self.path = path
        self.stats = CacheStats()
        path.parent.mkdir(parents=True, exist_ok=True)
        self._db = self._open()

    def _open(self) -> sqlite3.Connection:
        try:
            db = self._connect()
            db.execute("SELECT count(*) FROM responses").fetchone()
            return db
        except sqlite3.DatabaseError as exc:
            set_aside(self.path, "response cache", exc)
            return self._connect()

    def _connect(self) -> sqlite3.Connection:
        db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        # WAL with synchronous=NORMAL: each reply is still committed as it
        # arrives, without an fsync per row stalling the event loop.
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=NORMAL")
        db.execute(SCHEMA)
        return db

    def get(self, key: str) -> dict[str, Any] | None:
        row = self._db.execute("SELECT reply FROM responses WHERE key = ?", (key,)).fetchone()
        if row is None:
            self.stats.misses += 1
            return None
        self.stats.hits += 1
        return json.loads(row[0])

    def put(self, key: str, provider: str, model: str, reply: dict[str, Any]) -> None:
        self._db.execute(
            "INSERT OR REPLACE INTO responses (key, provider, model, reply, created) VALUES (?, ?, ?, ?, ?)",
            (key, provider, model, json.dumps(reply), time.time()),
        )
        self.stats.writes += 1

    def count(self) -> int:
        return int(self._db.execute("SELECT count(*) FROM responses").fetchone()[0])

    def by_model(self) -> list[tuple[str, str, int]]:
        rows = self._db.execute(
            "SELECT provider, model, count(*) FROM responses GROUP BY provider, model ORDER BY 1, 2"
        )
        return [(p, m, int(n)) for p, m, n in rows]

    def clear(self) -> int:
        n = self.count()
        self._db.execute("DELETE FROM responses")
        self._db.execute("VACUUM")
        return n

    def close(self) -> None:
        self._db.close()
