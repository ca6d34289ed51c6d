"""Ingest's worker processes: a large JSON Lines file is parsed, mapped and redacted by
one process per CPU while the ingest (ragrail.online.ingest) stores the rows, in file order.

Ctrl-C reaches every process of the terminal's group: workers ignore it, and start with it
blocked, so the ingest alone answers it, with one line, after stopping them.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Protocol

from ragrail.online.known import KnownIds
from ragrail.online.mapping import RowMapper
from ragrail.online.rows import TOO_LONG, BadRow, jsonl_row
from ragrail.project import LogsConfig


class Tally(Protocol):
    """What the ingest counts (ragrail.online.ingest.IngestReport)."""

    lines: int
    already: int

    def skip(self, row: BadRow) -> None: ...


class Source(Protocol):
    """One JSON Lines file as the ingest reads it (ragrail.online.ingest's reader)."""

    name: str
    mapper: RowMapper
    known: KnownIds | None

    def batches(self, size: int) -> Iterator[tuple[int, list[bytes | None]]]: ...


_MAPPER: RowMapper | None = None  # a worker process's own, made by _start_worker


def _start_worker(config: dict[str, object]) -> None:
    global _MAPPER
    _quiet_worker()
    _MAPPER = RowMapper(LogsConfig.model_validate(config))
    _exit_with_parent()


_HELD = ("SIGINT", "SIGTERM")


def _quiet_worker() -> None:
    """A worker ignores Ctrl-C: the terminal sends it to the whole process group, and the
    ingest (its parent) answers it with one line after stopping its workers. A worker
    starts with both signals blocked (see _held_signals), so none can arrive before this
    runs, while Python imports what the worker needs; a SIGTERM of its own still ends it."""
    import signal

    if not hasattr(signal, "pthread_sigmask"):
        return
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # discards one already pending
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {getattr(signal, n) for n in _HELD})


@contextmanager
def _held_signals() -> Iterator[None]:
    """Ctrl-C and SIGTERM held back while worker processes may start (inside a submit):
    a worker inherits the blocked signals, so the terminal's Ctrl-C cannot interrupt its
    start-up with a traceback, and this process is not interrupted in the middle of
    starting one. A signal that came meanwhile is handled as it would have been, after."""
    import signal
    import threading

    if not hasattr(signal, "pthread_sigmask") or (
        threading.current_thread() is not threading.main_thread()
    ):
        yield
        return
    numbers = [getattr(signal, n) for n in _HELD]
    got: list[int] = []
    previous = {n: signal.signal(n, lambda signum, _frame: got.append(signum)) for n in numbers}
    signal.pthread_sigmask(signal.SIG_BLOCK, numbers)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, numbers)  # one pending lands in `got`
        for number, handler in previous.items():
            signal.signal(number, handler)
    for number in dict.fromkeys(got):
        handler = previous[number]
        if callable(handler):
            handler(number, None)  # the CLI's handlers raise KeyboardInterrupt
        elif handler == signal.SIG_DFL:
            os.kill(os.getpid(), number)


def _exit_with_parent() -> None:
    """Make this worker exit when its parent dies: a ``kill -9`` skips the pool's shutdown,
    and the worker would otherwise wait forever on a queue nobody writes to."""
    import multiprocessing
    import threading
    from multiprocessing.connection import wait

    if (parent := multiprocessing.parent_process()) is not None:
        sentinel = parent.sentinel  # ready when the parent is gone
        watch = threading.Thread(target=lambda: wait([sentinel]) and os._exit(1), daemon=True)
        watch.start()


Task = tuple[list[tuple], list[BadRow], int, frozenset[str]]


def _map_lines(name: str, start: int, lines: list[bytes | None]) -> Task:
    """In a worker: a batch of lines as (rows to store, bad rows, lines not blank, the
    optional fields this worker has not seen yet)."""
    assert _MAPPER is not None
    rows: list[tuple] = []
    bad: list[BadRow] = []
    seen = 0
    for offset, raw in enumerate(lines):
        if raw is None:
            row: tuple | BadRow | None = BadRow(name, start + offset, "-", TOO_LONG)
        else:
            row = jsonl_row(raw, start + offset, name, _MAPPER, stored=True)
        if row is None:
            continue
        seen += 1
        if isinstance(row, BadRow):
            bad.append(row)
        else:
            rows.append(row)
    return rows, bad, seen, frozenset(_MAPPER.unseen)


def cpus() -> int:
    """The CPUs this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # macOS, Windows
        return os.cpu_count() or 1


def parallel(
    reader: Source,
    config: LogsConfig,
    store_rows: Callable[[list[tuple]], None],
    report: Tally,
    tick: Callable[[], None],
    workers: int,
    lines_per_task: int,
    batch: int,
) -> None:
    """Ingest one JSON Lines file with worker processes, in file order (the first of two
    rows with one id is the one kept, bad rows are listed in order, as in one process).
    At most two batches per worker are in flight, so memory does not grow with the file."""
    import multiprocessing
    from collections import deque
    from concurrent.futures import Future, ProcessPoolExecutor

    pending: deque[Future[Task]] = deque()
    rows: list[tuple] = []
    known = reader.known

    def take(done: Future[Task]) -> None:
        got, bad, seen, unseen = done.result()
        reader.mapper.unseen &= unseen  # a field any worker saw is seen
        report.lines += seen
        for row in bad:
            report.skip(row)
        rows.extend(got)
        if len(rows) >= batch:
            store_rows(rows)
            rows.clear()
            tick()

    # spawn, not fork: the parent may hold threads (a progress bar) and open connections
    pool = ProcessPoolExecutor(
        workers,
        mp_context=multiprocessing.get_context("spawn"),
        initializer=_start_worker,
        initargs=(config.model_dump(exclude_unset=True),),
    )
    try:
        for start, lines in reader.batches(lines_per_task):
            if known:  # ids stored before: counted here, never sent to a worker
                stored = known.rows([raw or b"" for raw in lines])
                if any(stored):
                    skipped = sum(stored)
                    report.lines += skipped
                    report.already += skipped
                    lines = [b"" if s else raw for raw, s in zip(lines, stored, strict=True)]
                    if skipped == len(lines):
                        continue
            with _held_signals():  # a submit may start a worker process
                pending.append(pool.submit(_map_lines, reader.name, start, lines))
            if len(pending) >= 2 * workers:
                take(pending.popleft())
        while pending:
            take(pending.popleft())
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
    if rows:
        store_rows(rows)
