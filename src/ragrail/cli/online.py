"""``ragrail online``: signals per version and period from the production logs, and an
A/B readout between two versions."""

from __future__ import annotations

from pathlib import Path

import click

from ragrail.cli.common import (
    CONTEXT,
    OUT_PATH,
    PATH,
    FiniteFloat,
    history_options,
    json_option,
    with_options,
)
from ragrail.cli.logsdb import check_versions, logs_project
from ragrail.cli.logsdb import db_path as log_db_path
from ragrail.cli.ui import Out, output_options
from ragrail.errors import EXIT_OK, InputError


@click.command("online", context_settings=CONTEXT)
@with_options(history_options)
@click.option(
    "--db", type=PATH, help="The log database (default: .ragrail/logs.sqlite beside the project)."
)
@click.option(
    "--by",
    type=click.Choice(["week", "day", "all"]),
    help="Period of the signals: ISO week, UTC day, or the whole log (default: [logs] period).",
)
@click.option(
    "--version",
    "versions",
    multiple=True,
    metavar="V",
    help="Only this app version (repeatable).",
)
@click.option(
    "--compare", "compare", nargs=2, metavar="A B", help="A/B readout of version B against A."
)
@click.option(
    "--mde",
    type=FiniteFloat(min=0, max=1, min_open=True),
    help="Absolute rate difference the power figures are for (default: the observed one).",
)
@json_option("the signals")
@click.option("--html", "html_path", type=OUT_PATH, help="Also write the online page as HTML here.")
@output_options()
def online(
    config: Path | None,
    example: str | None,
    db: Path | None,
    by: str | None,
    versions: tuple[str, ...],
    compare: tuple[str, str] | None,
    mde: float | None,
    json_path: Path | None,
    html_path: Path | None,
) -> int:
    """Online signals per version and week (or day), and A/B readouts, from the logs.

    Escalation, thumbs-down (of the conversations with a vote), re-ask and resolution
    rates, cost per conversation and latency p50/p95, each with its n and 95% interval.
    A period that moved significantly from the one before is marked MOVED.
    `--compare A B` tests each signal between two versions (Holm-corrected) and says
    how many conversations per arm would detect the difference.
    """
    from ragrail.fileio import atomic_write_text
    from ragrail.online.ab import compare as ab_compare
    from ragrail.online.reask import reasked_ids
    from ragrail.online.signals import compute_signals
    from ragrail.online.store import LogStore
    from ragrail.outputs import guard_outputs
    from ragrail.reports import online as report
    from ragrail.reports.online_html import online_html

    project = logs_project(config, example)
    logs = project.config.logs
    period = by or logs.period
    if compare and compare[0] == compare[1]:
        from ragrail.text.guard import visible

        raise InputError(
            f"--compare needs two different versions (got {visible(compare[0])!r} twice)"
        )
    db_path = log_db_path(project, db)
    guard_outputs(
        [(json_path, "--json signals"), (html_path, "--html page")],
        project if project.config_path is not None else None,
        state_dir=project.state_dir,
        log_dbs=[db_path],
    )
    out = Out(json_path)
    store = LogStore(db_path, create=False)
    try:
        known = store.versions()
        check_versions([*versions, *(compare or ())], known)
        reasked = reasked_ids(store.conversations(), logs.reask_minutes, logs.reask_similarity)
        periods = compute_signals(
            store.conversations(),
            reasked,
            None if period == "all" else period,  # type: ignore[arg-type]
            versions or None,
        )
        result = None
        if compare:
            result = ab_compare(store.conversations(), reasked, compare[0], compare[1], mde)
        flagged = report.collect_flagged(store.conversations(), versions or None)
        database = str(store.path)
    finally:
        store.close()
    out.json(
        report.online_json(
            periods,
            result,
            flagged,
            database=database,
            by=period,
            reask_minutes=logs.reask_minutes,
            reask_similarity=logs.reask_similarity,
        ),
        json_path,
        "--json signals",
    )
    if html_path is not None:
        atomic_write_text(
            html_path, online_html(periods, result, flagged, database=database, by=period), "--html"
        )
        out.say(f"Wrote the online page to {html_path}")
    out.say(report.signals_text(periods, period))
    if result is not None:
        out.say("")
        out.say(report.ab_text(result))
    out.verdict(report.verdict_line(periods, result))
    return EXIT_OK
