"""Ingesting production-log exports: mapping, redaction, bad rows, idempotency, streaming."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ragrail.errors import InputError
from ragrail.online import ingest as ingest_module
from ragrail.online.ingest import check_inputs, ingest
from ragrail.online.redact import user_key
from ragrail.online.store import LogStore
from ragrail.project import LogsConfig


def row(i: int, **extra: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "id": f"c{i}",
        "timestamp": 1_704_067_200 + i,
        "version": "v1",
        "user": f"u{i}",
        "question": f"How long do refunds take? ({i})",
        "answer": "Refunds take 14 days [refunds.md].",
        "contexts": [{"id": "refunds.md#1", "source": "refunds.md", "text": "14 days."}],
    }
    base.update(extra)
    return base


def write_jsonl(path: Path, rows: list[Any]) -> Path:
    lines = [r if isinstance(r, str) else json.dumps(r, ensure_ascii=False) for r in rows]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def run(paths: list[Path], config: LogsConfig | None = None, db: Path | None = None) -> Any:
    store = LogStore(db or paths[0].parent / "logs.sqlite")
    try:
        report = ingest(paths, config or LogsConfig(), store)
        return report, {c.id: c for c in store.conversations()}
    finally:
        store.close()


def test_fields_are_mapped_and_normalised(tmp_path: Path) -> None:
    log = write_jsonl(
        tmp_path / "log.jsonl",
        [
            row(1, thumbs="up", escalated=True, resolved=0, latency_ms=812.5, tokens_in=900,
                tokens_out="120", cost=0.0042,
                turns=[{"question": "and for shoes?", "timestamp": "2024-01-01T00:05:00Z"},
                       "still there?"]),
            row(2, thumbs=-1, timestamp="2024-01-01T01:00:00+01:00", version=None),
            row(3, thumbs="", timestamp="2024-01-01 00:00:03", contexts=["a bare passage"]),
            row(4, thumbs=False, user=None, contexts=None),
        ],
    )  # fmt: skip
    report, stored = run([log])
    assert (report.lines, report.added, report.already, report.bad) == (4, 4, 0, 0)
    one = stored["c1"]
    assert (one.thumbs, one.escalated, one.resolved) == (1, True, False)
    assert (one.latency_ms, one.tokens_in, one.tokens_out, one.cost) == (812.5, 900, 120, 0.0042)
    assert one.at == 1_704_067_201.0
    assert [(t.question, t.at) for t in one.turns] == [
        ("and for shoes?", 1_704_067_500.0),
        ("still there?", None),
    ]
    assert [(c.id, c.source, c.text) for c in one.contexts] == [
        ("refunds.md#1", "refunds.md", "14 days.")
    ]
    assert one.user == user_key("u1")
    two = stored["c2"]
    assert (two.thumbs, two.at, two.version) == (-1, 1_704_067_200.0, "unknown")
    three = stored["c3"]
    assert three.thumbs is None and three.at == 1_704_067_203.0  # naive ISO: UTC
    assert [(c.id, c.text) for c in three.contexts] == [("0", "a bare passage")]
    four = stored["c4"]
    assert (four.thumbs, four.user, four.contexts, four.escalated) == (-1, None, (), None)


def test_milliseconds_and_dotted_paths(tmp_path: Path) -> None:
    config = LogsConfig(
        id="meta.conversation_id", timestamp="meta.ts", timestamp_unit="ms",
        question="request.messages.0.content", answer="response.text",
        contexts="retrieval.docs", context_id="doc_id", context_source="meta.file",
        context_text="content.body", thumbs="feedback.vote", version="meta.variant",
    )  # fmt: skip
    log = write_jsonl(
        tmp_path / "log.ndjson",
        [
            {
                "meta": {"conversation_id": 77, "ts": 1_704_067_200_500, "variant": "B"},
                "request": {"messages": [{"content": "Where is my parcel?"}]},
                "response": {"text": "It ships in 2 days."},
                "retrieval": {"docs": [{"doc_id": "d1", "meta": {"file": "ship.md"},
                                        "content": {"body": "Ships in 2 days."}}]},
                "feedback": {"vote": "down"},
            }
        ],
    )  # fmt: skip
    report, stored = run([log], config)
    assert report.added == 1
    conv = stored["77"]
    assert (conv.at, conv.version, conv.question, conv.answer, conv.thumbs) == (
        1_704_067_200.5, "B", "Where is my parcel?", "It ships in 2 days.", -1
    )  # fmt: skip
    assert [(c.id, c.source, c.text) for c in conv.contexts] == [
        ("d1", "ship.md", "Ships in 2 days.")
    ]


def test_reingesting_adds_nothing(tmp_path: Path) -> None:
    log = write_jsonl(tmp_path / "log.jsonl", [row(i) for i in range(5)])
    first, _ = run([log])
    second, stored = run([log])
    assert (first.added, first.already) == (5, 0)
    assert (second.lines, second.added, second.already) == (5, 0, 5)
    assert len(stored) == 5


def test_bad_rows_are_counted_by_line_and_the_rest_goes_in(tmp_path: Path) -> None:
    secret = "sekrit-value-never-echoed"
    lines = [
        json.dumps(row(1)),
        '{"id": "c2", "question": ',  # 2: invalid JSON
        json.dumps({k: v for k, v in row(3).items() if k != "question"}),  # 3: no question
        json.dumps(row(4)).replace('"timestamp": 1704067204', '"timestamp": NaN'),  # 4
        json.dumps(row(5, thumbs=secret)),  # 5: a vote that is no vote
        json.dumps(row(6, question=["a", "list"])),  # 6: wrong type
        json.dumps(row(7, timestamp=10**30)),  # 7: no date
        "",  # 8: blank, skipped without a word
        json.dumps(row(9, contexts=[{"text": 5}])),  # 9
        json.dumps(row(10, latency_ms=-3)),  # 10
        "[1, 2]",  # 11
        json.dumps(row(12, timestamp="yesterday-ish")),  # 12
        json.dumps(row(13)),
    ]
    log = write_jsonl(tmp_path / "log.jsonl", lines)
    report, stored = run([log])
    assert sorted(stored) == ["c1", "c13"]
    assert (report.lines, report.added, report.bad) == (12, 2, 10)
    got = [(b.line, b.field) for b in report.first_bad]
    assert got == [
        (2, "-"), (3, "question"), (4, "-"), (5, "thumbs"), (6, "question"), (7, "timestamp"),
        (9, "contexts.0.text"), (10, "latency_ms"), (11, "-"), (12, "timestamp"),
    ]  # fmt: skip
    assert "NaN" in report.first_bad[2].reason
    assert all(b.file == str(log) for b in report.first_bad)
    assert secret not in repr(report)


def test_huge_figures_are_bad_rows_and_versions_lose_their_spaces(tmp_path: Path) -> None:
    """A cost of 1e308 is finite, but six of them overflowed the signals' sums (exit 3 in
    `ragrail online`); "v1 " from a CSV cell was a second, invisible version."""
    lines = [
        row(1, cost=1e308), row(2, latency_ms="1e300"), row(3, cost=1e30, version="v1 "),
        row(4, version=" "), row(5, version="\tv2\n"),
    ]
    report, stored = run([write_jsonl(tmp_path / "log.jsonl", lines)])
    assert [(b.line, b.field) for b in report.first_bad] == [(1, "cost"), (2, "latency_ms")]
    assert "too large" in report.first_bad[0].reason
    assert {cid: c.version for cid, c in stored.items()} == {
        "c3": "v1", "c4": "unknown", "c5": "v2",
    }  # fmt: skip
    assert stored["c3"].cost == 1e30


def test_only_the_first_bad_rows_are_kept(tmp_path: Path) -> None:
    log = write_jsonl(tmp_path / "log.jsonl", [row(0)] + ["{"] * 25)
    report, _ = run([log])
    assert report.bad == 25 and len(report.first_bad) == ingest_module.SHOWN_BAD


def test_hostile_bytes(tmp_path: Path) -> None:
    good = [json.dumps(row(i)).encode() for i in range(4)]
    log = tmp_path / "log.jsonl"
    log.write_bytes(
        b"\xef\xbb\xbf" + good[0] + b"\r\n"  # BOM, CRLF
        + b'{"id": "x", "question": "caf\xe9"}\r\n'  # 2: Latin-1, not UTF-8
        + good[1] + b"\r\n"
        + json.dumps(row(9, question="\\ud800 lone")).replace("\\\\ud800", "\\ud800").encode()
        + b"\n"  # 4: a lone surrogate escape
        + b'{"id": 1' + b"9" * 5000 + b"}\n"  # 5: an integer Python will not read
        + b"[" * 100_000 + b"\n"  # 6: nested past the recursion limit
        + good[2] + b"\n" + good[3]  # no final newline
    )  # fmt: skip
    report, stored = run([log])
    assert sorted(stored) == ["c0", "c1", "c2", "c3"]
    assert [(b.line, b.field) for b in report.first_bad] == [(2, "-"), (4, "-"), (5, "-"), (6, "-")]
    assert "UTF-8" in report.first_bad[0].reason


def test_csv_with_json_cells(tmp_path: Path) -> None:
    contexts = json.dumps([{"id": "a#1", "source": "a", "text": "Refunds, 14 days."}])
    log = tmp_path / "log.csv"
    log.write_bytes(
        (
            "\ufeffid,timestamp,version,question,answer,contexts,thumbs,escalated,latency_ms,turns\r\n"
            f'c1,1704067200,v2,"Multi\nline, question?",Fourteen days.,"{contexts.replace(chr(34), 2 * chr(34))}",up,yes,120,\r\n'
            "c2,2024-01-01T00:00:00Z,v2,Q2,A2,,,no,,\r\n"
            "c3,1704067200,v2,Q3,A3,[oops,,,,\r\n"
            "c4,1704067200,v2,Q4,A4,,sideways,,,\r\n"
            "c5,1704067200,v2,Q5\r\n"
            "c6,nan,v2,Q6,A6,,,,,\r\n"
        ).encode()
    )  # fmt: skip
    report, stored = run([log])
    assert sorted(stored) == ["c1", "c2"]
    one = stored["c1"]
    assert one.question == "Multi\nline, question?"
    assert (one.thumbs, one.escalated, one.latency_ms) == (1, True, 120.0)
    assert [c.text for c in one.contexts] == ["Refunds, 14 days."]
    assert stored["c2"].escalated is False and stored["c2"].thumbs is None
    # c1 spans lines 2-3, so c3 is on line 5
    assert [(b.line, b.field) for b in report.first_bad] == [
        (5, "contexts"), (6, "thumbs"), (7, "-"), (8, "timestamp"),
    ]  # fmt: skip


def test_csv_needs_the_required_columns(tmp_path: Path) -> None:
    log = tmp_path / "log.csv"
    log.write_text("id,timestamp,prompt,answer\nc1,1,Q,A\n", encoding="utf-8")
    with pytest.raises(InputError, match="no column 'question'") as exc:
        check_inputs([log], LogsConfig())
    assert exc.value.where == f"{log}:1"
    _, stored = run([log], LogsConfig(question="prompt"))
    assert stored["c1"].question == "Q"


@pytest.mark.parametrize(
    ("name", "content", "says"),
    [
        ("empty.jsonl", "", "has no rows"),
        ("blank.jsonl", "\n\n  \n", "has no rows"),
        ("allbad.jsonl", '{"id": "a"}\n{"id": "b"}\n', "no valid row"),
        ("log.txt", json.dumps(row(1)), "format"),
    ],
)
def test_unusable_files_are_input_errors(
    tmp_path: Path, name: str, content: str, says: str
) -> None:
    path = tmp_path / name
    path.write_text(content, encoding="utf-8")
    with pytest.raises(InputError, match=says):
        check_inputs([path], LogsConfig())


def test_all_bad_names_the_first_bad_line(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "log.jsonl", ["", '{"id": "a", "timestamp": 1}'])
    with pytest.raises(InputError) as exc:
        check_inputs([path], LogsConfig())
    assert exc.value.where == f"{path}:2" and "question: missing" in exc.value.message


def test_missing_and_directory_and_format_override(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="not found"):
        check_inputs([tmp_path / "nope.jsonl"], LogsConfig())
    (tmp_path / "dir.jsonl").mkdir()
    with pytest.raises(InputError, match="directory"):
        check_inputs([tmp_path / "dir.jsonl"], LogsConfig())
    odd = write_jsonl(tmp_path / "export.log", [row(1)])
    assert check_inputs([odd], LogsConfig(format="jsonl")) == [(odd, "jsonl")]


def test_rows_are_stored_in_batches(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Streaming: rows go to the store a batch at a time, never all at once."""
    monkeypatch.setattr(ingest_module, "BATCH", 2)
    sizes: list[int] = []
    original = LogStore.add

    def add(self: LogStore, conversations: Any) -> int:
        batch = list(conversations)
        sizes.append(len(batch))
        return original(self, batch)

    monkeypatch.setattr(LogStore, "add", add)
    log = write_jsonl(tmp_path / "log.jsonl", [row(i) for i in range(5)])
    seen: list[tuple[int, int]] = []
    store = LogStore(tmp_path / "logs.sqlite")
    try:
        report = ingest([log], LogsConfig(), store, progress=lambda d, t: seen.append((d, t)))
    finally:
        store.close()
    assert sizes == [2, 2, 1] and report.added == 5
    size = log.stat().st_size
    assert seen[-1] == (size, size) and all(d <= t == size for d, t in seen)


