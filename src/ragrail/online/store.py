"""The production-log database, ``.ragrail/logs.sqlite``: conversations after redaction,
their label-free flags, and the golden cases that came from them.

Unlike the reply cache, this file is data nobody can regenerate once the source exports
are gone: a damaged or newer file is refused (exit 2 or 3), never moved aside.
Conversations are keyed by id, so ingesting the same export twice adds nothing.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Iterator
from pathlib import Path

from ragrail.errors import InputError, SystemFailure
from ragrail.online.record import Context, Conversation, Turn
from ragrail.store import statedb

FILE_NAME = "logs.sqlite"
# Seconds since 1970 that are a UTC date, years 1 to 9999: every reader of a stored time
# turns it into one. Ingest refuses any other; an older ragrail let an ISO time with an
# offset past either end through, so the readers leave such a row out (with a warning).
MIN_AT, MAX_AT = -62135596800.0, 253402300799.0

MIGRATIONS: tuple[str, ...] = (
    """
    CREATE TABLE conversations (
        id TEXT PRIMARY KEY,
        at REAL NOT NULL,
        version TEXT NOT NULL,
        user TEXT,
        question TEXT NOT NULL,
        answer TEXT NOT NULL,
        contexts TEXT NOT NULL,
        turns TEXT NOT NULL,
        thumbs INTEGER,
        escalated INTEGER,
        resolved INTEGER,
        latency_ms REAL,
        tokens_in INTEGER,
        tokens_out INTEGER,
        cost REAL,
        flags TEXT NOT NULL DEFAULT ''
    );
    CREATE INDEX conversations_version_at ON conversations (version, at);
    CREATE TABLE ingested_files (
        path TEXT PRIMARY KEY,
        at REAL NOT NULL
    );
    CREATE TABLE golden_from_log (
        case_id TEXT PRIMARY KEY,
        conversation_id TEXT NOT NULL,
        golden TEXT NOT NULL,
        added_at REAL NOT NULL
    );
    """,
)

_COLUMNS = (
    "id, at, version, user, question, answer, contexts, turns, thumbs, escalated, "
    "resolved, latency_ms, tokens_in, tokens_out, cost, flags"
)
_INSERT = f"INSERT OR IGNORE INTO conversations ({_COLUMNS}) VALUES ({', '.join('?' * 16)})"


def _bool(value: bool | None) -> int | None:
    return None if value is None else int(value)


# One encoder for every row: json.dumps with arguments builds a new one per call
_COMPACT = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))


def encode_context(context: Context) -> str:
    """One context as stored: compact JSON ``["id","source","text"]``."""
    return _COMPACT.encode([context.id, context.source, context.text])


def encode_turns(turns: tuple[Turn, ...]) -> str:
    """Follow-up turns as stored: compact JSON ``[["question", at], ...]``."""
    return _COMPACT.encode([[t.question, t.at] for t in turns])


_FRAGMENTS: dict[Context, str] = {}
FRAGMENTS_KEPT = 20_000  # encoded passages remembered (a log repeats its corpus's chunks)


def _fragment(context: Context) -> str:
    """One context as compact JSON (``["id","source","text"]``), encoded once per passage."""
    done = _FRAGMENTS.get(context)
    if done is None:
        if len(_FRAGMENTS) >= FRAGMENTS_KEPT:
            _FRAGMENTS.clear()
        done = _FRAGMENTS[context] = encode_context(context)
    return done


def to_row(c: Conversation) -> tuple[object, ...]:
    """The row a conversation is stored as (contexts and turns as compact JSON)."""
    contexts = "[" + ",".join(map(_fragment, c.contexts)) + "]"
    turns = encode_turns(c.turns) if c.turns else "[]"
    return (
        c.id, c.at, c.version, c.user, c.question, c.answer, contexts, turns, c.thumbs,
        _bool(c.escalated), _bool(c.resolved), c.latency_ms, c.tokens_in, c.tokens_out,
        c.cost, ",".join(c.flags),
    )  # fmt: skip


class DamagedRow(ValueError):
    """A stored row ragrail did not write (the file was edited by hand)."""


def from_row(r: tuple) -> Conversation:
    """The conversation a row holds; DamagedRow when the row is not one ragrail wrote."""
    try:
        return _from_row(r)
    except (ValueError, TypeError, AttributeError) as exc:
        raise DamagedRow(f"conversation {r[0]!r}: {exc}") from None


def _from_row(r: tuple) -> Conversation:
    def flag(value: int | None) -> bool | None:
        return None if value is None else bool(value)

    return Conversation(
        id=r[0], at=r[1], version=r[2], user=r[3], question=r[4], answer=r[5],
        contexts=tuple(Context(*x) for x in json.loads(r[6])),
        turns=tuple(Turn(*t) for t in json.loads(r[7])),
        thumbs=r[8], escalated=flag(r[9]), resolved=flag(r[10]), latency_ms=r[11],
        tokens_in=r[12], tokens_out=r[13], cost=r[14],
        flags=tuple(f for f in r[15].split(",") if f),
    )  # fmt: skip


class LogStore:
    """Open (creating and migrating as needed) the log database at ``path``."""

    def __init__(self, path: Path, create: bool = True) -> None:
        self.path = path
        self._left_out: tuple[int, str] | None = None  # see out_of_range()
        self._warned = False
        if path.is_dir():  # a path the user gave wrong, not a disk failure
            raise InputError("the log database is a directory, not a file", str(path))
        if not create and not path.is_file():
            raise InputError(
                "no production logs yet: run `ragrail logs ingest FILE` first", str(path)
            )
        if not create and path.stat().st_size == 0:  # reading must not make it a database
            raise InputError(
                "an empty file, not a log database: run `ragrail logs ingest FILE` first",
                str(path),
            )
        try:
            if create:
                path.parent.mkdir(parents=True, exist_ok=True)
            self.db = statedb.connect(path)
        except (FileExistsError, NotADirectoryError):
            raise InputError("a folder on the log database's path is a file", str(path)) from None
        except (OSError, sqlite3.Error) as exc:
            raise self._failure(exc) from None
        try:
            # before anything is written to it: --db may name another SQLite file (the
            # reply cache, the run history), which the journal mode alone would change
            self._check_is_log_database()
            # DELETE journal: no -wal file lingers beside the database with old pages in it
            self.db.execute("PRAGMA journal_mode = DELETE")
            statedb.migrate(self.db, MIGRATIONS)
        except statedb.NewerSchema as exc:
            self.db.close()
            raise InputError(f"cannot read this log database: {exc}", str(path)) from None
        except InputError:
            self.db.close()
            raise
        except sqlite3.Error as exc:
            self.db.close()
            raise self._failure(exc) from None

    def _check_is_log_database(self) -> None:
        """InputError unless the file is empty (a new database) or holds the conversations
        table: a ragrail log database, of this version or an older or newer one."""
        tables = {
            r[0] for r in self.db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
        }
        if tables and "conversations" not in tables:
            raise InputError(
                "not a ragrail log database (an SQLite file without its conversations "
                f"table); the log database is {FILE_NAME} in the project's .ragrail folder",
                str(self.path),
            )

    def _failure(self, exc: BaseException) -> Exception:
        if isinstance(exc, sqlite3.Error) and statedb.is_corruption(exc):
            return InputError(f"not a readable log database ({exc})", str(self.path))
        return SystemFailure(f"log database {self.path}: {exc}")

    def add(self, conversations: Iterable[Conversation]) -> int:
        """Insert in one transaction; conversations already stored (by id) are skipped.
        Returns how many were new."""
        return self.add_rows([to_row(c) for c in conversations])

    def add_rows(self, rows: list[tuple[object, ...]]) -> int:
        """:meth:`add` for rows already made by :func:`to_row` (by ingest's worker processes)."""
        try:
            with statedb.write_transaction(self.db):
                before = self.db.total_changes
                self.db.executemany(_INSERT, rows)
                return self.db.total_changes - before
        except sqlite3.Error as exc:
            raise self._failure(exc) from None

    def last_rowid(self) -> int:
        """The largest rowid of a stored conversation (0: none). Rowids only grow and no
        conversation is ever deleted, so the rows up to it are those stored by now."""
        return int(next(self._rows("SELECT coalesce(max(rowid), 0) FROM conversations"))[0])

    def stored_ids(self, ids: list[str], upto: int) -> set[str]:
        """Those of ``ids`` stored in a row up to ``upto`` (a :meth:`last_rowid`), looked up
        by the primary key's index, a few hundred per query."""
        found: set[str] = set()
        for i in range(0, len(ids), 500):
            chunk = ids[i : i + 500]
            found.update(
                r[0]
                for r in self._rows(
                    "SELECT id FROM conversations WHERE rowid <= ? AND id IN "
                    f"({', '.join('?' * len(chunk))})",
                    (upto, *chunk),
                )
            )
        return found

    def _rows(self, sql: str, params: tuple[object, ...] = ()) -> Iterator[tuple]:
        # a for loop, not `yield from`: closing a generator left unfinished would close the
        # cursor too, which fails (and is reported as ignored) once the database is closed
        try:
            for row in self.db.execute(sql, params):  # noqa: UP028
                yield row
        except sqlite3.Error as exc:
            raise self._failure(exc) from None

    def _conversation(self, row: tuple) -> Conversation:
        try:
            return from_row(row)
        except DamagedRow as exc:
            raise InputError(
                f"not a readable log database (a row ragrail did not write: {exc})",
                str(self.path),
            ) from None

    def record_files(self, paths: Iterable[Path], at: float) -> None:
        """Remember the exports ingested, so no output (``sample -o``) overwrites one: by
        the hash of each real path (``outputs.ingested_key``), never the path itself."""
        try:
            with statedb.write_transaction(self.db):
                self.db.executemany(
                    "INSERT OR REPLACE INTO ingested_files VALUES (?, ?)",
                    [(ingested_key(p.resolve()), at) for p in paths],
                )
        except sqlite3.Error as exc:
            raise self._failure(exc) from None


    def conversations(self, version: str | None = None) -> Iterator[Conversation]:
        """Every stored conversation (of one version), oldest first, streamed; one whose
        time is not a date is left out (see :meth:`out_of_range`), with a warning."""
        self._warn_out_of_range()
        where, params = ("AND version = ?", (version,)) if version is not None else ("", ())
        for row in self._rows(
            f"SELECT {_COLUMNS} FROM conversations WHERE at BETWEEN ? AND ? {where} "
            "ORDER BY at, id",
            (MIN_AT, MAX_AT, *params),
        ):
            yield self._conversation(row)

    def out_of_range(self) -> tuple[int, str]:
        """How many stored conversations have a time that is not a date (years 1 to 9999
        in UTC), and the smallest of their ids: written by a ragrail that checked less."""
        if self._left_out is None:
            count, first = next(
                self._rows(
                    "SELECT count(*), min(id) FROM conversations "
                    "WHERE at IS NULL OR NOT at BETWEEN ? AND ?",
                    (MIN_AT, MAX_AT),
                )
            )
            self._left_out = (int(count), first or "")
        return self._left_out

    def _warn_out_of_range(self) -> None:
        count, first = self.out_of_range()
        if count and not self._warned:
            import warnings

            from ragrail.text.guard import visible

            self._warned = True
            warnings.warn(
                f"{self.path}: {count:,} conversation(s) left out (first: "
                f"{visible(first)!r}): their time is not a date (years 1 to 9999 in UTC); "
                "an older ragrail stored them",
                stacklevel=3,
            )

    def get(self, conversation_id: str) -> Conversation | None:
        for row in self._rows(
            f"SELECT {_COLUMNS} FROM conversations WHERE id = ?", (conversation_id,)
        ):
            if not (isinstance(row[1], (int, float)) and MIN_AT <= row[1] <= MAX_AT):
                from ragrail.text.guard import visible

                raise InputError(
                    f"conversation {visible(conversation_id)!r} cannot be used: its time is "
                    "not a date (years 1 to 9999 in UTC); an older ragrail stored it",
                    str(self.path),
                )
            return self._conversation(row)
        return None

    def count(self) -> int:
        return int(next(self._rows("SELECT count(*) FROM conversations"))[0])

    def versions(self) -> list[str]:
        return [
            r[0] for r in self._rows("SELECT DISTINCT version FROM conversations ORDER BY version")
        ]

    def set_flags(self, flags: dict[str, tuple[str, ...]]) -> None:
        """Replace the flags of the given conversations (id -> flags), in one transaction."""
        try:
            with statedb.write_transaction(self.db):
                self.db.executemany(
                    "UPDATE conversations SET flags = ? WHERE id = ?",
                    [(",".join(f), cid) for cid, f in flags.items()],
                )
        except sqlite3.Error as exc:
            raise self._failure(exc) from None

    def record_golden(self, case_id: str, conversation_id: str, golden: str, at: float) -> None:
        """Remember that a golden case came from a logged conversation (``lint`` warns if
        that case later disappears from the golden set)."""
        try:
            with statedb.write_transaction(self.db):
                self.db.execute(
                    "INSERT OR REPLACE INTO golden_from_log VALUES (?, ?, ?, ?)",
                    (case_id, conversation_id, golden, at),
                )
        except sqlite3.Error as exc:
            raise self._failure(exc) from None

    def golden_from_log(self) -> list[tuple[str, str, str, float]]:
        """(case id, conversation id, golden file, when added) for every case made from a log."""
        return list(
            self._rows(
                "SELECT case_id, conversation_id, golden, added_at FROM golden_from_log ORDER BY added_at"
            )
        )

    def close(self) -> None:
        self.db.close()

    def __enter__(self) -> LogStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def log_path(state_dir: Path) -> Path:
    return state_dir / FILE_NAME


def ingested_key(path: Path) -> str:
    """How the log database remembers an export it ingested: the SHA-256 of its real path
    (a path may hold personal data, "logs_bob@example.com.jsonl"; the hash is enough to
    refuse an output over it)."""
    import hashlib

    return "sha256:" + hashlib.sha256(str(path).encode("utf-8", "surrogatepass")).hexdigest()
