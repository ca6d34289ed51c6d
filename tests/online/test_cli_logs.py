"""`ragrail logs ingest` end to end: summary, exit codes, no state on exit 2, no PII out."""

from __future__ import annotations

import json
from pathlib import Path

from ragrail.online.store import LogStore
from tests.helpers import tree_state
from tests.online.test_ingest import PLANTED, forms, planted_log, row, write_jsonl


def project(folder: Path, logs: str = "") -> Path:
    config = folder / "ragrail.toml"
    config.write_text(f"[logs]\n{logs}", encoding="utf-8")
    return config


def test_ingest_summary_and_reingest(cli, tmp_path: Path) -> None:
    config = project(tmp_path)
    log = write_jsonl(tmp_path / "log.jsonl", [row(1), "{", row(2), {"id": "x"}])
    r = cli("logs", "ingest", "--config", str(config), str(log))
    assert r.code == 0, r.err
    db = tmp_path / ".ragrail" / "logs.sqlite"
    assert f"ingested 4 lines from {log}: 2 added, 0 already stored, 2 bad" in r.out
    assert f"(first: {log}:2: invalid JSON" in r.out and f"{log}:4 timestamp: missing" in r.out
    assert str(db) in r.out
    assert "warning: 2 bad rows skipped (first: " in r.err  # a warning, on stderr
    again = cli("logs", "ingest", "--config", str(config), str(log))
    assert again.code == 0 and "0 added, 2 already stored" in again.out
    with LogStore(db) as store:
        assert store.count() == 2


def test_db_override_and_mapping_from_the_project(cli, tmp_path: Path) -> None:
    config = project(tmp_path, 'question = "prompt"\nredact = ["ACME-\\\\d+"]\n')
    log = write_jsonl(tmp_path / "log.jsonl", [{**row(1), "prompt": "my ACME-991 order?"}])
    db = tmp_path / "elsewhere" / "l.sqlite"
    r = cli("logs", "ingest", "-c", str(config), "--db", str(db), str(log))
    assert r.code == 0, r.err
    with LogStore(db) as store:
        assert store.get("c1").question == "my [redacted] order?"
    assert not (tmp_path / ".ragrail").exists()


def test_input_errors_exit_2_and_write_nothing(cli, tmp_path: Path) -> None:
    config = project(tmp_path)
    good = write_jsonl(tmp_path / "good.jsonl", [row(1)])
    bad = write_jsonl(tmp_path / "bad.jsonl", ['{"id": "a"}'])
    (tmp_path / "folder.jsonl").mkdir()
    (tmp_path / "empty.csv").write_text("", encoding="utf-8")
    cases = [
        ([str(good), str(bad)], f"{bad}:1"),  # the good file is not stored either
        ([str(tmp_path / "missing.jsonl")], "not found"),
        ([str(tmp_path / "folder.jsonl")], "directory"),
        ([str(tmp_path / "empty.csv")], "no rows"),
        ([str(good.with_suffix(".txt"))], "not found"),
    ]
    for files, says in cases:
        r = cli("logs", "ingest", "--config", str(config), *files)
        assert r.code == 2, (files, r.out, r.err)
        assert says in r.err and "Traceback" not in r.err
        assert not (tmp_path / ".ragrail").exists()
    bad_config = project(tmp_path, 'redact = ["(unclosed"]\n')
    r = cli("logs", "ingest", "--config", str(bad_config), str(good))
    assert r.code == 2 and "logs.redact" in r.err
    assert not (tmp_path / ".ragrail").exists()


def test_without_a_project_the_defaults_and_this_folder(cli, tmp_path: Path) -> None:
    log = write_jsonl(tmp_path / "log.jsonl", [row(1)])
    r = cli("logs", "ingest", str(log), cwd=tmp_path)
    assert r.code == 0, r.err
    with LogStore(tmp_path / ".ragrail" / "logs.sqlite") as store:
        assert store.count() == 1