PLANTED = {
    "emails": ["ana.perez@example.com", "jürgen.müller@beispiel.de", "bob+log@mail.example.org"],
    "phones": ["+44 20 7946 0958", "(415) 555-2671", "030 1234567"],
    "cards": ["4111 1111 1111 1111", "5500-0000-0000-0004", "378282246310005"],
}


def planted_log(path: Path) -> Path:
    """Every string field of the rows carries personal data (ids and versions too)."""
    e, p, c = PLANTED["emails"], PLANTED["phones"], PLANTED["cards"]
    rows = []
    for i in range(30):
        rows.append(
            {
                "id": f"{i} {e[i % 3]}",
                "timestamp": 1_704_067_200 + i,
                "version": f"v1 {p[i % 3]}",
                "user": e[(i + 1) % 3],
                "question": f"I'm {e[i % 3]}, call {p[i % 3]}; card {c[i % 3]}?",
                "answer": f"We wrote to {e[(i + 2) % 3]} and charged {c[(i + 1) % 3]}.",
                "contexts": [
                    {"id": f"{e[i % 3]}#{i}", "source": p[i % 3], "text": f"Phone {p[(i + 1) % 3]}"}
                ],
                "turns": [{"question": f"my card is {c[(i + 2) % 3]}", "timestamp": 1_704_067_300}],
            }
        )
    return write_jsonl(path, rows)


