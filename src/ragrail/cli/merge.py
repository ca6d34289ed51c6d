"""``ragrail merge``: the results of every ``run --shard`` in, one run's report and verdict out."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import click

from ragrail.cli.common import CONTEXT, PATH, json_option
from ragrail.cli.run_options import flag_option
from ragrail.cli.ui import Out, output_options


@dataclass
class MergeOptions:
    """The flags ``cli.run.end_run`` reads."""

    json_path: Path | None
    junit: Path | None
    markdown: Path | None
    metrics: bool
    save_baseline: bool = False
    strict: bool = False


@click.command(context_settings=CONTEXT)
@click.argument("results", nargs=-1, required=True, type=PATH)
@flag_option("config")
@flag_option(
    "golden", help="The golden set the shards ran (default: the project's); checked against them."
)
@flag_option("baseline", help="Baseline to compare with.")
@json_option("the merged results (the same as an unsharded run's)")
@flag_option("junit", help="Write JUnit XML, as `run --junit`.")
@flag_option("markdown", help="Write a Markdown summary, as `run --markdown`.")
@flag_option(
    "strict",
    help="In --junit, fail a question that also failed in the baseline, as `run --strict`.",
)
@flag_option("no_history", help="Do not record the run in .ragrail/history.sqlite.")
@flag_option("metrics", help="Also print the per-question metrics table.")
@output_options()
def merge(
    results: tuple[Path, ...],
    config: Path | None,
    golden: Path | None,
    baseline: Path | None,
    json_path: Path | None,
    junit: Path | None,
    markdown: Path | None,
    strict: bool,
    no_history: bool,
    metrics: bool,
) -> int:
    """Merge the results of every `ragrail run --shard I/N` into one run and compare it.

    Checks that RESULTS are every shard 0/N to N-1/N once, of the same configuration and
    of the golden set as it is now: a case added, removed or edited since the shards ran
    is exit 2, naming it (run the shards again). Then puts the questions back in golden-set
    order and recomputes the totals; then compares with the baseline, prints the
    scorecard and diff, records the run and exits exactly as an unsharded `ragrail run`
    would: 0, 1 on a regression, 3 when a question failed to run.

    \b
      ragrail run --shard 0/2 --json shard-0.json      # on one machine
      ragrail run --shard 1/2 --json shard-1.json      # on another
      ragrail merge shard-*.json --json results.json   # the verdict
    """
    from ragrail import app
    from ragrail.cli.run import end_run, strict_needs_junit
    from ragrail.reports.machine import to_stdout
    from ragrail.settings import Overrides
    from ragrail.shards import prepare_merge

    out = Out(json_path)
    strict_needs_junit(strict, junit)
    project = app.load_project(config)
    outputs = [
        (None if to_stdout(json_path) else json_path, "--json results"),
        (junit, "--junit report"),
        (markdown, "--markdown summary"),
    ]
    overrides = Overrides(golden=golden, baseline=baseline, no_history=no_history)
    merged = prepare_merge(project, overrides, list(results), outputs)
    if not out.quiet:
        count = len(results)
        click.echo(f"(merged {count} shards: {len(merged.result.cases)} questions)", err=True)
    evaluation = app.Evaluation(
        result=merged.result, baseline=merged.baseline, baseline_path=merged.baseline_path
    )
    options = MergeOptions(json_path, junit, markdown, metrics, strict=strict)
    return end_run(options, project, evaluation, merged.history, out)
