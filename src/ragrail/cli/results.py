"""Commands that read recorded runs: ``history``, ``show``, ``diff`` and ``report``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from ragrail.cli.common import (
    CONTEXT,
    OUT_PATH,
    PATH,
    RUN_REFS,
    check_outputs,
    colour,
    history_options,
    json_option,
    open_history,
    project_or_none,
    with_options,
)
from ragrail.cli.ui import Out, output_options
from ragrail.errors import EXIT_OK, EXIT_SYSTEM, InputError


@click.command("history", context_settings=CONTEXT)
@with_options(history_options)
@click.option("--limit", "-n", type=click.IntRange(min=1), default=20, show_default=True)
@json_option("the runs")
@output_options()
def history_cmd(
    config: Path | None, example: str | None, limit: int, json_path: Path | None
) -> int:
    """List recorded runs with their totals (newest last)."""
    from ragrail.diff import pct
    from ragrail.reports.machine import history_json
    from ragrail.run import recorded_answer_rate
    from ragrail.text.guard import visible

    check_outputs([(json_path, "--json runs")], config, example)
    out = Out(json_path)
    store = open_history(config, example)
    try:
        rows = store.rows(limit)
    finally:
        store.close()
    out.json(history_json(rows, store.path), json_path, "--json runs")
    out.say(
        f"  {'run':>4}  {'when (UTC)':<19}  {'commit':<13} {'hit':>5} {'recall':>6} "
        f"{'answers':>7} {'errors':>6} {'cost':>8}  configuration"
    )
    for r in rows:
        st = r.totals.get("stats", {})

        def v(key: str, st: dict = st) -> str:
            return pct((st.get(key) or {}).get("value"))

        commit = (r.git_commit or "-") + ("*" if r.git_dirty else "")
        cost = "-" if r.cost_usd is None else f"${r.cost_usd:.4f}"
        answers = pct(recorded_answer_rate(r.totals, r.config.get("repeats", 1)))
        out.say(
            f"  {r.id:>4}  {r.created_at[:19].replace('T', ' '):<19}  {commit:<13} "
            f"{v('hit_rate'):>5} {v('recall'):>6} {answers:>7} {r.totals.get('n_errors', 0):>6} "
            f"{cost:>8}  {visible(r.describe())}"
        )
    out.verdict(
        f"{len(rows)} run(s) in {store.path}"
        + ("; * = uncommitted changes" if any(r.git_dirty for r in rows) else "")
    )
    return EXIT_OK


@click.command(context_settings=RUN_REFS)
@click.argument("run_ref", metavar="RUN", default="latest")
@with_options(history_options)
@click.option("--metrics", is_flag=True, help="Also print the per-question metrics table.")
@json_option("the run's full results (as `ragrail run --json` writes them)")
@output_options()
def show(
    run_ref: str, config: Path | None, example: str | None, metrics: bool, json_path: Path | None
) -> int:
    """Print one recorded run's scorecard (RUN: an id, latest, or -N)."""
    from ragrail.diff import run_summary
    from ragrail.reports.terminal import scorecard

    check_outputs([(json_path, "--json results")], config, example)
    out = Out(json_path)
    store = open_history(config, example)
    try:
        run = store.load(run_ref)
    finally:
        store.close()
    if json_path is not None:
        if out.json_to_stdout:
            click.echo(run.to_json(), nl=False)
        else:
            run.save(json_path, "--json results")
    out.say(scorecard(run, metrics=metrics or out.verbose))
    if out.quiet:
        t = run.totals
        rates = "  ".join(
            f"{name} {'-' if value is None else f'{value:.0%}'}"
            for name, value in (
                ("hit rate", t.hit_rate),
                ("recall", t.recall),
                ("answers pass", t.answer_pass_rate),
            )
        )
        out.verdict(
            f"{run.config.describe()}: {rates}"
            + (f"; {run_summary(run)}" if run_summary(run) else "")
        )
    return EXIT_OK


