"""From production back to the golden set: ``logs score`` flags risky logged answers,
``sample`` draws conversations to label."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from ragrail.cli.common import CONTEXT, OUT_PATH, PATH
from ragrail.cli.ui import Out, output_options
from ragrail.errors import EXIT_OK, EXIT_SYSTEM

if TYPE_CHECKING:
    from collections.abc import Mapping

    from ragrail.online.score import ScoreReport

config_option = click.option("--config", "-c", type=PATH, help="Project file.")
db_option = click.option(
    "--db", type=PATH, help="The log database (default: .ragrail/logs.sqlite beside the project)."
)
version_option = click.option("--version", "version", help="Only this app version's conversations.")


@click.command("score", context_settings=CONTEXT)
@config_option
@db_option
@version_option
@click.option(
    "--judge-sample",
    type=click.IntRange(min=1),
    metavar="N",
    help="Also have the configured judge check the faithfulness of N random conversations.",
)
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the judge's sample.")
@click.option(
    "--backend",
    type=click.Choice(["local", "ray"]),
    help="local (default: [run] backend), or ray: batches of conversations are Ray tasks "
    "(same flags and counts).",
)
@click.option("--address", metavar="ADDR", help="The Ray cluster to join (default: [run] address).")
@output_options()
def score_cmd(
    config: Path | None,
    db: Path | None,
    version: str | None,
    judge_sample: int | None,
    seed: int,
    backend: str | None = None,
    address: str | None = None,
) -> int:
    """Flag risky answers in the production logs, without labels.

    Each logged answer is checked against its own logged contexts: unsupported
    claims (unfaithful), citations of chunks it was not given (bad-citation),
    abstentions (abstained), personal data (pii) and the project's [[checks]]
    (check:NAME). The flags are stored for `ragrail sample` and `ragrail online`;
    scoring again replaces them. Prints each flag's count per version.
    With --backend ray the flags are worked out in batches by Ray tasks (the
    judge's sample stays here); the flags and counts are the same.
    """
    from ragrail.app.logs import flag_logs

    out = Out()
    flagged = flag_logs(config, db, version, judge_sample, seed, backend, address)
    report = flagged.report
    for line in score_lines(report):
        out.say(line)
    judged = f", {report.judged:,} judged" if flagged.judged else ""
    out.verdict(
        f"logs score: {report.total:,} conversation(s) scored, {report.flagged:,} flagged"
        f"{judged}; flags of {report.changed:,} changed"
    )
    if report.judge_failed:
        from ragrail.text.guard import visible

        click.echo(
            f"ragrail: the judge failed on {report.judge_failed:,} conversation(s) (first: "
            f"{visible(report.judge_error)}); their flags were left as they were; exit 3",
            err=True,
        )
        return EXIT_SYSTEM
    return EXIT_OK


def score_lines(report: ScoreReport) -> list[str]:
    """The per-version table of flag counts, then the first flagged ids of each flag."""
    from ragrail.text.guard import visible

    flags = report.flags()
    rows = [["version", "conversations", *flags]]
    for version in sorted(report.scored):
        n = report.scored[version]
        counts: Mapping[str, int] = report.counts.get(version, {})
        rows.append(
            [
                visible(version),
                f"{n:,}",
                *(f"{counts.get(f, 0):,} ({counts.get(f, 0) / n:.0%})" for f in flags),
            ]
        )
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = [
        "  ".join(cell.ljust(w) for cell, w in zip(r, widths, strict=True)).rstrip() for r in rows
    ]
    if flags:
        lines.append("First flagged conversations:")
        for flag in flags:
            ids = ", ".join(visible(i) for i in report.examples.get(flag, []))
            lines.append(f"  {visible(flag)}: {ids}")
    return lines


@click.command(context_settings=CONTEXT)
@click.option("-n", "count", type=int, required=True, help="How many conversations to draw.")
@click.option(
    "--output", "-o", type=OUT_PATH, required=True, help="The labelling file to write (.csv or .jsonl)."
)
@click.option("--seed", type=int, default=0, show_default=True, help="Random seed of the draw.")
@version_option
@db_option
@config_option
@output_options()
def sample(
    count: int,
    output: Path,
    seed: int,
    version: str | None,
    db: Path | None,
    config: Path | None,
) -> int:
    """Draw a stratified sample of logged conversations into a file to label.

    Strata, each conversation counted once in the first it belongs to:
    thumbs-down, escalated, re-asked, flagged (by `ragrail logs score`), and a
    random slice of the rest. Each of the first four gets up to N/5 places; the
    random slice gets the rest, and places a stratum cannot fill go to the others.
    Each row has the question, the answer, its contexts and empty label columns
    (facts, sources, expect, notes); `ragrail add --from-log ID` turns one into a case.
    """
    from ragrail.app.logs import draw_sample

    sample = draw_sample(output, count, seed, version, db, config)
    out = Out()
    out.say(", ".join(f"{s} {n}" for s, n in sample.by_stratum().items()))
    out.verdict(f"Wrote {len(sample.drawn)} conversation(s) to {output} for labelling.")
    return EXIT_OK