def test_no_planted_personal_data_in_the_output_or_the_files(cli, tmp_path: Path) -> None:
    config = project(tmp_path)
    log = planted_log(tmp_path / "log.jsonl")
    # bad rows whose content is personal data: the summary names them, never echoes them
    with log.open("a", encoding="utf-8") as fh:
        fh.write(json.dumps({"id": PLANTED["emails"][0], "question": PLANTED["cards"][0]}) + "\n")
        fh.write(json.dumps(row(99, thumbs=PLANTED["phones"][0])) + "\n")
    r = cli("logs", "ingest", "--config", str(config), "-v", str(log))
    assert r.code == 0, r.err
    assert "2 bad" in r.out
    state = tmp_path / ".ragrail"
    blobs = [p.read_bytes() for p in state.iterdir() if p.is_file()]
    blobs += [r.out.encode(), r.err.encode()]
    for values in PLANTED.values():
        for value in values:
            for form in forms(value):
                assert not any(form in blob for blob in blobs), form


def test_help_lists_the_group(cli) -> None:
    r = cli("logs", "--help")
    assert r.code == 0 and "ingest" in r.out


def test_no_output_replaces_an_ingested_export(cli, tmp_path: Path) -> None:
    """The exports may be the only copy of the logs: `sample -o` and `online --json/--html`
    onto one of them exit 2 and change no file."""
    config = project(tmp_path)
    log = write_jsonl(tmp_path / "export.jsonl", [row(i) for i in range(1, 4)])
    assert cli("logs", "ingest", "--config", str(config), str(log)).code == 0
    before = tree_state(tmp_path)
    for args in (
        ("sample", "-n", "2", "-o", str(log)),
        ("online", "--json", str(log)),
        ("online", "--html", str(tmp_path / "." / "export.jsonl")),
    ):
        r = cli(*args, "--config", str(config))
        assert r.code == 2, (args, r.out, r.err)
        assert "would overwrite an ingested log export" in r.err
        assert len(r.err.strip().splitlines()) == 1
        assert tree_state(tmp_path) == before


def test_a_hand_edited_row_is_an_input_error_not_a_crash(cli, tmp_path: Path) -> None:
    import sqlite3

    config = project(tmp_path)
    log = write_jsonl(tmp_path / "export.jsonl", [row(1), row(2)])
    assert cli("logs", "ingest", "--config", str(config), str(log)).code == 0
    db = tmp_path / ".ragrail" / "logs.sqlite"
    with sqlite3.connect(db) as conn:
        conn.execute("UPDATE conversations SET contexts = 'not json' WHERE id = 'c2'")
    conn.close()
    for args in (("online",), ("sample", "-n", "1", "-o", str(tmp_path / "s.csv"))):
        r = cli(*args, "--config", str(config))
        assert r.code == 2, (args, r.err)
        assert "not a readable log database" in r.err and "'c2'" in r.err
    assert not (tmp_path / "s.csv").exists()


def test_an_empty_file_given_as_the_database_stays_empty(cli, tmp_path: Path) -> None:
    empty = tmp_path / "empty.sqlite"
    empty.write_bytes(b"")
    r = cli("online", "--db", str(empty))
    assert r.code == 2 and "an empty file, not a log database" in r.err
    assert empty.read_bytes() == b""


def test_a_column_named_twice_is_an_input_error(cli, tmp_path: Path) -> None:
    config = project(tmp_path)
    log = tmp_path / "log.csv"
    log.write_text(
        "id,timestamp,question,answer,question\nc1,1704067200,q one?,a,q two?\n", encoding="utf-8"
    )
    r = cli("logs", "ingest", "--config", str(config), str(log))
    assert r.code == 2
    assert f"{log}:1" in r.err and "column 'question' appears twice" in r.err
    assert not (tmp_path / ".ragrail").exists()


def test_without_a_project_every_log_command_finds_the_one_database(cli, tmp_path: Path) -> None:
    """Logs can be studied before any golden set exists: in a folder without ragrail.toml,
    ingest writes ./.ragrail/logs.sqlite and online, logs score and sample read it."""
    log = write_jsonl(tmp_path / "export.jsonl", [row(i, thumbs="down") for i in range(1, 6)])
    assert cli("logs", "ingest", str(log), cwd=tmp_path).code == 0
    online = cli("online", "--by", "all", "--json", "-", cwd=tmp_path)
    assert online.code == 0, online.err
    assert json.loads(online.out)["database"] == str(tmp_path / ".ragrail" / "logs.sqlite")
    score = cli("logs", "score", cwd=tmp_path)
    assert score.code == 0 and "5 conversation(s) scored" in score.out
    sample = cli("sample", "-n", "2", "-o", "s.csv", cwd=tmp_path)
    assert sample.code == 0, sample.err
    assert (tmp_path / "s.csv").read_text(encoding="utf-8").count("thumbs-down") == 2
