"""``ragrail logs ...``: production logs (``logs ingest`` reads conversation exports into
``.ragrail/logs.sqlite``, redacted). Other subcommands join with ``logs.add_command``."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from pathlib import Path
from typing import Any

import click

from ragrail.cli.common import CONTEXT, PATH, with_options
from ragrail.cli.ui import Out, output_options
from ragrail.errors import EXIT_OK


@click.group("logs", context_settings=CONTEXT)
def logs() -> None:
    """Production logs: ingest conversation exports (redacted) into .ragrail/logs.sqlite."""


project_options = [
    click.option("--config", "-c", type=PATH, help="Project file (its [logs] maps the fields)."),
    click.option("--example", metavar="NAME", help="A bundled example's project."),
    click.option(
        "--db",
        type=PATH,
        metavar="PATH",
        help="The log database (default: .ragrail/logs.sqlite beside the project file).",
    ),
]


@logs.command("ingest", context_settings=CONTEXT)
@click.argument("files", nargs=-1, required=True, type=PATH)
@with_options(project_options)
@output_options()
def ingest_cmd(
    files: tuple[Path, ...], config: Path | None, example: str | None, db: Path | None
) -> int:
    """Read conversation logs (JSON Lines or CSV) into the log database, redacting
    e-mail addresses, phone and card numbers (and [logs] redact patterns) first.

    Fields are found by [logs] in ragrail.toml (dotted paths, or CSV column names).
    Conversations already stored (same id) are skipped; unreadable rows are counted
    and named by line, and the rest goes in. Exit 2 when a file cannot be read or
    holds no readable row (nothing is written then).
    """
    from ragrail.app.logs import ingest_logs
    from ragrail.text.guard import visible

    out = Out()
    ingested = ingest_logs(files, config, example, db, _bar)
    report = ingested.report
    names = ", ".join(visible(f) for f in report.files)
    summary = (
        f"ingested {report.lines:,} lines from {names}: {report.added:,} added, "
        f"{report.already:,} already stored, {report.bad:,} bad"
    )
    if report.first_bad:
        summary += f" (first: {visible('; '.join(str(b) for b in report.first_bad))})"
    out.verdict(summary + f". Database: {visible(str(ingested.database))}")
    warning = ingested.bad_rows_warning()
    if warning is not None:
        import warnings

        warnings.warn(warning, stacklevel=1)
    return EXIT_OK


def _bar(total: int) -> AbstractContextManager[Any]:
    """A byte-based progress bar on stderr for files over 20 MB, on a terminal only."""
    import sys

    if total < 20_000_000 or not sys.stderr.isatty():
        return nullcontext(None)
    return _rich_bar(total)


@contextmanager
def _rich_bar(total: int) -> Iterator[Any]:
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        DownloadColumn,
        Progress,
        TextColumn,
        TimeRemainingColumn,
    )

    progress = Progress(
        TextColumn("ingesting"),
        BarColumn(),
        DownloadColumn(),
        TimeRemainingColumn(),
        console=Console(stderr=True),
        transient=True,
    )
    task = progress.add_task("ingest", total=total)

    def update(done: int, _total: int) -> None:
        progress.update(task, completed=done)

    with progress:
        yield update


def _attach() -> None:
    from ragrail.cli.production import score_cmd

    logs.add_command(score_cmd, "score")


_attach()
