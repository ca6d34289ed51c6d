"""Streaming production-log exports (JSON Lines or CSV) into the log database.

Rows are read one at a time and stored in batches, so memory stays flat whatever the
file's size; each row is redacted before it is stored (ragrail.online.redact). A row
that cannot be read is counted and skipped, with its file and line; a file that cannot
be read at all, or holds no readable row, is an :class:`InputError` raised by
:func:`check_inputs` before the database is opened, so nothing is written.
"""

from __future__ import annotations

import csv
import time
from collections.abc import Callable, Generator, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

from ragrail.errors import InputError, SystemFailure
from ragrail.fileio import special_kind
from ragrail.online.known import KnownIds
from ragrail.online.mapping import BadField, RowMapper
from ragrail.online.record import Conversation
from ragrail.online.rows import TOO_LONG, BadRow, bounded_lines, jsonl_row
from ragrail.online.store import LogStore
from ragrail.online.workers import cpus, parallel
from ragrail.project import LogsConfig

BATCH = 5000  # rows per transaction: few commits, and a batch is a few MB at most
SHOWN_BAD = 10  # bad rows kept (file, line, field, reason) for the summary
CSV_MAX_CELL = 64 * 1024 * 1024  # contexts in one cell can be long; the csv default is 128 KB
_BOM = b"\xef\xbb\xbf"
FORMATS = {".jsonl": "jsonl", ".ndjson": "jsonl", ".json-lines": "jsonl", ".csv": "csv"}

Progress = Callable[[int, int], None]  # (bytes read, bytes in all files)


class Known:
    """A row whose id was stored before this ingest: counted, never read (online.known)."""


KNOWN = Known()
CHUNK_LINES, CHUNK_BYTES = 1000, 4 * 1024 * 1024  # rows whose ids are looked up at once
TASK_BYTES = 4 * 1024 * 1024  # a worker's task: LINES_PER_TASK lines or this many bytes


def _chunks(
    lines: Iterator[tuple[int, bytes | None]],
) -> Iterator[list[tuple[int, bytes | None]]]:
    chunk: list[tuple[int, bytes | None]] = []
    held = 0
    for item in lines:
        chunk.append(item)
        held += len(item[1] or b"")
        if len(chunk) >= CHUNK_LINES or held >= CHUNK_BYTES:
            yield chunk
            chunk, held = [], 0
    if chunk:
        yield chunk


@dataclass
class IngestReport:
    """What one ingest did: rows read, stored, already there (same id), skipped."""

    files: list[str] = field(default_factory=list)
    lines: int = 0
    added: int = 0
    already: int = 0
    bad: int = 0
    first_bad: list[BadRow] = field(default_factory=list)
    # optional fields the project names that no row read had: (field, its path), once each
    unseen: list[tuple[str, str]] = field(default_factory=list)

    def skip(self, row: BadRow) -> None:
        self.bad += 1
        if len(self.first_bad) < SHOWN_BAD:
            self.first_bad.append(row)


def log_format(path: Path, config: LogsConfig) -> str:
    """Either "jsonl" or "csv": the config's ``format``, or (auto) the file's extension."""
    if config.format != "auto":
        return config.format
    found = FORMATS.get(path.suffix.lower())
    if found is None:
        raise InputError(
            "cannot tell the log format from the extension (.jsonl, .ndjson or .csv); "
            'set [logs] format = "jsonl" or "csv" in ragrail.toml',
            str(path),
        )
    return found


