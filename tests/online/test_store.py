"""The log database: round trips, idempotent adds, and files it must refuse rather than lose."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from ragrail.errors import InputError
from ragrail.online.record import Context, Conversation, Turn
from ragrail.online.store import MIGRATIONS, LogStore


def _conv(cid: str, at: float = 1.0, version: str = "v1", **kw: object) -> Conversation:
    return Conversation(id=cid, at=at, version=version, question="q " + cid, answer="a", **kw)  # type: ignore[arg-type]


def test_every_field_round_trips(tmp_path: Path) -> None:
    full = Conversation(
        id="c1", at=1_764_000_000.5, version="v2", question="Wie lange? 返金", answer="30 Tage",
        user="u9", contexts=(Context("refunds#1", "refunds", "Text, \"quoted\""),),
        turns=(Turn("and then?", 1_764_000_060.0), Turn("no time")),
        thumbs=-1, escalated=True, resolved=False, latency_ms=812.5, tokens_in=900,
        tokens_out=120, cost=0.0042, flags=("unfaithful", "pii"),
    )  # fmt: skip
    with LogStore(tmp_path / "logs.sqlite") as store:
        store.add([full, _conv("bare")])
        assert store.get("c1") == full
        bare = store.get("bare")
    assert bare is not None
    assert (bare.thumbs, bare.escalated, bare.resolved, bare.cost, bare.flags) == (
        None, None, None, None, (),
    )  # fmt: skip


def test_adding_the_same_ids_again_adds_nothing(tmp_path: Path) -> None:
    with LogStore(tmp_path / "logs.sqlite") as store:
        assert store.add([_conv("a"), _conv("b")]) == 2
        assert store.add([_conv("b"), _conv("c")]) == 1
        assert store.count() == 3


def test_conversations_stream_oldest_first_and_filter_by_version(tmp_path: Path) -> None:
    with LogStore(tmp_path / "logs.sqlite") as store:
        store.add([_conv("late", 30.0), _conv("early", 10.0), _conv("other", 20.0, "v2")])
        assert [c.id for c in store.conversations()] == ["early", "other", "late"]
        assert [c.id for c in store.conversations("v1")] == ["early", "late"]
        assert store.versions() == ["v1", "v2"]


def test_flags_are_replaced_per_conversation(tmp_path: Path) -> None:
    with LogStore(tmp_path / "logs.sqlite") as store:
        store.add([_conv("a"), _conv("b")])
        store.set_flags({"a": ("pii",), "b": ()})
        store.set_flags({"a": ("unfaithful",)})
        assert [c.flags for c in store.conversations()] == [("unfaithful",), ()]


def test_golden_provenance_is_kept(tmp_path: Path) -> None:
    with LogStore(tmp_path / "logs.sqlite") as store:
        store.record_golden("refund-late", "c7", "golden.json", 5.0)
        store.record_golden("refund-late", "c8", "golden.json", 6.0)  # re-added: latest wins
        assert store.golden_from_log() == [("refund-late", "c8", "golden.json", 6.0)]


def test_a_missing_database_is_not_created_when_reading(tmp_path: Path) -> None:
    path = tmp_path / "logs.sqlite"
    with pytest.raises(InputError, match="ragrail logs ingest"):
        LogStore(path, create=False)
    assert not path.exists()


def test_a_damaged_file_is_refused_and_left_in_place(tmp_path: Path) -> None:
    path = tmp_path / "logs.sqlite"
    path.write_bytes(b"not a database at all" * 100)
    before = path.read_bytes()
    with pytest.raises(InputError, match="not a readable log database"):
        LogStore(path)
    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["logs.sqlite"]


def test_a_newer_schema_is_refused_not_migrated(tmp_path: Path) -> None:
    path = tmp_path / "logs.sqlite"
    LogStore(path).close()
    db = sqlite3.connect(path)
    db.execute(f"PRAGMA user_version = {len(MIGRATIONS) + 1}")
    db.commit()
    db.close()
    with pytest.raises(InputError, match=r"schema version \d+; this ragrail knows up to 1"):
        LogStore(path)


def test_no_write_ahead_log_is_left_beside_the_file(tmp_path: Path) -> None:
    with LogStore(tmp_path / "logs.sqlite") as store:
        store.add([_conv("a")])
    assert sorted(p.name for p in tmp_path.iterdir()) == ["logs.sqlite"]


def test_a_path_through_a_file_or_a_folder_is_an_input_error(tmp_path: Path) -> None:
    """A --db naming a folder, or a path under a file, is the user's mistake (exit 2), not
    a disk failure (exit 3)."""
    with pytest.raises(InputError, match="is a directory"):
        LogStore(tmp_path)
    (tmp_path / "file").write_text("x", encoding="utf-8")
    with pytest.raises(InputError, match="is a file"):
        LogStore(tmp_path / "file" / "logs.sqlite")
    assert (tmp_path / "file").read_text(encoding="utf-8") == "x"


# Times an older ragrail stored: an ISO time whose offset took it past year 1 or 9999
BEFORE_YEAR_1, AFTER_YEAR_9999 = -62_135_600_400.0, 253_402_304_399.0


def test_a_time_that_is_not_a_date_is_left_out_with_one_warning(tmp_path: Path) -> None:
    """Issue 29: one such row made `online` exit 3 ("year 0 is out of range") for the
    whole database."""
    with LogStore(tmp_path / "logs.sqlite") as store:
        store.add(
            [_conv("ok", 5.0), _conv("zz-early", BEFORE_YEAR_1), _conv("late", AFTER_YEAR_9999)]
        )
        left_out = r"2 conversation\(s\) left out \(first: 'late'\)"
        with pytest.warns(UserWarning, match=left_out) as seen:
            assert [c.id for c in store.conversations()] == ["ok"]
            assert [c.id for c in store.conversations("v1")] == ["ok"]
        assert len(seen) == 1  # once per database opened, not once per pass over it
        assert store.out_of_range() == (2, "late")
        with pytest.raises(InputError, match="'late' cannot be used: its time is not a date"):
            store.get("late")
        assert store.get("ok") is not None


def test_the_first_and_last_dates_are_not_left_out(tmp_path: Path) -> None:
    from ragrail.online.store import MAX_AT, MIN_AT

    with LogStore(tmp_path / "logs.sqlite") as store:
        store.add([_conv("first", MIN_AT), _conv("last", MAX_AT)])
        assert [c.id for c in store.conversations()] == ["first", "last"]
        assert store.out_of_range() == (0, "")


def test_a_pass_left_unfinished_is_quiet_after_close(tmp_path: Path, monkeypatch) -> None:
    """Closing the database before a generator over it was finished made Python print
    "Exception ignored ... Traceback" when the generator was collected."""
    import gc
    import sys

    reported: list[object] = []
    monkeypatch.setattr(sys, "unraisablehook", reported.append)
    store = LogStore(tmp_path / "logs.sqlite")
    store.add([_conv("a"), _conv("b")])
    rows = store.conversations()
    next(rows)
    store.close()
    del rows
    gc.collect()
    assert reported == []


def test_another_sqlite_file_is_refused_before_anything_is_written(tmp_path: Path) -> None:
    """Issue 29: `logs ingest --db .ragrail/cache.sqlite` exited 3 ("no such table") and
    switched the reply cache's journal mode on the way."""
    from ragrail.calls.cache import ResponseCache

    path = tmp_path / "cache.sqlite"
    ResponseCache(path).close()
    before = path.read_bytes()
    for create in (True, False):
        with pytest.raises(InputError, match="not a ragrail log database") as exc:
            LogStore(path, create=create)
        assert exc.value.where == str(path)
    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cache.sqlite"]