@click.command(context_settings=RUN_REFS)
@click.argument("run_a", metavar="RUN_A")
@click.argument("run_b", metavar="RUN_B", default="latest")
@with_options(history_options)
@json_option("the changes and the verdict")
@output_options()
def diff(
    run_a: str, run_b: str, config: Path | None, example: str | None, json_path: Path | None
) -> int:
    """Compare two recorded runs with the baseline rules (RUN_A is the older one).

    Exits 1 when something a question held in RUN_A (its recall, its answer's
    verdict, any check of its answer) fails in RUN_B, and 3 when RUN_B had errors (a
    failed call, or the judge failed), as `ragrail run` does.
    """
    from ragrail.app import exit_code
    from ragrail.diff import compare, error_phrases
    from ragrail.reports.machine import diff_json
    from ragrail.reports.terminal import diff_text, verdict_lines

    check_outputs([(json_path, "--json diff")], config, example)
    out = Out(json_path)
    store = open_history(config, example)
    try:
        old, new = store.load(run_a), store.load(run_b)
    finally:
        store.close()
    result = compare(new, old)
    code = exit_code(new, result)
    out.json(diff_json(result, code), json_path, "--json diff")
    out.say(colour(diff_text(result)))
    if out.quiet:
        out.verdict(colour("\n".join(verdict_lines(result))))
    if code == EXIT_SYSTEM:
        # the run being judged had failures: no clean verdict, as `ragrail run` said
        phrases = error_phrases(
            len(result.errored_cases), len(result.errors), len(result.judge_errored_cases)
        )
        click.echo(f"ragrail: run {run_b}: {'; '.join(phrases)}; exit 3", err=True)
    return code


@click.command(context_settings=RUN_REFS)
@click.argument("run_ref", metavar="[RUN]", default="latest")
@with_options(history_options)
@click.option(
    "--from-json",
    "from_json",
    type=PATH,
    help="Report on a results file (ragrail run --json) instead of a recorded run.",
)
@click.option(
    "--baseline", "-b", type=PATH, help="Baseline to compare with (default: the project's)."
)
@click.option(
    "--output",
    "-o",
    type=OUT_PATH,
    default=Path("report.html"),
    show_default=True,
    help="Where to write the HTML file.",
)
@click.option(
    "--full",
    is_flag=True,
    help="Keep every passing question's chunk texts, prompt and claims, however many "
    "questions (above 2,000 they are left out to keep the page light).",
)
@output_options()
def report(
    run_ref: str,
    config: Path | None,
    example: str | None,
    from_json: Path | None,
    baseline: Path | None,
    output: Path,
    full: bool,
) -> int:
    """Write a self-contained HTML report of a run (default: the latest recorded).

    One file with no outside resources: the scorecard with intervals, the diff
    against the baseline, failure causes, trends over the recorded runs, and a
    drill-down per question (retrieved chunks with the labelled facts
    highlighted, prompt, answer, claims, checks) with filters.
    """
    from ragrail.diff import compare
    from ragrail.fileio import atomic_write_text
    from ragrail.reports.html import html_report
    from ragrail.store.baseline import load_baseline

    project = project_or_none(config, example)
    _check_report_target(output, project, from_json, baseline)
    run, history_rows = _report_run(run_ref, config, example, from_json)
    base_path = baseline
    if base_path is None and project is not None:
        base_path = project.baseline
    base = load_baseline(base_path) if base_path is not None and base_path.is_file() else None
    result_diff = compare(run, base) if base is not None else None
    atomic_write_text(output, html_report(run, result_diff, history_rows, full=full), "report")
    Out().verdict(f"Wrote {output} ({output.stat().st_size:,} bytes): open it in a browser")
    return EXIT_OK


def _check_report_target(
    output: Path, project: Any, from_json: Path | None, baseline: Path | None
) -> None:
    """Before any work: a folder, FIFO or device is exit 2, and so is an input's path."""
    from ragrail.outputs import guard_outputs

    reads = [(from_json, "the --from-json results"), (baseline, "the --baseline")]
    guard_outputs([(output, "report")], project, reads)


def _report_run(
    run_ref: str, config: Path | None, example: str | None, from_json: Path | None
) -> tuple[Any, list[Any]]:
    """The run to report on, and the history rows up to it (for the trends)."""
    from ragrail.records.results import load_run
    from ragrail.store.history import HistoryUnavailable

    if from_json is not None:
        run = load_run(from_json, "results")
        try:
            store = open_history(config, example)
            rows = store.rows()
            store.close()
        except (InputError, HistoryUnavailable):
            rows = []  # the trends are optional beside a results file
        return run, rows
    store = open_history(config, example)
    try:
        run = store.load(run_ref)
        return run, [r for r in store.rows() if r.id <= store.resolve(run_ref)]
    finally:
        store.close()