class _Reader:
    """The rows of one file, as conversations or bad rows; ``pos`` is the bytes read."""

    def __init__(
        self, path: Path, fmt: str, mapper: RowMapper, known: KnownIds | None = None
    ) -> None:
        self.path, self.fmt, self.mapper, self.known = path, fmt, mapper, known
        self.name = str(path)
        self.pos = 0

    def rows(self) -> Generator[Conversation | BadRow | Known, None, None]:
        try:
            with open(self.path, "rb") as fh:
                yield from (self._jsonl(fh) if self.fmt == "jsonl" else self._csv(fh))
        except OSError as exc:
            raise SystemFailure(f"reading {self.path}: {exc.strerror or exc}") from None

    def _map(self, data: object, lineno: int) -> Conversation | BadRow:
        try:
            return self.mapper.conversation(data)
        except BadField as exc:
            return BadRow(self.name, lineno, exc.field, exc.reason)

    def _lines(self, fh: BinaryIO) -> Iterator[tuple[int, bytes | None]]:
        """(line number, line) from the first line on; None for a line too long to read."""
        for lineno, (raw, size) in enumerate(bounded_lines(fh), start=1):
            self.pos += size
            if lineno == 1 and raw is not None:
                raw = raw.removeprefix(_BOM)
            yield lineno, raw

    def _row(self, lineno: int, raw: bytes | None) -> Conversation | BadRow | None:
        if raw is None:
            return BadRow(self.name, lineno, "-", TOO_LONG)
        return jsonl_row(raw, lineno, self.name, self.mapper)

    def _jsonl(self, fh: BinaryIO) -> Iterator[Conversation | BadRow | Known]:
        known = self.known
        if not known:
            for lineno, raw in self._lines(fh):
                row = self._row(lineno, raw)
                if row is not None:
                    yield row
            return
        for chunk in _chunks(self._lines(fh)):
            stored = known.rows([raw or b"" for _, raw in chunk])
            for (lineno, raw), skip in zip(chunk, stored, strict=True):
                if skip:
                    yield KNOWN
                elif (row := self._row(lineno, raw)) is not None:
                    yield row

    def batches(self, size: int) -> Iterator[tuple[int, list[bytes | None]]]:
        """The lines of a JSON Lines file in batches of at most ``size`` lines or
        TASK_BYTES: (first line number, lines; None for one too long to read)."""
        try:
            with open(self.path, "rb") as fh:
                start, lines, held = 1, [], 0
                for lineno, raw in self._lines(fh):
                    lines.append(raw)
                    held += len(raw) if raw is not None else 0
                    if len(lines) >= size or held >= TASK_BYTES:
                        yield start, lines
                        start, lines, held = lineno + 1, [], 0
                if lines:
                    yield start, lines
        except OSError as exc:
            raise SystemFailure(f"reading {self.path}: {exc.strerror or exc}") from None

    def _csv(self, fh: BinaryIO) -> Iterator[Conversation | BadRow | Known]:
        # the limit is process-wide: set this reader's own, whatever another reader set
        csv.field_size_limit(CSV_MAX_CELL)
        undecodable: set[int] = set()
        # [the line after the first of the record being read, that line's byte offset]:
        # where reading starts again when the record proves broken
        again = [0, 0]

        def lines(first: int) -> Iterator[str]:
            for lineno, raw in enumerate(fh, start=first):
                if lineno == again[0]:
                    again[1] = self.pos
                self.pos += len(raw)
                if lineno == 1:
                    raw = raw.removeprefix(_BOM)
                try:
                    yield raw.decode("utf-8")
                except UnicodeDecodeError:
                    undecodable.add(lineno)
                    yield raw.decode("utf-8", "replace")

        # strict: a quote closed in the middle of a cell ('"a"b') is an error, not a guess.
        # It is also how a quote left open shows: it swallows the lines after it until
        # another quote closes it, mid-cell, or the file ends.
        reader = csv.reader(lines(1), strict=True)
        name = self.name
        try:
            header = next(reader, None)
        except csv.Error as exc:
            raise InputError(f"invalid CSV header ({exc})", f"{name}:1") from None
        if header is None:
            return
        self.header = header
        known = self.known
        ids = header.index(self.mapper.config.id) if known else 0
        base = 0  # the line before the one this reader started on
        end = reader.line_num
        while True:
            start = end + 1
            again[0] = start + 1
            bad: str | None = None
            try:
                record = next(reader)
            except StopIteration:
                return
            except csv.Error as exc:
                record = []
                bad = (
                    "a quote opened in this row is never closed"
                    if "unexpected end of data" in str(exc)
                    else f"invalid CSV ({exc})"
                )
            end = base + reader.line_num
            if bad is None:
                if not any(record):
                    continue
                if undecodable and any(n in undecodable for n in range(start, end + 1)):
                    yield BadRow(name, start, "-", "not UTF-8 text")
                    continue
                if len(record) == len(header):
                    if known and known.stored([record[ids] or None])[0]:
                        yield KNOWN
                        continue
                    yield self._map(dict(zip(header, record, strict=True)), start)
                    continue
                bad = f"{len(record)} cells where the header has {len(header)}"
            if end == start:
                yield BadRow(name, start, "-", bad)
                continue
            # A row over several lines that does not parse: a quote left open swallowed the
            # lines after it. Only its first line is the bad row; the others are read again,
            # each stored or counted, never lost inside it.
            yield BadRow(
                name,
                start,
                "-",
                f"{bad} (it ran to line {end}: lines {start + 1}-{end} were read again "
                "as rows of their own)",
            )
            fh.seek(again[1])
            self.pos, base, end = again[1], start, start
            reader = csv.reader(lines(start + 1), strict=True)


_COLUMN_FIELDS = (
    "id", "timestamp", "version", "user", "question", "answer", "contexts", "thumbs",
    "escalated", "resolved", "latency_ms", "tokens_in", "tokens_out", "cost", "turns",
)  # fmt: skip


