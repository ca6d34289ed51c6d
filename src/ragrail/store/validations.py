"""Judge validations in the run history: each validation's agreement (what may gate a
run) and its labelled pairs (what corrects judged totals, ``ragrail.judge.correct``)."""

from __future__ import annotations

import json
import math
import sqlite3
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ragrail.errors import InputError, SystemFailure
from ragrail.store import statedb


@dataclass(frozen=True)
class StoredValidation:
    """The latest validation of one judge (key) on one criterion, with its labelled
    (case id, judge verdict, human verdict) pairs as they were labelled (1-5 scores kept),
    and what it kept of the run it was labelled on (``ragrail.judge.correct.labelled_source``;
    None for a validation stored before schema 5, or a hand-edited value that is not a
    JSON object)."""

    id: int
    created_at: str
    pairs: list[tuple[str, float, float]]
    source: dict[str, Any] | None = None


class ValidationStore:
    """The validation tables of :class:`ragrail.store.history.History` (migrations 3-5)."""

    db: sqlite3.Connection

    def _unavailable(self, reason: object) -> SystemFailure:  # each store says its own
        raise NotImplementedError

    def _query(self, sql: str, params: tuple[object, ...] = ()) -> list[tuple]:
        """Rows of one statement; a SQLite error is ``_unavailable``'s failure."""
        try:
            return self.db.execute(sql, params).fetchall()
        except sqlite3.Error as exc:
            raise self._unavailable(exc) from None

    def record_validation(
        self,
        key: str,
        judge: str,
        criterion: str,
        agreement: object,
        source: dict[str, Any] | None = None,
    ) -> int:
        """Store one criterion's agreement and pairs; ``source``: the labelled run."""
        try:
            with statedb.write_transaction(self.db):
                vid = self._insert_validation(key, judge, criterion, agreement)
                if source is not None:
                    self.db.execute(
                        "UPDATE judge_validations SET labelled_run = ? WHERE id = ?",
                        (json.dumps(source, sort_keys=True), vid),
                    )
                return vid
        except sqlite3.Error as exc:
            raise self._unavailable(f"the validation was not recorded ({exc})") from None

    def _insert_validation(self, key: str, judge: str, criterion: str, a: Any) -> int:
        import dataclasses
        from datetime import UTC, datetime

        cur = self.db.execute(
            "INSERT INTO judge_validations (created_at, judge_key, judge, criterion, n, agreement,"
            " kappa, kappa_low, kappa_high, details) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                datetime.now(UTC).isoformat(timespec="seconds"),
                key,
                judge,
                criterion,
                a.n,
                a.agreement,
                a.kappa if a.kappa is not None else a.spearman,
                (a.kappa_ci or a.spearman_ci or (None, None))[0],
                (a.kappa_ci or a.spearman_ci or (None, None))[1],
                json.dumps({k: v for k, v in dataclasses.asdict(a).items() if k != "pairs"}),
            ),
        )
        vid = cur.lastrowid
        assert vid is not None  # set by the INSERT above
        self.db.executemany(
            "INSERT INTO judge_validation_pairs (validation_id, case_id, judge, human)"
            " VALUES (?, ?, ?, ?)",
            [(vid, c, j, h) for c, j, h in a.pairs],
        )
        return vid

    def best_validation(self, key: str, criterion: str) -> tuple[int, float | None, str] | None:
        """The latest validation of this judge on this criterion: (id, kappa, when)."""
        found = self._query(
            "SELECT id, kappa, created_at FROM judge_validations WHERE judge_key = ? AND criterion = ?"
            " ORDER BY id DESC LIMIT 1",
            (key, criterion),
        )
        if not found:
            return None
        row = found[0]
        kappa = row[1] if isinstance(row[1], int | float) and math.isfinite(row[1]) else None
        return int(row[0]), kappa, str(row[2])

    def validation_pairs(self, key: str, criterion: str) -> list[tuple[str, float, float]]:
        """The labelled (case id, judge, human) pairs of :meth:`best_validation`'s row; empty
        when there is none, or it was stored before the pairs were (schema 3)."""
        found = self.latest_validation(key, criterion)
        return found.pairs if found is not None else []

    def latest_validation(self, key: str, criterion: str) -> StoredValidation | None:
        """:meth:`best_validation` with its pairs; None without one. A pair that is not a
        finite number (a hand-edited file) is skipped: it could not have been stored."""
        best = self.best_validation(key, criterion)
        if best is None:
            return None
        rows = self._query(
            "SELECT case_id, judge, human FROM judge_validation_pairs WHERE validation_id = ?"
            " ORDER BY rowid",
            (best[0],),
        )
        pairs = [(str(c), float(j), float(h)) for c, j, h in rows if _finite(j) and _finite(h)]
        return StoredValidation(best[0], best[2], pairs, self._labelled_run(best[0]))

    def _labelled_run(self, vid: int) -> dict[str, Any] | None:
        if int(self._query("PRAGMA user_version")[0][0]) < _SOURCE_SCHEMA:
            return None  # an older history read without migrating it
        found = self._query("SELECT labelled_run FROM judge_validations WHERE id = ?", (vid,))
        if not found or not isinstance(found[0][0], str):
            return None
        try:
            value = json.loads(found[0][0])
        except ValueError:
            return None
        return value if isinstance(value, dict) else None


