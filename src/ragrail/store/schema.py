"""The run history's schema (``.ragrail/history.sqlite``) as numbered migrations: what the
history and the read-only validation reader both need, kept below either."""

from __future__ import annotations

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
    # 4: each validation's labelled pairs, for correcting judged totals by the labels (PPI);
    # no key on case_id: a labels file may label a case twice
    """
    CREATE TABLE judge_validation_pairs (
        validation_id INTEGER NOT NULL REFERENCES judge_validations(id) ON DELETE CASCADE,
        case_id TEXT NOT NULL,
        judge REAL NOT NULL,
        human REAL NOT NULL
    );
    CREATE INDEX judge_validation_pairs_id ON judge_validation_pairs(validation_id);
    """,
    # 5: the run each validation was labelled on (JSON: its date, a digest of its answers
    # and verdicts, its system settings), so a later run is corrected as another run
    # and told when its system is not the labelled one's (labels too old)
    """
    ALTER TABLE judge_validations ADD COLUMN labelled_run TEXT;
    """,
)
