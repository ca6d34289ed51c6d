"""The response cache as a state file: a cache that cannot be used is one warning and a run
without it; only a damaged file is moved aside; rows it did not write are misses."""

from __future__ import annotations

import json
import sqlite3
import time
from pathlib import Path

import pytest

from ragrail.calls.cache import CacheUnavailable, ResponseCache
from ragrail.errors import InputError
from ragrail.store import statedb
from tests.helpers import asides

REPLY = {"text": "ok", "input_tokens": 3, "output_tokens": 1}


def failing_connect(message: str):
    def connect(path: Path, check_same_thread: bool = True) -> sqlite3.Connection:
        raise sqlite3.OperationalError(message)

    return connect


def test_a_cache_round_trip_survives_reopening(tmp_path):
    path = tmp_path / "cache.sqlite"
    cache = ResponseCache(path)
    assert cache.get("k") is None
    cache.put("k", "openai", "m", REPLY)
    cache.close()
    again = ResponseCache(path)
    assert again.get("k") == REPLY and again.count() == 1
    assert (again.stats.hits, again.stats.misses) == (1, 0)
    assert statedb.user_version(again._db) == 1


def test_a_cache_from_before_versioning_is_kept(tmp_path):
    path = tmp_path / "cache.sqlite"
    db = sqlite3.connect(path)
    db.execute(
        "CREATE TABLE responses (key TEXT PRIMARY KEY, provider TEXT NOT NULL,"
        " model TEXT NOT NULL, reply TEXT NOT NULL, created REAL NOT NULL)"
    )
    db.execute("INSERT INTO responses VALUES ('k', 'p', 'm', ?, 0)", (json.dumps(REPLY),))
    db.commit()
    db.close()
    cache = ResponseCache(path)
    assert cache.get("k") == REPLY
    assert statedb.user_version(cache._db) == 1 and asides(tmp_path) == []


@pytest.mark.parametrize(
    "message",
    [
        "attempt to write a readonly database",
        "unable to open database file",
        "database is locked",
        "database or disk is full",
    ],
)
def test_an_unusable_cache_is_one_warning_and_a_run_without_it(tmp_path, monkeypatch, message):
    path = tmp_path / "cache.sqlite"
    ResponseCache(path).close()
    before = path.read_bytes()
    monkeypatch.setattr(statedb, "connect", failing_connect(message))
    with pytest.warns(UserWarning, match="going on without it") as caught:
        cache = ResponseCache(path)
    assert len(caught) == 1 and message in str(caught[0].message)
    assert cache.disabled == message
    cache.put("k", "p", "m", REPLY)  # nothing stored, nothing raised
    assert cache.get("k") is None and cache.stats.misses == 1 and cache.stats.writes == 0
    cache.close()
    assert path.read_bytes() == before and asides(tmp_path) == []
    with pytest.raises(CacheUnavailable, match=message):
        ResponseCache(path, required=True)


def test_a_state_folder_that_is_a_file_is_a_warning(tmp_path):
    (tmp_path / ".ragrail").write_text("x")
    with pytest.warns(UserWarning, match="cannot create its folder"):
        cache = ResponseCache(tmp_path / ".ragrail" / "cache.sqlite")
    assert cache.get("k") is None


def test_a_disk_that_fills_mid_run_stops_storing_but_keeps_answering(tmp_path):
    cache = ResponseCache(tmp_path / "cache.sqlite")
    cache.put("k", "p", "m", REPLY)

    class FullDisk:
        """Stands in for the connection once the disk is full (sqlite3's is not patchable)."""

        def __init__(self, real: sqlite3.Connection) -> None:
            self.real = real

        def execute(self, sql: str, params: tuple = ()) -> sqlite3.Cursor:
            if sql.startswith("INSERT"):
                raise sqlite3.OperationalError("database or disk is full")
            return self.real.execute(sql, params)

        def close(self) -> None:
            self.real.close()

    cache._db = FullDisk(cache._db)  # type: ignore[assignment]
    with pytest.warns(UserWarning, match="database or disk is full") as caught:
        cache.put("k2", "p", "m", REPLY)
        cache.put("k3", "p", "m", REPLY)  # off now: no second warning
    assert len(caught) == 1
    assert cache.get("k") is None  # the cache is off for the rest of the run
    assert asides(tmp_path) == []
    assert ResponseCache(tmp_path / "cache.sqlite").get("k") == REPLY  # nothing lost


