"""Issue 25: ingesting a stored export again reads no row past its id; a line too long to
hold is a bad row; a [logs] field no row has is a warning; Ctrl-C is one line, exit 130."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from ragrail.online import ingest as ingest_module
from ragrail.online import rows as rows_module
from ragrail.online.ingest import ingest
from ragrail.online.mapping import RowMapper
from ragrail.online.store import LogStore
from ragrail.project import LogsConfig
from tests.online.test_ingest import row, write_jsonl
from tests.online.test_ingest_privacy import conversations_dump, write_csv


def counting(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Count the rows mapped (and so redacted) in this process."""
    mapped = [0]
    original = RowMapper._fields

    def fields(self: RowMapper, data: Any) -> Any:
        mapped[0] += 1
        return original(self, data)

    monkeypatch.setattr(RowMapper, "_fields", fields)
    return mapped


def test_a_stored_id_is_skipped_before_its_row_is_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    lines = [row(i) for i in range(1, 6)]
    lines.append({"timestamp": 1_704_067_300, "id": "c6", "question": "q", "answer": "a"})
    lines.append(row(7, id=7))  # a numeric id
    lines.append(row(8, id="c8 ana@example.com"))  # stored redacted
    log = write_jsonl(tmp_path / "log.jsonl", lines)
    db = tmp_path / "logs.sqlite"
    with LogStore(db) as store:
        first = ingest([log], LogsConfig(), store)
    before = conversations_dump(db)
    mapped = counting(monkeypatch)
    # a new row, and a row whose id is stored but whose rest is no longer valid
    write_jsonl(log, [*lines, row(9), '{"id": "c1", "timestamp": "not a time"'])
    with LogStore(db) as store:
        again = ingest([log], LogsConfig(), store)
    assert (first.added, first.already) == (8, 0)
    assert (again.lines, again.added, again.already, again.bad) == (10, 1, 9, 0)
    assert mapped[0] == 2  # c9, and the first row, read by the check of the file before
    assert conversations_dump(db)[:8] == before


def test_an_id_stored_by_this_same_ingest_is_read_as_the_first_ingest_reads_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Only ids stored before the ingest began are skipped unread: a repeated id inside one
    file counts alike in one process and in worker processes, whatever their batches."""
    monkeypatch.setattr(ingest_module, "PARALLEL_FROM_BYTES", 1)
    monkeypatch.setattr(ingest_module, "LINES_PER_TASK", 3)
    monkeypatch.setattr(ingest_module, "BATCH", 2)
    log = write_jsonl(tmp_path / "log.jsonl", [row(i) for i in range(1, 9)])
    more = write_jsonl(
        tmp_path / "more.jsonl",
        [row(2), row(10), row(10, timestamp="never"), row(11), row(11), row(3)],
    )
    counts = []
    for workers in (1, 2):
        with LogStore(tmp_path / f"w{workers}.sqlite") as store:
            ingest([log], LogsConfig(), store, workers=workers)
            report = ingest([more], LogsConfig(), store, workers=workers)
        counts.append((report.lines, report.added, report.already, report.bad))
    assert counts == [(6, 2, 3, 1), (6, 2, 3, 1)]


def test_csv_skips_stored_ids_too(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    table = write_csv(tmp_path / "log.csv", [row(i) for i in range(1, 5)])
    db = tmp_path / "logs.sqlite"
    with LogStore(db) as store:
        ingest([table], LogsConfig(), store)
    mapped = counting(monkeypatch)
    with LogStore(db) as store:
        again = ingest([table], LogsConfig(), store)
    assert (again.added, again.already, mapped[0]) == (0, 4, 1)  # 1: the file's check


def test_a_line_too_long_to_hold_is_a_bad_row_and_the_rest_goes_in(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(rows_module, "MAX_LINE", 2000)
    monkeypatch.setattr(rows_module, "_PIECE", 300)
    monkeypatch.setattr(ingest_module, "PARALLEL_FROM_BYTES", 1)
    monkeypatch.setattr(ingest_module, "LINES_PER_TASK", 2)
    log = write_jsonl(
        tmp_path / "log.jsonl",
        [row(1), row(2, answer="x" * 5000), row(3), row(4, answer="y" * 1500)],
    )
    for workers in (1, 2):
        with LogStore(tmp_path / f"w{workers}.sqlite") as store:
            report = ingest([log], LogsConfig(), store, workers=workers)
            assert sorted(c.id for c in store.conversations()) == ["c1", "c3", "c4"]
        assert (report.lines, report.added, report.bad) == (4, 3, 1)
        assert [(b.line, b.reason) for b in report.first_bad] == [(2, rows_module.TOO_LONG)]


def test_an_optional_field_no_row_has_is_warned_about_once(cli, tmp_path: Path) -> None:
    (tmp_path / "ragrail.toml").write_text(
        '[logs]\nthumbs = "feedback.vot"\ncontext_source = "src"\nlatency_ms = "ms"\n',
        encoding="utf-8",
    )
    rows = [row(i, feedback={"vote": "up"}, ms=5.0) for i in range(1, 4)]
    log = write_jsonl(tmp_path / "log.jsonl", rows)
    r = cli("logs", "ingest", str(log), cwd=tmp_path)
    assert r.code == 0, r.err
    warned = [line for line in r.err.splitlines() if "no row read has this field" in line]
    assert warned == [
        "ragrail: warning: [logs] context_source = 'src': no row read has this field, so it "
        "is left empty (a typo in ragrail.toml?)",
        "ragrail: warning: [logs] thumbs = 'feedback.vot': no row read has this field, so it "
        "is left empty (a typo in ragrail.toml?)",
    ]  # the defaults (escalated, cost, turns...) are absent too, and not named
    again = cli("logs", "ingest", str(log), cwd=tmp_path)
    assert again.code == 0 and "no row read" not in again.err  # no row was read at all


_WRAPPER = """
import sys
if __name__ == "__main__":
    from ragrail.online import ingest
    ingest.PARALLEL_FROM_BYTES = 1  # worker processes, whatever the file's size
    ingest.LINES_PER_TASK = 200
    from ragrail.cli.entry import main
    main(sys.argv[1:])
"""


@pytest.mark.timeout(180)
def test_ctrl_c_at_any_moment_is_one_line_and_exit_130(tmp_path: Path) -> None:
    """The terminal sends SIGINT to every process of the group: the ingest and its workers,
    starting or running. One line, exit 130, and the database stays readable."""
    wrapper = tmp_path / "wrap.py"
    wrapper.write_text(_WRAPPER, encoding="utf-8")
    log = tmp_path / "log.jsonl"
    with log.open("w", encoding="utf-8") as fh:
        for i in range(20_000):
            fh.write(json.dumps(row(i, answer="call +44 20 7946 0958 " * 8)) + "\n")
    interrupted = 0
    for delay in (0.4, 0.8, 1.2, 2.0, 3.0):
        db = tmp_path / f"{delay}.sqlite"
        child = subprocess.Popen(
            [sys.executable, str(wrapper), "logs", "ingest", "--db", str(db), str(log)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
            cwd=tmp_path,
        )
        time.sleep(delay)
        os.killpg(child.pid, signal.SIGINT)
        out, err = child.communicate(timeout=60)
        if child.returncode == 0:  # finished first
            assert "20,000 added" in out and not err
            continue
        interrupted += 1
        assert child.returncode == 130, err
        assert err.strip() == "ragrail: interrupted", err
        if db.exists():
            with LogStore(db) as store:
                assert store.count() <= 20_000
    assert interrupted >= 2