def forms(value: str) -> list[bytes]:
    """The value as written, its digits alone, and its local part (for e-mail addresses)."""
    out = [value.encode()]
    digits = "".join(ch for ch in value if ch.isdigit())
    if len(digits) >= 7:
        out.append(digits.encode())
    if "@" in value:
        out.append(value.split("@")[0].encode())
    return out


def test_planted_personal_data_reaches_no_byte_of_the_database(tmp_path: Path) -> None:
    folder = tmp_path / "state"
    log = planted_log(tmp_path / "log.jsonl")
    report, stored = run([log], db=folder / "logs.sqlite")
    assert report.added == 30  # ids holding personal data are stored hashed: still distinct
    blobs = [p.read_bytes() for p in folder.iterdir() if p.is_file()]
    assert blobs
    for values in PLANTED.values():
        for value in values:
            for form in forms(value):
                assert not any(form in blob for blob in blobs), form
    from ragrail.online.mapping import RowMapper

    one = stored[RowMapper(LogsConfig()).redact_id(f"0 {PLANTED['emails'][0]}")]
    assert one.id.startswith("[id ")
    assert "[email]" in one.question and "[phone]" in one.question and "[card]" in one.question
    assert one.contexts[0].source == "[phone]" and one.turns[0].question == "my card is [card]"


