"""Run history: every run recorded in SQLite (``.ragrail/history.sqlite``), for trends.

The schema is versioned with SQLite's ``user_version`` and moved forward by
the numbered migrations below, each applied once, in order, in one write
transaction taken before the version is read (so ten processes opening an old
file at once migrate it once): a database made by an older ragrail is upgraded
in place, never rebuilt. One from a newer ragrail is refused, never touched.
Only a damaged file (SQLite: not a database, malformed) is moved aside, with a
warning; a lock, a read-only checkout or a full disk never is. A run whose
history cannot be written goes on unrecorded, with one warning.
"""

from __future__ import annotations

import json
import math
import os
import sqlite3
import subprocess
import warnings
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path

from pydantic import ValidationError

from ragrail.errors import InputError, SystemFailure
from ragrail.fileio import set_aside
from ragrail.records.results import RunResult
from ragrail.store import statedb
from ragrail.store.schema import MIGRATIONS
from ragrail.store.validations import ValidationStore


@dataclass(frozen=True)
class RunRow:
    id: int
    created_at: str
    name: str
    git_commit: str | None
    git_dirty: bool
    config: dict
    totals: dict
    cost_usd: float | None

    def describe(self) -> str:
        c = self.config
        model = f" {c['model']}" if c.get("model") else ""
        return (
            f"{c.get('chunking', '?')}, k={c.get('top_k', '?')}, {c.get('retriever', '?')}, "
            f"{c.get('answerer', '?')}{model}"
        )


def _json_object(text: object, column: str) -> dict:
    try:
        value = json.loads(text)  # type: ignore[arg-type]
    except (ValueError, TypeError) as exc:
        raise ValueError(f"{column} is not JSON ({exc})") from None
    if not isinstance(value, dict):
        raise ValueError(f"{column} is not a JSON object")
    return value


