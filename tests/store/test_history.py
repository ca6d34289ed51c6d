"""The run history as a state file: read-only checkouts, locks, full disks, damaged files,
files from a newer ragrail, rows it did not write, and many processes at once."""

from __future__ import annotations

import multiprocessing
import os
import sqlite3
import time
from pathlib import Path

import pytest

from ragrail.errors import InputError
from ragrail.records.results import RunResult, load_run
from ragrail.store import statedb
from ragrail.store.history import (
    MIGRATIONS,
    History,
    HistoryUnavailable,
    check_for_run,
    record_run,
)
from tests.helpers import KITEBASE_V1, asides

OLD_CONFIG = '{"chunking": "x", "top_k": 3, "retriever": "standin", "answerer": "standin"}'


@pytest.fixture(scope="module")
def run_result() -> RunResult:
    return load_run(KITEBASE_V1)


def old_history(path: Path, runs: int = 1) -> None:
    """A history as ragrail's first schema left it: user_version 1, ``runs`` only."""
    db = sqlite3.connect(path)
    db.executescript(MIGRATIONS[0] + "PRAGMA user_version = 1;")
    for i in range(runs):
        db.execute(
            "INSERT INTO runs (created_at, name, config, totals, result) VALUES (?, ?, ?, '{}', '{}')",
            (f"2024-01-0{i + 1}T00:00:00", f"old-{i}", OLD_CONFIG),
        )
    db.commit()
    db.close()


def read_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """Open every state file the way SQLite does on a read-only checkout.

    Tests run as root, which ignores permission bits; SQLite's own read-only
    mode gives the real errors ("attempt to write a readonly database",
    "unable to open database file").
    """

    def connect(path: Path, check_same_thread: bool = True) -> sqlite3.Connection:
        return sqlite3.connect(
            f"file:{path}?mode=ro",
            uri=True,
            timeout=1,
            isolation_level=None,
            check_same_thread=check_same_thread,
        )

    monkeypatch.setattr(statedb, "connect", connect)


# ---------------------------------------------------------------- migrations


def test_an_old_history_is_migrated_in_place_keeping_its_runs(tmp_path, run_result):
    path = tmp_path / "history.sqlite"
    old_history(path, runs=2)
    store = History(path)
    assert store.version == len(MIGRATIONS)
    assert [r.name for r in store.rows()] == ["old-0", "old-1"]
    run_id = store.record(run_result)
    assert store.load(str(run_id)).config.name == run_result.config.name
    store.close()
    assert asides(tmp_path) == []


def test_a_schema_3_history_keeps_its_validations_and_stores_pairs_after_migrating(tmp_path):
    from ragrail.judge.validate import Agreement

    path = tmp_path / "history.sqlite"
    db = sqlite3.connect(path)
    db.executescript("".join(MIGRATIONS[:3]) + "PRAGMA user_version = 3;")
    db.execute(
        "INSERT INTO judge_validations (created_at, judge_key, judge, criterion, n, agreement,"
        " kappa, kappa_low, kappa_high, details) VALUES"
        " ('2024-01-01T00:00:00', 'k1', 'claude', 'polite', 2, 1.0, 0.7, 0.5, 0.9, '{}')"
    )
    db.commit()
    db.close()
    store = History(path)
    assert store.version == len(MIGRATIONS)
    # the old validation still counts, but has no pairs to correct a total with
    assert store.best_validation("k1", "polite")[:2] == (1, 0.7)
    assert store.validation_pairs("k1", "polite") == []
    a = Agreement(criterion="polite", scale="pass_fail", n=3, kappa=0.8)
    a.pairs = [("q1", 1.0, 0.0), ("q2", 1.0, 1.0), ("q1", 1.0, 0.0)]  # a case labelled twice
    assert store.record_validation("k1", "claude", "polite", a) == 2
    assert store.validation_pairs("k1", "polite") == a.pairs  # the latest validation's
    store.close()


def test_a_history_from_a_newer_ragrail_is_refused_and_left_alone(tmp_path):
    path = tmp_path / "history.sqlite"
    old_history(path)
    sqlite3.connect(path).execute(f"PRAGMA user_version = {len(MIGRATIONS) + 5}").connection.close()
    before = path.read_bytes()
    with pytest.raises(InputError, match="newer ragrail") as info:
        History(path)
    assert info.value.where == str(path) and "--no-history" in str(info.value)
    with pytest.raises(InputError):
        check_for_run(path)  # a run is refused up front, not silently unrecorded
    assert path.read_bytes() == before and asides(tmp_path) == []


# ---------------------------------------------------------------- what is not corruption