def test_worker_processes_store_exactly_what_one_process_stores(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A large JSON Lines file is read by worker processes; the database, the counts and the
    bad rows (in file order) must be those of reading it here, including a BOM on line 1,
    a duplicate id (the first is kept) and bad rows spread over several batches."""
    lines = [json.dumps(row(i, thumbs="down" if i % 7 == 0 else None)) for i in range(1, 120)]
    lines[0] = "\ufeff" + lines[0]
    lines[30] = "{"  # line 31: invalid JSON
    lines[70] = json.dumps(row(5, question="a later row with an id seen before"))
    lines[90] = json.dumps(row(91, question="mail me at ana@example.com"))
    lines.insert(100, "")
    log = tmp_path / "log.jsonl"
    log.write_text("\n".join(lines) + "\n", encoding="utf-8")
    monkeypatch.setattr(ingest_module, "PARALLEL_FROM_BYTES", 1)
    monkeypatch.setattr(ingest_module, "LINES_PER_TASK", 16)
    monkeypatch.setattr(ingest_module, "BATCH", 25)
    results = []
    for workers in (1, 2):
        db = tmp_path / f"w{workers}.sqlite"
        with LogStore(db) as store:
            report = ingest([log], LogsConfig(), store, workers=workers)
            stored = list(store.conversations())
        results.append((report, stored))
    (one, stored_one), (two, stored_two) = results
    assert stored_two == stored_one
    assert len(stored_one) == 117  # 119 lines with text, one bad, one repeated id
    assert (two.lines, two.added, two.already, two.bad) == (119, 117, 1, 1)
    assert (one.lines, one.added, one.already, one.bad) == (119, 117, 1, 1)
    assert [(b.line, b.field) for b in two.first_bad] == [(31, "-")]
    by_id = {c.id: c for c in stored_two}
    assert by_id["c5"].question == "How long do refunds take? (5)"
    assert by_id["c91"].question == "mail me at [email]"


def test_integers_past_64_bits_are_read_as_written(tmp_path: Path) -> None:
    """The fast reader turns a 21-digit integer into a float; the standard reader's
    reading must decide: an id keeps every digit, a token count too large for the
    database is a bad row (not a crash), an exponent is still a number."""
    lines = [
        json.dumps(row(1, id=123456789012345678901, user=98765432109876543210987)),
        json.dumps(row(2, tokens_in=10**30)),
        json.dumps(row(3, latency_ms=10**25)),
    ]
    log = write_jsonl(tmp_path / "log.jsonl", lines)
    report, stored = run([log])
    assert sorted(stored) == ["123456789012345678901", "c3"]
    assert stored["123456789012345678901"].user == user_key("98765432109876543210987")
    assert stored["c3"].latency_ms == 1e25
    assert [(b.line, b.field, b.reason) for b in report.first_bad] == [
        (2, "tokens_in", "number too large")
    ]


_KILLED_PARENT = """
import multiprocessing, sys
from concurrent.futures import ProcessPoolExecutor
from ragrail.project import LogsConfig
from ragrail.online import workers

def pid():
    import os
    return os.getpid()

if __name__ == "__main__":
    pool = ProcessPoolExecutor(2, mp_context=multiprocessing.get_context("spawn"),
                               initializer=workers._start_worker,
                               initargs=(LogsConfig().model_dump(),))
    pids = {pool.submit(pid).result() for _ in range(20)}
    print(" ".join(map(str, pids)), flush=True)
    sys.stdin.read()  # until the test kills this process
"""


def test_workers_exit_when_the_ingest_is_killed(tmp_path: Path) -> None:
    """kill -9 of an ingest skips the pool's shutdown: its worker processes must not stay
    behind waiting forever for work (they did before the parent watch)."""
    import os
    import signal
    import subprocess
    import sys
    import time

    script = tmp_path / "parent.py"
    script.write_text(_KILLED_PARENT, encoding="utf-8")
    parent = subprocess.Popen(
        [sys.executable, str(script)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    assert parent.stdout is not None
    workers = [int(p) for p in parent.stdout.readline().split()]
    assert workers
    parent.send_signal(signal.SIGKILL)
    parent.wait()

    def alive(pid: int) -> bool:
        try:
            os.kill(pid, 0)
            return Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"  # a zombie is gone
        except (ProcessLookupError, FileNotFoundError):
            return False

    deadline = time.monotonic() + 20
    while any(alive(p) for p in workers) and time.monotonic() < deadline:
        time.sleep(0.1)
    left = [p for p in workers if alive(p)]
    for p in left:  # never leave them behind, even when the test fails
        os.kill(p, signal.SIGKILL)
    assert not left


def test_the_workers_stored_row_is_the_row_of_the_conversation() -> None:
    """Workers build the database row straight from the JSON; it must be exactly the row
    the conversation would be stored as, for every shape of row."""
    from ragrail.online.mapping import RowMapper
    from ragrail.online.store import to_row

    shapes = [
        row(1),
        row(2, contexts=["a bare passage", {"id": "faq.md#2", "text": "call +44 20 7946 0958"}]),
        row(3, turns=[{"question": "and then?", "timestamp": 1_704_067_260}, "no time"]),
        row(4, thumbs="down", escalated=1, resolved=False, latency_ms=812.5, cost=0.004),
        row(5, tokens_in=900, tokens_out=12, user=None, version=None),
        row(6, contexts=[], question="Wie lange dauert die Erstattung? 返金"),
        row(7, contexts=[{"id": 17, "source": "s", "text": "t"}]),
    ]
    mapper = RowMapper(LogsConfig())
    for shape in shapes * 2:  # the second pass reads passages from the memo
        assert mapper.stored_row(shape) == to_row(mapper.conversation(shape)), shape["id"]


def _csv_log(path: Path, rows: list[str]) -> Path:
    path.write_text("id,timestamp,question,answer\n" + "".join(r + "\n" for r in rows))
    return path


@pytest.mark.parametrize(
    ("broken", "says"),
    [
        ('c2,1704067200,"an open quote,a2', "never closed"),  # read to the end of the file
        ('c2,1704067200,q2,"an open quote', "never closed"),  # ... into a row that parses
        ('c2,1704067200,"an open quote,a2', "expected after"),  # closed by row 9's quote
    ],
    ids=["to-the-end", "to-the-end-in-the-last-cell", "closed-rows-later"],
)
def test_a_quote_left_open_loses_no_row_after_it(tmp_path: Path, broken: str, says: str) -> None:
    """Issue 29: line 3 of 51 opened a quote, the 48 good rows after it went into its cell
    (or its bad row), neither stored nor counted: "2 lines: 1 added, 1 bad", exit 0."""
    rows = [f"c{i},1704067200,q{i},a{i}" for i in range(1, 51)]
    rows[1] = broken
    if says == "expected after":
        rows[8] = 'c9,1704067200,"q9, quoted",a9'
    report, stored = run([_csv_log(tmp_path / "log.csv", rows)])
    assert (report.lines, report.added, report.bad) == (50, 49, 1)
    assert sorted(stored) == sorted(f"c{i}" for i in range(1, 51) if i != 2)
    assert stored["c3"].question == "q3" and stored["c50"].answer == "a50"
    assert stored["c9"].question == ("q9, quoted" if says == "expected after" else "q9")
    bad = report.first_bad[0]
    assert (bad.line, bad.field) == (3, "-")
    assert says in bad.reason and "lines 4-" in bad.reason


def test_a_quoted_cell_over_lines_is_still_one_cell(tmp_path: Path) -> None:
    log = _csv_log(tmp_path / "log.csv", ['c1,1,"two\r\nlines, one cell",a1', "c2,1,q2,a2"])
    report, stored = run([log])
    assert (report.lines, report.added, report.bad) == (2, 2, 0)
    assert stored["c1"].question == "two\r\nlines, one cell"


def test_a_quote_closed_mid_cell_is_a_bad_row_not_a_guess(tmp_path: Path) -> None:
    # '"a"b' was stored as "ab": which of the two the log meant, nobody can say
    log = _csv_log(tmp_path / "log.csv", ['c1,1,"a"b,a1', "c2,1,q2,a2"])
    report, stored = run([log])
    assert sorted(stored) == ["c2"]
    assert [(b.line, b.field) for b in report.first_bad] == [(2, "-")]


def test_a_duplicate_column_among_fifty_thousand_is_named(tmp_path: Path) -> None:
    """Issue 29: the duplicate check counted each column's copies in the whole header
    (61 s for 50,004 columns). Issue 25: the first repeat in header order is named by its
    columns, never by its text (a header cell may be personal data)."""
    extra = [f"x{i}" for i in range(50_000)]
    extra[40_000] = "x7"
    extra[30_000] = "x12"  # repeats column 17, before x7's repeat
    log = tmp_path / "wide.csv"
    header = ["id", "timestamp", "question", "answer", *extra]
    log.write_text(",".join(header) + "\n" + ",".join(["c1", "1", "q", "a"] + [""] * 50_000))
    with pytest.raises(InputError, match=r"same name .*: columns 17 and 30005$") as exc:
        check_inputs([log], LogsConfig())
    assert exc.value.where == f"{log}:1" and "x12" not in exc.value.message


@pytest.mark.parametrize(
    "when",
    ["0001-01-01T00:00:00+01:00", "9999-12-31T23:59:59-01:00", "0001-01-01 00:30:00+00:45"],
)
def test_an_iso_time_outside_years_1_to_9999_in_utc_is_a_bad_row(
    tmp_path: Path, when: str
) -> None:
    """Issue 29: the range check covered numbers only; an ISO time whose offset took it to
    year 0 was stored, then broke `ragrail online` for the whole database."""
    turns = [{"question": "and?", "timestamp": when}]
    lines = [row(1), row(2, timestamp=when), row(3, turns=turns)]
    report, stored = run([write_jsonl(tmp_path / "log.jsonl", lines)])
    assert sorted(stored) == ["c1"]
    assert [(b.line, b.field) for b in report.first_bad] == [
        (2, "timestamp"), (3, "turns.0.timestamp"),
    ]  # fmt: skip
    assert all("out of range for a date" in b.reason for b in report.first_bad)


def test_the_first_and_last_moments_of_the_calendar_are_kept(tmp_path: Path) -> None:
    lines = [row(1, timestamp="0001-01-01T00:00:00Z"), row(2, timestamp="9999-12-31T23:59:59Z")]
    report, stored = run([write_jsonl(tmp_path / "log.jsonl", lines)])
    assert report.added == 2 and stored["c2"].at == 253_402_300_799.0


def test_a_key_given_twice_is_a_bad_row_as_in_every_json_ragrail_reads(tmp_path) -> None:
    """One JSON rule: a log row naming a key twice is refused, as a golden set or results
    file would be, whatever the spacing, nesting or text around it; a row whose text merely
    holds a quoted colon is read as it is."""
    from ragrail.online.mapping import RowMapper
    from ragrail.online.rows import BadRow, jsonl_row
    from ragrail.project import LogsConfig

    mapper = RowMapper(LogsConfig())
    base = '"timestamp": 1704067200, "question": "q", "answer": "a"'
    twice = [
        '{"id": "c1", "id": "c2", ' + base + "}",
        '{"id" : "c1", "id":"c2", ' + base + "}",
        '{"id": "c1", ' + base + ', "contexts": [{"id": "x", "id": "y", "text": "t"}]}',
        '{"id": "c1", ' + base + ', "meta": {"k": 1, "k": 2}, "note": "say \\"hi\\": now"}',
    ]
    for line in twice:
        row = jsonl_row(line.encode(), 1, "log.jsonl", mapper)
        assert isinstance(row, BadRow) and "given twice" in row.reason, line
    fine = '{"id": "c1", ' + base.replace('"a"', '"say \\"hi\\": now"') + "}"
    row = jsonl_row(fine.encode(), 1, "log.jsonl", mapper)
    assert not isinstance(row, BadRow) and row is not None and row.answer == 'say "hi": now'
    for scalar in (b"1", b'"text"', b"[1, 2]"):
        assert isinstance(jsonl_row(scalar, 1, "log.jsonl", mapper), BadRow)