def _is_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _is_count(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _run_row(r: tuple) -> RunRow:
    """A RunRow from a ``runs`` row, or ValueError saying what ragrail would not have written."""
    run_id, created_at, name, commit, dirty, config, totals, cost = r
    config_d = _json_object(config, "config")
    totals_d = _json_object(totals, "totals")
    stats = totals_d.get("stats", {})
    if not isinstance(stats, dict):
        raise ValueError("totals.stats is not an object")
    for key, stat in stats.items():
        ok = stat is None or (
            isinstance(stat, dict) and (stat.get("value") is None or _is_number(stat["value"]))
        )
        if not ok:
            raise ValueError(f"totals.stats.{key} is not a statistic")
    # the counts the listing computes with (the answer rate, the errors column)
    for key in ("n_cases", "n_answers", "answers_passed", "n_errors", "n_answer_errors"):
        if totals_d.get(key) is not None and not _is_count(totals_d[key]):
            raise ValueError(f"totals.{key} is not a count")
    repeats = config_d.get("repeats", 1)
    if not _is_count(repeats) or repeats < 1:
        raise ValueError("config.repeats is not a positive whole number")
    if not isinstance(created_at, str) or not isinstance(name, str):
        raise ValueError("created_at and name must be text")
    if commit is not None and not isinstance(commit, str):
        raise ValueError("git_commit must be text")
    if cost is not None and not _is_number(cost):
        raise ValueError("cost_usd is not a finite number")
    return RunRow(int(run_id), created_at, name, commit, bool(dirty), config_d, totals_d, cost)


def _git(folder: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=folder, capture_output=True, text=True, timeout=5, check=True
    ).stdout.strip()


def git_commit(folder: Path) -> tuple[str | None, bool]:
    """(HEAD's short hash, whether the tree has uncommitted changes), or (None, False)."""
    try:
        head = _git(folder, "rev-parse", "--short=12", "HEAD")
        dirty = _git(folder, "status", "--porcelain", "--untracked-files=no")
        return head or None, bool(dirty)
    except (OSError, subprocess.SubprocessError):
        return None, False


def _newer(path: Path, exc: statedb.NewerSchema) -> InputError:
    if not exc.newer:
        return InputError(
            f"the run history has {exc}: it was edited by hand; restore it, move it aside, "
            "or run with --no-history",
            str(path),
        )
    return InputError(
        f"the run history was written by a newer ragrail ({exc}): upgrade ragrail, "
        "or run with --no-history",
        str(path),
    )


class HistoryUnavailable(SystemFailure):
    """The history cannot be opened or written: a read-only checkout, an unwritable state
    folder, a lock held too long, a full disk. Exit 3 where the history is the point
    (``ragrail history``); one warning where it is not (a run goes on unrecorded)."""


class History(ValidationStore):
    """The run history. Opening it migrates an older file in place (safely, with other
    processes doing the same); a damaged file is moved aside; a file from a newer ragrail
    is refused (InputError); anything else that stops it is HistoryUnavailable."""

    def __init__(self, path: Path) -> None:
        self.path = path
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise self._unavailable(f"cannot create its folder ({exc.strerror or exc})") from None
        self.db = self._open()

    def _unavailable(self, reason: object) -> HistoryUnavailable:
        return HistoryUnavailable(f"cannot use the run history {self.path}: {reason}")

    def _open(self) -> sqlite3.Connection:
        try:
            return self._connect()
        except sqlite3.Error as exc:
            if not statedb.is_corruption(exc):
                # locked, read-only, full, or a schema clash: the file is valid, keep it
                raise self._unavailable(exc) from None
            damage = exc
        try:
            if statedb.still_corrupt(self.path):
                with suppress(FileNotFoundError):  # another process moved it first
                    set_aside(self.path, "run history", damage)
            return self._connect()
        except (OSError, sqlite3.Error) as exc:
            raise self._unavailable(exc) from None

    def _connect(self) -> sqlite3.Connection:
        db = statedb.connect(self.path)
        try:
            db.execute("PRAGMA foreign_keys = ON")
            statedb.migrate(db, MIGRATIONS)
        except statedb.NewerSchema as exc:
            db.close()
            raise _newer(self.path, exc) from None
        except BaseException:
            db.close()
            raise
        return db

    @property
    def version(self) -> int:
        return statedb.user_version(self.db)

    def record(self, result: RunResult, project_root: Path | None = None) -> int:
        """Store a run and its per-question rows in one transaction; return its id.

        Raises HistoryUnavailable (nothing stored) when the file cannot be written.
        """
        commit, dirty = git_commit(project_root) if project_root else (None, False)
        usage = result.usage
        try:
            with statedb.write_transaction(self.db):
                run_id = self._insert(result, commit, dirty, usage.cost_usd if usage else None)
        except sqlite3.Error as exc:
            raise self._unavailable(f"the run was not recorded ({exc})") from None
        return run_id

    def _insert(
        self, result: RunResult, commit: str | None, dirty: bool, cost: float | None
    ) -> int:
        cur = self.db.execute(
            "INSERT INTO runs (created_at, name, git_commit, git_dirty, config, totals, result, cost_usd)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (
                result.created_at,
                result.config.name,
                commit,
                int(dirty),
                result.config.model_dump_json(),
                result.totals.model_dump_json(),
                result.to_json(),
                cost,
            ),
        )
        run_id = cur.lastrowid
        assert run_id is not None  # set by the INSERT above
        self.db.executemany(
            "INSERT INTO case_results (run_id, case_id, retrieval_recall, answer_pass, cause)"
            " VALUES (?, ?, ?, ?, ?)",
            [
                (
                    run_id,
                    c.id,
                    c.retrieval_recall,
                    None if c.answer_pass is None else int(c.answer_pass),
                    c.cause,
                )
                for c in result.cases
            ],
        )
        return run_id

    def rows(self, limit: int | None = None) -> list[RunRow]:
        """The recorded runs, oldest first; a row ragrail did not write is left out, with
        one warning naming it, rather than breaking the listing."""
        raw = self._query(
            "SELECT id, created_at, name, git_commit, git_dirty, config, totals, cost_usd "
            "FROM runs ORDER BY id"
        )
        rows: list[RunRow] = []
        bad: list[str] = []
        for r in raw:
            try:
                rows.append(_run_row(r))
            except ValueError as exc:
                bad.append(f"run {r[0]}: {exc}")
        if bad:
            more = f" and {len(bad) - 1} more" if len(bad) > 1 else ""
            warnings.warn(
                f"{self.path}: left out runs that cannot be read ({bad[0]}{more})", stacklevel=2
            )
        return rows[-limit:] if limit else rows

    def resolve(self, ref: str) -> int:
        """A run id from ``ref``: an id, ``latest``, or ``-N`` (N-th most recent)."""
        ids = [r[0] for r in self._query("SELECT id FROM runs ORDER BY id")]
        if not ids:
            raise InputError(f"no runs recorded yet in {self.path}: run `ragrail run` first")
        if ref in ("latest", "last"):
            return ids[-1]
        try:
            n = int(ref)
        except ValueError:
            raise InputError(
                f"run {ref!r}: give a run id, 'latest' or -N (see `ragrail history`)"
            ) from None
        if n < 0:
            if -n > len(ids):
                raise InputError(f"run {ref}: only {len(ids)} runs are recorded")
            return ids[n]
        if n not in ids:
            raise InputError(f"no run {n} in {self.path} (see `ragrail history`)")
        return n

    def load(self, ref: str) -> RunResult:
        """The full result of a recorded run; InputError when its row is not a run ragrail
        can read (hand-edited, or from an incompatible version)."""
        run_id = self.resolve(ref)
        [(text,)] = self._query("SELECT result FROM runs WHERE id = ?", (run_id,))
        try:
            return RunResult.model_validate_json(text)
        except ValidationError as exc:
            err = exc.errors()[0]
            field = ".".join(str(p) for p in err["loc"]) or "(top level)"
            reason = f"field {field!r}: {err['msg']}"
        except (ValueError, TypeError) as exc:
            reason = str(exc)
        raise InputError(
            f"run {run_id} cannot be read ({reason}); pick another (see `ragrail history`)",
            str(self.path),
        )

    def close(self) -> None:
        self.db.close()


