"""Run history: every run recorded in SQLite (``.ragrail/history.sqlite``), for trends.

The schema is versioned with SQLite's ``user_version`` and moved forward by
the numbered migrations below, each applied once, in order, in a transaction:
a database made by an older ragrail is upgraded in place, never rebuilt.
A file SQLite cannot read is moved aside with a warning, never a crash.
"""

from __future__ import annotations

import json
import sqlite3
import subprocess
from dataclasses import dataclass
from pathlib import Path

from ragrail.errors import InputError
from ragrail.fileio import set_aside
from ragrail.results import RunResult

MIGRATIONS: tuple[str, ...] = (
    # 1: one row per run, the whole result kept as JSON
    """
    CREATE TABLE runs (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        created_at TEXT NOT NULL,
        name TEXT NOT NULL,
        git_commit TEXT,
        config TEXT NOT NULL,
        totals TEXT NOT NULL,
        result TEXT NOT NULL
    );
    """,
    # 2: per-question rows (for queries across runs), cost and a dirty-tree flag
    """
    CREATE TABLE case_results (
        run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
        case_id TEXT NOT NULL,
        retrieval_recall REAL,
        answer_pass INTEGER,
        cause TEXT,
        PRIMARY KEY (run_id, case_id)
    );
    CREATE INDEX case_results_case ON case_results(case_id);
    ALTER TABLE runs ADD COLUMN cost_usd REAL;
    ALTER TABLE runs ADD COLUMN git_dirty INTEGER;
    """,
    # 3: judge validations against human labels (what may gate a run)
    """
    CREATE TABLE judge_validations (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        created_at TEXT NOT NULL,
        judge_key TEXT NOT NULL,
        judge TEXT NOT NULL,
        criterion TEXT NOT NULL,
        n INTEGER NOT NULL,
        agreement REAL,
        kappa REAL,
        kappa_low REAL,
        kappa_high REAL,
        details TEXT NOT NULL
    );
    CREATE INDEX judge_validations_key ON judge_validations(judge_key, criterion);
    """,
)


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
        return f"{c['chunking']}, k={c['top_k']}, {c['retriever']}, {c['answerer']}{model}"


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


class History:
    def __init__(self, path: Path) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        self.db = self._open()

    def _open(self) -> sqlite3.Connection:
        try:
            db = sqlite3.connect(self.path)
            db.execute("PRAGMA foreign_keys = ON")
            self._migrate(db)
            return db
        except sqlite3.DatabaseError as exc:
            set_aside(self.path, "run history", exc)
            db = sqlite3.connect(self.path)
            self._migrate(db)
            return db

    @staticmethod
    def _migrate(db: sqlite3.Connection) -> None:
        version = db.execute("PRAGMA user_version").fetchone()[0]
        for number, sql in enumerate(MIGRATIONS[version:], start=version + 1):
            # one transaction per migration: it applies whole or not at all
            db.executescript(f"BEGIN;\n{sql}\nPRAGMA user_version = {number};\nCOMMIT;")

    @property
    def version(self) -> int:
        return int(self.db.execute("PRAGMA user_version").fetchone()[0])

    def record(self, result: RunResult, project_root: Path | None = None) -> int:
        commit, dirty = git_commit(project_root) if project_root else (None, False)
        usage = result.usage
        with self.db:
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
                    usage.cost_usd if usage else None,
                ),
            )
            run_id = int(cur.lastrowid)
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
        sql = (
            "SELECT id, created_at, name, git_commit, git_dirty, config, totals, cost_usd "
            "FROM runs ORDER BY id"
        )
        rows = [
            RunRow(r[0], r[1], r[2], r[3], bool(r[4]), json.loads(r[5]), json.loads(r[6]), r[7])
            for r in self.db.execute(sql)
        ]
        return rows[-limit:] if limit else rows

    def resolve(self, ref: str) -> int:
        """A run id from ``ref``: an id, ``latest``, or ``-N`` (N-th most recent)."""
        ids = [r[0] for r in self.db.execute("SELECT id FROM runs ORDER BY id")]
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
        run_id = self.resolve(ref)
        row = self.db.execute("SELECT result FROM runs WHERE id = ?", (run_id,)).fetchone()
        return RunResult.model_validate_json(row[0])

    def record_validation(self, key: str, judge: str, criterion: str, agreement: object) -> int:
        import dataclasses
        from datetime import UTC, datetime

        a = agreement
        with self.db:
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
                    json.dumps(dataclasses.asdict(a)),
                ),
            )
        return int(cur.lastrowid)

    def best_validation(self, key: str, criterion: str) -> tuple[int, float | None, str] | None:
        """The latest validation of this judge on this criterion: (id, kappa, when)."""
        row = self.db.execute(
            "SELECT id, kappa, created_at FROM judge_validations WHERE judge_key = ? AND criterion = ?"
            " ORDER BY id DESC LIMIT 1",
            (key, criterion),
        ).fetchone()
        return (int(row[0]), row[1], row[2]) if row else None

    def close(self) -> None:
        self.db.close()