def test_a_cache_from_a_newer_ragrail_is_left_alone(tmp_path):
    path = tmp_path / "cache.sqlite"
    ResponseCache(path).close()
    sqlite3.connect(path).execute("PRAGMA user_version = 7").connection.close()
    before = path.read_bytes()
    with pytest.warns(UserWarning, match="newer ragrail"):
        cache = ResponseCache(path)
    assert cache.get("k") is None
    with pytest.raises(InputError, match="newer ragrail"):
        ResponseCache(path, required=True)
    assert path.read_bytes() == before and asides(tmp_path) == []


def test_a_damaged_cache_is_set_aside_under_a_unique_name(tmp_path, monkeypatch):
    monkeypatch.setattr(time, "strftime", lambda fmt, *args: "20260101-000000")
    path = tmp_path / "cache.sqlite"
    for n in (1, 2):
        path.write_bytes(f"garbage {n} ".encode() * 100)
        with pytest.warns(UserWarning, match="could not be read"):
            ResponseCache(path).close()
    assert len(asides(tmp_path)) == 2


@pytest.mark.parametrize(
    "stored",
    [
        "not json",
        "[1, 2]",
        '{"input_tokens": 3}',
        '{"text": 5}',
        '{"text": "ok", "input_tokens": -1}',
        '{"text": "ok", "output_tokens": "many"}',
        # hand edits that once crashed the run that read them
        '{"text": "ok", "input_tokens": 100000000000000000000000000000}',
        '{"text": "a\\ud800b"}',
        "[" * 100_000 + "]" * 100_000,
    ],
    ids=["text", "array", "no-text", "text-number", "negative", "many", "1e29", "surrogate", "deep"],
)
def test_a_row_that_is_not_a_reply_is_a_miss_and_is_replaced(tmp_path, stored):
    cache = ResponseCache(tmp_path / "cache.sqlite")
    cache._db.execute("INSERT INTO responses VALUES ('k', 'p', 'm', ?, 0)", (stored,))  # type: ignore[union-attr]
    assert cache.get("k") is None and cache.stats.misses == 1
    cache.put("k", "p", "m", REPLY)
    assert cache.get("k") == REPLY


def test_a_reply_without_usage_is_still_a_reply(tmp_path):
    cache = ResponseCache(tmp_path / "cache.sqlite")
    reply = {"text": "ok", "input_tokens": None, "output_tokens": None}
    cache.put("k", "p", "m", reply)
    assert cache.get("k") == reply


def test_cache_stats_on_a_newer_cache_exits_2(cli, tmp_path):
    path = tmp_path / ".ragrail" / "cache.sqlite"
    path.parent.mkdir()
    ResponseCache(path).close()
    sqlite3.connect(path).execute("PRAGMA user_version = 7").connection.close()
    r = cli("cache", "stats")
    assert r.code == 2 and "newer ragrail" in r.err and "Traceback" not in r.err
    r = cli("cache", "clear")
    assert r.code == 2


def test_a_cache_with_a_negative_schema_version_is_refused_not_migrated(cli, tmp_path):
    """A version below 0 was written by hand: migrating from it would replay the wrong
    scripts. A run goes on without the cache; the cache commands say why (exit 2)."""
    path = tmp_path / ".ragrail" / "cache.sqlite"
    path.parent.mkdir()
    ResponseCache(path).close()
    sqlite3.connect(path).execute("PRAGMA user_version = -3").connection.close()
    with pytest.warns(UserWarning, match="edited by hand"):
        cache = ResponseCache(path)
    assert cache.disabled is not None
    r = cli("cache", "stats")
    assert r.code == 2 and "edited by hand" in r.err and "Traceback" not in r.err
    assert statedb.peek_version(path) == -3  # left as it was