def _finite(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def load_validations(
    path: Path, wanted: list[tuple[str, str]]
) -> dict[tuple[str, str], StoredValidation]:
    """The latest validation for each wanted (judge key, criterion) in the history at
    ``path``, for a run's judged totals. A read, and only that: no file creates none, an
    older file is not migrated (one before schema 4 holds no pairs: none), a damaged one
    is not moved aside (recording the run does that; ``--no-history`` leaves it be). A
    history that cannot be read (damaged, locked, unreadable, from a newer ragrail) gives
    none too, after one warning: the totals stay uncorrected, and say so, rather than the
    run failing after its answers were paid for."""
    if not wanted or not path.is_file():
        return {}
    try:
        store = _Reader(path)
    except (SystemFailure, InputError) as exc:
        warnings.warn(f"{exc}; judged totals are left uncorrected", stacklevel=2)
        return {}
    found: dict[tuple[str, str], StoredValidation] = {}
    try:
        if store.version < _PAIRS_SCHEMA:
            return {}
        for key, criterion in wanted:
            stored = store.latest_validation(key, criterion)
            if stored is not None:
                found[key, criterion] = stored
    except SystemFailure as exc:
        warnings.warn(f"{exc}; judged totals are left uncorrected", stacklevel=2)
        return {}
    finally:
        store.db.close()
    return found


_PAIRS_SCHEMA = 4  # the history migration that added judge_validation_pairs
_SOURCE_SCHEMA = 5  # the one that added judge_validations.labelled_run


class _Reader(ValidationStore):
    """The validation tables of a history opened read-only (SQLite ``mode=ro``)."""

    def __init__(self, path: Path) -> None:
        from ragrail.store.schema import MIGRATIONS

        self.path = path
        try:
            uri = f"{path.resolve().as_uri()}?mode=ro"
            self.db = sqlite3.connect(uri, uri=True, timeout=statedb.BUSY_TIMEOUT_S)
        except sqlite3.Error as exc:
            raise self._unavailable(exc) from None
        try:
            self.db.execute(f"PRAGMA busy_timeout = {int(statedb.BUSY_TIMEOUT_S * 1000)}")
            self.version = statedb.user_version(self.db)
            statedb.check_version(self.version, len(MIGRATIONS))
        except sqlite3.Error as exc:
            self.db.close()
            raise self._unavailable(exc) from None
        except statedb.NewerSchema as exc:
            self.db.close()
            raise self._unavailable(f"its schema is not this ragrail's ({exc})") from None

    def _unavailable(self, reason: object) -> SystemFailure:
        return SystemFailure(f"cannot read the run history {self.path}: {reason}")