def _check_columns(reader: _Reader, config: LogsConfig) -> None:
    header = getattr(reader, "header", None)
    if header is None:
        return
    first: dict[str, int] = {}
    for number, cell in enumerate(header, start=1):
        earlier = first.setdefault(cell, number)
        if earlier == number:
            continue
        # which of the two cells holds the field? No guess: the user says. A header cell
        # is printed only when the config names it: any other may be personal data.
        named = {getattr(config, n) for n in _COLUMN_FIELDS}
        what = (
            f"column {cell!r} appears twice in the header"
            if cell in named
            else "two header columns have the same name (not shown: a header cell may "
            "hold personal data)"
        )
        raise InputError(f"{what}: columns {earlier} and {number}", f"{reader.name}:1")
    for key in ("id", "timestamp", "question", "answer"):
        column = getattr(config, key)
        if column not in header:
            raise InputError(
                f"no column {column!r} in the header: name the {key} column with "
                f'[logs] {key} = "..." in ragrail.toml',
                f"{reader.name}:1",
            )


def check_inputs(paths: Iterable[Path], config: LogsConfig) -> list[tuple[Path, str]]:
    """Each file with its format, once it is known to be a readable file holding at least
    one valid row (read up to that row); otherwise an InputError naming file and line."""
    checked = []
    for path in paths:
        kind = special_kind(path)
        if kind is not None:
            raise InputError(f"log file is {kind}, expected a regular file", str(path))
        if path.is_dir():
            raise InputError("log file is a directory, expected a file", str(path))
        if not path.exists():
            raise InputError("log file not found", str(path))
        fmt = log_format(path, config)
        try:
            with open(path, "rb"):
                pass
        except OSError as exc:
            raise InputError(f"cannot read log file: {exc.strerror or exc}", str(path)) from None
        reader = _Reader(path, fmt, RowMapper(config, columns=fmt == "csv"))
        first_bad: BadRow | None = None
        rows = reader.rows()
        for row in rows:
            if fmt == "csv" and first_bad is None:
                _check_columns(reader, config)
            if isinstance(row, Conversation):
                break
            if isinstance(row, BadRow):  # no Known here: this reader skips no id
                first_bad = first_bad or row
        else:
            if first_bad is None:
                raise InputError("log file has no rows", str(path))
            where = f"{first_bad.file}:{first_bad.line}"
            what = "" if first_bad.field == "-" else f"{first_bad.field}: "
            raise InputError(
                f"no valid row in the log file (first: {what}{first_bad.reason})", where
            )
        rows.close()
        checked.append((path, fmt))
    return checked


# A JSON Lines file this large is parsed, mapped and redacted by worker processes (one
# per CPU) while this one stores the rows; below it, starting them costs more than it saves.
PARALLEL_FROM_BYTES = 32 * 1024 * 1024
LINES_PER_TASK = 2_000


def ingest(
    paths: Iterable[Path],
    config: LogsConfig,
    store: LogStore,
    progress: Progress | None = None,
    workers: int | None = None,
) -> IngestReport:
    """Read, redact and store every row of ``paths``; rows already stored (by id) are
    skipped. Raises InputError, before storing anything, when a file cannot be used.

    A large JSON Lines file is read by ``workers`` processes (default: one per CPU; 1
    reads in this process); the result is the same either way."""
    checked = check_inputs(paths, config)
    report = IngestReport(files=[str(p) for p, _ in checked])
    total = sum(p.stat().st_size for p, _ in checked)
    done = 0
    batch: list[Conversation] = []

    def flush() -> None:
        added = store.add(batch)
        report.added += added
        report.already += len(batch) - added
        batch.clear()

    def store_rows(rows: list[tuple]) -> None:
        added = store.add_rows(rows)
        report.added += added
        report.already += len(rows) - added

    workers = cpus() if workers is None else workers
    upto = store.last_rowid()  # ids stored before now are skipped unread (online.known)
    unseen: set[str] | None = None
    for path, fmt in checked:
        mapper = RowMapper(config, columns=fmt == "csv")
        reader = _Reader(path, fmt, mapper, KnownIds(store, mapper, upto) if upto else None)
        if fmt == "jsonl" and workers > 1 and path.stat().st_size >= PARALLEL_FROM_BYTES:
            if batch:
                flush()

            def tick(reader: _Reader = reader, done: int = done) -> None:
                if progress is not None:
                    progress(done + reader.pos, total)

            parallel(reader, config, store_rows, report, tick, workers, LINES_PER_TASK, BATCH)
            done += reader.pos
            unseen = mapper.unseen if unseen is None else unseen & mapper.unseen
            continue
        for row in reader.rows():
            report.lines += 1
            if isinstance(row, BadRow):
                report.skip(row)
                continue
            if isinstance(row, Known):
                report.already += 1
                continue
            batch.append(row)
            if len(batch) >= BATCH:
                flush()
                if progress is not None:
                    progress(done + reader.pos, total)
        done += reader.pos
        unseen = mapper.unseen if unseen is None else unseen & mapper.unseen
    if batch:
        flush()
    if report.lines > report.already:  # else no row was read: nothing to say about fields
        report.unseen = [(n, getattr(config, n)) for n in sorted(unseen or ())]
    store.record_files([p for p, _ in checked], time.time())
    if progress is not None:
        progress(total, total)
    return report