def _warn_unrecorded(exc: Exception) -> None:
    warnings.warn(f"{exc}; this run is not recorded (it goes on without history)", stacklevel=3)


def check_for_run(path: Path) -> bool:
    """Before a run: can its result be recorded in the history at ``path``?

    Writes nothing (the run may yet end in exit 2, which must leave every file
    as it was): reads the schema version of an existing file, and checks the
    file and its folder can be written. Returns False after one warning when
    they cannot (a read-only checkout, an unwritable state folder): the run
    goes on without history. A history from a newer ragrail raises
    InputError, so the run is refused before any work rather than silently
    unrecorded. A damaged file is left to :func:`record_run` to set aside.
    """

    def unusable(reason: object) -> bool:
        _warn_unrecorded(HistoryUnavailable(f"cannot use the run history {path}: {reason}"))
        return False

    folder = path.parent
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent  # the nearest folder that exists: the rest is created later
    if not folder.is_dir():
        return unusable(f"{folder} is not a folder")
    if path.exists() or path.is_symlink():
        if not path.is_file():
            return unusable("it is not a file")
        try:
            version = statedb.peek_version(path)
        except sqlite3.Error as exc:
            if not statedb.is_corruption(exc):
                return unusable(exc)
        else:
            try:
                statedb.check_version(version, len(MIGRATIONS))
            except statedb.NewerSchema as exc:
                raise _newer(path, exc) from None
        folder = path.parent
    for target in (folder, path) if path.exists() else (folder,):
        if not os.access(target, os.W_OK):
            return unusable(f"{target} is read-only")
    return True


def record_run(path: Path, result: RunResult, project_root: Path | None) -> int | None:
    """Record a finished run; its id, or None after one warning when the history cannot
    take it (the disk filled, a lock was held too long): a run is never lost to, nor
    failed by, its history."""
    try:
        store = History(path)
    except (HistoryUnavailable, InputError) as exc:
        _warn_unrecorded(exc)
        return None
    try:
        return store.record(result, project_root)
    except HistoryUnavailable as exc:
        _warn_unrecorded(exc)
        return None
    finally:
        store.close()