def test_a_read_only_old_history_is_one_warning_and_left_alone(tmp_path, monkeypatch, run_result):
    path = tmp_path / "history.sqlite"
    old_history(path)
    before = path.read_bytes()
    read_only(monkeypatch)
    with pytest.raises(HistoryUnavailable, match="readonly") as info:
        History(path)  # it needs migrating, which needs writing
    assert info.value.exit_code == 3 and str(path) in str(info.value)
    with pytest.warns(UserWarning, match="not recorded") as caught:
        assert record_run(path, run_result, None) is None
    assert len(caught) == 1
    assert path.read_bytes() == before and asides(tmp_path) == []


def test_the_check_before_a_run_writes_nothing(tmp_path):
    path = tmp_path / "history.sqlite"
    assert check_for_run(tmp_path / "new" / "history.sqlite") is True
    assert os.listdir(tmp_path) == []  # a run that ends in exit 2 must leave no history
    old_history(path)
    before = path.read_bytes()
    assert check_for_run(path) is True
    assert path.read_bytes() == before  # not migrated yet: record_run does that


@pytest.mark.parametrize("exists", [True, False])
def test_the_check_before_a_run_warns_about_a_read_only_folder(tmp_path, monkeypatch, exists):
    path = tmp_path / "history.sqlite"
    if exists:
        old_history(path)
    before = sorted(os.listdir(tmp_path))
    # tests run as root, which ignores permission bits: stand in for a read-only checkout
    monkeypatch.setattr("ragrail.store.history.os.access", lambda target, mode: False)
    with pytest.warns(UserWarning, match="is read-only; this run is not recorded") as caught:
        assert check_for_run(path) is False
    assert len(caught) == 1 and sorted(os.listdir(tmp_path)) == before


def test_a_read_only_current_history_still_reads_but_a_record_is_a_warning(
    tmp_path, monkeypatch, run_result
):
    path = tmp_path / "history.sqlite"
    History(path).close()
    before = path.read_bytes()
    read_only(monkeypatch)
    store = History(path)  # current already: no write needed to open it
    assert store.rows() == []
    with pytest.raises(HistoryUnavailable, match="not recorded"):
        store.record(run_result)
    store.close()
    with pytest.warns(UserWarning, match="readonly") as caught:
        assert record_run(path, run_result, None) is None
    assert len(caught) == 1
    assert path.read_bytes() == before and asides(tmp_path) == []


def test_a_missing_history_on_a_read_only_disk_is_one_warning(tmp_path, monkeypatch, run_result):
    read_only(monkeypatch)
    with pytest.warns(UserWarning, match="unable to open") as caught:
        assert record_run(tmp_path / "history.sqlite", run_result, None) is None
    assert len(caught) == 1 and os.listdir(tmp_path) == []


def test_a_state_folder_that_is_a_file_is_one_warning(tmp_path):
    (tmp_path / ".ragrail").write_text("not a folder")
    path = tmp_path / ".ragrail" / "history.sqlite"
    with pytest.warns(UserWarning, match=r"\.ragrail is not a folder"):
        assert check_for_run(path) is False
    with pytest.raises(HistoryUnavailable, match="cannot create its folder"):
        History(path)
    assert (tmp_path / ".ragrail").read_text() == "not a folder"


def test_a_locked_history_is_not_moved_aside(tmp_path, monkeypatch):
    path = tmp_path / "history.sqlite"
    old_history(path)
    monkeypatch.setattr(statedb, "BUSY_TIMEOUT_S", 0.05)
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")  # another process in the middle of a long write
    try:
        with pytest.raises(HistoryUnavailable, match="locked"):
            History(path)
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert asides(tmp_path) == []
    assert [r.name for r in History(path).rows()] == ["old-0"]


@pytest.mark.parametrize(
    "message", ["database or disk is full", "disk I/O error", "database is locked"]
)
def test_a_full_disk_or_lock_is_not_corruption(tmp_path, monkeypatch, message):
    path = tmp_path / "history.sqlite"
    old_history(path)

    def failing(path: Path, check_same_thread: bool = True) -> sqlite3.Connection:
        raise sqlite3.OperationalError(message)

    monkeypatch.setattr(statedb, "connect", failing)
    with pytest.raises(HistoryUnavailable, match=message):
        History(path)
    assert asides(tmp_path) == []


def test_a_schema_clash_is_not_corruption(tmp_path):
    path = tmp_path / "history.sqlite"
    db = sqlite3.connect(path)  # someone else's database at user_version 0, with a runs table
    db.execute("CREATE TABLE runs (x)")
    db.commit()
    db.close()
    with pytest.raises(HistoryUnavailable, match="already exists"):
        History(path)
    assert asides(tmp_path) == []
    assert sqlite3.connect(path).execute("PRAGMA user_version").fetchone() == (0,)


