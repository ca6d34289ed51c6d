"""What the SQLite state files (run history, response cache) share: opening, telling real
corruption from a lock or a read-only disk, and migrating safely with other processes about.

Only corruption ("file is not a database", "database disk image is malformed")
lets a caller move a state file aside. A lock, a permission, a full disk or a
schema clash is never corruption: the file is valid, and moving it aside
would lose every run or reply in it.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

# How long to wait for another process's write lock (a migration, a recorded run)
BUSY_TIMEOUT_S = 30.0

_SQLITE_CORRUPT = 11
_SQLITE_NOTADB = 26


class NewerSchema(Exception):
    """The file was written by a newer ragrail: never migrated, never moved aside."""

    newer = True

    def __init__(self, found: int, known: int) -> None:
        self.found = found
        self.known = known
        super().__init__(f"schema version {found}; this ragrail knows up to {known}")


class UnknownSchema(NewerSchema):
    """A schema version no ragrail writes (below 0: the file was edited by hand). Handled
    as a newer file is (refused, never migrated, never moved aside), with its own reason:
    migrating from a negative version would replay the wrong scripts."""

    newer = False

    def __init__(self, found: int, known: int) -> None:
        super().__init__(found, known)
        self.args = (f"schema version {found}, which no ragrail writes (0 to {known})",)


def check_version(version: int, known: int) -> None:
    """Raise NewerSchema or UnknownSchema for a version this ragrail must not migrate."""
    if version < 0:
        raise UnknownSchema(version, known)
    if version > known:
        raise NewerSchema(version, known)


def is_corruption(exc: sqlite3.Error) -> bool:
    """Whether SQLite says the file itself is damaged (not locked, read-only or full)."""
    code = getattr(exc, "sqlite_errorcode", None)
    if isinstance(code, int):
        return code & 0xFF in (_SQLITE_CORRUPT, _SQLITE_NOTADB)
    message = str(exc)
    return "file is not a database" in message or "malformed" in message


def connect(path: Path, check_same_thread: bool = True) -> sqlite3.Connection:
    """A connection in autocommit mode (transactions are explicit) that waits for locks."""
    db = sqlite3.connect(
        path, timeout=BUSY_TIMEOUT_S, isolation_level=None, check_same_thread=check_same_thread
    )
    try:
        db.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT_S * 1000)}")
        # touches the header and the schema: a damaged file fails here, on open
        db.execute("SELECT count(*) FROM sqlite_master").fetchone()
    except BaseException:
        db.close()
        raise
    return db


def user_version(db: sqlite3.Connection) -> int:
    return int(db.execute("PRAGMA user_version").fetchone()[0])


@contextmanager
def write_transaction(db: sqlite3.Connection) -> Iterator[None]:
    """``BEGIN IMMEDIATE`` ... ``COMMIT``: takes the write lock up front, so two processes
    never both read a state and then both act on it; rolls back on any error."""
    db.execute("BEGIN IMMEDIATE")
    try:
        yield
    except BaseException:
        if db.in_transaction:
            # SQLite may have rolled back already (a full disk, an I/O error)
            with suppress(sqlite3.Error):
                db.execute("ROLLBACK")
        raise
    db.execute("COMMIT")


def statements(script: str) -> list[str]:
    """The statements of a migration script (ragrail's own: no ``;`` inside literals)."""
    return [s.strip() for s in script.split(";") if s.strip()]


def migrate(db: sqlite3.Connection, migrations: tuple[str, ...]) -> int:
    """Apply the migrations the file lacks, all in one write transaction; return the version.

    The version is read again after the write lock is taken: when several
    processes open an old file at once, the first migrates and the others find
    nothing left to do (instead of failing on "table already exists"). A file
    already current takes no lock at all, so it opens on a read-only disk.
    Raises NewerSchema for a file from a newer ragrail.
    """
    known = len(migrations)
    version = user_version(db)
    check_version(version, known)
    if version == known:
        return version
    with write_transaction(db):
        version = user_version(db)
        check_version(version, known)
        for number, script in enumerate(migrations[version:], start=version + 1):
            for statement in statements(script):
                db.execute(statement)
            db.execute(f"PRAGMA user_version = {number}")
    return known


def peek_version(path: Path) -> int:
    """The schema version of an existing file, read without writing anything (no migration,
    no journal): for checks before a run that may yet end in exit 2."""
    db = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True, timeout=BUSY_TIMEOUT_S)
    try:
        return user_version(db)
    finally:
        db.close()


def still_corrupt(path: Path) -> bool:
    """Check again, on a fresh connection, just before moving a file aside.

    Another process may have set the damaged file aside and started a valid
    one at the same path meanwhile: that one must not be moved too.
    """
    if not path.is_file():
        return False
    try:
        db = sqlite3.connect(path, timeout=BUSY_TIMEOUT_S)
    except sqlite3.Error:
        return False
    try:
        db.execute("PRAGMA user_version").fetchone()
        db.execute("SELECT count(*) FROM sqlite_master").fetchone()
        return False
    except sqlite3.Error as exc:
        return is_corruption(exc)
    finally:
        db.close()
