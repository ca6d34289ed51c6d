"""Issue 25: nothing of a planted value in any byte of the state folder, the outputs or
the messages, and the three ingest paths (one process, worker processes, CSV) store the
same bytes.

The values planted are the formats the README promises to redact (e-mail addresses,
phone numbers written as people write them in the README's examples, payment cards),
in every field a row has: ids, versions, users, questions, answers, passage ids,
sources and texts, follow-up turns, fields no mapping reads, and JSON keys and CSV
header cells, which only an error message could ever repeat.
"""

from __future__ import annotations

import csv
import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from ragrail.online import ingest as ingest_module
from ragrail.online.ingest import ingest
from ragrail.online.store import LogStore
from ragrail.project import LogsConfig

EMAILS = ["ana.perez@example.com", "jürgen.müller@beispiel.de", "bob.secret@example.com"]
PHONES = ["+44 20 7946 0958", "(415) 555-2671", "+1 415 555 2671"]
CARDS = ["4111 1111 1111 1111", "5500-0000-0000-0004", "378282246310005"]
PLANTED = EMAILS + PHONES + CARDS


def forms(value: str) -> list[bytes]:
    """The value as written (UTF-8, and as JSON escapes it), its digits alone, and the
    local part of an e-mail address."""
    out = [value.encode(), json.dumps(value)[1:-1].encode()]
    digits = "".join(ch for ch in value if ch.isdigit())
    if len(digits) >= 7:
        out.append(digits.encode())
    if "@" in value:
        out.append(value.split("@")[0].encode())
    return out


def leaks(blob: bytes) -> list[str]:
    return [v for v in PLANTED for f in forms(v) if f in blob]


def planted_row(i: int) -> dict[str, Any]:
    e, p, c = EMAILS[i % 3], PHONES[i % 3], CARDS[i % 3]
    return {
        "id": f"{i} {e}",
        "timestamp": 1_704_067_200 + i * 60,
        "version": f"v{i % 2}, card {c}",
        "user": EMAILS[(i + 1) % 3],
        "question": f"I'm {e}, call {p}, card {c}?",
        "answer": f"We wrote to {EMAILS[(i + 2) % 3]} and called {PHONES[(i + 1) % 3]}.",
        "contexts": [
            {"id": f"{e}#{i}", "source": f"crm/{c}.md", "text": f"Phone {PHONES[(i + 2) % 3]}"},
            f"bare passage, card {CARDS[(i + 1) % 3]}",
        ],
        "turns": [{"question": f"my card is {CARDS[(i + 2) % 3]}", "timestamp": 1_704_067_300}],
        "thumbs": "down" if i % 4 == 0 else None,
        "escalated": i % 5 == 0,
        "latency_ms": 812.5 + i,
        "tokens_in": 900 + i,
        "cost": 0.004,
        "meta": {"email": e, p: c},  # no mapping reads it: it is never stored
    }


def write_jsonl(path: Path, rows: list[Any]) -> Path:
    lines = [r if isinstance(r, str) else json.dumps(r, ensure_ascii=False) for r in rows]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


CSV_COLUMNS = [
    "id", "timestamp", "version", "user", "question", "answer", "contexts", "turns",
    "thumbs", "escalated", "latency_ms", "tokens_in", "cost",
]  # fmt: skip


def write_csv(path: Path, rows: list[dict[str, Any]]) -> Path:
    """The rows as a CSV export writes them: JSON text in the contexts and turns cells,
    every other cell the value's text."""

    def cell(value: Any) -> str:
        if value is None:
            return ""
        if isinstance(value, bool):
            return "true" if value else "false"
        if isinstance(value, (list, dict)):
            return json.dumps(value, ensure_ascii=False)
        return str(value)

    with path.open("w", encoding="utf-8", newline="") as fh:
        out = csv.writer(fh)
        out.writerow([*CSV_COLUMNS, EMAILS[2]])  # a header cell no mapping reads
        for r in rows:
            out.writerow([cell(r.get(k)) for k in CSV_COLUMNS] + [CARDS[0]])
    return path


def conversations_dump(db: Path) -> list[str]:
    """The conversations table as SQL text, row by row (the ingested-files table names
    the file and the time, which differ between paths by design)."""
    con = sqlite3.connect(db)
    try:
        return [s for s in con.iterdump() if s.startswith('INSERT INTO "conversations"')]
    finally:
        con.close()