# ---------------------------------------------------------------- real corruption


def _error_of(path: Path, sql: str = "SELECT count(*) FROM sqlite_master") -> sqlite3.Error:
    db = sqlite3.connect(path, timeout=0)
    try:
        db.execute(sql).fetchall()
    except sqlite3.Error as exc:
        return exc
    finally:
        db.close()
    raise AssertionError("no error")


def test_only_sqlite_s_own_corruption_errors_count_as_corruption(tmp_path):
    garbage = tmp_path / "garbage.sqlite"
    garbage.write_bytes(b"not a database" * 100)
    assert statedb.is_corruption(_error_of(garbage))
    locked = tmp_path / "locked.sqlite"
    holder = sqlite3.connect(locked, isolation_level=None)
    holder.execute("CREATE TABLE t (x)")
    holder.execute("BEGIN EXCLUSIVE")
    try:
        error = _error_of(locked)
        assert "locked" in str(error) and not statedb.is_corruption(error)
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    clash = _error_of(locked, "CREATE TABLE t (y)")
    assert "already exists" in str(clash) and not statedb.is_corruption(clash)
    assert not statedb.is_corruption(sqlite3.OperationalError("database or disk is full"))


def test_a_damaged_history_is_set_aside_and_a_new_one_started(tmp_path, run_result):
    path = tmp_path / "history.sqlite"
    path.write_bytes(b"this is not a database at all" * 100)
    with pytest.warns(UserWarning, match="could not be read"):
        store = History(path)
    assert store.rows() == []
    assert store.record(run_result) == 1
    [aside] = asides(tmp_path)
    assert (tmp_path / aside).read_bytes() == b"this is not a database at all" * 100


def test_two_asides_in_the_same_second_both_survive(tmp_path, monkeypatch):
    monkeypatch.setattr(time, "strftime", lambda fmt, *args: "20260101-000000")
    path = tmp_path / "history.sqlite"
    for n in (1, 2):
        path.write_bytes(f"damaged file number {n}".encode() * 100)
        with pytest.warns(UserWarning, match="could not be read"):
            History(path).close()
    found = asides(tmp_path)
    assert len(found) == 2
    contents = sorted((tmp_path / name).read_bytes()[:21] for name in found)
    assert contents == [b"damaged file number 1", b"damaged file number 2"]


# ---------------------------------------------------------------- rows ragrail did not write


def test_unreadable_rows_are_left_out_with_one_warning(tmp_path, run_result):
    path = tmp_path / "history.sqlite"
    store = History(path)
    good = store.record(run_result)
    for totals in ("not json", "[1, 2]", '{"stats": {"hit_rate": {"value": "high"}}}'):
        store.db.execute(
            "INSERT INTO runs (created_at, name, config, totals, result) VALUES ('t', 'bad', ?, ?, 'x')",
            (OLD_CONFIG, totals),
        )
    with pytest.warns(
        UserWarning, match=r"left out runs that cannot be read \(run 2: totals is not JSON"
    ) as caught:
        rows = store.rows()
    assert len(caught) == 1 and "and 2 more" in str(caught[0].message)
    assert [r.id for r in rows] == [good]


def test_a_run_whose_result_is_not_a_run_is_an_input_error(tmp_path):
    path = tmp_path / "history.sqlite"
    store = History(path)
    store.db.execute(
        "INSERT INTO runs (created_at, name, config, totals, result) VALUES ('t', 'x', ?, '{}', ?)",
        (OLD_CONFIG, '{"cases": "nope"}'),
    )
    with pytest.raises(InputError, match="run 1 cannot be read") as info:
        store.load("latest")
    assert info.value.where == str(path)
    store.db.execute("UPDATE runs SET result = 'not json'")
    with pytest.raises(InputError, match="run 1 cannot be read"):
        store.load("1")


def test_a_row_missing_config_keys_still_describes_itself(tmp_path):
    store = History(tmp_path / "history.sqlite")
    store.db.execute(
        "INSERT INTO runs (created_at, name, config, totals, result) VALUES ('t', 'x', '{}', '{}', '{}')"
    )
    [row] = store.rows()
    assert row.describe() == "?, k=?, ?, ?"


# ---------------------------------------------------------------- many processes at once

TRIALS = 20
PROCESSES = 10


