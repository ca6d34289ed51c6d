"""``ragrail sweep``: every combination of chunking, retriever, k and minimum score."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from ragrail.cli.common import CONTEXT, OUT_PATH, load_project
from ragrail.cli.ui import Out, output_options
from ragrail.errors import EXIT_OK, InputError


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
@click.option("--config", "-c", type=click.Path(path_type=Path), help="Project file.")
@click.option("--example", metavar="NAME", help="Sweep a bundled example (kitebase).")
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
    help="Retrievers to try: standin, bm25, dense (default: the config's).",
)
@click.option(
    "--min-score",
    "min_scores",
    callback=_score_list,
    metavar="S,S,...",
    help="Minimum scores to try, each on the retriever's own scale: standin 0-1, bm25 0 "
    "and up (unbounded), dense -1 to 1 (default: the config's). One above what a "
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
@click.option(
    "--backend",
    type=click.Choice(["local", "ray"]),
    help="local (default: [run] backend), or ray: each chunking x retriever index is a Ray task.",
)
@click.option("--address", metavar="ADDR", help="The Ray cluster to join (default: [run] address).")
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
    from ragrail.app import answerer_spec
    from ragrail.fileio import atomic_write_text
    from ragrail.golden import load_golden
    from ragrail.outputs import guard_outputs
    from ragrail.reports.machine import to_stdout as out_is_stdout
    from ragrail.reports.terminal import sweep_table
    from ragrail.scoring.case import ScoringOptions
    from ragrail.sweep import run_sweep, to_csv, to_json, unusable_thresholds
    from ragrail.system.answerers import build_answerer
    from ragrail.system.pipeline import PipelineSettings
    from ragrail.system.retrieval import RETRIEVERS

    out = Out(json_path)
    project = load_project(config, example)
    cfg = project.config
    chosen = _backend(project, backend, address)  # a missing Ray: exit 2 before any work
    # before the sweep, not after it
    guard_outputs(
        [(json_path, "--json table"), (csv_path, "--csv table")],
        project,
        defaults=[
            (project.state_dir / name, f"{flag} table")
            for given, name, flag in ((json_path, "sweep.json", "--json"), (csv_path, "sweep.csv", "--csv"))
            if given is None
        ],
        stdout=lambda what: True,
    )
    if cfg.system.kind != "pipeline":
        raise InputError(
            "sweep varies the built-in pipeline; this project's system is "
            f'[system] kind = "{cfg.system.kind}"'
        )
    names = [r.strip() for r in (retrievers or cfg.pipeline.retriever).split(",") if r.strip()]
    unknown = [r for r in names if r not in RETRIEVERS]
    if unknown:
        raise click.BadParameter(
            f"unknown retriever {unknown[0]!r}; choose {', '.join(RETRIEVERS)}",
            param_hint="--retriever",
        )
    golden = load_golden(project.golden, project.root)
    base = PipelineSettings(
        docs=project.docs,
        product=cfg.product,
        min_score=cfg.pipeline.min_score,
        language=cfg.pipeline.language,
        embeddings_cache=project.state_dir / "embeddings.sqlite",
    )
    words = chunk_words or [cfg.pipeline.chunk_words]
    ks = top_k or [1, 3, 5]
    if any(k < 1 for k in ks):
        raise click.BadParameter("k must be at least 1", param_hint="--top-k")
    thresholds = min_scores or [cfg.pipeline.min_score]
    skipped = unusable_thresholds(names, thresholds)
    if len(skipped) == len(names) * len(thresholds):
        raise click.BadParameter(
            f"no retriever can use any of these minimum scores: {skipped[0][2]}",
            param_hint="--min-score",
        )
    answerer = build_answerer(answerer_spec(project))
    options = ScoringOptions(
        checks=tuple(cfg.checks),
        require_faithful=cfg.scoring.require_faithful,
        language=cfg.pipeline.language,
        abstain_phrases=tuple(cfg.scoring.abstain_phrases),
        refuse_phrases=tuple(cfg.scoring.refuse_phrases),
        escalate_phrases=tuple(cfg.scoring.escalate_phrases),
    )
    for retriever, threshold, _ in skipped:
        click.echo(
            f"skipping --min-score {threshold:g} for {retriever}: above the most it scores",
            err=True,
        )
    total = len(words) * len(ks) * (len(names) * len(thresholds) - len(skipped))
    click.echo(f"{cfg.name}: {total} configurations x {len(golden.cases)} questions", err=True)
    rows = run_sweep(
        cfg.name, golden, base, words, ks, names, answerer, options, min_scores=thresholds,
        backend=chosen,
    )  # fmt: skip
    out.say(sweep_table(rows, thresholds=min_scores is not None))
    if out.json_to_stdout:
        click.echo(to_json(rows), nl=False)
    written = []
    for given, default, what, text in (
        (json_path, "sweep.json", "--json table", to_json(rows)),
        (csv_path, "sweep.csv", "--csv table", to_csv(rows)),
    ):
        if given is not None and out_is_stdout(given):
            continue
        if given is not None:  # checked before the sweep: a failure now is the disk's
            atomic_write_text(given, text, what)
            written.append(str(given))
        elif _write_state_copy(project.state_dir / default, text, what):
            written.append(str(project.state_dir / default))
    if written:
        out.verdict(f"Wrote {' and '.join(written)}")
    return EXIT_OK


def _backend(project: Any, backend: str | None, address: str | None) -> Any:
    from ragrail.backends import choose
    from ragrail.settings import Overrides

    return choose(project, Overrides(backend=backend, address=address))


def _write_state_copy(path: Path, text: str, what: str) -> bool:
    """Keep a copy of a printed table under the state folder; on a read-only checkout
    (or an unwritable state folder) one warning instead: the table was printed, and
    nobody asked for the file (--json/--csv name a path that must be written)."""
    import warnings

    from ragrail.fileio import atomic_write_text

    try:
        atomic_write_text(path, text, what.replace("--json", "sweep").replace("--csv", "sweep"))
    except InputError as exc:
        flag = what.split()[0]
        warnings.warn(f"{exc}; the table was not saved (pass {flag} PATH)", stacklevel=2)
        return False
    return True
