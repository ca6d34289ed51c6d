"""Issue 25, from the privacy review: a conversation id that looks like personal data is
stored as a hash of itself, never as its redaction (4810000 and 4810001 both read
``[phone]``: a thousand conversations would become one), and an ingested export is
remembered by the hash of its path."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from ragrail.online.ingest import ingest
from ragrail.online.store import LogStore, ingested_key
from ragrail.outputs import ingested
from ragrail.project import LogsConfig
from tests.online.test_ingest import row, write_jsonl
from tests.online.test_ingest_privacy import write_csv


def test_numeric_ids_stay_distinct_and_are_skipped_when_ingested_again(tmp_path: Path) -> None:
    lines = [row(i, id=4_810_000 + i) for i in range(300)]
    lines += [row(300 + i, id=f"ana{i}@example.com") for i in range(5)]
    log = write_jsonl(tmp_path / "logs_bob.secret@example.com.jsonl", lines)
    db = tmp_path / "logs.sqlite"
    with LogStore(db) as store:
        first = ingest([log], LogsConfig(), store)
    with LogStore(db) as store:
        again = ingest([log], LogsConfig(), store)
    assert (first.added, first.already) == (305, 0)
    assert (again.added, again.already) == (0, 305)
    con = sqlite3.connect(db)
    ids = [r[0] for r in con.execute("SELECT id FROM conversations")]
    files = [r[0] for r in con.execute("SELECT path FROM ingested_files")]
    con.close()
    assert len(set(ids)) == 305 and all(i.startswith("[id ") for i in ids)
    assert files == [ingested_key(log.resolve())]
    for path in tmp_path.iterdir():  # the database and anything beside it
        data = path.read_bytes() if path.suffix != ".jsonl" else b""
        assert b"4810001" not in data and b"example.com" not in data, path
    # the guard that keeps outputs off an ingested export still knows it
    assert ingested(db, [log.resolve()]) == {log.resolve()}


def test_an_id_with_no_personal_data_is_stored_as_written(tmp_path: Path) -> None:
    log = write_csv(tmp_path / "log.csv", [row(1, id="conv-00000001"), row(2, id="T-42")])
    db = tmp_path / "logs.sqlite"
    with LogStore(db) as store:
        report = ingest([log], LogsConfig(), store)
    con = sqlite3.connect(db)
    ids = sorted(r[0] for r in con.execute("SELECT id FROM conversations"))
    con.close()
    assert report.added == 2 and ids == ["T-42", "conv-00000001"]
