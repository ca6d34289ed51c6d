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
from ragrail.cli.ui import Out, output_options
from ragrail.errors import EXIT_OK


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
    from ragrail.app.logs import online_signals
    from ragrail.reports import online as report

    readout = online_signals(config, example, db, by, versions, compare, mde, json_path, html_path)
    out = Out(json_path)
    out.json(readout.json_data(), json_path, "--json signals")
    if html_path is not None:
        readout.write_page(html_path)
        out.say(f"Wrote the online page to {html_path}")
    out.say(report.signals_text(readout.periods, readout.by))
    if readout.ab is not None:
        out.say("")
        out.say(report.ab_text(readout.ab))
    out.verdict(report.verdict_line(readout.periods, readout.ab))
    return EXIT_OK