def test_one_process_workers_and_csv_store_the_same_bytes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rows = [planted_row(i) for i in range(40)]
    log = write_jsonl(tmp_path / "log.jsonl", rows)
    table = write_csv(tmp_path / "log.csv", rows)
    monkeypatch.setattr(ingest_module, "PARALLEL_FROM_BYTES", 1)
    monkeypatch.setattr(ingest_module, "LINES_PER_TASK", 7)
    dumps = []
    for name, path, workers in (("one", log, 1), ("workers", log, 2), ("csv", table, 1)):
        db = tmp_path / f"{name}.sqlite"
        with LogStore(db) as store:
            report = ingest([path], LogsConfig(), store, workers=workers)
        assert (report.added, report.bad) == (40, 0), name
        dumps.append(conversations_dump(db))
    assert len(dumps[0]) == 40
    assert dumps[1] == dumps[0]
    assert dumps[2] == dumps[0]
    assert not leaks("\n".join(dumps[0]).encode())


def _tree_bytes(folder: Path) -> list[tuple[Path, bytes]]:
    return [(p, p.read_bytes()) for p in sorted(folder.rglob("*")) if p.is_file()]


def test_no_planted_value_in_any_byte_of_the_state_folder_outputs_or_messages(
    cli, tmp_path: Path
) -> None:
    (tmp_path / "ragrail.toml").write_text("[logs]\n", encoding="utf-8")
    rows: list[Any] = [planted_row(i) for i in range(30)]
    # bad rows whose only way out would be the message naming them
    e, c = EMAILS[2], CARDS[0]
    rows.append(f'{{"id": "b1", "timestamp": 1, "question": "q", "answer": "a", "{e}": NaN}}')
    rows.append(
        f'{{"id": "b2", "timestamp": 1, "question": "q", "answer": "a", "{e}": 1, "{e}": 2}}'
    )
    rows.append(
        f'{{"id": "b3", "timestamp": 1, "question": "q", "answer": "a", "m": {{"{c}": "\\ud800"}}}}'
    )
    rows.append({"id": "b4", "timestamp": "2024-13-45", "question": e, "answer": c})
    rows.append(
        {"id": "b5", "timestamp": 1, "question": "q", "answer": "a", "contexts": [{e: c}, 5]}
    )
    log = write_jsonl(tmp_path / "export.jsonl", rows)
    table = write_csv(tmp_path / "export.csv", [planted_row(i) for i in range(30, 40)])
    said: list[str] = []
    for args in (
        ("logs", "ingest", str(log)),
        ("logs", "ingest", str(log)),  # again: every id already stored
        ("logs", "ingest", str(table)),
        ("logs", "score"),
        ("online", "--by", "all", "--json", "signals.json", "--html", "signals.html"),
        ("sample", "-n", "8", "-o", "sample.csv"),
        ("sample", "-n", "8", "-o", "sample.jsonl"),
    ):
        r = cli(*args, cwd=tmp_path)
        assert r.code == 0, (args, r.err)
        said += [r.out, r.err]
    first = said[0]
    assert "35 lines" in first and "30 added" in first and "5 bad" in first
    assert "#" in first  # the keys are named by position
    # a CSV header naming a column twice, the name being personal data: exit 2, no name
    twice = tmp_path / "twice.csv"
    twice.write_text(f"id,timestamp,question,answer,{e},{e}\nc1,1,q,a,x,y\n", encoding="utf-8")
    r = cli("logs", "ingest", str(twice), cwd=tmp_path)
    assert r.code == 2 and "columns 5 and 6" in r.err
    said += [r.out, r.err]
    for text in said:
        assert not leaks(text.encode()), text
    state = tmp_path / ".ragrail"
    files = _tree_bytes(state) + [
        (tmp_path / n, (tmp_path / n).read_bytes())
        for n in ("signals.json", "signals.html", "sample.csv", "sample.jsonl")
    ]
    assert any(p.name == "logs.sqlite" for p, _ in files)
    for path, blob in files:
        assert not leaks(blob), path
    with LogStore(state / "logs.sqlite") as store:
        stored = {c.id: c for c in store.conversations()}
    assert len(stored) == 40
    from ragrail.online.mapping import RowMapper

    one = stored[RowMapper(LogsConfig()).redact_id(f"1 {EMAILS[1]}")]  # stored hashed
    assert one.question == "I'm [email], call [phone], card [card]?"
    assert one.contexts[0].id == "[email]#1" and one.turns[0].question.endswith("[card]")