def _open_and_record(path: Path, result: RunResult, barrier: object, n: int) -> None:
    barrier.wait()  # type: ignore[attr-defined]  # all open the old file at the same moment
    store = History(path)
    store.record(result.model_copy(update={"created_at": f"child-{n}"}))
    store.close()


def test_ten_processes_opening_an_old_history_at_once_lose_nothing(tmp_path, run_result):
    """The acceptance check: 10 processes, 20 trials, 0 runs lost, no file moved aside."""
    ctx = multiprocessing.get_context("fork")
    lost = failed = 0
    for trial in range(TRIALS):
        folder = tmp_path / f"trial-{trial}"
        folder.mkdir()
        path = folder / "history.sqlite"
        old_history(path, runs=3)
        barrier = ctx.Barrier(PROCESSES)
        procs = [
            ctx.Process(target=_open_and_record, args=(path, run_result, barrier, n))
            for n in range(PROCESSES)
        ]
        for p in procs:
            p.start()
        for p in procs:
            p.join(60)
        failed += sum(p.exitcode != 0 for p in procs)
        assert asides(folder) == [], f"trial {trial}: a valid history was moved aside"
        db = sqlite3.connect(path)
        names = {r[0] for r in db.execute("SELECT name FROM runs")}
        stamps = {r[0] for r in db.execute("SELECT created_at FROM runs")}
        assert db.execute("PRAGMA user_version").fetchone() == (len(MIGRATIONS),)
        db.close()
        expected = {f"child-{n}" for n in range(PROCESSES)}
        lost += 3 - len({"old-0", "old-1", "old-2"} & names) + len(expected - stamps)
    assert (failed, lost) == (0, 0), f"{failed} processes failed, {lost} runs lost"


# ---------------------------------------------------------------- through the CLI


def warning_lines(err: str) -> list[str]:
    return [ln for ln in err.splitlines() if ln.startswith("ragrail: warning:")]


def test_cli_run_on_a_read_only_checkout_goes_on_without_history(cli, project, monkeypatch):
    state = project / ".ragrail"
    state.mkdir(exist_ok=True)  # `ragrail example` made it for its .gitignore
    old_history(state / "history.sqlite")
    before = (state / "history.sqlite").read_bytes()
    read_only(monkeypatch)
    r = cli("run", cwd=project)
    assert r.code == 0, r.err
    [warning] = warning_lines(r.err)
    assert "history.sqlite" in warning and "not recorded" in warning
    assert "recorded as run" not in r.err and "Traceback" not in r.err
    assert (state / "history.sqlite").read_bytes() == before
    assert sorted(os.listdir(state)) == [".gitignore", "history.sqlite"]


def test_cli_run_when_recording_fails_at_the_end_still_gives_its_verdict(cli, project, monkeypatch):
    def full(*args: object) -> int:
        raise sqlite3.OperationalError("database or disk is full")

    monkeypatch.setattr(History, "_insert", full)
    r = cli("run", cwd=project)
    assert r.code == 0, r.err
    [warning] = warning_lines(r.err)
    assert "database or disk is full" in warning and "not recorded" in warning
    assert "No regressions" in r.out
    assert asides(project / ".ragrail") == []


def test_cli_run_refuses_a_newer_history_before_any_work(cli, project):
    state = project / ".ragrail"
    state.mkdir(exist_ok=True)
    old_history(state / "history.sqlite")
    sqlite3.connect(state / "history.sqlite").execute("PRAGMA user_version = 99").connection.close()
    before = (state / "history.sqlite").read_bytes()
    r = cli("run", "--save-baseline", "--json", "out.json", cwd=project)
    assert r.code == 2, r.err
    [line] = [ln for ln in r.err.splitlines() if ln.strip()]
    assert line.startswith("ragrail: error: ") and "newer ragrail" in line
    assert not (project / "out.json").exists() and r.out == ""
    assert (state / "history.sqlite").read_bytes() == before
    assert cli("history", cwd=project).code == 2
    assert cli("run", "--no-history", cwd=project).code == 0


def test_cli_history_lists_around_a_row_it_cannot_read(cli, project):
    assert cli("run", cwd=project).code == 0
    db = sqlite3.connect(project / ".ragrail" / "history.sqlite")
    db.execute(
        "INSERT INTO runs (created_at, name, config, totals, result) VALUES ('t', 'x', '{}', '{', '{')"
    )
    db.commit()
    db.close()
    r = cli("history", cwd=project)
    assert r.code == 0, r.err
    [warning] = warning_lines(r.err)
    assert "run 2" in warning
    assert "1 run(s)" in r.out
    r = cli("report", "2", cwd=project)
    assert r.code == 2 and "run 2 cannot be read" in r.err and "Traceback" not in r.err
