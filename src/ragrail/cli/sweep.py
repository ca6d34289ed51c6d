"""``ragrail sweep``: flags in, :mod:`ragrail.app.sweep`, the table out."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from ragrail.cli.common import CONTEXT, OUT_PATH, load_project
from ragrail.cli.run_options import flag_option
from ragrail.cli.ui import Out, output_options
from ragrail.errors import EXIT_OK

if TYPE_CHECKING:
    from ragrail.sweep import SweepRow


def _int_list(ctx: Any, param: Any, value: str | None) -> list[int] | None:
    if value is None:
        return None
    try:
        items = [int(v) for v in value.split(",") if v.strip()]
    except ValueError:
        raise click.BadParameter(f"{value!r} is not a comma-separated list of integers") from None
    if not items or any(v < 0 for v in items):
        raise click.BadParameter(f"{value!r}: give one or more integers >= 0")
    return items


def _score_list(ctx: Any, param: Any, value: str | None) -> list[float] | None:
    import math

    if value is None:
        return None
    try:
        items = [float(v) for v in value.split(",") if v.strip()]
    except ValueError:
        raise click.BadParameter(f"{value!r} is not a comma-separated list of numbers") from None
    if not items or any(not math.isfinite(v) or v < 0 for v in items):
        raise click.BadParameter(f"{value!r}: give one or more finite numbers >= 0")
    return list(dict.fromkeys(items))  # each threshold once, in the order given


@click.command(context_settings=CONTEXT)
@flag_option("config", help="Project file.")
@flag_option("example", help="Sweep a bundled example (kitebase).")
@click.option(
    "--chunk-words",
    callback=_int_list,
    metavar="N,N,...",
    help="Chunkings to try; 0 is by section (default: the config's).",
)
@click.option(
    "--top-k", callback=_int_list, metavar="K,K,...", help="Values of k to try (default: 1,3,5)."
)
@click.option(
    "--retriever",
    "retrievers",
    default=None,
    metavar="NAME,NAME",
    help="Retrievers to try: standin, bm25, dense, hybrid, each alone or followed by "
    "+rerank (a dense rerank of [pipeline] candidates: hybrid+rerank) (default: the config's).",
)
@click.option(
    "--min-score",
    "min_scores",
    callback=_score_list,
    metavar="S,S,...",
    help="Minimum scores to try, each on the retriever's own scale: standin 0-1, bm25 0 "
    "and up (unbounded), dense -1 to 1, hybrid 0-1 (default: the config's). One above what a "
    "retriever can score is skipped for it. The table then shows each row's abstain "
    "cases that pass and answerable cases that lost retrieval.",
)
@click.option(
    "--json",
    "json_path",
    type=OUT_PATH,
    metavar="PATH|-",
    help="Where to write the table as JSON (default: .ragrail/sweep.json; -: standard output).",
)
@click.option(
    "--csv",
    "csv_path",
    type=OUT_PATH,
    help="Where to write the table as CSV (default: .ragrail/sweep.csv).",
)
@flag_option(
    "backend",
    help="local (default: [run] backend), or ray: each chunking x retriever index is a Ray task.",
)
@flag_option("address", help="The Ray cluster to join (default: [run] address).")
@output_options()
def sweep(
    config: Path | None,
    example: str | None,
    chunk_words: list[int] | None,
    top_k: list[int] | None,
    retrievers: str | None,
    min_scores: list[float] | None,
    json_path: Path | None,
    csv_path: Path | None,
    backend: str | None = None,
    address: str | None = None,
) -> int:
    """Try every combination of chunking x retriever x k x min score and tabulate the totals.

    Uses the built-in pipeline and the configured answerer (the stand-in by
    default). Prints one row per configuration, best first, and writes the
    table as JSON and CSV.

    \b
      ragrail sweep --example kitebase --chunk-words 0,25,50 --top-k 1,3,5 --retriever standin,bm25
      ragrail sweep --example kitebase --retriever bm25 --top-k 3 --min-score 0,0.5,1,1.5
    """
    from ragrail.app.sweep import GridError, SweepRequest, plan_sweep, sweep
    from ragrail.reports.terminal import sweep_table
    from ragrail.sweep import to_json

    out = Out(json_path)
    project = load_project(config, example)
    given = [r.strip() for r in retrievers.split(",") if r.strip()] if retrievers else None
    request = SweepRequest(
        chunk_words, top_k, given, min_scores, json_path, csv_path, backend, address
    )
    try:
        plan = plan_sweep(project, request)
    except GridError as exc:
        raise click.BadParameter(exc.message, param_hint=exc.flag) from None
    for retriever, threshold, _ in plan.skipped:
        click.echo(
            f"skipping --min-score {threshold:g} for {retriever}: above the most it scores",
            err=True,
        )
    cases = len(plan.golden.cases)
    click.echo(
        f"{project.config.name}: {plan.configurations} configurations x {cases} questions",
        err=True,
    )

    def show(rows: list[SweepRow]) -> None:
        out.say(sweep_table(rows, thresholds=min_scores is not None))
        if out.json_to_stdout:
            click.echo(to_json(rows), nl=False)

    swept = sweep(plan, before_writing=show)
    if swept.written:
        out.verdict(f"Wrote {' and '.join(str(path) for path in swept.written)}")
    return EXIT_OK
