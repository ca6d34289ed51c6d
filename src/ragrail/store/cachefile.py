"""A cache kept in a SQLite file under ``.ragrail/``: the model replies and the dense
retriever's vectors share how such a file is opened, given up on and queried.

A cache that cannot be used (a read-only checkout, an unwritable state folder, a lock
held too long, a full disk, a file from a newer ragrail) costs one warning and the run
goes on without it: every lookup misses and nothing is stored. ``required=True`` (the
``cache`` commands) raises instead: the subclass's ``unavailable`` error, or an
InputError for a newer ragrail's file. Only a damaged file is moved aside.
"""

from __future__ import annotations

import sqlite3
import time
import warnings
from contextlib import suppress
from pathlib import Path

from ragrail.errors import InputError, SystemFailure
from ragrail.fileio import set_aside
from ragrail.store import statedb


def _wal(db: sqlite3.Connection, wait_s: float = statedb.BUSY_TIMEOUT_S) -> None:
    """Switch ``db`` to WAL. Switching a new file needs its exclusive lock, and SQLite
    answers "database is locked" at once, without its busy handler, while another
    process opening the same new file holds it: so wait and try again, as the busy
    timeout would for any other lock."""
    deadline = time.monotonic() + wait_s
    delay = 0.005
    while True:
        try:
            db.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) and "busy" not in str(exc):
                raise
            if time.monotonic() + delay > deadline:
                raise
            time.sleep(delay)
            delay = min(delay * 2, 0.2)


class CacheFile:
    """The cache at ``path`` (None: no cache, ``disabled`` is "off")."""

    label = "cache"  # "response cache": how warnings and errors name it
    table = ""  # the table ``count`` and ``clear`` work on
    migrations: tuple[str, ...] = ()
    unavailable: type[SystemFailure] = SystemFailure

    _db: sqlite3.Connection | None = None  # None: the cache is off (see ``disabled``)

    def __init__(self, path: Path | None, required: bool = False) -> None:
        self.path = path
        self.required = required
        self.disabled: str | None = None if path is not None else "off"  # why it is off
        if path is not None:
            self._db = self._open(path)

    def _open(self, path: Path) -> sqlite3.Connection | None:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            return self._connect(path)
        except OSError as exc:
            self._disable(f"cannot create its folder ({exc.strerror or exc})")
            return None
        except statedb.NewerSchema as exc:
            why = f"written by a newer ragrail ({exc})" if exc.newer else f"edited by hand ({exc})"
            self._disable(why, newer=True)
            return None
        except sqlite3.Error as exc:
            if not statedb.is_corruption(exc):
                self._disable(exc)  # locked, read-only or full: the file is valid
                return None
            damage = exc
        try:
            if statedb.still_corrupt(path):
                with suppress(FileNotFoundError):  # another process moved it first
                    set_aside(path, self.label, damage)
            return self._connect(path)
        except (OSError, sqlite3.Error, statedb.NewerSchema) as exc:
            self._disable(exc)
            return None

    def _connect(self, path: Path) -> sqlite3.Connection:
        # used by one thread at a time, never at once
        db = statedb.connect(path, check_same_thread=False)
        try:
            # WAL with synchronous=NORMAL: each write is still committed as it comes,
            # without an fsync per row stalling the run
            _wal(db)
            db.execute("PRAGMA synchronous=NORMAL")
            statedb.migrate(db, self.migrations)
        except BaseException:
            db.close()
            raise
        return db

    def _disable(self, reason: object, newer: bool = False) -> None:
        """Turn the cache off for this run with one warning (or raise, when required)."""
        if self.required:
            if newer:
                fix = "upgrade ragrail" if "newer" in str(reason) else "remove it (it is rebuilt)"
                raise InputError(f"the {self.label} was {reason}: {fix}", str(self.path))
            raise self.unavailable(f"cannot use the {self.label} {self.path}: {reason}")
        if self.disabled is None:
            warnings.warn(
                f"cannot use the {self.label} {self.path} ({reason}); going on without it",
                stacklevel=4,
            )
        self.disabled = str(reason)
        self.close()
        return None

    def _query(self, sql: str) -> list[tuple]:
        """One statement for the ``cache`` commands: a failure is ``unavailable``."""
        if self._db is None:
            raise self.unavailable(f"cannot use the {self.label} {self.path}: {self.disabled}")
        try:
            return self._db.execute(sql).fetchall()
        except sqlite3.Error as exc:
            raise self.unavailable(f"cannot use the {self.label} {self.path}: {exc}") from None

    def count(self) -> int:
        return int(self._query(f"SELECT count(*) FROM {self.table}")[0][0])

    def clear(self) -> int:
        n = self.count()
        self._query(f"DELETE FROM {self.table}")
        self._query("VACUUM")
        return n

    def close(self) -> None:
        if self._db is not None:
            self._db.close()
            self._db = None
